//go:build robotsguard_stages

package benchstage

import (
	"fmt"
	"net/http"
	"os"
)

// names are the values of ROBOTSGUARD_STAGE.
var names = map[string]Stage{"read": Read, "decide": Decide, "record": Record}

// stopAt is the stage named by ROBOTSGUARD_STAGE ("read", "decide",
// "record"); unset, the handler runs whole.
var stopAt = func() Stage {
	v := os.Getenv("ROBOTSGUARD_STAGE")
	if v == "" {
		return None
	}
	s, ok := names[v]
	if !ok {
		panic(fmt.Sprintf("ROBOTSGUARD_STAGE=%q: want read, decide or record", v))
	}
	return s
}()

// Stop reports whether the handler stops at s, having answered 403 through
// w: in this build, where s is the stage ROBOTSGUARD_STAGE names.
func Stop(w http.ResponseWriter, s Stage) bool {
	if s != stopAt {
		return false
	}
	w.WriteHeader(http.StatusForbidden)
	return true
}
