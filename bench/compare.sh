#!/usr/bin/env bash
# Side-by-side benchmark of `capsule rescore` against two baselines on the
# same full-size study, in one run on this machine:
#   - Debian's Python json.loads of every samples line (parsing alone, no
#     scoring), the floor of any Python re-scorer;
#   - jq -c . over the same files.
# It prints each median wall time and the ratios. Usage:
#   bench/compare.sh [RUNS]      (default 5 runs of each, median reported)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}
py=/usr/bin/python3
command -v jq >/dev/null || { echo "bench: jq is missing (apt-get install jq)" >&2; exit 2; }
[ -x "$py" ] || { echo "bench: $py is missing (apt-get install python3)" >&2; exit 2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -o "$work/capsule" ./cmd/capsule
"$work/capsule" generate --seed 1 "$work/study" >/dev/null
samples=("$work"/study/*/samples_*.jsonl)
bytes=$(cat "${samples[@]}" | wc -c)
lines=$(cat "${samples[@]}" | wc -l)
cat "${samples[@]}" >/dev/null # warm the page cache for everyone

# median wall seconds of a command over $runs runs
median() {
	local t=()
	for _ in $(seq "$runs"); do
		local s e
		s=$(date +%s.%N)
		"$@" >/dev/null
		e=$(date +%s.%N)
		t+=("$(awk -v s="$s" -v e="$e" 'BEGIN {print e - s}')")
	done
	printf '%s\n' "${t[@]}" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'
}

pyload() {
	"$py" -c '
import json, sys
for path in sys.argv[1:]:
    with open(path, encoding="utf-8") as f:
        for line in f:
            json.loads(line)
' "${samples[@]}"
}
jqall() { jq -c . "${samples[@]}"; }
rescore() { "$work/capsule" rescore --json "$work/study"; }

echo "study: ${#samples[@]} samples files, $lines lines, $((bytes / 1000000)) MB (simulated, seed 1); $(nproc) cores; median of $runs runs"
t_go=$(median rescore)
t_py=$(median pyload)
t_jq=$(median jqall)
printf '%-44s %8.3f s  %6.2f× capsule\n' "capsule rescore (parse + re-score + compare)" "$t_go" 1
div() { awk -v a="$1" -v b="$2" 'BEGIN {print a / b}'; }
printf '%-44s %8.3f s  %6.2f× capsule\n' "python3 json.loads of every line" "$t_py" "$(div "$t_py" "$t_go")"
printf '%-44s %8.3f s  %6.2f× capsule\n' "jq -c ." "$t_jq" "$(div "$t_jq" "$t_go")"
ratio=$(div "$t_go" "$t_py")
printf 'capsule rescore takes %.2f of the time Python needs just to parse (budget: at most 0.50)\n' "$ratio"
