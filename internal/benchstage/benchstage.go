// Package benchstage lets a measurement build stop robots_guard's handler
// part way through a request and answer it with a bare 403, so that a flood
// of refusals (examples/bench/flood.sh, BENCH_STAGES=1) shows what each
// stage of the refusal path costs against Caddy's own respond 403: reading
// the request, deciding, recording. Only a build with the tag
// robotsguard_stages stops anywhere, at the stage named by the environment
// variable ROBOTSGUARD_STAGE; in every other build [Stop] is a constant
// false that the compiler removes. It uses the standard library only.
package benchstage

// Stage is a point on the handler's path, after the work it names.
type Stage uint8

// The stages, in the order a request meets them.
const (
	None   Stage = iota
	Read         // the request read (enforce.Reader.Read)
	Decide       // the decision made (enforce.Engine.Decide)
	Record       // the decision recorded: metrics, statistics, decision log
)
