#!/bin/bash
# Reproduces every round53a case: a gloo job (4-6 CPU processes) whose processes each write their OWN log
# file (not torchrun --log-dir), named in the ways real jobs/clusters name them; one fault on one process.
# Usage: run_all.sh [case-id-substring]  ->  $POOL/<id>/ranks/ (the job's folder) + log.txt (launcher console)
# Labels: python3 make_labels.py $POOL.   Needs root for the OOM cases (cgroup v1 memory controller).
HERE=$(cd "$(dirname "$0")" && pwd)
VENV=${VENV:-/work/helpers/venv53a}
POOL=${POOL:-/tmp/h53a/pool}
OUTROOT=/tmp/h53a/out
CG=/sys/fs/cgroup/memory/h53a_oom
export PATH=$VENV/bin:$PATH PYTHONUNBUFFERED=1 SLURM_JOB_ID=48213
ulimit -c 0
cd "$HERE"
ONLY=$1

mkcg() {   # 1 GiB memory cgroup (no swap) for the OOM culprit
  mkdir -p $CG; echo $((1024*1024*1024)) > $CG/memory.limit_in_bytes
  [ -f $CG/memory.memsw.limit_in_bytes ] && echo $((1024*1024*1024)) > $CG/memory.memsw.limit_in_bytes
}
rmcg() { [ -d $CG ] && { for p in $(cat $CG/cgroup.procs); do echo $p > /sys/fs/cgroup/memory/cgroup.procs; done; rmdir $CG; }; }

run_case() {   # run_case ID CMD...   (case env set by the caller; LOG_DIR = the job's log folder)
  local id=$1; shift
  [ -n "$ONLY" ] && [[ "$id" != *"$ONLY"* ]] && return
  local d=$POOL/$id; rm -rf "$d" "$OUTROOT/$id"; mkdir -p "$d" "$OUTROOT/$id"
  echo "== $id: $*" >&2
  [ "$FAULT" = oom ] && mkcg
  LOG_DIR=$OUTROOT/$id timeout 150 bash -c "$*" > "$d/log.txt" 2>&1; echo "   rc=$?" >&2
  [ "$FAULT" = oom ] && { dmesg 2>/dev/null | grep -i "killed process" | tail -2 >&2; rmcg; }
  cp -r "$OUTROOT/$id" "$d/ranks"
  find "$d" -type f -exec sed -i "s#$VENV#/opt/venv#g; s#$HERE#/home/user/job#g; s#$OUTROOT/$id#/home/user/job/logs#g; s#/tmp/h53a#/home/user/job/tmp#g" {} +
  [ "$HEALTHY" = 1 ] && rm -f "$d/log.txt"     # healthy cases: only the job's folder (ranks/)
  pkill -f "$VENV/bin/python.* job.py" 2>/dev/null; pkill -f "spawn_main.py" 2>/dev/null
  pkill -f "$VENV/bin/python -c from multiprocessing" 2>/dev/null; sleep 1
}
T="torchrun --nproc-per-node 4 --master-port 29771 job.py"
# two fake nodes of 3 (static rendezvous), each agent's console appended to log.txt; NODE_NAME names the folder
T2='(NODE_NAME=node-a torchrun --nnodes 2 --node-rank 0 --nproc-per-node 3 --master-addr 127.0.0.1 --master-port 29772 job.py & NODE_NAME=node-b torchrun --nnodes 2 --node-rank 1 --nproc-per-node 3 --master-addr 127.0.0.1 --master-port 29772 job.py; wait)'
S="python spawn_main.py"
L="./loop.sh"

