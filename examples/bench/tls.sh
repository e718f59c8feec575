#!/usr/bin/env bash
# What the poser check costs: the same binary, two fronts over HTTPS, in one
# run, Caddy on one core, wrk on the other:
#   keep-alive   requests/s over kept-alive TLS connections
#   handshakes   requests/s with a new connection (and full TLS handshake)
#                per request (wrk -H 'Connection: close')
# BENCH_MODE picks the two fronts:
#   posers (default)  the whole check (ja4 on, posers enforce) against the
#                     check off (ja4 off, posers off). wrk speaks OpenSSL and
#                     sends a Firefox User-Agent with no Sec-Fetch-*: to the
#                     check it IS a poser, judged with decisive evidence
#                     (sec-fetch, and tls where the table knows wrk's hello)
#                     and decided as an undeclared bot: the "*" group's rules
#                     matched, the client's state read. So that it is served,
#                     robots.txt is "Allow: /" with no Crawl-delay and class
#                     poser has no rate ("rate poser 0s"): every answer must
#                     be 200, and the run measures the check's most expensive
#                     path, not refusals. Both fronts write the decision log
#                     (log_repeats at its default: a poser's allowed requests
#                     are one line and a count per 10 s); the script checks
#                     that the check-on front logged wrk as class poser with
#                     its evidence, and the check-off front did not.
#   ja4               the fingerprint alone: ja4 on against ja4 off, both
#                     with posers off, so that only recording and reading the
#                     JA4 differs.
#   same              both fronts with the check off: the noise floor, the
#                     least difference between the fronts the run can show.
#   behaviour         the behaviour evidence alone: the whole check on both
#                     fronts (ja4 on, posers enforce), behaviour on against
#                     behaviour off, with BENCH_CLIENT=browser (the default
#                     here) or image. A browser's request is a typed
#                     navigation of the same page: read, summed into its
#                     client's and group's summaries (the most a person's
#                     request costs it) and never held; an image
#                     (Sec-Fetch-Dest: image) has its one header read and
#                     nothing more, as most of a person's requests do.
#   framing           the framing layer alone: the whole check on in both
#                     fronts, the robots_guard listener wrapper on one
#                     (servers { listener_wrappers { robots_guard } }) and
#                     not on the other (a servers block without it), so
#                     that only reading each connection's first request and
#                     looking its fingerprint up differs. Both fronts put
#                     {http.robots_guard.framing} in a response header of
#                     /framing-check; the script checks that the on front's
#                     is curl's fingerprint and the off front's empty.
# BENCH_CLIENT=browser makes wrk send Firefox's navigation headers
# (Sec-Fetch-*) as well, and Firefox's JA4 in a header the check-on front
# reads as a CDN's (ja4_header, from trusted_proxies 127.0.0.1, set on both
# fronts): wrk's own stack is OpenSSL's family, a library's, so its
# handshake is still recorded and classified on every connection, while
# its requests are judged with Firefox's handshake and headers, find no
# evidence, and are served as a browser's: what the check costs a person's
# requests. BENCH_CLIENT=image sends an image's Fetch Metadata
# (Sec-Fetch-Dest: image) instead of a navigation's, with the same JA4.
# Then a flood of handshakes against the on front: its RSS before and after
# (the table of handshakes is fixed: 32,768 slots).
#
#   examples/bench/tls.sh                       # posers, 5s per run, 3 rounds, flood of 1,000,000
#   BENCH_MODE=ja4 examples/bench/tls.sh        # ja4 on vs off
#   BENCH_MODE=framing examples/bench/tls.sh    # the framing wrapper on vs off
#   BENCH_CLIENT=browser examples/bench/tls.sh  # the check's cost to a browser
#   BENCH_DURATION=3s BENCH_ROUNDS=3 BENCH_FLOOD=20000 examples/bench/tls.sh   # quick
set -euo pipefail
cd "$(dirname "$0")/../.."
. examples/bench/lib.sh # cputicks, hz, median
duration=${BENCH_DURATION:-5s}
rounds=${BENCH_ROUNDS:-3}
conns=${BENCH_CONNECTIONS:-32}
flood=${BENCH_FLOOD:-1000000}
mode=${BENCH_MODE:-posers}
client=${BENCH_CLIENT:-poser}
[ "$mode" = behaviour ] && client=${BENCH_CLIENT:-browser}
case $client in poser | browser | image) ;; *) echo "BENCH_CLIENT must be poser, browser or image, not $client" >&2; exit 2 ;; esac
case $mode in
posers) on_opts='ja4 on
		posers enforce' off_opts='ja4 off
		posers off' label=check ;;
ja4) on_opts='ja4 on
		posers off' off_opts='ja4 off
		posers off' label=ja4 ;;
same) on_opts='ja4 off
		posers off' off_opts=$on_opts label=same ;;
