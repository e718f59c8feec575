package uaclass

import (
	"slices"
	"testing"
)

// TestCollisions: database phrases match only products, never a build ID, a
// device model or a word inside another product's comment (issue 20's
// collisions), while the robots those phrases name are still found.
func TestCollisions(t *testing.T) {
	c := newTestClassifier(t)
	for _, ua := range []string{
		// Android 15 build AP3A.240617.008: a crawler list had it as a bot.
		"Mozilla/5.0 (Linux; U; Android 15; en-gb; CPH2617 Build/AP3A.240617.008) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/125.0.6422.165 Mobile Safari/537.36 HeyTapBrowser/45.13.6.1",
		"Mozilla/5.0 (Linux; Android 15; CPH2617 Build/AP3A.240617.008; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/131.0.6778.135 Mobile Safari/537.36",
		"Mozilla/5.0 (Linux; Android 15; CPH2617 Build/AP3A.240617.008) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.6778.135 Mobile Safari/537.36 OPR/86.0.4536.82894",
		"Mozilla/5.0 (Linux; Android 15; CPH2557 Build/AP3A.240617.008; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/142.0.7444.142 Mobile Safari/537.36 Instagram 406.0.0.58.159 Android (35/15; 480dpi; 1080x2400; OPPO; CPH2557; OP573DL1; mt6833; en_MY; 822918295; IABMV/1) NV/1",
		// HTC Butterfly phones: "Butterfly" is also an SEO crawler.
		"Mozilla/5.0 (Linux; Android 4.4.2; HTC Butterfly Build/KOT49H) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/35.0.1916.141 Mobile Safari/537.36",
		"Mozilla/5.0 (Linux; U; Android 4.1.1; en-US; HTC Butterfly Build/JRO03C) AppleWebKit/534.30 (KHTML, like Gecko) Version/4.0 UCBrowser/10.0.1.512 U3/0.8.0 Mobile Safari/534.30",
		"Mozilla/5.0 (Linux; U; Android 4.1.1; zh-tw; HTC Butterfly Build/JRO03C) AppleWebKit/534.30 (KHTML, like Gecko) Version/4.0 Mobile Safari/534.30",
		"Mozilla/5.0 (Linux; Android 5.0.2; HTC_Butterfly_3 Build/LRX22G) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/55.0.2883.91 Mobile Safari/537.36",
		// "LCC" (an AI crawler) inside Internet Explorer's comment.
		"Mozilla/4.0 (compatible; MSIE 6.0; Windows NT 5.2; LCC Internal User; .NET CLR 1.1.4322)",
		"Mozilla/4.0 (compatible; MSIE 7.0; Windows NT 5.1; LCC Internal User; .NET CLR 2.0.50727)",
		// App names that are also link-preview fetchers, after the engine.
		"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Notion/2.0.34 Chrome/93.0.4577.82 Electron/14.2.9 Safari/537.36",
		"Mozilla/5.0 (Linux; Android 7.1.2; G011A Build/N2G48H; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/66.0.3359.158 Safari/537.36 Viber/11.9.5.8",
	} {
		if r := c.Classify(ua); r.Class != Browser || len(r.Tokens) != 0 || r.Bot != nil || !r.BrowserLike {
			t.Errorf("Classify(%q) = %v %q, want browser", ua, r.Class, r.Tokens)
		}
	}
	for ua, want := range map[string]string{
		"Mozilla/5.0 (compatible; Butterfly/1.0; +http://labs.topsy.com/butterfly/) Gecko/2009032608 Firefox/3.0.8": "butterfly",
		"LCC (+http://corpora.informatik.uni-leipzig.de/crawler_faq.html)":                                          "lcc",
		"Notion/1.0 (https://notion.so; team@makenotion.com)":                                                       "notion",
		"Viber": "viber",
	} {
		if r := c.Classify(ua); r.Bot == nil || !slices.Contains(r.Tokens, want) {
			t.Errorf("Classify(%q) = %v %q, want the %s entry", ua, r.Class, r.Tokens, want)
		}
	}
}

