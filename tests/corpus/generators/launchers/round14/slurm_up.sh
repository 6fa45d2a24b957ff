#!/usr/bin/env bash
# Single-node Slurm 22.05 (Debian 12 packages slurm-wlm + munge) on this host, everything as root.
# usage: slurm_up.sh [base|cgroup|stop]
#   base   : proctrack/pgid + task/none (no memory enforcement by Slurm)             [default]
#   cgroup : proctrack/cgroup + task/cgroup, cgroup v1, ConstrainRAMSpace=yes (srun --mem is enforced)
#   stop   : stop slurmd, slurmctld, munged
# Install once: apt-get update && apt-get install -y slurm-wlm munge
set -u
mode=${1:-base}
stop() {
  for f in /run/slurmd.pid /run/slurmctld.pid; do [ -s "$f" ] && kill "$(cat "$f")" 2>/dev/null; done
  sleep 2
}
if [ "$mode" = stop ]; then
  stop
  [ -s /run/munge/munged.pid ] && kill "$(cat /run/munge/munged.pid)" 2>/dev/null
  exit 0
fi
H=$(hostname -s)
mkdir -p /var/spool/slurmctld /var/spool/slurmd /var/log/slurm /run/munge
chown munge:munge /run/munge
PROCTRACK=proctrack/pgid TASK=task/none SELP=CR_Core
[ "$mode" = cgroup ] && PROCTRACK=proctrack/cgroup TASK=task/cgroup SELP=CR_Core_Memory
cat > /etc/slurm/slurm.conf <<CONF
# single-node Slurm for round-14 launcher logs (mode: $mode)
ClusterName=r14
SlurmctldHost=$H
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
MpiDefault=none
ProctrackType=$PROCTRACK
TaskPlugin=$TASK
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=$SELP
ReturnToService=2
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=/run/slurmd.pid
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
KillWait=10
# 8 CPUs declared on a 2-core machine (oversubscription); config_overrides makes slurmd accept it
SlurmdParameters=config_overrides
NodeName=$H CPUs=8 RealMemory=20000 State=UNKNOWN
PartitionName=debug Nodes=$H Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
CONF
cat > /etc/slurm/cgroup.conf <<CONF
CgroupPlugin=cgroup/v1
CgroupMountpoint=/sys/fs/cgroup
ConstrainRAMSpace=yes
ConstrainSwapSpace=no
ConstrainCores=no
ConstrainDevices=no
CONF
pgrep -x munged >/dev/null || su -s /bin/sh munge -c /usr/sbin/munged
stop
/usr/sbin/slurmctld; sleep 2; /usr/sbin/slurmd; sleep 3
scontrol update nodename="$H" state=resume 2>/dev/null
for i in $(seq 20); do sinfo -h -o %T | grep -qx idle && break; sleep 1; done
sinfo
