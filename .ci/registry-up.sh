#!/usr/bin/env bash
# registry-up.sh DIR PORT: a disposable OCI registry on 127.0.0.1:PORT for the
# integration tests: Debian's docker-registry (CNCF distribution 2.8), which
# has no referrers API, so clients fall back to the sha256-<hex> tag schema.
# It installs nothing. Debian's own /etc/docker/registry/config.yml listens on
# all interfaces with htpasswd auth, so this writes its own config: storage,
# pid and log under DIR, no auth, loopback only, deletes enabled (oras-go
# deletes the superseded referrers index when it attaches a report).
# The tests find it through EVALCAPSULE_REGISTRY=127.0.0.1:PORT.
set -euo pipefail
D=${1:?usage: registry-up.sh DIR PORT}
P=${2:?usage: registry-up.sh DIR PORT}
command -v docker-registry >/dev/null || {
	echo "registry-up.sh: docker-registry is not installed (apt-get install docker-registry)" >&2
	exit 1
}
mkdir -p "$D/data"
D=$(cd "$D" && pwd)
cat >"$D/config.yml" <<CONF
version: 0.1
log:
  level: info
storage:
  filesystem:
    rootdirectory: $D/data
  delete:
    enabled: true
http:
  addr: 127.0.0.1:$P
CONF
# GET /v2/ through bash's /dev/tcp, so that curl need not be installed; in a
# subshell, because a failed exec redirection may end a non-interactive shell.
ready() (
	exec 3<>"/dev/tcp/127.0.0.1/$P" || exit 1
	printf 'GET /v2/ HTTP/1.0\r\nHost: 127.0.0.1:%s\r\n\r\n' "$P" >&3
	IFS= read -r -t 2 status <&3 || exit 1
	[[ $status == "HTTP/1."?" 200"* ]]
)
# Something already answering on the port would pass the readiness check below.
if ready 2>/dev/null; then
	echo "registry-up.sh: 127.0.0.1:$P is already in use" >&2
	exit 1
fi
docker-registry serve "$D/config.yml" >"$D/registry.log" 2>&1 </dev/null &
echo $! >"$D/registry.pid"
for _ in $(seq 1 100); do
	if ready 2>/dev/null && kill -0 "$(cat "$D/registry.pid")" 2>/dev/null; then
		echo "registry up: 127.0.0.1:$P ($D)"
		exit 0
	fi
	kill -0 "$(cat "$D/registry.pid")" 2>/dev/null || break
	sleep 0.1
done
echo "registry-up.sh: the registry did not answer on 127.0.0.1:$P" >&2
tail -20 "$D/registry.log" >&2
kill "$(cat "$D/registry.pid")" 2>/dev/null || true
exit 1
