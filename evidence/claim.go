package evidence

import "strings"

// Family is the browser engine a User-Agent claims: what decides how the
// browser speaks, whatever product is built on it.
type Family uint8

// The families. Every browser on iOS and iPadOS is WebKit, whatever its
// product name.
const (
	// NoFamily: the User-Agent claims no browser this package judges.
	NoFamily Family = iota
	// Chromium: Chrome, Edge, Opera, Brave, Vivaldi, Yandex, Samsung
	// Internet and the other Chromium-based browsers.
	Chromium
	// Firefox: Firefox and the browsers built on Gecko.
	Firefox
	// WebKit: Safari on macOS, and every browser on iOS and iPadOS.
	WebKit
)

var familyNames = [...]string{NoFamily: "none", Chromium: "chromium", Firefox: "firefox", WebKit: "webkit"}

// String returns "chromium", "firefox", "webkit" or "none".
func (f Family) String() string {
	if int(f) < len(familyNames) {
		return familyNames[f]
	}
	return "none"
}

// Platform is the operating system a User-Agent claims.
type Platform uint8

// The platforms. OtherPlatform is a real one (FreeBSD, OpenBSD, ...) that
// Sec-CH-UA-Platform names in no way this package compares.
const (
	UnknownPlatform Platform = iota
	Windows
	MacOS
	Linux
	Android
	IOS
	ChromeOS
	OtherPlatform
)

var platformNames = [...]string{UnknownPlatform: "unknown", Windows: "Windows", MacOS: "macOS", Linux: "Linux",
	Android: "Android", IOS: "iOS", ChromeOS: "ChromeOS", OtherPlatform: "other"}

// String returns the platform's name: "Windows", "macOS", "Linux",
// "Android", "iOS", "ChromeOS", "other" or "unknown".
func (p Platform) String() string {
	if int(p) < len(platformNames) {
		return platformNames[p]
	}
	return "unknown"
}

// Claim is what a User-Agent claims, as [ParseClaim] reads it, with the
// checks that claim can be held to. The zero Claim claims nothing and is
// held to nothing.
type Claim struct {
	// Family is the claimed engine; NoFamily when the User-Agent claims no
	// browser this package judges.
	Family Family
	// Product names the claimed browser: "Chrome", "Edge", "Opera",
	// "Samsung Internet", "Yandex", "Vivaldi", "Chromium", "Firefox",
	// "Safari", "Chrome iOS", "Firefox iOS", "Edge iOS", or "" for another
	// product of the family (an app's web view, a fork).
	Product string
	// Major and Minor are the engine's version: Chrome/N for Chromium (the
	// engine, whatever the product's own number), Firefox/N, and for WebKit
	// Safari's Version/N.M on macOS and the system's version on iOS.
	Major, Minor int
	// Platform is the claimed operating system.
	Platform Platform
	// Mobile reports a phone's User-Agent: Chromium's "Mobile Safari",
	// Firefox's "Mobile;".
	Mobile bool

	checks checks
	tokens tokens
}

// checks are what a claim can be held to.
type checks uint8

const (
	// checkTLS: the product fetches with its engine's TLS stack.
	checkTLS checks = 1 << iota
	// checkHeaders: a mainstream product whose headers are known.
	checkHeaders
	// badGecko: the User-Agent is not one Firefox writes.
	badGecko
)

// tokens are the product tokens of a Chromium User-Agent that the brands of
// Sec-CH-UA must agree with.
type tokens uint8

const (
	tokEdge tokens = 1 << iota
	tokOpera
	tokYandex
	tokSamsung
)

// Judged reports whether any check applies to the claim; Judge does no work
// for a claim that is not judged.
func (c Claim) Judged() bool { return c.checks != 0 }

// String describes the claim: "Chrome 131 on Windows", "Safari 18.1 on
// iOS", "none".
func (c Claim) String() string {
	if c.Family == NoFamily {
		return "none"
	}
	name := c.Product
	if name == "" {
		name = c.Family.String()
	}
	v := itoa(c.Major)
	if c.Family == WebKit {
		v += "." + itoa(c.Minor)
	}
	return name + " " + v + " on " + c.Platform.String()
}

