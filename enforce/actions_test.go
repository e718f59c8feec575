package enforce

import "testing"

// TestActionsNamed: Actions lists every action once, each with its name
// (the decision log's, which caddy robots report --action takes).
func TestActionsNamed(t *testing.T) {
	if len(Actions) != len(actionNames) {
		t.Fatalf("Actions has %d actions, actionNames %d", len(Actions), len(actionNames))
	}
	seen := map[string]bool{}
	for i, a := range Actions {
		if int(a) != i || a.String() != actionNames[i] || seen[a.String()] {
			t.Errorf("Actions[%d] = %v (%d)", i, a, a)
		}
		seen[a.String()] = true
	}
}
