#!/usr/bin/env bash
# A flood of refused requests: a rogue bot (a handful of client addresses)
# hammers the disallowed paths of a Wikipedia-sized robots.txt. One Caddy
# per front, each on one core, wrk on the other core:
#   bare     respond 403: the floor, what answering at all costs
#   quiet    robots_guard, logs filtered out (log { level ERROR })
#   logged   robots_guard with the README's decision log (a JSON file),
#            log_repeats at its default (10s)
#   every    the same with log_repeats 0: every refusal logged, as before
#            log_repeats existed
# Prints req/s, the ratio to bare of the same round (median over rounds),
# and the decision log's bytes per refused request.
#
#   examples/bench/flood.sh                        # 5s per run, 7 rounds
#   BENCH_DURATION=2s BENCH_ROUNDS=1 examples/bench/flood.sh
#   BENCH_ROBOTS=/path/to/robots.txt               # else Wikipedia's, when the shared
#                                                  # benchmark data is beside the
#                                                  # repository, else a generated file
#   BENCH_GUARD='strikes 1000000000'               # extra robots_guard options (here:
#                                                  # never block, so every refusal
#                                                  # matches a rule)
#   BENCH_BEFORE=/path/to/caddy                    # also run quiet and logged fronts
#                                                  # on another build (before-quiet,
#                                                  # before-logged), e.g. of an
#                                                  # earlier commit
#   BENCH_STAGES=1                                 # also run the logged front built
#                                                  # with -tags robotsguard_stages,
#                                                  # stopped after reading the request
#                                                  # (stage-read), after deciding
#                                                  # (stage-decide), after recording
#                                                  # (stage-record), and whole
#                                                  # (stage-none): what each stage of
#                                                  # a refusal costs (internal/benchstage)
set -euo pipefail
cd "$(dirname "$0")/../.."
. examples/bench/lib.sh # cputicks, hz, median
duration=${BENCH_DURATION:-5s}
rounds=${BENCH_ROUNDS:-7}
conns=${BENCH_CONNECTIONS:-64}
threads=${BENCH_THREADS:-1}
guard=${BENCH_GUARD:-}

if ! command -v wrk >/dev/null 2>&1; then
	apt-get update -qq && apt-get install -y -qq wrk >/dev/null
fi
work=$(mktemp -d)
go build -o "$work/caddy" ./examples/caddy
stages=()
if [ -n "${BENCH_STAGES:-}" ]; then
	go build -tags robotsguard_stages -o "$work/caddy-stages" ./examples/caddy
	stages=(read decide record none)
fi

# The robots.txt: Wikipedia's (not in this repository: it has no licence)
# where the shared benchmark data is found, else a file of the same shape
# (bad-bot groups, then a "*" group of some 230 rules under /w/, /api/ and
# /wiki/ namespaces, raw UTF-8 and percent-encoded).
robots=${BENCH_ROBOTS:-}
if [ -z "$robots" ]; then
	for f in ../shared/data/robots-bench/wikipedia-robots.txt ../../shared/data/robots-bench/wikipedia-robots.txt; do
		if [ -f "$f" ]; then robots=$f; break; fi
	done
fi
if [ -z "$robots" ]; then
	robots=$work/robots.txt
	{
		for bot in MJ12bot Mediapartners-Google UbiCrawler DOC Zao sitecheck.internetseer.com Zealbot MSIECrawler SiteSnagger WebStripper WebCopier Fetch Offline\ Explorer Teleport TeleportPro WebZIP linko HTTrack Microsoft.URL.Control Xenu larbin libwww ZyBORG Download\ Ninja wget grub-client k2spider NPBot WebReaper; do
			printf 'User-agent: %s\nDisallow: /\n\n' "$bot"
		done
		printf 'User-agent: *\nAllow: /w/api.php?action=mobileview&\nAllow: /w/load.php?\nDisallow: /w/\nDisallow: /api/\nDisallow: /trap/\n'
		for ns in Special Spezial Spesial Especial Speciale Specjalna Spécial Служебная 特別 Wikipedia Wikipédia Википедия; do
			for page in Search Random Löschkandidaten Vandalensperrung Benutzersperrung Administratoren/Probleme Qualitätssicherung Checkuser Sockenpuppen Schiedsgericht/Anfragen Löschprüfung Gesperrte_Lemmata Adminkandidaturen Vermittlungsausschuss Ylläpitäjät Artículos_para_borrar Pages_à_supprimer Kandidaturen Benutzerseiten; do
				printf 'Disallow: /wiki/%s:%s/\n' "$ns" "$page"
			done
		done
	} >"$robots"
fi

