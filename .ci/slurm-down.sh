#!/usr/bin/env bash
# Stops the one-node Slurm cluster that .ci/slurm-up.sh DIR started: the
# daemons whose process IDs it recorded in DIR (slurmd, slurmctld, munged),
# and nothing else, then removes DIR unless KEEP=1 (its logs are in
# DIR/log).
#   .ci/slurm-down.sh [DIR]
set -uo pipefail
dir=${1:-/tmp/metasgmcmc-slurm}
for d in slurmd slurmctld munged; do
	f=$dir/$d.pid
	[ -f "$f" ] || continue
	pid=$(cat "$f")
	if [ -n "$pid" ] && kill "$pid" 2>/dev/null; then
		for i in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
		kill -9 "$pid" 2>/dev/null || true
	fi
	rm -f "$f"
done
[ "${KEEP:-0}" = 1 ] || rm -rf "$dir"
