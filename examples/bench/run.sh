#!/usr/bin/env bash
# Overhead of robots_guard: wrk against four Caddy fronts on this machine,
# each a Caddy of its own, all proxying to the same backend (a fifth), with
# the same mixed browser and bot traffic (mix.lua):
#   plain    reverse_proxy only
#   guard    robots_guard + reverse_proxy
#   regexp   the common alternative: a header_regexp User-Agent matcher with
#            the ai.robots.txt names and "respond 403", + reverse_proxy
#   plain2   a second, identical plain site: its ratio to plain is the noise
#            floor, the smallest difference this machine can resolve
# Prints req/s and p50/p99 latency, the ratio to plain Caddy of the same
# round (median over rounds), and each front's own CPU time per request with
# its ratio to plain's, inverted: the figure that other processes on a
# shared machine disturb least (the req/s of one round can move by 30%).
#
#   examples/bench/run.sh                       # 5s per run, 7 rounds
#   BENCH_ROUNDS=15 BENCH_DURATION=4s examples/bench/run.sh   # a 2% difference
#   BENCH_DURATION=2s BENCH_ROUNDS=1 examples/bench/run.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
. examples/bench/lib.sh # cputicks, hz, median
duration=${BENCH_DURATION:-5s}
rounds=${BENCH_ROUNDS:-7}
conns=${BENCH_CONNECTIONS:-64}
threads=${BENCH_THREADS:-1}

if ! command -v wrk >/dev/null 2>&1; then
	apt-get update -qq && apt-get install -y -qq wrk >/dev/null
fi
work=$(mktemp -d)
go build -o "$work/caddy" ./examples/caddy

# The ai.robots.txt names, as the regexp alternative lists them.
names=$(grep -oE '^    "[^"]+": \{' uaclass/internal/botsgen/data/robots.json | sed -E 's/^    "(.*)": \{/\1/' |
	sed -E 's/[][().*+?^$|\\]/\\&/g' | paste -sd '|')
printf 'User-agent: *\nDisallow: /private/\n' >"$work/robots.txt"
globals='{
	admin off
	auto_https off
	log {
		level ERROR
	}
}'
site() { # name port body
	printf '%s\n:%s {\n\tbind 127.0.0.1\n%s\n}\n' "$globals" "$2" "$3" >"$work/$1.Caddyfile"
}
site backend 18080 '	respond "hello from the backend" 200'
site plain 18081 '	reverse_proxy 127.0.0.1:18080'
site guard 18082 "	robots_guard {
		robots $work/robots.txt
		verify off
		rate ai 0s
		rate seo 0s
		rate script 0s
		rate bot 0s
		rate unknown 0s
		strikes 1000000000
	}
	reverse_proxy 127.0.0.1:18080"
site regexp 18083 "	@ai header_regexp User-Agent \"(?i)($names)\"
	respond @ai 403
	reverse_proxy 127.0.0.1:18080"
site plain2 18084 '	reverse_proxy 127.0.0.1:18080'
# Caddy and wrk on separate cores where there are two, so that they do not
# steal each other's time and the runs are comparable.
pin_caddy=() pin_wrk=()
if command -v taskset >/dev/null 2>&1 && [ "$(nproc)" -ge 2 ]; then
	pin_caddy=(taskset -c 1) pin_wrk=(taskset -c 0)
fi
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; rm -rf "$work"' EXIT
for name in backend plain guard regexp plain2; do
	GOMAXPROCS=${BENCH_CADDY_PROCS:-1} "${pin_caddy[@]}" "$work/caddy" run --config "$work/$name.Caddyfile" --adapter caddyfile >"$work/$name.log" 2>&1 &
	pids+=($!)
	echo "$name $!" >>"$work/pids"
done
for port in 18080 18081 18082 18083 18084; do
	for _ in $(seq 100); do curl -fsS -o /dev/null "http://127.0.0.1:$port/" 2>/dev/null && break; sleep 0.1; done