# ---- torchrun (the job writes its files; torchrun's console -> log.txt)
FAULT=raise CULPRIT=2 LOG_MODE=handler LOG_NAME='logs/rank{rank}.log' run_case run-r53a-torchrun-raise-logs-rank "$T"
FAULT=sigkill CULPRIT=3 FAULT_STEP=4 LOG_MODE=pyredir RANK_IN_LINES=0 LOG_NAME='worker_{rank}.txt' run_case run-r53a-torchrun-sigkill-worker-txt "$T"
FAULT=hang CULPRIT=1 PG_TIMEOUT=15 HANG_S=40 LOG_MODE=handler LOG_NAME='train-rank-{rank:02d}-of-{world:02d}.log' run_case run-r53a-torchrun-hang-rank-of "$T"
FAULT=mismatch CULPRIT=2 LOG_MODE=split LOG_NAME='out.{rank}' ERR_NAME='err.{rank}' run_case run-r53a-torchrun-mismatch-out-err "$T"
FAULT=mismatch CULPRIT=3 TORCH_DISTRIBUTED_DEBUG=DETAIL LOG_MODE=handler LOG_NAME='rank_{rank}/train.log' run_case run-r53a-torchrun-mismatch-detail-rankdir "$T"
FAULT=oom CULPRIT=1 OOM_CGROUP=$CG LOG_MODE=handler LOG_NAME='host-{host}-{pid}.log' run_case run-r53a-torchrun-oom-hostpid "$T"
FAULT=raise CULPRIT=4 LOG_MODE=handler RANK_IN_LINES=0 LOG_NAME='{nodename}/rank{local}.log' run_case run-r53a-torchrun2n-raise-localrank "$T2"
FAULT=sigkill CULPRIT=3 LOG_MODE=pyredir LOG_NAME='{nodename}/gpu{local}.log' run_case run-r53a-torchrun2n-sigkill-localrank "$T2"

# ---- mp.spawn (console -> log.txt)
FAULT=raise CULPRIT=1 LOG_MODE=pyredir RANK_IN_LINES=0 START_LINE=1 LOG_NAME='host-{host}-{pid}.log' run_case run-r53a-spawn-raise-hostpid-startline "$S"
FAULT=sigkill CULPRIT=2 NPROCS=5 LOG_MODE=pyredir RANK_IN_LINES=0 LOG_NAME='job.{jobid}.{rank}.out' run_case run-r53a-spawn-sigkill-slurm "$S"
FAULT=hang CULPRIT=3 PG_TIMEOUT=15 HANG_S=40 LOG_MODE=split LOG_NAME='out.{rank}' ERR_NAME='err.{rank}' run_case run-r53a-spawn-hang-out-err "$S"
FAULT=oom CULPRIT=1 OOM_CGROUP=$CG LOG_MODE=handler RANK_IN_LINES=0 LOG_NAME='worker_{rank}.txt' run_case run-r53a-spawn-oom-worker-txt "$S"
FAULT=mismatch CULPRIT=4 NPROCS=5 LOG_MODE=pyredir RANK_IN_LINES=0 LOG_NAME='train-rank-{rank}-of-{world}.log' run_case run-r53a-spawn-mismatch-rank-of "$S"

# ---- shell loop: `exec > FILE 2>&1` per rank (loop's console -> log.txt)
FAULT=raise CULPRIT=3 NPROC_PER_NODE=2 RANK_IN_LINES=0 SHELL_LOG='node$n/gpu$r.log' run_case run-r53a-shell-raise-node-gpu "$L"
FAULT=sigkill CULPRIT=2 RANK_IN_LINES=0 SHELL_LOG='host-$host-$pid.log' run_case run-r53a-shell-sigkill-hostpid-norank "$L"
FAULT=hang CULPRIT=4 NPROCS=6 PG_TIMEOUT=15 HANG_S=30 SHELL_LOG='job.$SLURM_JOB_ID.$r.out' run_case run-r53a-shell-hang-slurm "$L"
FAULT=oom CULPRIT=3 OOM_CGROUP=$CG SHELL_LOG='train_r$r.log' run_case run-r53a-shell-oom-flat "$L"
FAULT=mismatch CULPRIT=1 TORCH_DISTRIBUTED_DEBUG=DETAIL RANK_IN_LINES=0 SHELL_LOG='slurm-${SLURM_JOB_ID}_$r.out' run_case run-r53a-shell-mismatch-detail-slurm-array "$L"

# ---- healthy noisy runs (only ranks/ kept)
HEALTHY=1 FAULT=none NOISY=1 LOG_MODE=handler LOG_NAME='logs/rank{rank}.log' run_case run-r53a-torchrun-healthy-noisy "$T"
HEALTHY=1 FAULT=none NOISY=1 LOG_MODE=pyredir RANK_IN_LINES=0 START_LINE=1 LOG_NAME='host-{host}-{pid}.log' run_case run-r53a-spawn-healthy-noisy "$S"
HEALTHY=1 FAULT=none NOISY=1 NPROC_PER_NODE=2 SHELL_LOG='node$n/gpu$r.log' run_case run-r53a-shell-healthy-noisy "$L"
