//go:build !robotsguard_stages

package benchstage

import "net/http"

// Stop reports whether the handler stops at s, having answered 403 through
// w. Outside a robotsguard_stages build it never does.
func Stop(http.ResponseWriter, Stage) bool { return false }
