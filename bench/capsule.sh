#!/usr/bin/env bash
# Side-by-side benchmark of packing and pulling a capsule against the
# baseline the capsule format must beat: `tar --zstd -cf` of the same study
# plus `sha256sum` of its files (what a hand-made, checked archive costs).
# All on this machine, in one run, on a simulated study of about 1 GB of
# lm-eval samples (ten full-size GSM8K + MMLU runs):
#   - capsule pack STUDY -o LAYOUT       (hash, compress samples, write blobs)
#   - capsule pull REGISTRY/REPO -o DIR  (from Debian's docker-registry on
#                                         127.0.0.1, every blob checked)
#   - capsule unpack LAYOUT -o DIR       (decompress and check every file)
# It prints each median wall time and its ratio to the baseline. Usage:
#   bench/capsule.sh [RUNS]      (default 3 runs of each, median reported)
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
runs=${1:-3}
for tool in tar zstd sha256sum docker-registry; do
	command -v "$tool" >/dev/null || { echo "bench: $tool is missing (apt-get install $tool)" >&2; exit 2; }
done

work=$(mktemp -d)
port=$((20000 + RANDOM % 20000))
cleanup() {
	"$repo/.ci/registry-down.sh" "$work/registry" >/dev/null 2>&1 || true
	rm -rf "$work"
}
trap cleanup EXIT
go build -o "$work/capsule" ./cmd/capsule
capsule=$work/capsule

mkdir -p "$work/study"
cat >"$work/study/study.yaml" <<'YAML'
# SIMULATED: a benchmark study; no model is run.
study: bench
model: {id: simulated/model-1b}
card:
  claims:
    - {task: gsm8k, metric: exact_match, filter: strict-match, value: 0.45}
harness: {version: 0.4.9.1}
runner: {kind: simulated}
baseline: {model: hf, tasks: [gsm8k, mmlu], num_fewshot: 5, log_samples: true}
variants:
  - {num_fewshot: 0}
  - {num_fewshot: 1}
  - {num_fewshot: 2}
  - {num_fewshot: 3}
  - {num_fewshot: 4}
  - {apply_chat_template: true}
  - {model_args: {dtype: float16}}
  - {batch_size: 1}
  - {batch_size: 16}
YAML
"$capsule" run "$work/study" --runner simulated --json >/dev/null
bytes=$(du -sb "$work/study" | cut -f1)
files=$(find "$work/study" -type f | wc -l)
find "$work/study" -type f -exec cat {} + >/dev/null # warm the page cache

"$repo/.ci/registry-up.sh" "$work/registry" "$port" >/dev/null
"$capsule" pack "$work/study" -o "$work/ref.capsule" >/dev/null
"$capsule" push "$work/ref.capsule" "127.0.0.1:$port/bench/study:v1" >/dev/null

# median wall seconds of a command over $runs runs; $reset runs before each
median() {
	local t=()
	for _ in $(seq "$runs"); do
		$reset
		local s e
		s=$(date +%s.%N)
		"$@" >/dev/null
		e=$(date +%s.%N)
		t+=("$(awk -v s="$s" -v e="$e" 'BEGIN {print e - s}')")
	done
	printf '%s\n' "${t[@]}" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'
}
clean() { rm -rf "$work/out" "$work/out.tar.zst"; sync; }
baseline() {
	tar --zstd -cf "$work/out.tar.zst" -C "$work/study" .
	(cd "$work/study" && find . -type f -print0 | xargs -0 sha256sum)
}
pack() { "$capsule" pack "$work/study" -o "$work/out"; }
pull() { "$capsule" pull "127.0.0.1:$port/bench/study:v1" -o "$work/out"; }
unpack() { "$capsule" unpack "$work/ref.capsule" -o "$work/out"; }

reset=clean
echo "study: $files files, $((bytes / 1000000)) MB (simulated samples); $(nproc) cores; median of $runs runs"
t_base=$(median baseline)
t_pack=$(median pack)
t_pull=$(median pull)
t_unpack=$(median unpack)
div() { awk -v a="$1" -v b="$2" 'BEGIN {print a / b}'; }
row() { printf '%-52s %8.2f s  %5.2f× the baseline time\n' "$1" "$2" "$(div "$2" "$t_base")"; }
row "baseline: tar --zstd -cf + sha256sum of every file" "$t_base"
row "capsule pack (layout directory)" "$t_pack"
row "capsule pull (distribution 2.8 on 127.0.0.1)" "$t_pull"
row "capsule unpack (decompress and check every file)" "$t_unpack"
fail=0
for t in "$t_pack" "$t_pull"; do
	awk -v a="$t" -v b="$t_base" 'BEGIN {exit !(a <= b)}' || fail=1
done
if [ "$fail" = 0 ]; then
	echo "pack and pull are at least as fast as the baseline"
else
	echo "pack or pull is SLOWER than the baseline" >&2
	exit 1
fi
