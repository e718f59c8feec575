package source

// Counters are the metrics a Source records, as function values; any of
// them may be nil. Results are the label values of the robots.txt loads
// (ok; no_rules, truncated and star_lifted for a file installed that takes
// rules away, see ResultNoRules; invalid, incomplete, error, missing) and
// fetches (upstream.Outcome's names).
type Counters struct {
	// Reload counts a load of the robots.txt by its result.
	Reload func(result string)
	// Fetch counts a fetch of a robots.txt URL by its result.
	Fetch func(result string)
	// Missing records a robots.txt going missing (+1) or found again (-1).
	Missing func(delta int)
	// Unreachable records a robots.txt URL becoming unreachable (+1) or
	// fetched again (-1).
	Unreachable func(delta int)
}

func (c *Counters) reload(result string) {
	if c.Reload != nil {
		c.Reload(result)
	}
}

func (c *Counters) fetch(result string) {
	if c.Fetch != nil {
		c.Fetch(result)
	}
}

func (c *Counters) robotsMissing(delta int) {
	if c.Missing != nil {
		c.Missing(delta)
	}
}

func (c *Counters) robotsUnreachable(delta int) {
	if c.Unreachable != nil {
		c.Unreachable(delta)
	}
}
