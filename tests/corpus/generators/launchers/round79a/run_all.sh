#!/bin/bash
# round79a: long, noisy multi-rank logs (CPU, gloo, torch 2.13.0) in which ONE rank fails late.  longjob.py runs
# 800-2000 short DDP steps on 3-4 ranks, every rank printing an env dump, a tqdm bar, per-step loss lines, a
# repeated warning, eval and checkpoint lines; --mode/--culprit/--at-step pick the late fault (see longjob.py).
# Usage: run_all.sh [case-id ...]   (default: all).  Cases go to $POOL/<id>/log.txt (+ ranks/ for --log-dir runs).
# Paths rewritten in logs: $V -> /opt/venv, $WORK -> /home/user/job.  The hostoom case needs root (cgroup v1).
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
V=${V:-/work/helpers/venv79a}
WORK=${WORK:-/tmp/h79a/job}
POOL=${POOL:-/tmp/h79a/pool}
PY=$V/bin/python
TR="$V/bin/torchrun --standalone"
J=longjob.py
mkdir -p "$WORK" "$POOL"; cp "$HERE/longjob.py" "$WORK/"
cd "$WORK"
ONLY="${*:-}"
# what a cluster job environment typically exports (shows up in every rank's env dump)
export NCCL_DEBUG=INFO NCCL_SOCKET_IFNAME=lo NCCL_IB_DISABLE=1 GLOO_SOCKET_IFNAME=lo TORCH_NCCL_ASYNC_ERROR_HANDLING=1