// TestProductPositions: where in a User-Agent a phrase may match.
func TestProductPositions(t *testing.T) {
	bots := []Bot{
		{Token: "pixel", Match: []string{"Pixel"}, Class: SEO, Name: "Pixel"},
		{Token: "gtmetrix", Match: []string{"GTmetrix"}, Class: Monitor, Name: "GTmetrix"},
		{Token: "acme", Match: []string{"acme.example"}, Class: Monitor, Name: "Acme"},
		{Token: "deadlinkchecker", Match: []string{"deadlinkchecker"}, Class: Monitor, Name: "deadlinkchecker"},
		{Token: "letsencrypt", Match: []string{"Let's Encrypt"}, Class: Monitor, Name: "Let's Encrypt"},
		{Token: "scrapy", Match: []string{"Scrapy"}, Class: Script, Name: "Scrapy"},
	}
	c, err := New(Options{Bots: bots})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		ua     string
		class  Class
		tokens []string
	}{
		// A device model in a platform comment is no product.
		{"Mozilla/5.0 (Linux; Android 14; Pixel 8 Build/AP1A.240405.002) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0 Mobile Safari/537.36", Browser, nil},
		// The whole entry, or followed by a version or a URL, is a product.
		{"Mozilla/5.0 (X11; Linux x86_64; Pixel)", SEO, []string{"pixel"}},
		{"Mozilla/5.0 (X11; Linux x86_64; rv:45.0; GTmetrix https://gtmetrix.com/) Gecko/20100101 Firefox/45.0", Monitor, []string{"gtmetrix"}},
		// After the engine, outside comments.
		{"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/117.0.0.0 Safari/537.36 GTmetrix", Monitor, []string{"gtmetrix"}},
		// A URL fragment matches anywhere; a domain label is a product.
		{"Foo/1.0 (+https://acme.example/bot)", Monitor, []string{"foo", "acme"}},
		{"www.deadlinkchecker.com XMLHTTP/1.0", Monitor, []string{"deadlinkchecker"}},
		// The product a compatible comment names, whatever follows.
		{"Mozilla/5.0 (compatible; Let's Encrypt validation server; +https://www.letsencrypt.org)", Monitor, []string{"letsencrypt"}},
		// The tail of a hyphenated name is not the client's family.
		{"zoho-scrapy/2.1", Script, []string{"zoho-scrapy"}},
		{"Scrapy-Redis/0.7 (+https://example.com)", Script, []string{"scrapy-redis", "scrapy"}},
	} {
		r := c.Classify(tc.ua)
		if r.Class != tc.class || !slices.Equal(r.Tokens, tc.tokens) {
			t.Errorf("Classify(%q) = %v %q, want %v %q", tc.ua, r.Class, r.Tokens, tc.class, tc.tokens)
		}
	}
}

