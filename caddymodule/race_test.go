//go:build race

package caddymodule

// raceEnabled scales the long tests down under the race detector, which
// makes them many times slower.
const raceEnabled = true
