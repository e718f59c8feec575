package uaclass

import "fmt"

// Class is what kind of client a User-Agent belongs to. Every User-Agent
// string is classified into exactly one Class.
type Class uint8

// The classes. Their names, as String returns them, are part of the log and
// configuration format.
const (
	// Unknown is an empty, blank or junk User-Agent.
	Unknown Class = iota
	// Browser is a person's browser, desktop or mobile, in-app webviews
	// included. robots.txt is not addressed to browsers.
	Browser
	// Search is a search engine crawler: Googlebot, Bingbot, YandexBot, ...
	Search
	// AI is an AI training or AI assistant crawler or fetcher: GPTBot,
	// ChatGPT-User, ClaudeBot, CCBot, ...
	AI
	// SEO is an SEO or marketing crawler: AhrefsBot, SemrushBot, ...
	SEO
	// Social is a link-preview fetcher: facebookexternalhit, Twitterbot, ...
	Social
	// Monitor is an uptime checker or feed reader.
	Monitor
	// Script is an HTTP library, command-line tool or headless browser:
	// curl, Wget, python-requests, Go-http-client, Scrapy, ...
	Script
	// Bad is a known abusive scraper, harvester or attack tool.
	Bad
	// OtherBot is any other self-declared robot; its name is "bot".
	OtherBot
	// Poser is a client whose User-Agent claims a browser while how it
	// speaks is decisive evidence that it is none (package evidence: a
	// library's TLS stack, no Fetch Metadata over HTTPS, a Gecko token no
	// Firefox writes). Classify never returns it: the engine gives it
	// (enforce.Engine.Judge), and holds such a client to robots.txt as it
	// holds an undeclared bot: the "*" group, bot's rate.
	Poser
)

var classNames = [...]string{
	Unknown:  "unknown",
	Browser:  "browser",
	Search:   "search",
	AI:       "ai",
	SEO:      "seo",
	Social:   "social",
	Monitor:  "monitor",
	Script:   "script",
	Bad:      "bad",
	OtherBot: "bot",
	Poser:    "poser",
}

// Classes lists every class, in the order of their values.
func Classes() []Class {
	out := make([]Class, len(classNames))
	for i := range classNames {
		out[i] = Class(i)
	}
	return out
}

// String returns the class name: "browser", "search", "ai", "seo", "social",
// "monitor", "script", "bad", "bot", "poser" or "unknown".
func (c Class) String() string {
	if int(c) < len(classNames) {
		return classNames[c]
	}
	return fmt.Sprintf("class(%d)", int(c))
}

// ParseClass returns the Class with the given name.
func ParseClass(name string) (Class, error) {
	for i, n := range classNames {
		if n == name {
			return Class(i), nil
		}
	}
	return Unknown, fmt.Errorf("unknown class %q (want one of browser, search, ai, seo, social, monitor, script, bad, bot, poser, unknown)", name)
}

// MarshalText implements encoding.TextMarshaler.
func (c Class) MarshalText() ([]byte, error) {
	if int(c) >= len(classNames) {
		return nil, fmt.Errorf("invalid class %d", int(c))
	}
	return []byte(classNames[c]), nil
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (c *Class) UnmarshalText(b []byte) error {
	v, err := ParseClass(string(b))
	if err != nil {
		return err
	}
	*c = v
	return nil
}
