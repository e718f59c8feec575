package redisstore

import (
	"cmp"
	"fmt"
	"strconv"
	"strings"

	"github.com/robotsguard/robotsguard/enforce"
)

// A record is the state of one address prefix in one mode, as the scripts
// store it in one Redis hash: the address's own state and the states of up
// to 4 of its tokens, as enforce.MemoryStore keeps them; or a crawler's
// (its state in Addr, its name in Name, no tokens).
type record struct {
	Version int64         `json:"v"`
	Addr    enforce.State `json:"a"`
	Tokens  []tokenState  `json:"t,omitempty"`
	Name    string        `json:"m,omitempty"`
}

// tokenState is the state of one token of a record.
type tokenState struct {
	Name  string        `json:"n"`
	State enforce.State `json:"s"`
}

// token returns the state of the named token in r, or nil.
func (r *record) token(name string) *enforce.State {
	for i := range r.Tokens {
		if r.Tokens[i].Name == name {
			return &r.Tokens[i].State
		}
	}
	return nil
}

// blocked reports whether one of r's states is blocked at t.
func (r *record) blocked(t int64) bool {
	if r.Addr.Blocked(t) {
		return true
	}
	for i := range r.Tokens {
		if r.Tokens[i].State.Blocked(t) {
			return true
		}
	}
	return false
}

// until returns when the last block of r in force at t ends (0: none).
func (r *record) until(t int64) int64 {
	u := int64(0)
	if r.Addr.Blocked(t) {
		u = r.Addr.BlockedUntil
	}
	for i := range r.Tokens {
		if s := &r.Tokens[i].State; s.Blocked(t) && s.BlockedUntil > u {
			u = s.BlockedUntil
		}
	}
	return u
}

// decodeState reads a state as the scripts write it: TAT, ThrottleUntil,
// StrikeFrom, WindowStart, BlockedUntil, Remember, RobotsAt, LastSeen,
// Strikes, Slips, Offenses and Why, comma-separated (a state written
// before blocks carried their reason has no Why: WhyUnknown). An empty
// string is the zero state.
func decodeState(s string) (enforce.State, error) {
	var st enforce.State
	if s == "" {
		return st, nil
	}
	times := [...]*int64{&st.TAT, &st.ThrottleUntil, &st.StrikeFrom, &st.WindowStart, &st.BlockedUntil, &st.Remember, &st.RobotsAt, &st.LastSeen}
	counts := [...]*int32{&st.Strikes, &st.Slips, &st.Offenses, (*int32)(&st.Why)}
	for i := range len(times) + len(counts) {
		if i == len(times)+len(counts)-1 && s == "" {
			break // no Why
		}
		f, rest, _ := strings.Cut(s, ",")
		s = rest
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return st, fmt.Errorf("state field %d: %q is not a number", i+1, f)
		}
		if i < len(times) {
			*times[i] = n
		} else {
			*counts[i-len(times)] = int32(n)
		}
	}
	if s != "" {
		return st, fmt.Errorf("state has more than 12 fields")
	}
	return st, nil
}

// decodeRecord reads a record from its hash fields.
func decodeRecord(h map[string]string) (record, error) {
	var r record
	var err error
	if r.Version, err = strconv.ParseInt(h["v"], 10, 64); err != nil {
		return r, fmt.Errorf("version: %v", err)
	}
	if r.Addr, err = decodeState(h["a"]); err != nil {
		return r, err
	}
	r.Name = h["m"]
	n, err := strconv.Atoi(cmp.Or(h["n"], "0"))
	if err != nil || n < 0 || n > 4 {
		return r, fmt.Errorf("bad token count %q", h["n"])
	}
	for i := 1; i <= n; i++ {
		st, err := decodeState(h["t"+strconv.Itoa(i)])
		if err != nil {
			return r, err
		}
		r.Tokens = append(r.Tokens, tokenState{Name: h["k"+strconv.Itoa(i)], State: st})
	}
	return r, nil
}
