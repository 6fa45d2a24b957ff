#!/bin/bash
# Reproduce every round48b case: "nodes" with their own host names (node.sh), one job at a time.
# Usage: run_all.sh [case-id ...]   (as root; V=venv with torch 2.13.0 CPU; OUT=where case folders go)
G="$(cd "$(dirname "$0")" && pwd)"
export V=${V:-/work/helpers/venv48b}; OUT=${OUT:-/work/helpers/stage48}; WORK=${WORK:-/tmp/r48b}
CG=/sys/fs/cgroup/memory/r48b_oom
# id | launcher | layout | env (fault + log format)
CASES='
run48b-torchrun2n-raise|tr2|one|LOGFMT=filter FAULT=raise FAULT_RANK=3
run48b-torchrun2n-sigkill-files|tr2|files|LOGFMT=hostpid FAULT=sigkill FAULT_RANK=2
run48b-torchrun3n-hang|tr3|one|LOGFMT=bracket FAULT=hang FAULT_RANK=1 PG_TIMEOUT=15
run48b-torchrun2n-mismatch|tr2|one|LOGFMT=hostpid FAULT=mismatch FAULT_RANK=3
run48b-torchrun3n-hostoom-files|tr3|files|LOGFMT=bracket FAULT=hostoom FAULT_RANK=2
run48b-torchrunc10d-raise-logdir|trc3|logdir|LOGFMT=hostfile FAULT=raise FAULT_RANK=1
run48b-torchrunc10d-sigkill|trc3|one|LOGFMT=filter FAULT=sigkill FAULT_RANK=2
run48b-mpirun-raise|mpi|one|LOGFMT=hostpid FAULT=raise FAULT_RANK=2
run48b-mpirun-sigkill|mpi|one|LOGFMT=bracket FAULT=sigkill FAULT_RANK=3
run48b-mpirun-hang|mpi|one|LOGFMT=filter FAULT=hang FAULT_RANK=2 PG_TIMEOUT=15
run48b-mpirun-hostoom|mpi|one|LOGFMT=hostpid FAULT=hostoom FAULT_RANK=1
run48b-shell-raise-files|sh|files|LOGFMT=hostfile FAULT=raise FAULT_RANK=3
run48b-shell-mismatch|sh|one|LOGFMT=bracket FAULT=mismatch FAULT_RANK=1
run48b-shell-hostoom-files|sh|files|LOGFMT=filter FAULT=hostoom FAULT_RANK=2
run48b-torchrun2n-healthy|tr2|one|LOGFMT=filter FAULT=none
run48b-mpirun-healthy|mpi|one|LOGFMT=bracket FAULT=none
run48b-shell-healthy-files|sh|files|LOGFMT=hostfile FAULT=none
'
port=29600
echo "$CASES" | while IFS='|' read -r id l layout envs; do
  [ -z "$id" ] && continue; port=$((port+3))
  if [ $# -gt 0 ] && [[ " $* " != *" $id "* ]]; then continue; fi
  R=$WORK/$id; C=$OUT/$id; rm -rf "$R" "$C"; mkdir -p "$R" "$C"
  if [[ $envs == *hostoom* ]]; then  # 1 GiB memory cgroup (memory+swap) for the faulty rank only
    rmdir $CG 2>/dev/null; mkdir -p $CG; echo 1G > $CG/memory.limit_in_bytes
    [ -e $CG/memory.memsw.limit_in_bytes ] && echo 1G > $CG/memory.memsw.limit_in_bytes
    envs="$envs OOM_CGROUP=$CG"
  fi
  echo "== $id ($l $layout: $envs)"
  env $envs LOG_DIR=$R/logs timeout 300 "$G/launch.sh" $l $layout "$R" $port > "$C/log.txt" 2>&1 < /dev/null
  echo "   exit $?"
  pkill -f "$G/r48b_job.py"; sleep 2; pkill -9 -f "$G/r48b_job.py"   # no orphan ranks (only this round's script name)
  [ -d $CG ] && { rmdir $CG 2>/dev/null || { sleep 3; rmdir $CG; }; }
  # per-node files (other nodes' consoles, app logs named by host, torchrun --log-dir trees) -> ranks/
  if [ -n "$(ls -A $R/nodes 2>/dev/null)" ] || [ -d $R/logs ] || [ -d $R/tlogs ]; then
    mkdir -p $C/ranks
    [ -n "$(ls -A $R/nodes)" ] && cp $R/nodes/*.log $C/ranks/
    [ -d $R/logs ] && cp -r $R/logs $C/ranks/logs
    [ -d $R/tlogs ] && cp -r $R/tlogs/. $C/ranks/
  fi
  # rewrite machine-specific paths only
  find $C -type f -exec sed -i -e "s#$V#/opt/venv#g" -e "s#$R#/home/user/job#g" -e "s#$G#/home/user/job#g" {} +
done
