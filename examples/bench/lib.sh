# Helpers the benchmark scripts share (sourced from the repository's root
# by flood.sh, run.sh and tls.sh).

# cputicks NAME: the CPU time (user + system, in clock ticks) that NAME's
# Caddy has used so far; $work/pids holds "NAME PID" lines.
cputicks() { awk '{ print $14 + $15 }' "/proc/$(awk -v n="$1" '$1 == n { print $2 }' "$work/pids")/stat"; }
# hz is the clock ticks per second that cputicks counts in.
hz=$(getconf CLK_TCK)

# median: the median of the numbers on standard input, one a line.
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