behaviour) on_opts='ja4 on
		posers enforce' off_opts='ja4 on
		posers enforce
		behaviour off' label=behaviour ;;
framing) on_opts='ja4 on
		posers enforce' off_opts=$on_opts label=framing ;;
*) echo "BENCH_MODE must be posers, ja4, same, behaviour or framing, not $mode" >&2; exit 2 ;;
esac
if [ "$mode" = framing ] && [ "$client" != poser ]; then
	# BENCH_CLIENT=browser's requests come from a trusted proxy, whose
	# connection's framing is not the client's and is not read.
	echo "BENCH_MODE=framing measures a client's own connection: not with BENCH_CLIENT=browser" >&2
	exit 2
fi
trusted='' ja4hdr=''
if [ "$client" != poser ]; then
	trusted='trusted_proxies static 127.0.0.1/32'
	ja4hdr='ja4_header X-Client-JA4'
fi
# The fronts' servers options, in one block (Caddy applies only the first
# servers block that matches a server): it replaces the wrapper the
# directive adds, so each front names its own; HTTP/3 is off, so neither
# needs the QUIC wrapper.
on_servers="servers {
		protocols h1 h2
		$trusted
		listener_wrappers {
			robots_guard
		}
	}" off_servers="servers {
		protocols h1 h2
		$trusted
	}" site_extra=''
if [ "$mode" = framing ]; then
	# Only the check's own request (/framing-check) gets the header: both
	# fronts match the path on every request, neither writes more.
	site_extra='@check path /framing-check
	header @check >X-Framing "{http.robots_guard.framing}"'
fi
work=$(mktemp -d)
go build -o "$work/caddy" ./examples/caddy
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=localhost \
	-addext subjectAltName=DNS:localhost,IP:127.0.0.1 -days 2 -keyout "$work/key.pem" -out "$work/cert.pem" 2>/dev/null
printf 'User-agent: *\nAllow: /\n' >"$work/robots.txt"
config() { # name port options servers
	cat >"$work/$1.Caddyfile" <<CFG
{
	admin off
	auto_https off
	$4
	log {
		level ERROR
	}
	log decisions {
		output file $work/$1.decisions.log
		format json
		include http.handlers.robots_guard
	}
}
https://localhost:$2 {
	bind 127.0.0.1
	tls $work/cert.pem $work/key.pem
	$site_extra
	robots_guard {
		robots $work/robots.txt
		verify off
		rate poser 0s
		$3
	}
	respond "the site" 200
}
CFG
}
[ "$mode" != same ] && on_opts="$on_opts
		$ja4hdr"
[ "$mode" = behaviour ] && off_opts="$off_opts
		$ja4hdr"
config on 18443 "$on_opts" "$on_servers"
config off 18444 "$off_opts" "$([ "$mode" = framing ] && echo "$off_servers" || echo "$on_servers")"
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
hdrs=(-H "$ua")
if [ "$client" = browser ]; then
	# Firefox's navigation headers, and Firefox ESR 140's JA4 as a CDN
	# passes it on (the check-on front's ja4_header): the check judges
	# them and finds no evidence.
	hdrs+=(-H 'Sec-Fetch-Site: none' -H 'Sec-Fetch-Mode: navigate' -H 'Sec-Fetch-Dest: document' -H 'Sec-Fetch-User: ?1'
		-H 'X-Client-JA4: t13d1717h2_5b57614c22b0_3cbfd9057e0d')
elif [ "$client" = image ]; then
	hdrs+=(-H 'Sec-Fetch-Site: same-origin' -H 'Sec-Fetch-Mode: no-cors' -H 'Sec-Fetch-Dest: image'
		-H 'X-Client-JA4: t13d1717h2_5b57614c22b0_3cbfd9057e0d')
fi
# run FRONT PORT MODE [DURATION]: one wrk run; prints its requests/s and
# the front's CPU time per request (µs), which other processes on a
# shared machine disturb less. Every answer must be 200.
run() {
	local extra=() t0
	[ "$3" = handshakes ] && extra=(-H 'Connection: close')
	t0=$(cputicks "$1")
	"${pin_wrk[@]}" wrk -t1 -c"$conns" -d"${4:-$duration}" "${hdrs[@]}" "${extra[@]}" "https://localhost:$2/" >"$work/wrk.out"
	if grep -q 'Non-2xx' "$work/wrk.out"; then
		echo "$1 $3: non-200 answers" >&2
		cat "$work/wrk.out" >&2
		return 1
	fi
	awk -v hz="$hz" -v cpu=$(($(cputicks "$1") - t0)) '/requests in/ { n = $1 } /Requests\/sec:/ { rps = $2 }
		END { printf "%s %.1f\n", rps, 1e6 * cpu / hz / n }' "$work/wrk.out"
}
rss() { awk '/VmRSS/ { printf "%.1f", $2 / 1024 }' "/proc/$(awk -v n="$1" '$1 == n { print $2 }' "$work/pids")/status"; }
echo "warming up..."
for m in keep-alive handshakes; do run on 18443 $m 1s >/dev/null; run off 18444 $m 1s >/dev/null; done
for r in $(seq "$rounds"); do
	for m in keep-alive handshakes; do
		# alternate which front goes first
		if [ $((r % 2)) = 1 ]; then a=$(run on 18443 $m); b=$(run off 18444 $m); else b=$(run off 18444 $m); a=$(run on 18443 $m); fi
		echo "$m $a $b" >>"$work/rounds" # mode, on: req/s µs/req, off: req/s µs/req
		echo "round $r $m: $label on ${a% *} req/s (${a#* } µs CPU/req), off ${b% *} req/s (${b#* } µs CPU/req)"
	done