// maxUA bounds the length of a User-Agent ParseClaim reads: the longest
// real ones (in-app browsers with their app's tokens) are under 500 bytes.
const maxUA = 1024

// ParseClaim reads the browser a User-Agent claims and the checks the claim
// can be held to. It knows the exact shapes that Chrome, Edge, Opera,
// Samsung Internet, Yandex, Vivaldi, Brave (whose User-Agent is Chrome's),
// Firefox and Safari give their User-Agents, and judges only those:
//
//   - Chromium, Firefox and WebKit (on Apple platforms) products are held to
//     their engine's TLS stack, except web views ("; wv)", "Version/4.0
//     Chrome/"), in-app browsers, cloud and proxy browsers (UC Browser, QQ
//     Browser, WeChat's XWEB, Puffin, Silk, Opera Mini) and TV or console
//     browsers, which may fetch with another stack;
//   - only the mainstream products, whose User-Agents carry no other token,
//     are held to the headers their engine sends;
//   - a desktop Firefox User-Agent whose Gecko token is not "20100101" is
//     evidence in itself.
//
// Anything else, robots, tools and honest headless browsers
// ("HeadlessChrome") included, claims nothing. ParseClaim allocates
// nothing.
func ParseClaim(ua string) Claim {
	const prefix = "Mozilla/5.0 ("
	if len(ua) > maxUA || !strings.HasPrefix(ua, prefix) {
		return Claim{}
	}
	end := closing(ua[len(prefix):])
	if end < 0 {
		return Claim{}
	}
	plat := readPlatform(ua[len(prefix) : len(prefix)+end])
	if plat.odd {
		return Claim{} // no judged claim has an odd platform
	}
	var p parsed
	if !p.read(ua[len(prefix)+end+1:]) {
		return Claim{}
	}
	switch {
	case p.chrome != "":
		return p.chromium(plat)
	case p.firefox != "" || plat.rv:
		return p.geckoClaim(plat)
	case p.webkit != "":
		return p.webkitClaim(plat)
	}
	return Claim{}
}

// closing returns the index in s of the parenthesis that closes a comment
// opened just before s, nested ones counted ("Moto G (5S) Plus"), or -1.
func closing(s string) int {
	depth := 1
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(':
			depth++
		case ')':
			if depth--; depth == 0 {
				return i
			}
		}
	}
	return -1
}

// platformInfo is what the first comment of a User-Agent says.
type platformInfo struct {
	platform Platform
	// desktop: the comment starts with "Windows NT", "Macintosh" or "X11".
	desktop bool
	// rv: a Gecko "rv:" entry; mobile: a Gecko "Mobile" entry.
	rv, mobile bool
	// webview: Android's "wv" entry; oldAndroid: the "U" entry of old
	// Android browsers; odd: a TV, console or other device the checks know
	// nothing of.
	webview, oldAndroid, odd bool
	// major, minor: the iOS version of "CPU iPhone OS 17_5 like Mac OS X".
	major, minor int
}