// TestBrowserFamilies: browsers mssola/useragent alone does not recognise
// (issue 20), one or more strings per family.
func TestBrowserFamilies(t *testing.T) {
	c := newTestClassifier(t)
	for family, uas := range map[string][]string{
		"Opera Presto": {
			"Mozilla/4.0 (compatible; MSIE 6.0; Windows NT 5.1; en) Opera 8.65",
			"HTC_P3700 Opera/9.50 (Windows NT 5.1; U; de)",
			"Opera/9.80 (J2ME/MIDP; Opera Mini/6.5.27510/34.1624; U; en) Presto/2.8.119 Version/11.10",
			"Opera/9.80 (Linux mips; U; InettvBrowser/2.2 (00014A;SonyDTV115;0002;0100) KDL40EX520; CC/XLA; en) Presto/2.7.61 Version/11.00",
		},
		"UC Browser": {
			"JUC (Linux; U; 2.3.5; zh-cn; GT-I9100; 480*800) UCWEB7.9.0.94/139/800",
			"IUC(U;iOS 5.1.1;Zh-cn;320*480;)/UCWEB8.5.1.169/42/800",
			"UCWEB/2.0 (Java; U; MIDP-2.0; en-US; nokia200) U2/1.0.0 UCBrowser/8.7.1.234 U2/1.0.0 Mobile",
			"Nokia5250/10.0.011 (SymbianOS/9.4; U; Series60/5.0 Mozilla/5.0; Profile/MIDP-2.1 Configuration/CLDC-1.1 ) AppleWebKit/525 (KHTML, like Gecko) Safari/525 3gpp-gba UCWEB7.9.0.94/140/444",
			"Mozilla/5.0 (S60V5; U; en-us; Nokia5250)/UC Browser8.2.0.132/50/355/UCWEB Mobile",
		},
		"QQ Browser": {
			"MQQBrowser/4.0 (Linux; U; Android 4.1.2; zh-cn; GT-I9300 Build/JZO54K) AppleWebKit/533.1 (KHTML, like Gecko) Mobile Safari/533.1",
			"MQQBrowser/26 Mozilla/5.0 (Linux; U; Android 2.3.6; zh-cn; GT-S5830i Build/GINGERBREAD) AppleWebKit/533.1 (KHTML, like Gecko) Version/4.0 Mobile Safari/533.1",
		},
		"Windows CE, Mobile and Phone": {
			"Mozilla/4.0 (compatible; MSIE 6.0; Windows CE; IEMobile 7.11)",
			"HTC_HD2_T8585 Opera/9.7 (Windows NT 5.1; U; en)",
			"Mozilla/5.0 (compatible; MSIE 9.0; Windows Phone OS 7.5; Trident/5.0; IEMobile/9.0; NOKIA; Lumia 710)",
			"Opera/9.80 (Windows Mobile; WCE; Opera Mobi/WMD-50433; U; en) Presto/2.4.13 Version/10.00",
		},
		"malformed Android": {
			"Mozilla 5.0 (Linux; U; Android 2.3.3; en-us; HTC Desire S Build/GRI40) AppleWebKit 533.1 (KHTML, like Gecko) Version/4.0 Mobile Safari/533.1",
			"HTC_Desire_616_dual_sim /V1 Linux/3.4.39 Android/4.2.2 Release/05.02.2013 Browser/AppleWebKit534.30 Mobile Safari/534.30;",
			"Mozilla/5.0 (Linux; U; Android 4.2.2; en-us; GT-I9500 Build/JDQ39)AppleWebKit/534.30 (KHTML, like Gecko) Version/4.0 Mobile Safari/534.30",
		},
		"Konqueror and older desktop browsers": {
			"Mozilla/5.0 (compatible; Konqueror/3.5; Linux) KHTML/3.5.10 (like Gecko)",
			"Mozilla/5.0 (X11; U; FreeBSD i386; en-US; rv:1.7.12) Gecko/20051105 Galeon/1.3.21",
			"Mozilla/4.78 [ja] (Win98; U)",
			"Mozilla/5.0 (Windows; U; Windows NT 5.1; en-US; rv:1.7.2) Gecko/20040804 Netscape/7.2 (ax)",
			"Mozilla/5.0 (Macintosh; U; PPC Mac OS X 10_5_8; en-us) AppleWebKit/533.19.4 (KHTML, like Gecko) iCab/4.8 Safari/533.16",
			"Mozilla/5.0 (Windows; U; Win95; en-US; rv:1.5) Gecko/20031007 Firebird/0.7",
			"Mozilla/5.0 (Windows; U; Windows NT 5.1; en-US; rv:1.8.0.8) Gecko/20061025 Firefox/1.5.0.8",
		},
		"TV platforms": {
			"Mozilla/5.0 (Linux; GoogleTV 3.2; NSZ-GS7/GX70 Build/MASTER) AppleWebKit/534.24 (KHTML, like Gecko) Chrome/11.0.696.77 Safari/534.24",
			"Mozilla/5.0 (SMART-TV; Linux; Tizen 2.3) AppleWebkit/538.1 (KHTML, like Gecko) SamsungBrowser/1.0 TV Safari/538.1",
			"Mozilla/3.0 WebTV/1.2 (compatible; MSIE 2.0)",
		},
		"new engines": {
			"Mozilla/5.0 (Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Ladybird/1.0",
			"Mozilla/5.0 (Windows NT 6.1; WOW64; rv:52.9) Gecko/20100101 Goanna/3.4 Firefox/52.9 PaleMoon/27.9.0",
		},
		"device and vendor prefixes": {
			"Lenovo-A288t_TD/S100 Linux/2.6.35 Android/2.3.5 Release/03.26.2012 Browser/AppleWebKit533.1 Mobile Safari/533.1",
			"Vodafone/1.0/HTC_HD2/1.44.162.6 (70494) Opera/9.7 (Windows NT 5.1; U; de)",
			"LG-D855/Mozilla/5.0 (Linux; U; Android 5.0; en-gb; LG-D855 Build/LRX21R.A1445947622) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/34.0.1847.118 Mobile Safari/537.36",
		},
		"app names before Mozilla": {
			"com.abc.mobile/5.7.14/Mozilla/5.0 (Linux; Android 12; SM-A525F Build/SP1A.210812.016; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/99.0.4844.88 Mobile Safari/537.36",
			"Job Search/24.4.0 Mozilla/5.0 (Linux; Android 14; SM-S918U Build/UP1A.231005.007; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/122.0.6261.119 Mobile Safari/537.36",
		},
		"text, carrier and console browsers": {
			"Lynx/2.8.9rel.1 libwww-FM/2.14 SSL-MM/1.4.1 GNUTLS/3.6.5",
			"DoCoMo/2.0 P903i(c100;TB;W24H12)",
			"KDDI-HI31 UP.Browser/6.2.0.5 (GUI) MMP/2.0",
			"Nokia6280/2.0 (03.60) Profile/MIDP-2.0 Configuration/CLDC-1.1",
			"Mozilla/5.0 (Nintendo 3DS; U; ; ja) Version/1.7455.JP",
		},
	} {
		for _, ua := range uas {
			if r := c.Classify(ua); r.Class != Browser || r.Bot != nil || !r.BrowserLike {
				t.Errorf("%s: Classify(%q) = %v %q, want browser", family, ua, r.Class, r.Tokens)
			}
		}
	}
}

