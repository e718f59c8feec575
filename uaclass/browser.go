package uaclass

import (
	"strings"

	"github.com/mssola/useragent"
)

// Browser knowledge: the words of User-Agent strings that name a rendering
// engine, a browser product or a platform a person's browser runs on. A
// string that names no robot is a browser when it names a browser product
// and a platform or engine ("Opera/9.80 (Windows NT 5.1; U; de)",
// "JUC (Linux; U; 2.3.5; zh-cn; GT-I9100) UCWEB7.9.0.94/139/800",
// "Lenovo-A288t_TD/S100 Linux/2.6.35 Android/2.3.5 ... AppleWebKit533.1
// Mobile Safari/533.1"), when it is a text browser or a carrier's phone
// browser, or when github.com/mssola/useragent reads it as a browser on a
// known platform and engine.
//
// Words are matched whole, case-insensitively, with a glued version ignored
// ("AppleWebKit534.30", "UCWEB7"), so a device or vendor name before the
// browser string, an app name before "Mozilla/" or a missing slash does not
// hide the browser.

type browserWord uint8

const (
	wEngine   browserWord = 1 << iota // a rendering engine
	wProduct                          // a browser product
	wPlatform                         // an operating system or device platform
	wAlone                            // a browser by itself: text browsers, carriers' phone browsers
)

var browserWords = map[string]browserWord{}

func init() {
	for _, w := range []string{"applewebkit", "webkit", "gecko", "trident", "presto", "khtml", "goanna", "libweb", "netfront", "obigo", "dolfin", "edgehtml", "blink", "teleca", "jasmine", "openwave"} {
		browserWords[w] |= wEngine
	}
	for _, w := range []string{
		"chrome", "crios", "chromium", "firefox", "fxios", "safari", "mobilesafari", "opr", "opera", "opios", "coast",
		"edg", "edge", "edga", "edgios", "msie", "iemobile", "ucbrowser", "ucweb", "ucpro", "mqqbrowser", "qqbrowser", "tbs",
		"samsungbrowser", "yabrowser", "yowser", "silk", "konqueror", "galeon", "netscape", "netscape6", "navigator", "icab",
		"epiphany", "midori", "seamonkey", "camino", "meleon", "palemoon", "ladybird", "vivaldi", "maxthon", "puffin",
		"miuibrowser", "heytapbrowser", "oppobrowser", "vivobrowser", "huaweibrowser", "whale", "brave", "nintendobrowser",
		"kindle", "arora", "qupzilla", "falkon", "otter", "crkey", "webtv", "googletv", "minefield", "firebird", "phoenix",
		"iceweasel", "icecat", "icedragon", "flock", "lunascape", "sleipnir", "avant", "theworld", "omniweb", "shiira",
		"sunrise", "stainless", "fluid", "rekonq", "dooble", "qutebrowser", "abrowse", "amaya", "beonex", "kazehakase",
		"mozilla", "browser", "blazer", "skyfire", "teashark", "minimo", "fennec", "polaris", "obigo",
		"netfront", "nokiabrowser", "ovibrowser", "s40ovibrowser", "bb10", "playbook", "tizenbrowser", "smarttv", "hbbtv",
		"inettvbrowser", "maple", "nettv", "viera", "aquosbrowser", "webos", "wosbrowser", "cobalt", "sogoumobilebrowser",
		"metasr", "baidubrowser", "bidubrowser", "liebaofast", "lbbrowser", "2345explorer", "qihoobrowser", "360se", "360ee",
		"alohabrowser", "kiwi", "phx", "ecosia", "duckduckgo", "gsa", "fban", "fbav", "instagram",
		"micromessenger", "kakaotalk", "naver", "snapchat", "pinterest", "twitter", "bingweb", "yaapp_android",
		"ordissimo", "waterfox", "librewolf", "floorp", "mercury", "dragon", "comodo_dragon", "iron", "slimjet", "superbird",
		"coolnovo", "rockmelt", "chromeplus", "cometbird", "songbird", "thunderbird", "postbox", "conkeror", "swiftfox",
		"swiftweasel", "wyzo", "kapiko", "mnenhy", "treco", "yaanibrowser",
		"operamini", "myibrow", "semc", "novarra", "obigointernetbrowser", "msiemobile",
	} {
		browserWords[w] |= wProduct
	}
	// Carriers' and game consoles' browsers, which often name nothing else.
	for _, w := range []string{"docomo", "kddi", "foma", "softbank", "vodafone", "willcom", "ddipocket", "jig", "openbrowser",
		"nintendo", "playstation", "psp", "wiiu", "3ds", "nintendobrowser", "midp", "webtv"} {
		browserWords[w] |= wAlone
	}
	for _, w := range []string{
		"windows", "win98", "win95", "win9x", "winnt", "win32", "win64", "wow64", "android", "iphone", "ipad", "ipod", "ios",
		"cpu", "macintosh", "mac_powerpc", "linux", "x11", "cros", "freebsd", "openbsd", "netbsd", "sunos", "symbian",
		"symbianos", "series40", "series60", "s60", "s60v5", "blackberry", "bb10", "playbook", "j2me", "midp", "cldc",
		"webos", "web0s", "tizen", "smarttv", "smart", "googletv", "hbbtv", "playstation", "nintendo", "xbox", "kaios",
		"haiku", "amigaos", "morphos", "beos", "cygwin", "wii", "wiiu", "bada", "meego", "maemo", "sailfish", "ubuntu",
		"fedora", "debian", "mmp", "brew", "palmos", "palmsource", "wince", "mobile", "tablet",
		"kfsuwi", "crkey", "dtv", "vidaa", "netcast", "roku", "harmonyos", "openharmony", "warp",
		"syllable", "inferno", "risc", "qnx", "rim", "lg", "sonyericsson", "samsung", "nokia", "htc", "huawei", "zte",
		"lenovo", "motorola", "mot", "alcatel", "sharp", "sanyo", "sie", "philips", "sagem", "benq", "panasonic", "kyocera",
	} {
		browserWords[w] |= wPlatform
	}
}

