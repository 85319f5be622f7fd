#!/usr/bin/env bash
# The README's figure for `capsule demo`: the built binary, run RUNS times
# (default 5), each into a new folder; prints every wall time, then the
# median and the range, and the machine's core count. The first
# `go run ./cmd/capsule demo` also compiles the binary, which is not
# counted here. Usage:
#   bench/demo.sh [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -o "$work/capsule" ./cmd/capsule
times=()
for i in $(seq "$runs"); do
	mkdir "$work/$i"
	start=$(date +%s%N)
	(cd "$work/$i" && "$work/capsule" demo >/dev/null)
	end=$(date +%s%N)
	ms=$(((end - start) / 1000000))
	t=$(printf '%d.%03d' $((ms / 1000)) $((ms % 1000)))
	times+=("$t")
	echo "run $i: $t s"
done
printf '%s\n' "${times[@]}" | sort -n | awk -v cores="$(nproc)" '
	{ t[NR] = $1 }
	END {
		m = (NR % 2) ? t[(NR + 1) / 2] : (t[NR / 2] + t[NR / 2 + 1]) / 2
		printf "capsule demo: median %.1f s over %d runs (%.1f–%.1f s) on %d cores\n", m, NR, t[1], t[NR], cores
	}'
