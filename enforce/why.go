package enforce

// BlockReason is why a state was blocked: what made the block, stored with
// it ([State].Why) in every store, so that operators see it in the admin
// API's list, `caddy robots blocked` and the decision log.
type BlockReason int32

// The reasons of blocks.
const (
	// WhyUnknown is a block stored before blocks carried their reason.
	WhyUnknown BlockReason = iota
	// WhyTrap: a trap hit, which blocks the address at once.
	WhyTrap
	// WhyDisallowed: strikes for disallowed paths (including a feed
	// reader's fetch of a disallowed page that was no feed).
	WhyDisallowed
	// WhyRate: strikes for requests that kept coming through Retry-After
	// windows (Crawl-delay, class or address rate).
	WhyRate
	// WhyClass: strikes for requests of a blocked class (block_class).
	WhyClass
	// WhyInvalid: strikes for invalid request targets.
	WhyInvalid
	// WhyBadAgent: strikes for a User-Agent of the bad class.
	WhyBadAgent
	// WhyImpostor: strikes for a claimed crawler that failed verification.
	WhyImpostor
)

// whyNames are the reasons' names, as JSON and logs show them.
var whyNames = [...]string{"unknown", "trap", "disallowed", "rate", "class", "invalid", "bad_agent", "impostor"}

// String returns the reason's name: "trap", "disallowed", "rate", "class",
// "invalid", "bad_agent", "impostor" or "unknown".
func (w BlockReason) String() string {
	if w < 0 || int(w) >= len(whyNames) {
		return "unknown"
	}
	return whyNames[w]
}

// MarshalText implements encoding.TextMarshaler: the reason's name.
func (w BlockReason) MarshalText() ([]byte, error) { return []byte(w.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler; an unknown name is
// WhyUnknown.
func (w *BlockReason) UnmarshalText(b []byte) error {
	*w = WhyUnknown
	for i, n := range whyNames {
		if n == string(b) {
			*w = BlockReason(i)
		}
	}
	return nil
}