// phoneVendors are the makers whose name starts a phone's own User-Agent,
// the device before the browser: "HTC-P3470-orange/PPC; 240x320; ...
// (compatible; MSIE 6.0; Windows CE; IEMobile 7.7)", "SAMSUNG-SGH-i600/1.0
// (compatible; MSIE 6.0; Windows CE; IEMobile 6.8)", "SIE-SX66/01",
// "Alcatel-OT-510A/1.0 ObigoInternetBrowser/Q03C".
var phoneVendors = map[string]bool{
	"htc": true, "samsung": true, "sec": true, "sie": true, "lg": true, "lge": true, "nokia": true, "sonyericsson": true,
	"mot": true, "motorola": true, "alcatel": true, "sharp": true, "sanyo": true, "philips": true, "sagem": true, "benq": true,
	"panasonic": true, "kyocera": true, "zte": true, "huawei": true, "lenovo": true, "asus": true, "pantech": true,
	"dopod": true, "qtek": true, "toshiba": true, "nec": true, "casio": true, "hitachi": true, "audiovox": true, "utstarcom": true,
}

// phoneDevice reports whether a leading product (lower-cased) names a
// phone by its maker: the maker's name, whole or followed by a model
// ("htc900", "nokia6100", "samsung-gt-b7330b", "lge-mx9700_vez").
func phoneDevice(name string) bool {
	for i := 0; i <= len(name); i++ {
		if i == len(name) || !('a' <= name[i] && name[i] <= 'z') {
			return phoneVendors[name[:i]] && (i == len(name) || name[i] == '-' || name[i] == '_' || '0' <= name[i] && name[i] <= '9')
		}
	}
	return false
}

// phoneBrowser reports whether lower names a phone's browser, glued to
// other words as phones write them ("LG-GM205Obigo/WAP2.0",
// "Browser/Obigo03C").
func phoneBrowser(lower string) bool {
	for _, b := range []string{"obigo", "netfront", "up.browser", "ucweb", "ucbrowser", "opera", "msie", "iemobile", "teleca", "polaris", "openwave", "midp"} {
		if strings.Contains(lower, b) {
			return true
		}
	}
	return false
}

// textBrowsers are browsers that send no engine or platform, recognised as
// the leading product of the User-Agent.
var textBrowsers = map[string]bool{
	"lynx": true, "links": true, "elinks": true, "w3m": true, "dillo": true, "ncsa_mosaic": true, "ncsa": true,
	"ibrowse": true, "amigavoyager": true, "amiga-aweb": true, "aweb": true, "voyager3": true, "netsurf": true,
	"netpositive": true, "offbyone": true, "retawq": true, "lynx-cur": true, "opera": true, "ucweb": true,
	"juc": true, "iuc": true, "mqqbrowser": true, "ucbrowser": true, "blackberry": true, "obigo": true,
	"sleipnir": true, "mobilesafari": true, "j-phone": true,
}

