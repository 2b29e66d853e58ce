#!/usr/bin/env bash
# Starts a one-node Slurm cluster on this machine, for the test of sweep's
# job arrays (cmd/sweep, TestSlurmArrayMatchesLocal): munged, slurmctld and
# slurmd as root, without systemd, their configuration, key, state and logs
# in DIR (default /tmp/metasgmcmc-slurm), the node being this host with its
# cores and memory, in one partition. Installs Debian's slurm-wlm and munge
# if they are missing. Prints the variable that points Slurm's commands at
# the cluster (SLURM_CONF=DIR/slurm.conf) once the node takes jobs, within
# a minute. .ci/slurm-down.sh DIR stops it.
#   .ci/slurm-up.sh [DIR]
set -euo pipefail
dir=${1:-/tmp/metasgmcmc-slurm}
if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null || ! command -v munged >/dev/null; then
	export DEBIAN_FRONTEND=noninteractive
	pkgs="slurm-wlm munge"
	apt-get install -y -q $pkgs >/dev/null 2>&1 || { apt-get update -q >/dev/null && apt-get install -y -q $pkgs >/dev/null; }
fi
[ "$(id -u)" = 0 ] || { echo "slurm-up.sh: run as root (slurmd starts jobs as their users)" >&2; exit 1; }
if [ -f "$dir/slurmctld.pid" ] || [ -f "$dir/munged.pid" ]; then
	echo "slurm-up.sh: $dir holds a running cluster's files: stop it first with .ci/slurm-down.sh $dir" >&2
	exit 1
fi
mkdir -p "$dir"/{state,spool,log,munge}
# on failure, stop what did start (its logs stay in $dir/log)
trap 'echo "slurm-up.sh: failed; the logs are in $dir/log" >&2; KEEP=1 "$(dirname "$0")/slurm-down.sh" "$dir"' ERR
chmod 755 "$dir" "$dir/munge" # munged wants its socket reachable by all
host=$(hostname -s)
cpus=$(nproc)
mem=$(awk '/^MemTotal:/ { print int($2 / 1024) }' /proc/meminfo)

# munge: a key of our own, and a socket of our own (no system munged needed)
[ -f "$dir/munge/munge.key" ] || dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$dir/munge/munge.key"
munged --key-file="$dir/munge/munge.key" --socket="$dir/munge/munge.socket" \
	--pid-file="$dir/munged.pid" --log-file="$dir/log/munged.log" --seed-file="$dir/munge/munge.seed"

cat >"$dir/slurm.conf" <<CONF
ClusterName=metasgmcmc-ci
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$dir/munge/munge.socket
CredType=cred/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
SchedulerType=sched/backfill
MpiDefault=none
JobRequeue=1
ReturnToService=2
KillWait=10
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=ci Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF=$dir/slurm.conf
slurmctld -c
slurmd
# wait until the node takes jobs
for i in $(seq 60); do
	state=$(sinfo -h -N -o %t 2>/dev/null | head -1 || true)
	case $state in idle* | mix* | alloc*) echo "SLURM_CONF=$SLURM_CONF"; exit 0 ;; esac
	sleep 1
done
echo "slurm-up.sh: the node did not come up within a minute (sinfo: ${state:-nothing})" >&2
false
