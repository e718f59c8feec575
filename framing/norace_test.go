//go:build !race

package framing

const raceEnabled = false
