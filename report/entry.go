// Package report writes and reads robots_guard's decision logs: the one
// log-entry type ([Entry], a record.Record written out by [EntryOf] and
// read back by [Entry.Record]), the writer ([DecisionLog], which folds
// repeated refusals into summary lines with log_repeats), the reader
// (plain and gzip-rotated files, time and field filters), the summary that
// "caddy robots report" prints and the view of "report --html"; and the
// log lines and counts of a zone's Redis store ([StoreHooks]). It does not
// import Caddy.
package report

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap/zapcore"
)

// LoggerName is the name of the handler's decision logger. Reload and
// provisioning messages come from loggers under it (LoggerName + ".…") or
// from it without an action; the report lists them as problems.
const LoggerName = "http.handlers.robots_guard"

// UnblockedMsg is the message of the line the admin API writes to the
// decision log when it lifts blocks (caddy robots unblock): client_ip is
// the address or range, zone the zone ("" for all); report --html lists
// those blocks no more.
const UnblockedMsg = "blocks lifted"

// Entry is one decision as the handler logs it and the report reads it:
// the field names are the JSON tags below and nowhere else. The handler
// writes an Entry with MarshalLogObject (zap.Inline); the report reads it
// with encoding/json. The envelope (ts, level, logger, msg) is written by
// Caddy's log encoder and only read here.
type Entry struct {
	// TS, Level, Logger and Msg are the log encoder's envelope.
	TS     Time   `json:"ts"`
	Level  string `json:"level"`
	Logger string `json:"logger"`
	Msg    string `json:"msg"`

	// ClientIP is the client IP as Caddy determined it.
	ClientIP string `json:"client_ip"`
	// UserAgent is the User-Agent header.
	UserAgent string `json:"user_agent"`
	// Class is the User-Agent's class (uaclass.Class.String()).
	Class string `json:"class"`
	// Tokens are the robots.txt product tokens, most specific first.
	Tokens []string `json:"tokens"`
	// Verification is the bot-verification verdict.
	Verification string `json:"verification"`
	// Method, Host and URI describe the request.
	Method string `json:"method"`
	Host   string `json:"host"`
	URI    string `json:"uri"`
	// Action and Reason are the decision (enforce.Action, enforce.Reason).
	Action string `json:"action"`
	Reason string `json:"reason"`
	// Group is the robots.txt group that applied.
	Group string `json:"group"`
	// Strikes is the client's strike count in the window, and
	// AddressStrikes its address's, all its clients together (twice
	// strikes of them block the whole address; absent where the store
	// does not say).
	Strikes        int `json:"strikes"`
	AddressStrikes int `json:"address_strikes,omitempty"`
	// ReadRobots reports that the client IP had fetched robots.txt;
	// RobotsAt is when it last did (absent: never, or a log written before
	// the field existed).
	ReadRobots bool  `json:"read_robots"`
	RobotsAt   *Time `json:"robots_at,omitempty"`
	// DryRun marks a decision that was reported, not enforced.
	DryRun bool `json:"dry_run"`
	// Bot and Operator name the bot-database entry, when one matched.
	Bot      string `json:"bot,omitempty"`
	Operator string `json:"operator,omitempty"`
	// RuleLine and Rule are the robots.txt rule that decided, if any.
	RuleLine int    `json:"rule_line,omitempty"`
	Rule     string `json:"rule,omitempty"`
	// Site is the site the handler guards (record.Record.Site), and Zone
	// its zone (its per-client state; the site by default).
	Site string `json:"site,omitempty"`
	Zone string `json:"zone,omitempty"`
	// RobotsVersion identifies the robots.txt the decision was judged
	// against: the first 12 hex digits of its SHA-256.
	RobotsVersion string `json:"robots_version,omitempty"`
	// RetryAfter is the wait asked of a throttled client, in seconds.
	RetryAfter float64 `json:"retry_after,omitempty"`
	// BlockedUntil is when the client's block ends, and BlockReason what
	// made it: "trap", "disallowed", "rate", "class", "invalid",
	// "bad_agent", "impostor" (enforce.BlockReason).
	BlockedUntil *Time  `json:"blocked_until,omitempty"`
	BlockReason  string `json:"block_reason,omitempty"`
	// Crawler names the crawler whose state across its addresses decided
	// (its bucket: reason crawler_rate; or its block), as
	// enforce.Crawler.Label writes it: "token examplebot" (within the
	// client's network), "fingerprint t13d…", "verified gptbot".
	Crawler string `json:"crawler,omitempty"`
	// Signature is the outcome of Web Bot Auth verification ("verified",
	// "invalid", "unverified"; empty for an unsigned request), the agent
	// the signature names and, for a failure, why.
	Signature      string `json:"signature,omitempty"`
	SignatureAgent string `json:"signature_agent,omitempty"`
	SignatureError string `json:"signature_error,omitempty"`
	// Evidence is what the request showed against its browser claim (the
	// codes of evidence.Evidence: "sec-fetch", "tls,sec-fetch", ...), a
	// poser's decisive evidence or a mismatch, and EvidenceReason says it
	// for a person (evidence.Verdict.Reason).
	Evidence       string `json:"evidence,omitempty"`
	EvidenceReason string `json:"evidence_reason,omitempty"`
	// JA4 is the fingerprint of the client's TLS handshake, when known.
	JA4 string `json:"ja4,omitempty"`
	// QUIC is the fingerprint of the transport parameters of an HTTP/3
	// client's connection, when known ("q1_g.5.6.7.4.8.9.1.3.b.e.f").
	QUIC string `json:"quic,omitempty"`
	// Framing is the framing fingerprint of the client's connection (how
	// its HTTP stack opened it and wrote its first request), when known.
	Framing string `json:"framing,omitempty"`
	// BrowserDisallowed marks a request whose User-Agent claims a browser
	// (class browser or poser) for a path the robots.txt "*" group
	// disallows, served or refused (enforce.Decision.BrowserDisallowed):
	// Rule names the rule.
	BrowserDisallowed bool `json:"browser_disallowed,omitempty"`
	// Repeats marks a summary line (log_repeats): the number of further
	// decisions like the line it follows up (the same client, action,
	// reason and rule; the other fields are those of its first request)
	// that were counted since that line instead of being logged. The
	// report counts the line as Repeats decisions. 0 for an ordinary line.
	Repeats int64 `json:"repeats,omitempty"`

	// Problem fields, of the module's non-decision messages: the file or
	// URL concerned, the error, the robots.txt line, and the detail (a
	// lint finding's message, what a reload lifted).
	File   string `json:"file,omitempty"`
	URL    string `json:"url,omitempty"`
	Error  string `json:"error,omitempty"`
	Line   int    `json:"line,omitempty"`
	Detail string `json:"message,omitempty"`
}

