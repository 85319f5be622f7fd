#!/usr/bin/env bash
# Side-by-side benchmark of capsule's paired bootstrap (analysis.PairedStats)
# against scipy.stats.bootstrap(paired=True, method='percentile') on the same
# data, in one run on this machine: 14,042 paired 0/1 scores (MMLU-sized,
# about 50 % correct, correlated), 10,000 resamples each, 95 % interval.
#
# The Go benchmark (analysis/stats_bench_test.go, BenchmarkPairedBootstrap)
# writes its documents and its interval to a file; Debian's Python loads that
# file and times scipy on it, so both bootstrap the same arrays. Go's figure
# is the benchmark's ns/op (median of the -count runs), scipy's the median
# wall time of the bootstrap call alone (data loading and imports excluded).
# scipy gets its fastest setting: vectorized=True with batch=1000 (the
# default batch=None materialises 10,000 × 14,042 resamples at once and is
# several times slower).
#
# Usage: bench/bootstrap.sh [RUNS]   (default 5 Go runs, 3 scipy runs)
# Fails when the ratio is under the budget of 100×, or Go takes 50 ms or more.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}
pyruns=3
py=/usr/bin/python3
resamples=10000
[ -x "$py" ] || { echo "bench: $py is missing (apt-get install -y python3)" >&2; exit 2; }
"$py" -c 'import numpy' 2>/dev/null || { echo "bench: $py cannot import numpy: install Debian's python3-numpy (apt-get install -y python3-numpy)" >&2; exit 2; }
"$py" -c 'import scipy.stats' 2>/dev/null || { echo "bench: $py cannot import scipy.stats: install Debian's python3-scipy (apt-get install -y python3-scipy)" >&2; exit 2; }
command -v go >/dev/null || { echo "bench: go is missing" >&2; exit 2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
data="$work/paired.txt"

CAPSULE_PAIRED_BOOTSTRAP_DATA="$data" go test ./analysis -run '^$' -bench '^BenchmarkPairedBootstrap$' \
	-count "$runs" >"$work/go.txt"
[ -s "$data" ] || { echo "bench: the Go benchmark wrote no data" >&2; cat "$work/go.txt" >&2; exit 1; }
# median ns/op over the runs
go_ns=$(awk '/^BenchmarkPairedBootstrap/ {print $3}' "$work/go.txt" | sort -g |
	awk '{a[NR]=$1} END {if (NR) print a[int((NR+1)/2)]}')
[ -n "$go_ns" ] || { echo "bench: no ns/op in the Go output" >&2; cat "$work/go.txt" >&2; exit 1; }

"$py" - "$data" "$resamples" "$pyruns" >"$work/py.txt" <<'EOF'
import sys, time
import numpy as np
from scipy import stats

path, resamples, runs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
a, b = np.loadtxt(path, unpack=True)

def delta(a, b, axis=-1):
    return np.mean(b, axis=axis) - np.mean(a, axis=axis)

times = []
for r in range(runs):
    t0 = time.perf_counter()
    res = stats.bootstrap((a, b), delta, paired=True, vectorized=True, batch=1000,
                          n_resamples=resamples, method="percentile", confidence_level=0.95,
                          random_state=np.random.default_rng(r))
    times.append(time.perf_counter() - t0)
ci = res.confidence_interval
print(sorted(times)[len(times) // 2], len(a), f"{delta(a, b):.6f}", f"{ci.low:.6f}", f"{ci.high:.6f}")
EOF
read -r py_s n py_delta py_lo py_hi <"$work/py.txt"

go_s=$(awk -v ns="$go_ns" 'BEGIN {printf "%.6f", ns / 1e9}')
ratio=$(awk -v p="$py_s" -v g="$go_s" 'BEGIN {printf "%.0f", p / g}')
go_result=$(sed -n '1s/^# //p' "$data")

echo "paired bootstrap, n=$n 0/1 pairs, $resamples resamples, 95 % percentile interval; $(nproc) cores"
printf '%-68s %10.2f ms   %s\n' "capsule analysis.PairedStats (median of $runs)" "$(awk -v s="$go_s" 'BEGIN {print s * 1000}')" "$go_result"
printf '%-68s %10.2f ms   delta=%s ci=[%s, %s]\n' "scipy.stats.bootstrap paired, vectorized, batch=1000 (median of $pyruns)" \
	"$(awk -v s="$py_s" 'BEGIN {print s * 1000}')" "$py_delta" "$py_lo" "$py_hi"
echo "capsule's paired bootstrap is ${ratio}× faster than scipy.stats.bootstrap (budget: at least 100×)"

status=0
if awk -v r="$ratio" 'BEGIN {exit !(r < 100)}'; then
	echo "bench: FAIL: under the 100× budget" >&2
	status=1
fi
if awk -v s="$go_s" 'BEGIN {exit !(s >= 0.05)}'; then
	echo "bench: FAIL: capsule took 50 ms or more" >&2
	status=1
fi
exit $status
