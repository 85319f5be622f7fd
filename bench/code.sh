#!/usr/bin/env bash
# Side-by-side benchmark of executing code-task completions in the sandbox
# (capsule rescore --execute-code: one bubblewrap sandbox per completion)
# against the same programs under plain python3 without a sandbox, both
# through the same driver (HF evaluate code_eval's execution), one process
# per completion, as many at once as GOMAXPROCS.
#
# The Go benchmark is analysis/internal/sandbox BenchmarkPrograms; this
# prints completions per second of each (1e9 / the median ns/op over the
# runs) and the sandbox's overhead as the ratio sandbox/plain.
#
# Usage: bench/code.sh [RUNS]   (default 5 runs of 100 completions each)
# Fails when the sandbox costs more than 3× plain python3.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}
command -v go >/dev/null || { echo "bench: go is missing" >&2; exit 2; }
[ -x /usr/bin/bwrap ] || { echo "bench: /usr/bin/bwrap is missing (apt-get install -y bubblewrap)" >&2; exit 2; }
[ -x /usr/bin/python3 ] || { echo "bench: /usr/bin/python3 is missing (apt-get install -y python3)" >&2; exit 2; }

out=$(go test ./analysis/internal/sandbox -run '^$' -bench '^BenchmarkPrograms$' -benchtime 100x -count "$runs")
median() {
	awk -v name="$1" '$1 ~ "^BenchmarkPrograms/"name"-" {print $3}' <<<"$out" | sort -g |
		awk '{a[NR]=$1} END {if (NR) print a[int((NR+1)/2)]}'
}
sb=$(median sandbox)
plain=$(median plain)
[ -n "$sb" ] && [ -n "$plain" ] || { echo "bench: no ns/op in the Go output" >&2; echo "$out" >&2; exit 1; }
procs=$(awk '/^BenchmarkPrograms\/sandbox-/ {n=split($1,a,"-"); print a[n]; exit}' <<<"$out")
awk -v sb="$sb" -v plain="$plain" -v procs="$procs" -v runs="$runs" 'BEGIN {
	printf "completions executed, %s at a time, median of %s runs of 100:\n", procs, runs
	printf "  bubblewrap sandbox   %7.1f completions/s\n", 1e9 / sb
	printf "  plain python3        %7.1f completions/s\n", 1e9 / plain
	printf "  sandbox overhead     %7.2f× (sandbox time / plain time)\n", sb / plain
	exit (sb / plain > 3) ? 1 : 0
}'