// browserMarks reads the browser words of lower, a lower-cased User-Agent.
// top reports a browser product or engine word outside comments after the
// leading product; leadBrowser, a leading product that is a browser's
// ("Mozilla", "Opera", a browser product); phone, a leading product that
// names a phone by its maker (phoneDevice); real, a browser product other
// than "Mozilla" or "browser" (a string such as "Mozilla/5.0 (Windows;
// Foo)" names no browser).
func browserMarks(lower string) (marks browserWord, top, leadBrowser, phone, real bool) {
	lead := true
	depth := 0
	for i := 0; i < len(lower); {
		if c := lower[i]; !isAlnum(c) {
			switch c {
			case '(', '[':
				depth++
			case ')', ']':
				if depth > 0 {
					depth--
				}
			}
			i++
			continue
		}
		j := i + 1
		joined := false
		for j < len(lower) && (isAlnum(lower[j]) || (lower[j] == '-' || lower[j] == '_') && j+1 < len(lower) && isAlnum(lower[j+1])) {
			joined = joined || !isAlnum(lower[j])
			j++
		}
		w := lower[i:j]
		if !lead && allDigits(w) {
			i = j // a version number
			continue
		}
		m, ok := browserWords[w]
		base := w
		if !ok {
			if k := trimVersion(w); k < len(w) {
				base = w[:k]
				m, ok = browserWords[base]
			}
		}
		if !ok && w == "up" && j < len(lower) && (lower[j] == '/' || lower[j] == '.') {
			// Openwave's UP.Browser: "UP.Browser/6.2", "UP/4.1".
			m, ok = wProduct, true
		}
		if !ok && joined {
			// "Lenovo-A288t_TD", "Comodo_Dragon": the parts of a joined name.
			for _, part := range splitJoined(w) {
				pm := browserWords[part]
				m |= pm
				real = real || pm&wProduct != 0 && part != "mozilla" && part != "browser"
			}
		} else if m&wProduct != 0 && base != "mozilla" && base != "browser" {
			real = true
		}
		if lead {
			lead = false
			name := w
			if k := trimVersion(name); k > 0 {
				name = name[:k]
			}
			if textBrowsers[name] {
				m |= wAlone
			}
			leadBrowser = m&(wProduct|wEngine|wAlone) != 0
			phone = phoneDevice(w)
		} else if depth == 0 && m&(wProduct|wEngine) != 0 && w != "browser" {
			top = true
		}
		marks |= m
		i = j
	}
	return marks, top, leadBrowser, phone, real
}

// splitJoined returns the parts of a name joined with '-' or '_', or nil.
func splitJoined(w string) []string {
	var parts []string
	start := 0
	for i := 0; i <= len(w); i++ {
		if i == len(w) || w[i] == '-' || w[i] == '_' {
			if start == 0 && i == len(w) {
				return nil
			}
			if i > start {
				parts = append(parts, w[start:i])
			}
			start = i + 1
		}
	}
	return parts
}

// browserEngines are the rendering engines of real browsers, as
// mssola/useragent names them.
var browserEngines = map[string]bool{"AppleWebKit": true, "Gecko": true, "Trident": true, "Presto": true, "EdgeHTML": true, "Blink": true, "KHTML": true}

// browserKind says whether s (lower is s lower-cased), which names no
// robot, is a person's browser, or at least looks like one: a Mozilla-style
// string with a rendering engine.
func browserKind(s, lower string) (browser, looksLike bool) {
	marks, top, leadBrowser, phone, real := browserMarks(lower)
	engine := marks&wEngine != 0
	switch {
	case marks&wAlone != 0:
		return true, true
	case phone && (real || phoneBrowser(lower)):
		// A phone's own browser, after the device: Pocket IE ("(compatible;
		// MSIE 6.0; Windows CE; IEMobile 7.7)"), Obigo, UC, Openwave.
		return true, true
	case !leadBrowser && !top:
		// "Windows-RSS-Platform/2.0 (MSIE 9.0; Windows NT 6.0)": a tool
		// that quotes a browser in its comment.
		return false, false
	case real && (marks&wPlatform != 0 || engine):
		return true, true
	case netscape(lower) && marks&wPlatform != 0:
		// "Mozilla/4.78 [ja] (Win98; U)": Netscape Navigator 2 to 4.
		return true, true
	}
	if engine || marks&wPlatform != 0 {
		ua := useragent.New(s)
		if e, _ := ua.Engine(); ua.Platform() != "" && browserEngines[e] && !ua.Bot() {
			return true, true
		}
	}
	return false, engine
}

// netscape reports whether lower is a Netscape Navigator 2 to 4 string:
// "Mozilla/4.x" with a platform comment that is no compatible comment.
func netscape(lower string) bool {
	if len(lower) < len("mozilla/4.") || !strings.HasPrefix(lower, "mozilla/") || lower[8] < '2' || lower[8] > '4' || lower[9] != '.' {
		return false
	}
	return !strings.Contains(lower, "compatible")
}