// TestBotsNamedInComments: robots whose names carry no version, or several
// words, in a comment or after the engine are robots, not browsers.
func TestBotsNamedInComments(t *testing.T) {
	c := newTestClassifier(t)
	for _, ua := range []string{
		"Mozilla/5.0 (compatible; LesnikBot)",
		"Mozilla/5.0 (Windows NT 6.1; WOW64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/41.0.2228.0 Safari/537.36 LesnikBot",
		"Mozilla/4.0 (compatible; MSIE 7.0; Windows NT 5.1; ThumbShotsBot)",
		"Mozilla/5.0 (Windows; U; Windows NT 5.1; en-US) AppleWebKit/525.13 (KHTML, like Gecko) Chrome/0.2.149.27 Safari/525.13 MySpaceScraper",
		"Mozilla/5.0 (X11; Linux i686) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/30.0.1599.101 Safari/537.36; SSL-Crawler: http://crawler.dcsec.uni-hannover.de",
		"Mozilla/5.0 (Windows NT 6.1; rv:40.0) Gecko/20100101 Firefox/40.0 adspider",
		"Mozilla/4.0 (compatible; MSIE 4.01; Windows NT; MS Search 4.0 Robot)",
		"Mozilla/5.0 (X11; Ubuntu; Linux x86_64; rv:15.0) Xing Bot",
		"Better Uptime Bot Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/74.0.3729.169 Safari/537.36",
	} {
		if r := c.Classify(ua); r.Class == Browser || r.Class == Unknown || r.BrowserLike {
			t.Errorf("Classify(%q) = %v %q browser-like=%v, want a robot", ua, r.Class, r.Tokens, r.BrowserLike)
		}
	}
}

// TestBrowserLike: what a client that is no known browser costs a person.
// A Mozilla-style string with a rendering engine that names no robot gets a
// browser's limits; everything else that is no browser does not.
func TestBrowserLike(t *testing.T) {
	c := newTestClassifier(t)
	for _, tc := range []struct {
		ua    string
		class Class
		like  bool
	}{
		{"Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko)", Unknown, true},
		{"Mozilla/5.0 Gecko/20100101 Foo/1.0", Unknown, true},
		{"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36", Browser, true},
		{"Mozilla/5.0", Unknown, false},
		{"Mozilla/5.0 (compatible; Foo-Client)", Unknown, false},
		{"curl/8.5.0", Script, false},
		{"Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)", Search, false},
		{"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/120.0.6099.109 Safari/537.36", Script, false},
		{"Mozilla/5.0 (compatible; ExampleBot/1.0; +https://example.com/bot)", OtherBot, false},
	} {
		r := c.Classify(tc.ua)
		if r.Class != tc.class || r.BrowserLike != tc.like {
			t.Errorf("Classify(%q) = %v browser-like=%v, want %v %v", tc.ua, r.Class, r.BrowserLike, tc.class, tc.like)
		}
	}
}