// MarshalLogObject writes the decision fields (not the envelope) for
// zap.Inline. TestEntryFields checks that it writes exactly the JSON tags.
func (e *Entry) MarshalLogObject(enc zapcore.ObjectEncoder) error {
	enc.AddString("client_ip", e.ClientIP)
	enc.AddString("user_agent", e.UserAgent)
	enc.AddString("class", e.Class)
	if err := enc.AddArray("tokens", stringArray(e.Tokens)); err != nil {
		return err
	}
	enc.AddString("verification", e.Verification)
	enc.AddString("method", e.Method)
	enc.AddString("host", e.Host)
	enc.AddString("uri", e.URI)
	enc.AddString("action", e.Action)
	enc.AddString("reason", e.Reason)
	enc.AddString("group", e.Group)
	enc.AddInt("strikes", e.Strikes)
	if e.AddressStrikes != 0 {
		enc.AddInt("address_strikes", e.AddressStrikes)
	}
	enc.AddBool("read_robots", e.ReadRobots)
	if e.RobotsAt != nil && !e.RobotsAt.IsZero() {
		enc.AddString("robots_at", e.RobotsAt.UTC().Format(time.RFC3339Nano))
	}
	enc.AddBool("dry_run", e.DryRun)
	addString := func(key, v string) {
		if v != "" {
			enc.AddString(key, v)
		}
	}
	addString("bot", e.Bot)
	addString("operator", e.Operator)
	if e.RuleLine != 0 {
		enc.AddInt("rule_line", e.RuleLine)
	}
	addString("rule", e.Rule)
	addString("site", e.Site)
	addString("zone", e.Zone)
	addString("robots_version", e.RobotsVersion)
	if e.RetryAfter != 0 {
		enc.AddFloat64("retry_after", e.RetryAfter)
	}
	if e.BlockedUntil != nil && !e.BlockedUntil.IsZero() {
		enc.AddString("blocked_until", e.BlockedUntil.UTC().Format(time.RFC3339Nano))
	}
	addString("block_reason", e.BlockReason)
	addString("crawler", e.Crawler)
	addString("signature", e.Signature)
	addString("signature_agent", e.SignatureAgent)
	addString("signature_error", e.SignatureError)
	addString("evidence", e.Evidence)
	addString("evidence_reason", e.EvidenceReason)
	addString("ja4", e.JA4)
	addString("quic", e.QUIC)
	addString("framing", e.Framing)
	if e.BrowserDisallowed {
		enc.AddBool("browser_disallowed", true)
	}
	if e.Repeats != 0 {
		enc.AddInt64("repeats", e.Repeats)
	}
	addString("file", e.File)
	addString("url", e.URL)
	addString("error", e.Error)
	if e.Line != 0 {
		enc.AddInt("line", e.Line)
	}
	addString("message", e.Detail)
	return nil
}

