package evidence

import (
	"bufio"
	"encoding/json"
	"os"
	"strings"
	"testing"
)

func TestParseClaim(t *testing.T) {
	type want struct {
		family       Family
		product      string
		major, minor int
		platform     Platform
		mobile       bool
		checks       checks
	}
	all := checkTLS | checkHeaders
	for _, tc := range []struct {
		ua string
		want
	}{
		{chromeUA, want{Chromium, "Chrome", 156, 0, Windows, false, all}},
		{"Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36", want{Chromium, "Chrome", 131, 0, MacOS, false, all}},
		{"Mozilla/5.0 (X11; CrOS x86_64 14541.0.0) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36", want{Chromium, "Chrome", 131, 0, ChromeOS, false, all}},
		{"Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36", want{Chromium, "Chrome", 131, 0, Android, true, all}},
		{"Mozilla/5.0 (Linux; Android 8.1.0; Moto G (5S) Plus) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/83.0.4103.106 Mobile Safari/537.36", want{Chromium, "Chrome", 83, 0, Android, true, all}},
		{"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.0.0", want{Chromium, "Edge", 131, 0, Windows, false, all}},
		{"Mozilla/5.0 (Linux; Android 10; HD1913) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36 EdgA/131.0.0.0", want{Chromium, "Edge", 131, 0, Android, true, all}},
		{"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0.0.0 Safari/537.36 OPR/115.0.0.0 (Edition Yx GX)", want{Chromium, "Opera", 130, 0, Windows, false, all}},
		{"Mozilla/5.0 (Linux; Android 14; SAMSUNG SM-S921B) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/25.0 Chrome/121.0.0.0 Mobile Safari/537.36", want{Chromium, "Samsung Internet", 121, 0, Android, true, all}},
		{"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 YaBrowser/24.6.0.0 Safari/537.36", want{Chromium, "Yandex", 124, 0, Windows, false, all}},
		{"Mozilla/5.0 (Linux; Android 12; M2101K6G) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/118.0.5993.136 YaBrowser/23.11.3.136.00 SA/3 Mobile Safari/537.36", want{Chromium, "Yandex", 118, 0, Android, true, all}},
		{"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chromium/120.0.6099.224 Chrome/120.0.6099.224 Safari/537.36", want{Chromium, "Chromium", 120, 0, Linux, false, all}},
		// Other Chromium products: their engine's stack, nothing more.
		{"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) discord/1.0.9035 Chrome/120.0.6099.56 Electron/28.1.0 Safari/537.36", want{Chromium, "", 120, 0, Windows, false, checkTLS}},
		{"Mozilla/5.0 (Linux; Android 13; Pixel 7) AppleWebKit/537.36 (KHTML, like Gecko) DuckDuckGo/5 Chrome/126.0.6478.122 Mobile Safari/537.36", want{Chromium, "", 126, 0, Android, true, checkTLS}},
		// Web views, proxy browsers, TVs: nothing.
		{"Mozilla/5.0 (Linux; Android 14; SM-S918B Build/UP1A.231005.007; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/125.0.6422.165 Mobile Safari/537.36", want{Chromium, "", 125, 0, Android, true, 0}},
		{"Mozilla/5.0 (Linux; U; Android 9; en-US; SM-J730F Build/PPR1.180610.011) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/57.0.2987.108 UCBrowser/13.4.0.1306 Mobile Safari/537.36", want{Chromium, "", 57, 0, Android, true, 0}},
		{"Mozilla/5.0 (Linux; Android 11; KFTRWI) AppleWebKit/537.36 (KHTML, like Gecko) Silk/120.5.1 like Chrome/120.0.6099.225 Safari/537.36", want{Chromium, "", 120, 0, Android, false, 0}},
		{"Mozilla/5.0 (Windows NT 10.0; Win64; x64; Xbox; Xbox One) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/116.0.0.0 Safari/537.36 Edg/116.0.1938.79", want{}},
		{"Mozilla/5.0 (Web0S; Linux/SmartTV) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/79.0.3945.79 Safari/537.36 WebAppManager", want{}},
		{"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/70.0.3538.102 Safari/537.36 Edge/18.18363", want{}},
		// Firefox.
		{firefoxUA, want{Firefox, "Firefox", 153, 0, Windows, false, all}},
		{"Mozilla/5.0 (Macintosh; Intel Mac OS X 10.15; rv:133.0) Gecko/20100101 Firefox/133.0", want{Firefox, "Firefox", 133, 0, MacOS, false, all}},
		{"Mozilla/5.0 (X11; Ubuntu; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0", want{Firefox, "Firefox", 125, 0, Linux, false, all}},
		{"Mozilla/5.0 (X11; FreeBSD amd64; rv:109.0) Gecko/20100101 Firefox/115.0", want{Firefox, "Firefox", 115, 0, OtherPlatform, false, all}},
		{"Mozilla/5.0 (Android 14; Mobile; rv:133.0) Gecko/133.0 Firefox/133.0", want{Firefox, "Firefox", 133, 0, Android, true, all}},
		{"Mozilla/5.0 (Android 13; Tablet; rv:120.0) Gecko/120.0 Firefox/120.0", want{Firefox, "Firefox", 120, 0, Android, false, all}},
		{"Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:120.0) Gecko/20121011 Firefox/120.0", want{Firefox, "Firefox", 120, 0, Windows, false, all | badGecko}},
		{"Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/133.0 Firefox/133.0", want{Firefox, "Firefox", 133, 0, Linux, false, all | badGecko}},
		{"Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:91.0) Gecko/20100101 Goanna/6.5 Firefox/91.0 PaleMoon/33.0.1", want{Firefox, "", 91, 0, Windows, false, checkTLS}},
		{"Mozilla/5.0 (Mobile; rv:48.0) Gecko/48.0 Firefox/48.0 KAIOS/2.5", want{}},
		{"Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:128.0) Gecko/20100101 Thunderbird/128.0", want{}},
		// WebKit: Safari, and every browser on iOS.
		{"Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4.1 Safari/605.1.15", want{WebKit, "Safari", 17, 4, MacOS, false, all}},
		{"Mozilla/5.0 (iPhone; CPU iPhone OS 18_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/26.0 Mobile/15E148 Safari/604.1", want{WebKit, "Safari", 18, 6, IOS, true, all}},
		{"Mozilla/5.0 (iPad; CPU OS 16_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) CriOS/116.0.5845.118 Mobile/15E148 Safari/604.1", want{WebKit, "Chrome iOS", 16, 6, IOS, true, all}},
		{"Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) FxiOS/125.0 Mobile/15E148 Safari/605.1.15", want{WebKit, "Firefox iOS", 17, 4, IOS, true, all}},
		{"Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 EdgiOS/126.2592.56 Mobile/15E148 Safari/605.1.15", want{WebKit, "Edge iOS", 17, 5, IOS, true, all}},
		{"Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) GSA/323.0.647062479 Mobile/15E148 Safari/604.1", want{WebKit, "", 17, 5, IOS, true, 0}},
		{"Mozilla/5.0 (iPhone; CPU iPhone OS 15_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148", want{WebKit, "", 15, 6, IOS, true, 0}},
		{"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Safari/605.1.15 Epiphany/605.1.15", want{}},
		{"Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko)", want{}},
		// Robots, tools, honest headless browsers, junk: nothing.
		{"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/156.0.0.0 Safari/537.36", want{}},
		{"Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)", want{}},
		{"Mozilla/5.0 (Windows NT 10.0; cludo.com bot) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36", want{}},
		{"Mozilla/5.0 (X11; Linux x86_64; HubSpot Single Page link check; web-crawlers+links@hubspot.com) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/51.0.2704.103 Safari/537.36", want{}},
		{"Mozilla/5.0 (Linux; Android 6.0.1; Nexus 5X Build/MMB29P) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.6778.69 Mobile Safari/537.36 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)", want{Chromium, "", 131, 0, Android, true, 0}},
		{"curl/8.5.0", want{}}, {"", want{}}, {"Mozilla/5.0 (", want{}}, {"Mozilla/5.0 (Windows NT 10.0) AppleWebKit/537.36 (KHTML", want{}},
		{"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/ Safari/537.36", want{}},
		{"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36" + strings.Repeat(" x", 600), want{}},
	} {
		c := ParseClaim(tc.ua)
		got := want{c.Family, c.Product, c.Major, c.Minor, c.Platform, c.Mobile, c.checks}
		if got != tc.want {
			t.Errorf("ParseClaim(%.120q)\n = %+v\nwant %+v", tc.ua, got, tc.want)
		}
	}
}