// readPlatform reads the entries of a User-Agent's first comment.
func readPlatform(s string) platformInfo {
	var p platformInfo
	first := true
	for s != "" && !p.odd {
		var e string
		e, s, _ = strings.Cut(s, ";")
		e = strings.TrimSpace(e)
		if first {
			first = false
			switch {
			case strings.HasPrefix(e, "Windows NT "):
				p.platform, p.desktop = Windows, true
			case e == "Macintosh":
				p.platform, p.desktop = MacOS, true
			case e == "X11":
				p.desktop = true // the next entry names the system
			case e == "Linux":
				p.platform = Linux // Chrome on Android: "Linux; Android 10; K"
			case e == "iPhone" || e == "iPad" || e == "iPod" || e == "iPod touch":
				p.platform = IOS
			case strings.HasPrefix(e, "Android "):
				p.platform = Android // Firefox on Android: "Android 14; Mobile; rv:133.0"
			default:
				p.odd = true
			}
			continue
		}
		switch {
		case strings.HasPrefix(e, "rv:"):
			p.rv = true
		case e == "wv":
			p.webview = true
		case e == "U":
			p.oldAndroid = true
		case e == "Mobile":
			p.mobile = true
		case strings.HasPrefix(e, "Android "):
			if p.platform == Linux && !p.desktop {
				p.platform = Android
			}
		case p.desktop && p.platform == UnknownPlatform:
			switch {
			case strings.HasPrefix(e, "Linux ") || e == "Linux":
				p.platform = Linux
			case strings.HasPrefix(e, "CrOS "):
				p.platform = ChromeOS
			case strings.HasPrefix(e, "FreeBSD ") || strings.HasPrefix(e, "OpenBSD ") || strings.HasPrefix(e, "NetBSD "):
				p.platform = OtherPlatform
			case e == "Ubuntu" || e == "Fedora" || e == "Debian" || e == "Arch Linux":
				// "X11; Ubuntu; Linux x86_64": the distribution, then the system
			default:
				p.odd = true
			}
		case p.desktop:
			// Desktop browsers write nothing else: "Windows NT 10.0; Win64;
			// x64", "Macintosh; Intel Mac OS X 10_15_7".
			switch {
			case e == "Win64" || e == "x64" || e == "WOW64" || e == "Win32" || e == "ARM64":
			case strings.HasPrefix(e, "Intel Mac OS X ") || strings.HasPrefix(e, "PPC Mac OS X "):
			default:
				p.odd = true
			}
		case p.platform == IOS && (strings.HasPrefix(e, "CPU iPhone OS ") || strings.HasPrefix(e, "CPU OS ")):
			v := e[strings.Index(e, "OS ")+3:]
			v, _, _ = strings.Cut(v, " ")
			p.major, v = leadingInt(v)
			if len(v) > 1 && v[0] == '_' {
				p.minor, _ = leadingInt(v[1:])
			}
		case oddDevice(e) || robotWords(e):
			// A device model may be anything, but not a TV's, nor a robot's
			// name: "compatible; FooBot/1.0; +http://...".
			p.odd = true
		}
	}
	if p.desktop && p.platform == UnknownPlatform {
		p.odd = true
	}
	return p
}

// robotWords reports a comment entry that names a robot or its operator.
func robotWords(e string) bool {
	for _, w := range [...]string{"compatible", "bot", "Bot", "BOT", "http", "www.", "@", "crawl", "Crawl", "spider", "Spider", "check"} {
		if strings.Contains(e, w) {
			return true
		}
	}
	return false
}

// oddDevice reports a comment entry of a TV, console or other device whose
// browser the checks know nothing of.
func oddDevice(e string) bool {
	for _, w := range [...]string{"SMART-TV", "SmartTV", "Smart TV", "Tizen", "Web0S", "webOS", "PlayStation", "Xbox", "Nintendo", "CrKey", "HbbTV", "KAIOS", "Windows Phone"} {
		if strings.Contains(e, w) {
			return true
		}
	}
	return false
}

// parsed holds the tokens of a User-Agent after its first comment.
type parsed struct {
	webkit, chrome, safari, version, gecko, firefox string
	khtml, mobile, iosMobile, chromiumTok           bool
	edge, opera, yandex, samsung, vivaldi           bool
	criOS, fxiOS, edgiOS                            bool
	// ownStack: a product that may fetch with its own network stack or
	// through its maker's servers.
	ownStack bool
	// extra counts product tokens no mainstream product sends; comments,
	// comments other than "(KHTML, like Gecko)" and Opera's edition.
	extra, comments int
}