# The flood: the "*" group's disallowed paths (without wildcards), in
# turn, non-ASCII bytes percent-encoded as HTTP clients send them, from
# five client addresses (X-Forwarded-For from a trusted proxy), with one
# rogue User-Agent.
{
	echo 'local paths = {'
	awk '/^[Uu]ser-agent: *\*/ { star = 1; next } /^[Uu]ser-agent:/ { star = 0 } star && /^Disallow: *\// { sub(/\r$/, ""); p = $2; if (p !~ /[*$]/) { gsub(/"/, "\\\"", p); printf "  \"%sx\",\n", p } }' "$robots"
	echo '}'
	cat <<'LUA'
for i, p in ipairs(paths) do
  paths[i] = p:gsub("[\128-\255]", function(c) return string.format("%%%02X", c:byte()) end)
end
local n = 0
request = function()
  n = n + 1
  return wrk.format("GET", paths[n % #paths + 1], {
    ["User-Agent"] = "Mozilla/5.0 (compatible; RogueBot/2.0; +http://rogue.example/bot)",
    ["X-Forwarded-For"] = "198.51.100." .. (n % 5 + 1),
  })
end
LUA
} >"$work/flood.lua"
npaths=$(grep -c '^  "' "$work/flood.lua")

# Each front's admin API listens on its port + 100, for its metrics.
globals='auto_https off
	servers {
		trusted_proxies static 127.0.0.1/32
	}'
config() { # name port globals body
	printf '{\n\tadmin 127.0.0.1:%s\n\t%s\n\t%s\n}\n:%s {\n\tbind 127.0.0.1\n\t%s\n}\n' "$(($2 + 100))" "$globals" "$3" "$2" "$4" >"$work/$1.Caddyfile"
}
declog() { # file
	printf 'log robots_guard {\n\t\toutput file %s {\n\t\t\troll_disabled\n\t\t}\n\t\tformat json\n\t\tinclude http.handlers.robots_guard\n\t}' "$1"
}
guardBlock() { # extra options
	printf 'robots_guard {\n\t\trobots %s\n\t\t%s\n\t\t%s\n\t}\n\trespond "the site" 200' "$(realpath "$robots")" "$guard" "$1"
}
config bare 18090 "" 'respond 403'
config quiet 18091 'log {
		level ERROR
	}' "$(guardBlock '')"
config logged 18092 "$(declog "$work/logged.log")" "$(guardBlock '')"
config every 18093 "$(declog "$work/every.log")" "$(guardBlock 'log_repeats 0')"
configs=(bare:18090 quiet:18091 logged:18092 every:18093)
if [ -n "${BENCH_BEFORE:-}" ]; then
	cp "$BENCH_BEFORE" "$work/caddy-before"
	config before-quiet 18094 'log {
		level ERROR
	}' "$(guardBlock '')"
	config before-logged 18095 "$(declog "$work/before-logged.log")" "$(guardBlock '')"
	configs+=(before-quiet:18094 before-logged:18095)
fi
logged=(logged every)
[ -n "${BENCH_BEFORE:-}" ] && logged+=(before-logged)
port=18096
for stage in "${stages[@]}"; do
	config "stage-$stage" "$port" "$(declog "$work/stage-$stage.log")" "$(guardBlock '')"
	configs+=("stage-$stage:$port")
	[ "$stage" = record ] || [ "$stage" = none ] && logged+=("stage-$stage")
	port=$((port + 1))
done

# Caddy and wrk on separate cores where there are two.
pin_caddy=() pin_wrk=()
if command -v taskset >/dev/null 2>&1 && [ "$(nproc)" -ge 2 ]; then
	pin_caddy=(taskset -c 1) pin_wrk=(taskset -c 0)
