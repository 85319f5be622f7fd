#!/usr/bin/env bash
# slurm-up.sh DIR: a disposable single-node Slurm cluster on 127.0.0.1 for the
# integration tests (Debian's slurm-wlm 22.05 and munge). State, logs and
# pids stay under DIR; SLURM_CONF=DIR/slurm.conf points clients at it. The
# node has two "GPUs" backed by /dev/null-like devices so that --gres=gpu:N
# schedules and CUDA_VISIBLE_DEVICES is set, without any GPU.
set -euo pipefail
D=${1:?usage: slurm-up.sh DIR}
mkdir -p "$D"/{state,spool,log,run}
CPUS=$(nproc)
MEM=$(awk '/MemTotal/ {print int($2/1024*0.9)}' /proc/meminfo)
# Two character devices for the fake GPUs (gres needs existing device nodes).
for i in 0 1; do [ -e "$D/nvidia$i" ] || mknod "$D/nvidia$i" c 1 3; done
cat > "$D/slurm.conf" <<CONF
ClusterName=ci
SlurmctldHost=localhost
SlurmctldPort=6817
SlurmdPort=6818
SlurmUser=root
AuthType=auth/munge
CredType=cred/munge
StateSaveLocation=$D/state
SlurmdSpoolDir=$D/spool
SlurmctldPidFile=$D/run/slurmctld.pid
SlurmdPidFile=$D/run/slurmd.pid
SlurmctldLogFile=$D/log/slurmctld.log
SlurmdLogFile=$D/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
ReturnToService=2
MinJobAge=3600
KillWait=10
DependencyParameters=kill_invalid_depend
MailProg=/bin/true
GresTypes=gpu
NodeName=localhost NodeAddr=127.0.0.1 CPUs=$CPUS RealMemory=$MEM Gres=gpu:2 State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP
CONF
echo "NodeName=localhost Name=gpu File=$D/nvidia[0-1]" > "$D/gres.conf"
export SLURM_CONF="$D/slurm.conf"
install -d -o munge -g munge -m 0755 /run/munge
[ -s /etc/munge/munge.key ] || mungekey --create --keyfile=/etc/munge/munge.key
if ! munge -n >/dev/null 2>&1; then runuser -u munge -- /usr/sbin/munged; fi
slurmctld -f "$SLURM_CONF"
slurmd -f "$SLURM_CONF" -N localhost
for _ in $(seq 1 100); do
	[ "$(sinfo -h -o %T 2>/dev/null)" = idle ] && { echo "slurm up: $D"; exit 0; }
	sleep 0.1
done
echo "slurm did not come up" >&2
tail -20 "$D"/log/*.log >&2
exit 1
