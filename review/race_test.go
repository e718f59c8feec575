//go:build race

package review

// raceEnabled: the race detector slows the flood test down tenfold.
const raceEnabled = true
