package uaclass

import "testing"

// TestLegacyPhones (issue 39, point 10): a phone's own User-Agent names the
// device first and its browser after (Pocket IE in a compatible comment,
// Obigo, Openwave, Teleca, MIDP): a person's browser, not a robot named
// by the device (uap-core's test resources: 80 such strings, none of
// them robots, were class script or unknown). A tool that quotes a
// browser, or a phone's string with no browser, is not made one.
func TestLegacyPhones(t *testing.T) {
	c := newTestClassifier(t)
	for _, ua := range []string{
		"HTC-P3470-orange/PPC; 240x320; OpVer 29.113.2.731 (compatible; MSIE 6.0; Windows CE; IEMobile 7.7)",
		"HTC-P3470-orange/PPC; 240x320; OpVer 35.2.1.116 Profile/MIDP-2.0 Configuration/CLDC-1.1 Mozilla/4.0 (compatible; MSIE 6.0; Windows CE; IEMobile 6.12)",
		"SAMSUNG-SGH-i600ORANGE/1.0 (compatible; MSIE 6.0; Windows CE; IEMobile 6.8)",
		"htc900/ (compatible; MSIE 4.01; Windows CE; Smartphone; 240x320)",
		"SIE-SX66/01 (compatible; MSIE 4.01; Windows CE; PPC; 240x320)",
		"LGE-MX9700_VEZ/1.0 Mozilla/4.1 (compatible; MSIE 6.0; ) 240X400",
		"Alcatel-OT-510A/382 ObigoInternetBrowser/Q05A",
		"LENOVO-A210/S015 Nucleus/1.15 MTK/53 Release/09.01.2011 Browser/Obigo03C",
		"LGE-CU8080/1.0 UP.Browser/4.1.26l UP.Link/5.1.2.9",
		"SAMSUNG-SGH-T459MIDP/2.0CLDC/1.1",
		"Nokia5320di/UCWEB8.0.3.99/28/999",
	} {
		if r := c.Classify(ua); r.Class != Browser || len(r.Tokens) != 0 {
			t.Errorf("%s: %v %q, want a browser", ua, r.Class, r.Tokens)
		}
	}
	for _, ua := range []string{
		"Windows-RSS-Platform/2.0 (MSIE 9.0; Windows NT 6.1)",
		"Outlook-Express/7.0 (MSIE 7.0; Windows NT 6.1; Trident/4.0)",
		"SonyEricssonT306/R101 [Html2Wml/0.4.11 libwww-perl/5.79]",
		"MOT-V551/08.17.0FR MIB/2.2.1",
		"Nokia6230/2.0 (04.44) Profile/MIDP-2.0 Configuration/CLDC-1.1 (compatible; Googlebot-Mobile/2.1; +http://www.google.com/bot.html)",
	} {
		if r := c.Classify(ua); r.Class == Browser {
			t.Errorf("%s: a browser", ua)
		}
	}
}
