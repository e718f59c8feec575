package enforce

import (
	"html"
	"strconv"
	"time"
)

// personPage returns the body of a block's refusal for a person (a
// browser-class client): a short HTML page that says what happened, for
// how long, and that the site's operator can lift it. It is made per
// request: people behind a block are few, and their requests are not a
// flood.
func personPage(d *Decision, status int, now time.Time) []byte {
	what := "A request from your network address went to an address of this site that is reserved for testing robots: " +
		"the site blocks an address that asks for it, to keep out programs that ignore its rules."
	if d.BlockedUntil.IsZero() {
		what = "This address of the site is reserved for testing robots, and a browser that opens it because another page links to it is refused, nothing more: your address is not blocked."
	} else if d.Reason == ReasonBlockedClient && d.BlockReason != WhyTrap && d.BlockReason != WhyUnknown {
		what = "Requests from your network address broke this site's rules for robots (" + html.EscapeString(d.BlockReason.String()) + "), so the site blocked the address for a while."
	}
	howLong := ""
	if !d.BlockedUntil.IsZero() {
		left := max(d.BlockedUntil.Sub(now).Round(time.Minute), time.Minute)
		span := plural(int(left.Minutes()), "minute")
		if left >= 2*time.Hour {
			span = plural(int(left.Hours()), "hour")
		}
		howLong = "<p>The block ends in about " + span + ", at " +
			html.EscapeString(d.BlockedUntil.UTC().Format("15:04 UTC")) + ". Until then every page of this site is refused to your address, " +
			"and to everyone who shares it (an office, a school, a mobile network).</p>\n"
	}
	page := "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width\">" +
		"<meta name=\"robots\" content=\"noindex\"><title>Access paused</title></head>\n<body style=\"font-family: sans-serif; max-width: 40em; margin: 2em auto; line-height: 1.5\">\n" +
		"<h1>Access paused</h1>\n<p>" + what + "</p>\n" + howLong +
		"<p>If you did nothing of the kind, it was probably a program on your network or a link on another site. " +
		"The site's operator can lift the block at once: tell them your address and this time, " +
		html.EscapeString(now.UTC().Format(time.RFC3339)) + ".</p>\n" +
		"<p><small>Status " + strconv.Itoa(status) + " · robots_guard</small></p>\n</body></html>\n"
	return []byte(page)
}

// plural writes a count and its noun: "1 minute", "15 minutes".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}