// ownStack names products that fetch through their maker's servers or with
// a network stack of their own, whatever engine they render with.
var ownStack = map[string]bool{
	"UCBrowser": true, "UCWEB": true, "UBrowser": true, "MQQBrowser": true, "QQBrowser": true, "TBS": true, "XWEB": true,
	"MMWEBSDK": true, "MicroMessenger": true, "Puffin": true, "Silk": true, "OPiOS": true, "OperaMini": true,
	"baiduboxapp": true, "baidubrowser": true, "Quark": true, "2345Explorer": true, "LBBROWSER": true, "MetaSr": true,
}

// read reads the tokens after the first comment; false for a malformed
// User-Agent or an honest headless browser.
func (p *parsed) read(s string) bool {
	prev := ""
	for {
		s = strings.TrimLeft(s, " \t")
		if s == "" {
			return true
		}
		if s[0] == '(' {
			end := closing(s[1:]) + 1
			if end == 0 {
				return false
			}
			c := s[1:end]
			s = s[end+1:]
			switch {
			case c == "KHTML, like Gecko" && strings.HasPrefix(prev, "AppleWebKit/"):
				p.khtml = true
			case strings.HasPrefix(prev, "OPR/") && strings.HasPrefix(c, "Edition "):
				// Opera's "OPR/115.0.0.0 (Edition Yx GX)"
			default:
				p.comments++
			}
			continue
		}
		end := 0
		for end < len(s) && s[end] != ' ' && s[end] != '\t' && s[end] != '(' {
			end++
		}
		tok := s[:end]
		s = s[end:]
		prev = tok
		name, ver, _ := strings.Cut(tok, "/")
		switch name {
		case "AppleWebKit":
			p.webkit = ver
		case "Chrome":
			p.chrome = ver
		case "HeadlessChrome":
			return false // announces itself
		case "Chromium":
			p.chromiumTok = true
		case "Safari":
			p.safari = ver
		case "Mobile":
			if ver == "" {
				p.mobile = true
			} else {
				p.iosMobile = true // "Mobile/15E148"
			}
		case "Version":
			p.version = ver
		case "Gecko":
			p.gecko = ver
		case "Firefox":
			p.firefox = ver
		case "Edg", "EdgA":
			p.edge = true
		case "Edge":
			return false // EdgeHTML: Windows' own stack
		case "EdgiOS":
			p.edgiOS = true
		case "OPR":
			p.opera = true
		case "YaBrowser":
			p.yandex = true
		case "Yowser", "SA":
			if !p.yandex {
				p.extra++
			}
		case "SamsungBrowser":
			p.samsung = true
		case "Vivaldi":
			p.vivaldi = true
		case "CriOS":
			p.criOS = true
		case "FxiOS":
			p.fxiOS = true
		default:
			if ownStack[name] {
				p.ownStack = true
			}
			p.extra++
		}
	}
}

// chromium is the claim of a User-Agent with a Chrome token.
func (p *parsed) chromium(plat platformInfo) Claim {
	if p.webkit != "537.36" || !p.khtml || p.safari != "537.36" || p.firefox != "" || p.gecko != "" {
		return Claim{}
	}
	switch plat.platform {
	case Windows, MacOS, Linux, ChromeOS, Android, OtherPlatform:
	default:
		return Claim{}
	}
	if plat.odd || plat.rv {
		return Claim{}
	}
	c := Claim{Family: Chromium, Platform: plat.platform, Mobile: p.mobile}
	c.Major, _ = leadingInt(p.chrome)
	if c.Major == 0 {
		return Claim{}
	}
	products := 0
	for _, b := range [...]struct {
		on   bool
		name string
		tok  tokens
	}{{p.edge, "Edge", tokEdge}, {p.opera, "Opera", tokOpera}, {p.yandex, "Yandex", tokYandex}, {p.samsung, "Samsung Internet", tokSamsung}, {p.vivaldi, "Vivaldi", 0}} {
		if b.on {
			products++
			c.Product = b.name
			c.tokens |= b.tok
		}
	}
	switch {
	case products > 1:
		c.Product = ""
	case products == 0 && p.chromiumTok:
		c.Product = "Chromium"
	case products == 0:
		c.Product = "Chrome"
	}
	webview := plat.webview || plat.oldAndroid || p.version != ""
	if webview || p.ownStack || p.comments > 0 || p.criOS || p.fxiOS || p.edgiOS {
		// A web view, in-app or proxy browser: claims the family, held to
		// nothing.
		c.Product = ""
		return c
	}
	c.checks = checkTLS
	mobileOK := !p.mobile || plat.platform == Android
	if p.extra == 0 && products <= 1 && mobileOK {
		c.checks |= checkHeaders
	} else {
		c.Product = ""
	}
	return c
}

