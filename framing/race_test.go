//go:build race

package framing

// raceEnabled scales the flood test down under the race detector, which
// makes each table operation many times slower.
const raceEnabled = true