// TestOwnTokensFirst: the token list starts with the User-Agent's own
// product names as written, hyphenated names whole, then the database's
// families (issue 11).
func TestOwnTokensFirst(t *testing.T) {
	c := newTestClassifier(t)
	for _, tc := range []struct {
		ua     string
		class  Class
		tokens []string
	}{
		{"zoho-scrapy/2.1", Script, []string{"zoho-scrapy"}},
		{"msnbot-media/1.1 (+http://search.msn.com/msnbot.htm)", Search, []string{"msnbot-media", "msnbot"}},
		{"nist-gsa-crawler", Search, []string{"nist-gsa-crawler"}},
		{"Mozilla/5.0 (compatible; YandexImages/3.0; +http://yandex.com/bots)", Search, []string{"yandeximages", "yandex"}},
		{"Mozilla/5.0 (compatible; SemrushBot-SA/0.97; +http://www.semrush.com/bot.html)", SEO, []string{"semrushbot-sa", "semrushbot"}},
		{"Mozilla/5.0 (compatible; coccocbot-web/1.0; +http://help.coccoc.com/searchengine)", Search, []string{"coccocbot-web", "coccoc"}},
		{"Mozilla/5.0 (compatible; SeekportBot; +https://bot.seekport.com)", Search, []string{"seekportbot", "seekport"}},
		{"Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)", Social, []string{"slackbot-linkexpanding", "slackbot"}},
		{"Mozilla/5.0 (compatible; Uptimebot/1.0; +http://www.uptime.com/uptimebot)", Monitor, []string{"uptimebot"}},
		{"Feedly/1.0 (+http://www.feedly.com/fetcher.html; like FeedFetcher-Google)", Monitor, []string{"feedly"}},
		{"Pinterest/0.2 (+https://www.pinterest.com/bot.html)", Social, []string{"pinterest", "pinterestbot"}},
		{"LinkedInBot/1.0 (compatible; Mozilla/5.0; Apache-HttpClient +http://www.linkedin.com)", Social, []string{"linkedinbot"}},
		{"Mozilla/5.0 (compatible; Googlebot/2.1) EmailSiphon", Bad, []string{"emailsiphon"}},
	} {
		r := c.Classify(tc.ua)
		if r.Class != tc.class || !slices.Equal(r.Tokens, tc.tokens) {
			t.Errorf("Classify(%q) = %v %q, want %v %q", tc.ua, r.Class, r.Tokens, tc.class, tc.tokens)
		}
	}
}

// TestOperatorClasses: classes that hurt real operators when wrong (issue
// 11): health checks are monitors (a 429 takes a site out of its load
// balancer), Exabot searches, LinkedInBot previews links, and the classic
// site rippers and harvesters are bad.
func TestOperatorClasses(t *testing.T) {
	c := newTestClassifier(t)
	for _, tc := range []struct {
		ua    string
		class Class
	}{
		{"Mozilla/5.0 (compatible; Exabot/3.0; +http://www.exabot.com/go/robot)", Search},
		{"kube-probe/1.27", Monitor},
		{"ELB-HealthChecker/2.0", Monitor},
		{"Datadog/Synthetics", Monitor},
		{"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/138.0.7204.168 Safari/537.36 DatadogSynthetics", Monitor},
		{"NewRelicPinger/1.0 (543245)", Monitor},
		{"Amazon-Route53-Health-Check-Service (ref c96ad03c-acdf-48c6-8ec7-45806bf08123; report http://amzn.to/1vsZADi)", Monitor},
		{"LinkedInBot/1.0 (compatible; Mozilla/5.0; Jakarta Commons-HttpClient/4.3 +http://www.linkedin.com)", Social},
		{"BlackWidow", Bad},
		{"SiteSnagger", Bad},
		{"WebReaper [webreaper@otway.com]", Bad},
		{"Zeus 32297 Webster Pro V2.9 Win32", Bad},
		{"Mozilla/4.7 (compatible; OffByOne; Windows 2000) Webster Pro V3.4", Bad},
		{"Advanced Email Extractor v2.xx", Bad},
		{"Mozilla/4.5 (compatible; HTTrack 3.0x; Windows 98)", Bad},
		{"Mozilla/4.0 (compatible; MSIE 6.0; Windows NT 5.0; Offline Explorer; MSIECrawler)", Bad},
		{"MSIECrawler", Bad},
	} {
		if r := c.Classify(tc.ua); r.Class != tc.class {
			t.Errorf("Classify(%q) = %v %q, want %v", tc.ua, r.Class, r.Tokens, tc.class)
		}
	}
}