// geckoClaim is the claim of a User-Agent with an "rv:" entry or a Firefox
// token: Firefox and the browsers built on Gecko.
func (p *parsed) geckoClaim(plat platformInfo) Claim {
	if p.firefox == "" || !plat.rv || p.webkit != "" || p.chrome != "" || p.safari != "" || p.comments > 0 {
		return Claim{}
	}
	switch plat.platform {
	case Windows, MacOS, Linux, Android, OtherPlatform:
	default:
		return Claim{}
	}
	if plat.odd {
		return Claim{}
	}
	c := Claim{Family: Firefox, Platform: plat.platform, Mobile: plat.mobile}
	c.Major, _ = leadingInt(p.firefox)
	if c.Major == 0 {
		return Claim{}
	}
	c.checks = checkTLS
	if p.extra == 0 && !p.ownStack {
		c.Product = "Firefox"
		c.checks |= checkHeaders
		// Desktop Firefox has written "Gecko/20100101" since Firefox 4, on
		// every system, forks and Firefox for Android's desktop mode
		// included; Firefox for Android writes its version.
		if plat.desktop && c.Major >= 4 && p.gecko != "20100101" {
			c.checks |= badGecko
		}
	}
	return c
}

// webkitClaim is the claim of a User-Agent with an AppleWebKit token and no
// Chrome token: Safari, and every browser on iOS.
func (p *parsed) webkitClaim(plat platformInfo) Claim {
	if !p.khtml || p.firefox != "" || p.gecko != "" || plat.rv || plat.odd {
		return Claim{}
	}
	c := Claim{Family: WebKit, Platform: plat.platform}
	switch plat.platform {
	case IOS:
		c.Major, c.Minor, c.Mobile = plat.major, plat.minor, true
		switch {
		case p.criOS && !p.fxiOS && !p.edgiOS:
			c.Product = "Chrome iOS"
		case p.fxiOS && !p.criOS && !p.edgiOS:
			c.Product = "Firefox iOS"
		case p.edgiOS && !p.criOS && !p.fxiOS:
			c.Product = "Edge iOS"
		case p.version != "" && p.safari != "" && p.iosMobile && !p.criOS && !p.fxiOS:
			c.Product = "Safari"
		}
	case MacOS:
		if p.version == "" || p.safari == "" || p.criOS || p.fxiOS || p.edgiOS || p.iosMobile {
			return Claim{} // a Mac app's web view, or no Safari
		}
		var rest string
		c.Major, rest = leadingInt(p.version)
		if len(rest) > 1 && rest[0] == '.' {
			c.Minor, _ = leadingInt(rest[1:])
		}
		c.Product = "Safari"
	default:
		return Claim{} // WebKitGTK, WPE and others: their own TLS stacks
	}
	if c.Major == 0 || c.Product == "" || p.extra > 0 || p.comments > 0 || p.ownStack {
		c.Product = ""
		return c // an in-app browser: claims the family, held to nothing
	}
	c.checks = checkTLS | checkHeaders
	return c
}

// leadingInt reads the decimal number s starts with (0 when none, at most
// six digits) and returns the rest.
func leadingInt(s string) (int, string) {
	n, i := 0, 0
	for ; i < len(s) && i < 6 && '0' <= s[i] && s[i] <= '9'; i++ {
		n = n*10 + int(s[i]-'0')
	}
	return n, s[i:]
}

// itoa formats a small non-negative number.
func itoa(n int) string {
	if n < 0 {
		n = 0
	}
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			break
		}
	}
	return string(b[i:])
}