done

# run NAME PORT: one wrk run; writes "rps p50_ms p99_ms requests cpu-ticks"
# to $work/NAME.res
run() {
	local t0
	t0=$(cputicks "$1")
	"${pin_wrk[@]}" wrk -t"$threads" -c"$conns" -d"$duration" --latency -s examples/bench/mix.lua "http://127.0.0.1:$2/" >"$work/$1.out"
	if [ "$1" != regexp ] && grep -q "Non-2xx" "$work/$1.out"; then
		echo "$1: some requests were refused, so the run would not measure overhead:" >&2
		grep "Non-2xx" "$work/$1.out" >&2
		return 1
	fi
	awk -v cpu=$(($(cputicks "$1") - t0)) '
		function ms(v) { if (v ~ /us$/) return v/1000; if (v ~ /ms$/) return v+0; if (v ~ /s$/) return v*1000; return v }
		/Requests\/sec:/ { rps = $2 }
		/requests in/ { n = $1 }
		/^ +50%/ { p50 = ms($2) }
		/^ +99%/ { p99 = ms($2) }
		END { printf "%s %.3f %.3f %d %d\n", rps, p50, p99, n, cpu }' "$work/$1.out" >"$work/$1.res"
}
echo "warming up..."
for port in 18081 18082 18083 18084; do "${pin_wrk[@]}" wrk -t1 -c8 -d1s -s examples/bench/mix.lua "http://127.0.0.1:$port/" >/dev/null; done
# Each round runs the configs back to back; ratios are taken within a round,
# where the machine's drift is smallest, and the median over rounds is
# reported. The order rotates from round to round, so that no config always
# runs first or last.
configs=(plain:18081 guard:18082 regexp:18083 plain2:18084)
for r in $(seq "$rounds"); do
	for i in "${!configs[@]}"; do
		cfg=${configs[$(((i + r - 1) % ${#configs[@]}))]}
		name=${cfg%%:*}
		run "$name" "${cfg##*:}"
		read -r rps p50 p99 n cpu <"$work/$name.res"
		echo "round $r: $name $rps req/s, p50 ${p50}ms, p99 ${p99}ms"
		echo "$r $rps $p50 $p99 $n $cpu" >>"$work/$name.rounds"
	done
done
echo
echo "$(nproc) cores (each Caddy on ${pin_caddy[*]:-any core}, wrk on ${pin_wrk[*]:-any core}), $(date -u +%Y-%m-%d), wrk -t$threads -c$conns -d$duration, $rounds rounds, medians"
printf '%-8s %10s %12s %9s %9s %12s %12s %10s\n' config "req/s" "vs plain" "p50 ms" "p99 ms" "p99 added" "CPU µs/req" "vs plain"
for name in plain guard regexp plain2; do
	rps=$(awk '{ print $2 }' "$work/$name.rounds" | median)
	ratio=$(paste "$work/$name.rounds" "$work/plain.rounds" | awk '{ print 100 * $2 / $8 }' | median)
	p50=$(awk '{ print $3 }' "$work/$name.rounds" | median)
	p99=$(awk '{ print $4 }' "$work/$name.rounds" | median)
	added=$(paste "$work/$name.rounds" "$work/plain.rounds" | awk '{ print $4 - $10 }' | median)
	cpu=$(awk -v hz="$hz" '{ print 1e6 * $6 / hz / $5 }' "$work/$name.rounds" | median)
	cpuratio=$(paste "$work/$name.rounds" "$work/plain.rounds" | awk '{ print 100 * ($12 / $11) / ($6 / $5) }' | median)
	printf '%-8s %10.0f %11.1f%% %9.3f %9.3f %+11.3fms %12.1f %9.1f%%\n' "$name" "$rps" "$ratio" "$p50" "$p99" "$added" "$cpu" "$cpuratio"
done