fi
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; rm -rf "$work"' EXIT
for cfg in "${configs[@]}"; do
	name=${cfg%%:*}
	bin=$work/caddy stage=
	[ "${name#before-}" != "$name" ] && bin=$work/caddy-before
	if [ "${name#stage-}" != "$name" ]; then
		bin=$work/caddy-stages stage=${name#stage-}
		[ "$stage" = none ] && stage=
	fi
	ROBOTSGUARD_STAGE=$stage GOMAXPROCS=${BENCH_CADDY_PROCS:-1} "${pin_caddy[@]}" "$bin" run --config "$work/$name.Caddyfile" --adapter caddyfile >"$work/$name.out" 2>&1 &
	pids+=($!)
	echo "$name $!" >>"$work/pids"
done
for cfg in "${configs[@]}"; do
	for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:${cfg##*:}/" 2>/dev/null && break; sleep 0.1; done
done

# run NAME PORT ROUND [DURATION]: one wrk run; appends "round rps requests
# refused cpu-ticks" to $work/NAME.rounds (ROUND 0, the warm-up, to
# NAME.warm). Every response must be a refusal.
run() {
	local out=$work/$1.rounds t0
	[ "$3" = 0 ] && out=$work/$1.warm
	t0=$(cputicks "$1")
	"${pin_wrk[@]}" wrk -t"$threads" -c"$conns" -d"${4:-$duration}" -s "$work/flood.lua" "http://127.0.0.1:$2/" >"$work/$1.out"
	awk -v r="$3" -v cpu=$(($(cputicks "$1") - t0)) '
		/requests in/ { n = $1 }
		/Requests\/sec:/ { rps = $2 }
		/Non-2xx or 3xx responses:/ { refused = $5 }
		END { printf "%s %s %d %d %d\n", r, rps, n, refused, cpu }' "$work/$1.out" >>"$out"
	read -r _ rps n refused _ < <(tail -1 "$out")
	if [ "$n" != "$refused" ]; then
		echo "$1: $refused of $n requests refused: the flood must be refused entirely" >&2
		# What the front allowed, by its metrics (the readiness probe is one).
		curl -s "http://127.0.0.1:$(($2 + 100))/metrics" | grep -E '^caddy_robots_guard_decisions_total.*action="allow"' >&2 || true
		return 1
	fi
	[ "$3" = 0 ] || echo "round $3: $1 $rps req/s"
}
echo "warming up..."
for cfg in "${configs[@]}"; do run "${cfg%%:*}" "${cfg##*:}" 0 1s; done
sleep 1
for name in "${logged[@]}"; do wc -c <"$work/$name.log" >"$work/$name.warmbytes"; done
# Each round runs the fronts back to back, in an order that rotates from
# round to round; ratios are taken within a round, where the machine's
# drift is smallest, and the median over rounds is reported.
for r in $(seq "$rounds"); do
	for i in "${!configs[@]}"; do
		cfg=${configs[$(((i + r - 1) % ${#configs[@]}))]}
		run "${cfg%%:*}" "${cfg##*:}" "$r"
	done
done
# The refusals the metrics counted (the readiness probes were allowed);
# then stop the Caddys gracefully, so
# that the pending repeat counts are written (Cleanup), and weigh the logs.
for cfg in "${configs[@]}"; do
	curl -s "http://127.0.0.1:$((${cfg##*:} + 100))/metrics" |
		awk '/^caddy_robots_guard_decisions_total/ && !/action="allow"/ { s += $NF } END { printf "%d\n", s }' >"$work/${cfg%%:*}.metrics"
done
for p in "${pids[@]}"; do kill -INT "$p" 2>/dev/null || true; done
for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
pids=()

echo
echo "$(nproc) cores (Caddy on ${pin_caddy[*]:-any core}, wrk on ${pin_wrk[*]:-any core}), $(date -u +%Y-%m-%d), wrk -t$threads -c$conns -d$duration, $rounds rounds, medians"
echo "robots.txt: $robots ($(grep -ciE '^(dis)?allow:' "$robots") rules; the flood cycles through $npaths disallowed paths from 5 addresses)${guard:+; options: $guard}"
printf '%-14s %10s %10s %12s %10s %12s %14s %10s\n' front "req/s" "vs bare" "CPU µs/req" "vs bare" "refused" "log bytes" "bytes/ref"
for cfg in "${configs[@]}"; do
	name=${cfg%%:*}
	rps=$(awk '{ print $2 }' "$work/$name.rounds" | median)
	ratio=$(paste "$work/$name.rounds" "$work/bare.rounds" | awk '{ print 100 * $2 / $7 }' | median)
	refused=$(awk '{ s += $4 } END { print s }' "$work/$name.rounds")
	# CPU time per request, and its ratio to bare's of the same round
	# inverted (the throughput each would reach on a core of its own): the
	# figure that other processes on a shared machine disturb least.
	cpu=$(awk -v hz="$hz" '{ print 1e6 * $5 / hz / $3 }' "$work/$name.rounds" | median)
	cpuratio=$(paste "$work/$name.rounds" "$work/bare.rounds" | awk '{ print 100 * ($10 / $8) / ($5 / $3) }' | median)
	bytes=- per=-
	if [ -f "$work/$name.warmbytes" ]; then
		bytes=$(($(wc -c <"$work/$name.log") - $(cat "$work/$name.warmbytes")))
		per=$(awk -v b="$bytes" -v n="$refused" 'BEGIN { printf "%.2f", b / n }')
	fi
	printf '%-14s %10.0f %9.1f%% %12.1f %9.1f%% %12d %14s %10s\n' "$name" "$rps" "$ratio" "$cpu" "$cpuratio" "$refused" "$bytes" "$per"
done
# The report over each log counts every decision the metrics counted,
# folded or not (warm-up included; a few more than wrk saw, which stops
# counting with requests in flight).
for name in "${logged[@]}"; do
	want=$(cat "$work/$name.metrics")
	got=$("$work/caddy" robots report --json "$work/$name.log" | awk '/^  "decisions":/ { gsub(/[^0-9]/, ""); print }')
	echo "caddy robots report over the $name front's log: $got decisions; the metrics: $want"
	if [ "$got" != "$want" ]; then
		echo "$name: the report does not count what the metrics count" >&2
		exit 1
	fi
done
