package field

import (
	"slices"
	"strings"

	"github.com/robotsguard/robotsguard/policy"
)

// Suggest returns the hint for an unknown option name, " (did you mean
// 'x'?)", or "" when no option is near:
//
//   - a JSON name that spellings gives the Caddyfile spelling of (the
//     fields that an option of another name sets: "tarpit_max" is written
//     "tarpit <duration> <max held>");
//   - a JSON name that is the plural of a repeatable option
//     ("block_classes" is written "block_class");
//   - else the option nearest by edit distance ([policy.EditDistance]),
//     if it is near enough to be a typo.
//
// repeatable and spellings may be nil.
func Suggest(name string, options []string, repeatable func(string) bool, spellings map[string]string) string {
	if s, ok := spellings[name]; ok {
		return " (did you mean '" + s + "'? " + name + " is the JSON name)"
	}
	for _, suffix := range []string{"es", "s"} {
		if base, ok := strings.CutSuffix(name, suffix); ok && repeatable != nil && slices.Contains(options, base) && repeatable(base) {
			return " (did you mean '" + base + "'? " + name + " is the JSON name)"
		}
	}
	best, bestDist := "", 0
	for _, known := range slices.Sorted(slices.Values(options)) {
		if d := policy.EditDistance(name, known); best == "" || d < bestDist {
			best, bestDist = known, d
		}
	}
	if best == "" || bestDist > max(1, len(best)/3) {
		return ""
	}
	return " (did you mean '" + best + "'?)"
}
