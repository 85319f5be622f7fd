#!/usr/bin/env bash
# registry-down.sh DIR: stop the registry registry-up.sh started in DIR.
D=${1:?usage: registry-down.sh DIR}
f="$D/registry.pid"
[ -f "$f" ] || exit 0
pid=$(cat "$f")
if kill "$pid" 2>/dev/null; then
	for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
	kill -0 "$pid" 2>/dev/null && kill -9 "$pid" 2>/dev/null
fi
rm -f "$f"
exit 0
