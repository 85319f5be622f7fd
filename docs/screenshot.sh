#!/bin/sh
# Regenerates docs/report.png, the README's picture of a study report: the
# first screen of the SIMULATED demo study's report.html (its banner, the
# attribution table and the waterfall plot), as headless Chromium shows it
# in the 1280×1600 window that capsule/report_test.go checks.
#
#   docs/screenshot.sh [OUT.png]     (default docs/report.png)
#
# Needs go and Debian's chromium; uses optipng (lossless) when installed.
set -eu
cd "$(dirname "$0")/.."
out=${1:-docs/report.png}
chromium=${CHROMIUM:-$(command -v chromium || command -v chromium-browser)}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

go build -o "$tmp/capsule" ./cmd/capsule
"$tmp/capsule" demo "$tmp/demo" >/dev/null
"$chromium" --headless --no-sandbox --disable-gpu --no-first-run \
	--disable-background-networking --disable-component-update --disable-sync \
	--user-data-dir="$tmp/chromium" --window-size=1280,1600 \
	--force-device-scale-factor=1 --hide-scrollbars \
	--screenshot="$tmp/report.png" "file://$tmp/demo/study/report.html" \
	>"$tmp/chromium.log" 2>&1 || true
if [ ! -s "$tmp/report.png" ]; then
	cat "$tmp/chromium.log" >&2
	echo "screenshot.sh: $chromium took no screenshot" >&2
	exit 1
fi
if command -v optipng >/dev/null; then
	optipng -quiet -o5 -strip all "$tmp/report.png"
fi
cp "$tmp/report.png" "$out"
echo "$out: $(wc -c <"$out") bytes"