done
echo
echo "BENCH_MODE=$mode BENCH_CLIENT=$client: on = $(echo $on_opts), off = $(echo $off_opts)"
echo "$(nproc) cores (Caddy on ${pin_caddy[*]:-any core}, GOMAXPROCS=1; wrk on ${pin_wrk[*]:-any core}), $(date -u +%Y-%m-%d), load average $(cut -d' ' -f1-3 /proc/loadavg), wrk -t1 -c$conns -d$duration, $rounds rounds, medians"
printf '%-12s %14s %14s %9s %11s %11s %9s\n' mode "$label on req/s" "$label off req/s" "on/off" "on µs/req" "off µs/req" "off/on"
for m in keep-alive handshakes; do
	col() { awk -v m=$m -v c="$1" '$1 == m { print $c }' "$work/rounds" | median; }
	# the ratios are taken within each round, then their median; off/on of
	# CPU per request is the throughput the CPU time allows, on against off
	ratio=$(awk -v m=$m '$1 == m { print 100 * $2 / $4 }' "$work/rounds" | median)
	cpuratio=$(awk -v m=$m '$1 == m { print 100 * $5 / $3 }' "$work/rounds" | median)
	printf '%-12s %14s %14s %8.1f%% %11s %11s %8.1f%%\n' "$m" "$(col 2)" "$(col 4)" "$ratio" "$(col 3)" "$(col 5)" "$cpuratio"
done
# What the fronts made of wrk: with the check on, class poser and its
# evidence (the first line of each kind; repeats are counted, not logged).
if [ "$mode" = framing ]; then
	framed() { curl -sk -o /dev/null -D - "${hdrs[@]}" "https://localhost:$1/framing-check" | tr -d '\r' | awk -F': ' 'tolower($1) == "x-framing" { print $2 }'; }
	on_print=$(framed 18443) off_print=$(framed 18444)
	if [ -z "$on_print" ] || [ -n "$off_print" ]; then
		echo "framing: the on front read \"$on_print\", the off front \"$off_print\"; want a fingerprint and none" >&2
		exit 1
	fi
	echo "framing on: curl's connection is framed as $on_print; off: none"
elif [ "$mode" = behaviour ] || [ "$mode" = posers ] && [ "$client" != poser ]; then
	if grep -q '"class":"poser"' "$work/on.decisions.log" "$work/off.decisions.log"; then
		echo "wrk with a browser's headers was judged a poser" >&2
		exit 1
	fi
	echo "check on: wrk with Firefox's headers is judged a browser, with no evidence"
elif [ "$mode" = posers ]; then
	if ! grep -q '"class":"poser"' "$work/on.decisions.log"; then
		echo "the check-on front did not judge wrk a poser:" >&2
		head -c 2000 "$work/on.decisions.log" >&2
		exit 1
	fi
	if grep -q '"class":"poser"' "$work/off.decisions.log"; then
		echo "the check-off front judged wrk a poser" >&2
		exit 1
	fi
	grep -m1 '"class":"poser"' "$work/on.decisions.log" | python3 -c 'import json, sys; e = json.load(sys.stdin); print("check on: wrk is class %s, evidence %s, ja4 %s, %s" % (e["class"], e.get("evidence"), e.get("ja4"), e["action"]))'
fi
# The flood: $flood handshakes, each its own connection, from as many
# source ports, against the on front.
before=$(rss on)
hs=$(awk '$1 == "handshakes" { print $2 }' "$work/rounds" | median)
secs=$(awk -v n="$flood" -v r="$hs" 'BEGIN { s = int(n / r) + 1; print s }')
"${pin_wrk[@]}" wrk -t1 -c"$conns" -d"${secs}s" "${hdrs[@]}" -H 'Connection: close' "https://localhost:18443/" >"$work/flood.out"
done_n=$(awk '/requests in/ { print $1 }' "$work/flood.out")
sleep 1
after=$(rss on)
echo
echo "flood: $done_n TLS handshakes in ${secs}s against $label on: RSS $before MiB before, $after MiB after"
