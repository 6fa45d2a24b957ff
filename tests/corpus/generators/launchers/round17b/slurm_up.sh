#!/usr/bin/env bash
# Single-node Slurm 22.05 (Debian 12 packages slurm-wlm + munge) on this host, everything as root.
# usage: slurm_up.sh [base|cgroup|stop]
# (round 17b copy of round14/slurm_up.sh: `base` leaves an already running, idle Slurm alone instead of
#  restarting it, and `stop` refuses while other users' jobs are queued, since other helpers may share it)
#   base   : proctrack/pgid + task/none (no memory enforcement by Slurm)             [default]
#   cgroup : proctrack/cgroup + task/cgroup, cgroup v1, ConstrainRAMSpace=yes (srun --mem is enforced)
#   acct   : base + job accounting through slurmdbd/MariaDB (round 17b: submitit polls `sacct` for job states;
#            without accounting sacct fails and submitit never sees a SIGKILLed task finish)
#            needs once: apt-get install -y slurmdbd mariadb-server
#   stop   : stop slurmd, slurmctld, (slurmdbd, MariaDB if started here), munged
# Install once: apt-get update && apt-get install -y slurm-wlm munge
set -u
mode=${1:-base}
stop() {
  for f in /run/slurmd.pid /run/slurmctld.pid; do [ -s "$f" ] && kill "$(cat "$f")" 2>/dev/null; done
  sleep 2
}
if [ "$mode" = stop ]; then
  n=$(squeue -h 2>/dev/null | wc -l)
  if [ "$n" != 0 ] && [ "${FORCE:-0}" != 1 ]; then echo "slurm_up.sh: $n job(s) still queued, not stopping (FORCE=1 to override)"; squeue; exit 1; fi
  stop
  [ -s /run/slurmdbd.pid ] && kill "$(cat /run/slurmdbd.pid)" 2>/dev/null
  [ -e /run/r17b_mariadb ] && /etc/init.d/mariadb stop && rm -f /run/r17b_mariadb
  [ -s /run/munge/munged.pid ] && kill "$(cat /run/munge/munged.pid)" 2>/dev/null
  exit 0
fi
H=$(hostname -s)
if { [ "$mode" = base ] || [ "$mode" = acct ]; } && pgrep -x slurmctld >/dev/null && pgrep -x slurmd >/dev/null \
   && grep -q "mode: $mode" /etc/slurm/slurm.conf && sinfo -h -o %T 2>/dev/null | grep -qE "^(idle|mixed|allocated)$"; then
  echo "slurm_up.sh: Slurm already up ($mode), leaving it running"; sinfo; exit 0
fi
mkdir -p /var/spool/slurmctld /var/spool/slurmd /var/log/slurm /run/munge
chown munge:munge /run/munge
PROCTRACK=proctrack/pgid TASK=task/none SELP=CR_Core
[ "$mode" = cgroup ] && PROCTRACK=proctrack/cgroup TASK=task/cgroup SELP=CR_Core_Memory
ACCT=accounting_storage/none
if [ "$mode" = acct ]; then
  ACCT=accounting_storage/slurmdbd
  if ! mysql -u root -e 'select 1' >/dev/null 2>&1; then /etc/init.d/mariadb start && touch /run/r17b_mariadb; fi
  mysql -u root -e "CREATE DATABASE IF NOT EXISTS slurm_acct_db; CREATE USER IF NOT EXISTS 'slurm'@'localhost' IDENTIFIED BY 'slurmdbpass'; GRANT ALL ON slurm_acct_db.* TO 'slurm'@'localhost'; FLUSH PRIVILEGES;"
  cat > /etc/slurm/slurmdbd.conf <<DBD
AuthType=auth/munge
DbdHost=$H
SlurmUser=root
PidFile=/run/slurmdbd.pid
LogFile=/var/log/slurm/slurmdbd.log
StorageType=accounting_storage/mysql
StorageHost=localhost
StorageUser=slurm
StoragePass=slurmdbpass
StorageLoc=slurm_acct_db
DBD
  chmod 600 /etc/slurm/slurmdbd.conf
fi
cat > /etc/slurm/slurm.conf <<CONF
# single-node Slurm for round-14/17b launcher logs (mode: $mode)
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
AccountingStorageType=$ACCT
AccountingStorageHost=$H
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
if [ "$mode" = acct ]; then
  pgrep -x slurmdbd >/dev/null || { /usr/sbin/slurmdbd; sleep 3; }
  sacctmgr -i add cluster r14 >/dev/null 2>&1
else
  [ -s /run/slurmdbd.pid ] && kill "$(cat /run/slurmdbd.pid)" 2>/dev/null
fi
/usr/sbin/slurmctld; sleep 2; /usr/sbin/slurmd; sleep 3
scontrol update nodename="$H" state=resume 2>/dev/null
for i in $(seq 20); do sinfo -h -o %T | grep -qx idle && break; sleep 1; done
sinfo
