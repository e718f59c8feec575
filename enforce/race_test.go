//go:build race

package enforce

// raceEnabled scales the flood test down under the race detector, which
// makes each store operation many times slower.
const raceEnabled = true