// IsDecision reports whether the entry is a decision of the handler.
func (e *Entry) IsDecision() bool { return e.Logger == LoggerName && e.Action != "" }

// OpsLoggerName is the name of the module's logger of reload and
// provisioning problems, kept apart from the decision logger so that they
// reach Caddy's main log when decisions are routed to a file.
const OpsLoggerName = "robots_guard"

// IsModuleMessage reports whether the entry is one of the module's other
// messages (reloads, provisioning, lint findings).
func (e *Entry) IsModuleMessage() bool {
	if e.Action != "" {
		return false
	}
	for _, name := range []string{LoggerName, OpsLoggerName} {
		if e.Logger == name || strings.HasPrefix(e.Logger, name+".") {
			return true
		}
	}
	return false
}

// Weight is the number of decisions the entry stands for: Repeats for a
// summary line, else 1.
func (e *Entry) Weight() int {
	if e.Repeats > 0 && e.Repeats <= math.MaxInt32 {
		return int(e.Repeats)
	}
	if e.Repeats > math.MaxInt32 {
		return math.MaxInt32
	}
	return 1
}

// Token returns the most specific product token, or "".
func (e *Entry) Token() string {
	if len(e.Tokens) == 0 {
		return ""
	}
	return e.Tokens[0]
}

type stringArray []string

func (a stringArray) MarshalLogArray(enc zapcore.ArrayEncoder) error {
	for _, s := range a {
		enc.AppendString(s)
	}
	return nil
}

// Time is a log time: Caddy writes "ts" as Unix seconds (a number) by
// default, or as a formatted string when the encoder's time_format says so.
type Time struct{ time.Time }

// timeLayouts are the string forms read, the ones Caddy's time_format
// options produce.
var timeLayouts = []string{time.RFC3339Nano, "2006-01-02T15:04:05.000Z0700", "2006/01/02 15:04:05.000", "2006-01-02 15:04:05", time.RFC1123Z}

// UnmarshalJSON reads a number of seconds (or, above 1e12, of
// milliseconds or nanoseconds), or a string in one of timeLayouts.
// Anything else leaves the time zero.
func (t *Time) UnmarshalJSON(b []byte) error {
	t.Time = time.Time{}
	if len(b) == 0 || string(b) == "null" {
		return nil
	}
	if b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return nil
		}
		for _, layout := range timeLayouts {
			if v, err := time.Parse(layout, s); err == nil {
				t.Time = v.UTC()
				return nil
			}
		}
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			t.Time = fromNumber(f)
		}
		return nil
	}
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return nil
	}
	t.Time = fromNumber(f)
	return nil
}

// MarshalJSON writes RFC 3339.
func (t Time) MarshalJSON() ([]byte, error) {
	if t.IsZero() {
		return []byte("null"), nil
	}
	return []byte(strconv.Quote(t.UTC().Format(time.RFC3339Nano))), nil
}

func fromNumber(f float64) time.Time {
	switch {
	case f > 1e17 || f < -1e17: // nanoseconds
		return time.Unix(0, int64(f)).UTC()
	case f > 1e12 || f < -1e12: // milliseconds
		return time.UnixMilli(int64(f)).UTC()
	}
	sec, frac := math.Modf(f)
	return time.Unix(int64(sec), int64(frac*1e9)).UTC()
}

// String returns the time as RFC 3339, for messages.
func (t Time) String() string { return fmt.Sprint(t.UTC().Format(time.RFC3339)) }