# every process this script starts carries R79A_TAG in its environment; reap() kills leftovers by pid (no orphans)
export R79A_TAG="r79a-$$"
reap() {
  local p
  for p in $(grep -l -a "R79A_TAG=$R79A_TAG" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3); do
    [ "$p" != "$$" ] && [ "$p" != "$BASHPID" ] && grep -q -a longjob.py "/proc/$p/cmdline" 2>/dev/null && kill -KILL "$p" 2>/dev/null
  done
}
want() { [ -z "$ONLY" ] || [[ " $ONLY " == *" $1 "* ]]; }
run() {  # run <id> <command...>
  local id=$1; shift
  want "$id" || return 0
  echo ">>> $id  ($(date +%T))"; rm -rf "$POOL/$id" "$WORK/logs" "$WORK/ckpt"; mkdir -p "$POOL/$id"
  timeout -s KILL 300 "$@" > "$POOL/$id/log.txt" 2>&1; echo "    rc=$? ($(date +%T)) $(du -k "$POOL/$id/log.txt" | cut -f1) KiB"
  if [ -d "$WORK/logs" ]; then   # torchrun --log-dir tree: logs/<run_id>/attempt_0/<rank>/{stdout,stderr}.log
    mkdir -p "$POOL/$id/ranks"; cp -r "$WORK"/logs/*/. "$POOL/$id/ranks/"
    find "$POOL/$id/ranks" -type f -exec sed -i "s#$V#/opt/venv#g; s#$WORK#/home/user/job#g" {} +
    rm -rf "$WORK/logs"
  fi
  sed -i "s#$V#/opt/venv#g; s#$WORK#/home/user/job#g" "$POOL/$id/log.txt"
  reap
  sleep 1
}
LOGDIR="--log-dir logs --redirects 3"

# ---------------- healthy long runs (same noise, exit 0) ----------------
run run-r79a-torchrun-healthy-long env TORCH_CPP_LOG_LEVEL=INFO $TR --nproc-per-node 4 $J --steps 1000 \
    --warn autocast --warn-always FutureWarning
# tqdm redraws every step and loss lines only every 100 steps: the bars form one very long carriage-return line
run run-r79a-spawn-healthy-long $PY $J --spawn 3 --steps 2000 --log-every 100 --bar-interval 0 --warn tensorcopy
run run-r79a-torchrun-tee-healthy-long $TR --nproc-per-node 3 --tee 3 $J --steps 1500 --warn getlr,strides \
    --warn-always UserWarning --log-every 3

# ---------------- user code raises late on one rank (user.code_error) ----------------
# rank 2's Dataset.__getitem__ meets a record without 'label' at step 893 -> KeyError: 'label'
run run-r79a-torchrun-keyerror-r2 $TR --nproc-per-node 4 $J --steps 1000 --mode keyerror --culprit 2 --at-step 893 \
    --warn autocast --warn-always FutureWarning
# rank 1's collate_fn gets a truncated 63-token record at step 1337 -> ValueError from torch.tensor (--tee 3)
run run-r79a-torchrun-tee-ragged-r1 $TR --nproc-per-node 3 --tee 3 $J --steps 1500 --log-every 2 --mode ragged \
    --culprit 1 --at-step 1337 --warn tensorcopy --warn-always UserWarning
# rank 3 indexes its feature table with an id past its end at step 911 -> IndexError (mp.spawn, tqdm position=rank)
run run-r79a-spawn-index-r3 $PY $J --spawn 4 --steps 1000 --mode index --culprit 3 --at-step 911 --warn getlr \
    --warn-always UserWarning --bar position
# rank 0 saves the step-750 checkpoint into a directory that was never created -> RuntimeError (per-rank log files)
run run-r79a-torchrun-logdir-ckptdir-r0 $TR --nproc-per-node 4 $LOGDIR $J --steps 1000 --mode ckpt-dir --culprit 0 \
    --at-step 750 --warn autocast,strides --warn-always FutureWarning --record
# ---------------- NaN check (user.code_error) ----------------
# rank 2's batch at step 874 reads a NaN feature row -> FloatingPointError from the job's finite-loss check
run run-r79a-torchrun-nan-r2 env TORCH_CPP_LOG_LEVEL=INFO TORCH_DISTRIBUTED_DEBUG=INFO $TR --nproc-per-node 4 $J \
    --steps 1000 --mode nan --culprit 2 --at-step 874 --warn getlr
run run-r79a-spawn-nan-r1 $PY $J --spawn 3 --steps 1500 --mode nan --culprit 1 --at-step 1420 --warn autocast \
    --warn-always FutureWarning
run run-r79a-torchrun-tee-nan-r0 $TR --nproc-per-node 3 --tee 3 $J --steps 1200 --log-every 4 --mode nan --culprit 0 \
    --at-step 1111 --warn strides --warn-always UserWarning
# ---------------- SIGKILL, no traceback (mem.host_oom per the corpus convention) ----------------
run run-r79a-torchrun-sigkill-r3 env TORCH_CPP_LOG_LEVEL=INFO $TR --nproc-per-node 4 $J --steps 1000 --mode sigkill \
    --culprit 3 --at-step 931 --warn autocast,getlr --warn-always FutureWarning
run run-r79a-torchrun-logdir-sigkill-r1 $TR --nproc-per-node 3 $LOGDIR $J --steps 2000 --log-every 2 --mode sigkill \
    --culprit 1 --at-step 1788 --warn tensorcopy --warn-always UserWarning
run run-r79a-spawn-sigkill-r2 $PY $J --spawn 3 --steps 1200 --log-every 100 --bar-interval 0 --mode sigkill --culprit 2 \
    --at-step 1105 --warn getlr
# ---------------- hang past the process-group timeout (dist.collective_timeout) ----------------
run run-r79a-torchrun-hang-r1 $TR --nproc-per-node 3 $J --steps 1000 --log-every 50 --bar-interval 0 --mode hang \
    --culprit 1 --at-step 902 --pg-timeout 20 --warn autocast
run run-r79a-torchrun-tee-hang-r3 env TORCH_CPP_LOG_LEVEL=INFO $TR --nproc-per-node 4 --tee 3 $J --steps 800 \
    --mode hang --culprit 3 --at-step 733 --pg-timeout 25 --warn tensorcopy --warn-always UserWarning
run run-r79a-spawn-hang-r0 $PY $J --spawn 3 --steps 1000 --mode hang --culprit 0 --at-step 950 --pg-timeout 20 \
    --warn strides,autocast --warn-always FutureWarning
# ---------------- collective size mismatch (dist.collective_mismatch) ----------------
# from the eval at step 850 on, rank 2 all_reduces 3 metrics instead of 2
run run-r79a-torchrun-mismatch-r2 $TR --nproc-per-node 4 $J --steps 1000 --eval-every 50 --mode mismatch --culprit 2 \
    --at-step 850 --warn autocast --warn-always FutureWarning
# same with TORCH_DISTRIBUTED_DEBUG=DETAIL (hand-averaged grads: DDP.__init__ crashes under DETAIL on 2.13 CPU)
run run-r79a-torchrun-logdir-mismatch-detail-r1 env TORCH_DISTRIBUTED_DEBUG=DETAIL $TR --nproc-per-node 3 $LOGDIR $J \
    --no-ddp --steps 800 --eval-every 50 --mode mismatch --culprit 1 --at-step 700 --warn tensorcopy \
    --warn-always UserWarning
# ---------------- host OOM in a memory cgroup (mem.host_oom) ----------------
# rank 2 alone joins a 1.5 GiB memory cgroup; from step 900 on it keeps 32 MiB per step until the OOM killer fires
if want run-r79a-torchrun-hostoom-r2; then
  CG=/sys/fs/cgroup/memory/r79a_oom
  rmdir "$CG" 2>/dev/null; mkdir -p "$CG"
  echo $((1536 * 1024 * 1024)) > "$CG/memory.limit_in_bytes"
  [ -f "$CG/memory.memsw.limit_in_bytes" ] && echo $((1536 * 1024 * 1024)) > "$CG/memory.memsw.limit_in_bytes"
  R79A_CGROUP=$CG run run-r79a-torchrun-hostoom-r2 env R79A_CGROUP=$CG $TR --nproc-per-node 4 $J --steps 1000 \
      --mode hostoom --culprit 2 --at-step 900 --warn autocast --warn-always FutureWarning
  sleep 1; rmdir "$CG" || echo "could not remove $CG"
fi
rm -rf "$WORK/ckpt"
