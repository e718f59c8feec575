//go:build !race

package quicprint

const raceEnabled = false
