#!/usr/bin/env bash
# slurm-down.sh DIR: stop the cluster slurm-up.sh started.
D=${1:?usage: slurm-down.sh DIR}
for p in slurmd slurmctld; do
	f="$D/run/$p.pid"
	[ -f "$f" ] || continue
	pid=$(cat "$f")
	kill "$pid" 2>/dev/null || continue
	for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
done
