#!/usr/bin/env bash
# The TLS fingerprint's cost: the same binary, two fronts over HTTPS, one
# with the JA4 of every handshake recorded and read per request (ja4 on,
# the default) and one without (ja4 off). Both with posers off, so that
# both serve every request (a browser User-Agent) and only the
# fingerprint differs. Caddy on one core, wrk on the other.
#   keep-alive   requests/s over kept-alive TLS connections
#   handshakes   requests/s with a new connection (and full TLS handshake)
#                per request (wrk -H 'Connection: close')
# Then a flood of handshakes against the ja4-on front: its RSS before and
# after (the table of handshakes is fixed: 32,768 slots).
#
#   examples/bench/tls.sh                       # 5s per run, 3 rounds, flood of 1,000,000
#   BENCH_DURATION=2s BENCH_ROUNDS=1 BENCH_FLOOD=100000 examples/bench/tls.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
duration=${BENCH_DURATION:-5s}
rounds=${BENCH_ROUNDS:-3}
conns=${BENCH_CONNECTIONS:-32}
flood=${BENCH_FLOOD:-1000000}
work=$(mktemp -d)
go build -o "$work/caddy" ./examples/caddy
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=localhost \
	-addext subjectAltName=DNS:localhost,IP:127.0.0.1 -days 2 -keyout "$work/key.pem" -out "$work/cert.pem" 2>/dev/null
printf 'User-agent: *\nAllow: /\n' >"$work/robots.txt"
config() { # name port ja4
	cat >"$work/$1.Caddyfile" <<CFG
{
	admin off
	auto_https off
	log {
		level ERROR
	}
}
https://localhost:$2 {
	bind 127.0.0.1
	tls $work/cert.pem $work/key.pem
	robots_guard {
		robots $work/robots.txt
		verify off
		posers off
		ja4 $3
	}
	respond "the site" 200
}
CFG
}
config on 18443 on
config off 18444 off
pin_caddy=() pin_wrk=()
if command -v taskset >/dev/null 2>&1 && [ "$(nproc)" -ge 2 ]; then
	pin_caddy=(taskset -c 1) pin_wrk=(taskset -c 0)
fi
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; rm -rf "$work"' EXIT
for f in on:18443 off:18444; do
	GOMAXPROCS=1 "${pin_caddy[@]}" "$work/caddy" run --config "$work/${f%%:*}.Caddyfile" --adapter caddyfile >"$work/${f%%:*}.out" 2>&1 &
	pids+=($!)
	echo "${f%%:*} $!" >>"$work/pids"
done
for port in 18443 18444; do
	for _ in $(seq 100); do curl -sk -o /dev/null "https://localhost:$port/" && break; sleep 0.1; done
done
ua='User-Agent: Mozilla/5.0 (X11; Linux x86_64; rv:140.0) Gecko/20100101 Firefox/140.0'
# run FRONT PORT MODE: one wrk run, prints requests/s; every answer must be 200.
run() {
	local extra=()
	[ "$3" = handshakes ] && extra=(-H 'Connection: close')
	"${pin_wrk[@]}" wrk -t1 -c"$conns" -d"${4:-$duration}" -H "$ua" "${extra[@]}" "https://localhost:$2/" >"$work/wrk.out"
	if grep -q 'Non-2xx' "$work/wrk.out"; then
		echo "$1 $3: non-200 answers" >&2
		cat "$work/wrk.out" >&2
		return 1
	fi
	awk '/Requests\/sec:/ { print $2 }' "$work/wrk.out"
}
rss() { awk '/VmRSS/ { printf "%.1f", $2 / 1024 }' "/proc/$(awk -v n="$1" '$1 == n { print $2 }' "$work/pids")/status"; }
echo "warming up..."
for m in keep-alive handshakes; do run on 18443 $m 1s >/dev/null; run off 18444 $m 1s >/dev/null; done
for r in $(seq "$rounds"); do
	for m in keep-alive handshakes; do
		# alternate which front goes first
		if [ $((r % 2)) = 1 ]; then a=$(run on 18443 $m); b=$(run off 18444 $m); else b=$(run off 18444 $m); a=$(run on 18443 $m); fi
		echo "$m $a $b" >>"$work/rounds"
		echo "round $r $m: ja4 on $a req/s, off $b req/s"
	done
done
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
echo
echo "$(nproc) cores (Caddy on ${pin_caddy[*]:-any core}, GOMAXPROCS=1; wrk on ${pin_wrk[*]:-any core}), $(date -u +%Y-%m-%d), wrk -t1 -c$conns -d$duration, $rounds rounds, medians"
printf '%-12s %14s %14s %10s\n' mode "ja4 on req/s" "ja4 off req/s" "on/off"
for m in keep-alive handshakes; do
	on=$(awk -v m=$m '$1 == m { print $2 }' "$work/rounds" | median)
	off=$(awk -v m=$m '$1 == m { print $3 }' "$work/rounds" | median)
	ratio=$(awk -v m=$m '$1 == m { print 100 * $2 / $3 }' "$work/rounds" | median)
	printf '%-12s %14s %14s %9.1f%%\n' "$m" "$on" "$off" "$ratio"
done
# The flood: $flood handshakes, each its own connection, from as many
# source ports, against the ja4-on front.
before=$(rss on)
hs=$(awk '$1 == "handshakes" { print $2 }' "$work/rounds" | median)
secs=$(awk -v n="$flood" -v r="$hs" 'BEGIN { s = int(n / r) + 1; print s }')
"${pin_wrk[@]}" wrk -t1 -c"$conns" -d"${secs}s" -H "$ua" -H 'Connection: close' "https://localhost:18443/" >"$work/flood.out"
done_n=$(awk '/requests in/ { print $1 }' "$work/flood.out")
sleep 1
after=$(rss on)
echo
echo "flood: $done_n TLS handshakes in ${secs}s against ja4 on: RSS $before MiB before, $after MiB after"