// TestClaimsOfBrowsers reads the browsers of uaclass's corpus: the
// mainstream ones are judged. (uaclass's TestClaims checks that every
// claim judged is a browser to uaclass too: the engine judges only those.)
func TestClaimsOfBrowsers(t *testing.T) {
	f, err := os.Open("../uaclass/testdata/browsers.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n, judged, headers := 0, 0, 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		ua := strings.TrimSpace(sc.Text())
		if ua == "" || strings.HasPrefix(ua, "#") {
			continue
		}
		n++
		c := ParseClaim(ua)
		if !c.Judged() {
			continue
		}
		judged++
		if c.checks&checkHeaders != 0 {
			headers++
		}
	}
	t.Logf("%d browsers: %d claims judged, %d by their headers", n, judged, headers)
	if judged < n/2 || headers < n/3 {
		t.Errorf("only %d of %d browsers judged, %d by their headers", judged, n, headers)
	}
}

// TestClaimsOfRobots reads the crawler list uaclass is built from: no
// robot's User-Agent is held to a browser's headers, and those held to a
// browser's TLS stack are robots' that announce a Chromium or Firefox
// product token after the browser's (which uaclass names, so the engine
// never judges them: uaclass's TestClaims).
func TestClaimsOfRobots(t *testing.T) {
	b, err := os.ReadFile("../uaclass/internal/botsgen/data/crawler-user-agents.json")
	if err != nil {
		t.Fatal(err)
	}
	var list []struct{ Instances []string }
	if err := json.Unmarshal(b, &list); err != nil {
		t.Fatal(err)
	}
	n, judged := 0, 0
	for _, e := range list {
		for _, ua := range e.Instances {
			n++
			c := ParseClaim(ua)
			if c.checks&checkHeaders != 0 {
				t.Errorf("a robot held to a browser's headers: %q", ua)
			}
			if c.Judged() {
				judged++
			}
		}
	}
	t.Logf("%d robots' User-Agents: %d held to a TLS stack, none to headers", n, judged)
	if n < 1000 {
		t.Fatalf("only %d User-Agents read", n)
	}
}
