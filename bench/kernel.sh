#!/usr/bin/env bash
# Trivial-cell round trip of the Go kernel against Debian's ipykernel, side
# by side under the same client (Debian's jupyter_client): the time from
# execute_request to both the execute_reply and the IOPub idle status that
# closes the request, which is how long a notebook waits for a cell.
# Two cells each: an assignment (no output) and an expression (an
# execute_result). Prints the medians and the ratio; budget: the Go kernel
# no slower than ipykernel (ratio at most 1.00).
#
#   bench/kernel.sh [N]      (default 300 round trips per cell, after 30 to warm up)
#
# Needs: apt-get install -y --no-install-recommends jupyter-client python3-jupyter-client python3-ipykernel
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-300}
py=/usr/bin/python3
[ -x "$py" ] || { echo "bench: $py is missing (apt-get install python3)" >&2; exit 2; }
"$py" -c 'import jupyter_client, ipykernel' 2>/dev/null ||
	{ echo "bench: Debian's jupyter_client and ipykernel are missing (apt-get install -y --no-install-recommends python3-jupyter-client python3-ipykernel)" >&2; exit 2; }
[ -f /usr/share/jupyter/kernels/python3/kernel.json ] ||
	{ echo "bench: ipykernel's kernelspec is missing (/usr/share/jupyter/kernels/python3)" >&2; exit 2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -o "$work/capsule" ./cmd/capsule
"$work/capsule" kernel install --prefix "$work/prefix" >/dev/null
export JUPYTER_PATH="$work/prefix/share/jupyter"
export JUPYTER_RUNTIME_DIR="$work/runtime" JUPYTER_DATA_DIR="$work/data" IPYTHONDIR="$work/ipython"
export XDG_DATA_HOME="$work/xdg" PYDEVD_DISABLE_FILE_VALIDATION=1 PYTHONDONTWRITEBYTECODE=1

"$py" - "$n" <<'PY'
import statistics, sys, time
from jupyter_client.manager import start_new_kernel

N = int(sys.argv[1])
CELLS = {
    "evalcapsule-go": {"assignment": "x := 1", "expression": "1 + 1"},
    "python3": {"assignment": "x = 1", "expression": "1 + 1"},
}

def round_trip(kc, code):
    start = time.perf_counter()
    msg_id = kc.execute(code)
    replied = idle = False
    while not (replied and idle):
        if not replied:
            m = kc.get_shell_msg(timeout=10)
            replied = m["parent_header"].get("msg_id") == msg_id
        while not idle:
            m = kc.get_iopub_msg(timeout=10)
            if (m["parent_header"].get("msg_id") == msg_id and m["msg_type"] == "status"
                    and m["content"]["execution_state"] == "idle"):
                idle = True
    return time.perf_counter() - start

results = {}
for name, cells in CELLS.items():
    km, kc = start_new_kernel(kernel_name=name)
    try:
        for label, code in cells.items():
            for _ in range(30):
                round_trip(kc, code)
            ts = sorted(round_trip(kc, code) for _ in range(N))
            results[(name, label)] = ts
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
        del kc, km

def ms(x):
    return 1000 * x

print(f"trivial cell round trip, {N} runs each, Debian jupyter_client; milliseconds")
print(f"{'kernel':<16} {'cell':<11} {'median':>8} {'p10':>8} {'p90':>8}")
for (name, label), ts in results.items():
    q = statistics.quantiles(ts, n=10)
    print(f"{name:<16} {label:<11} {ms(statistics.median(ts)):8.2f} {ms(q[0]):8.2f} {ms(q[-1]):8.2f}")
worst = 0
for label in ("assignment", "expression"):
    ratio = statistics.median(results[("evalcapsule-go", label)]) / statistics.median(results[("python3", label)])
    worst = max(worst, ratio)
    print(f"{label}: Go kernel / ipykernel = {ratio:.2f}")
print(f"budget: at most 1.00 (no slower than ipykernel): {'met' if worst <= 1 else 'NOT met'}")
PY
