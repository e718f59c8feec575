//go:build race

package quicprint

// raceEnabled scales the flood down under the race detector, which makes
// each Initial some ten times slower.
const raceEnabled = true
