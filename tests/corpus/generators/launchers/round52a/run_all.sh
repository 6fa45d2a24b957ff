#!/bin/bash
# Reproduces every round52a case (one rank runs out of an OS resource; gloo, 4 ranks, CPU).
# Usage: run_all.sh [case-id-substring]   ->  /tmp/h52a/pool/<id>/log.txt (+ ranks/ for --log-dir)
# Needs root (mount/unshare, setuid).  VENV defaults to /work/helpers/venv52a.
HERE=$(cd "$(dirname "$0")" && pwd)
VENV=${VENV:-/work/helpers/venv52a}
POOL=${POOL:-/tmp/h52a/pool}
export PATH=$VENV/bin:$PATH PYTHONUNBUFFERED=1 CKPT_DIR=/tmp/h52a/ckpt
ulimit -c 0
cd "$HERE"
ONLY=$1   # labels: python3 make_labels.py $POOL
TR="torchrun --nproc-per-node 4 --master-port 29671"
SHM_WRAP='exec unshare -m sh -c '\''mount -t tmpfs -o size=1M tmpfs /dev/shm && exec "$0" "$@"'\'''

run_case() {   # run_case ID CMD...   (env for the case is set by the caller)
  local id=$1; shift
  [ -n "$ONLY" ] && [[ "$id" != *"$ONLY"* ]] && return
  local d=$POOL/$id; rm -rf "$d"; mkdir -p "$d"
  echo "== $id: $*" >&2
  if [[ "$*" == *--log-dir* ]]; then rm -rf /tmp/h52a/tlogs; fi
  timeout 150 bash -c "$*" > "$d/log.txt" 2>&1; echo "   rc=$?" >&2
  if [[ "$*" == *--log-dir* ]]; then
    local run=$(ls /tmp/h52a/tlogs); cp -r /tmp/h52a/tlogs/$run "$d/ranks"
    find "$d/ranks" -type f -exec sed -i "s#$VENV#/opt/venv#g; s#$HERE#/home/user/job#g; s#/tmp/h52a#/home/user/job/tmp#g" {} +
  fi
  sed -i "s#$VENV#/opt/venv#g; s#$HERE#/home/user/job#g; s#/tmp/h52a#/home/user/job/tmp#g" "$d/log.txt"
  pkill -f "$VENV/bin/python.* train.py" 2>/dev/null; pkill -f "spawn_main.py" 2>/dev/null
  # mp.spawn survivors killed by SIGTERM leave their forked DataLoader workers + resource tracker behind
  pkill -f "$VENV/bin/python -B -c from multiprocessing" 2>/dev/null; sleep 1
}

# --- 1. /dev/shm of 1 MiB for rank 2 only; its DataLoader workers produce 8 MiB batches from step 3
FAULT=shm CULPRIT=2 FAULT_STEP=3 run_case run-r52a-torchrun-shm-small "$TR train.py"
FAULT=shm CULPRIT=1 FAULT_STEP=2 SHM_NS_DONE=1 CULPRIT=1 WRAP="$SHM_WRAP" run_case run-r52a-shell-shm-small "./loop.sh"

# --- 2. RLIMIT_NPROC=1 (after dropping to uid nobody) -> fork of DataLoader workers / thread start fails
FAULT=nproc CULPRIT=3 NPROC_WHAT=workers run_case run-r52a-torchrun-nproc-workers "$TR train.py"
FAULT=nproc CULPRIT=2 NPROC_WHAT=thread run_case run-r52a-spawn-nproc-thread "python spawn_main.py"

# --- 3. RLIMIT_NOFILE = current fd count -> EMFILE on worker start / checkpoint save
FAULT=nofile CULPRIT=1 NOFILE_WHAT=workers run_case run-r52a-torchrun-logdir-nofile-workers "$TR --log-dir /tmp/h52a/tlogs --redirects 3 --tee 3 train.py"
FAULT=nofile CULPRIT=3 NOFILE_WHAT=ckpt run_case run-r52a-spawn-nofile-after-ckpt "python spawn_main.py"
FAULT=nofile CULPRIT=2 NOFILE_WHAT=workers run_case run-r52a-shell-nofile-workers "./loop.sh"

# --- 4. RLIMIT_CPU -> SIGXCPU mid-training
FAULT=cpu CULPRIT=2 CPU_BY_LAUNCHER=1 EPOCHS=8 WRAP='ulimit -S -t 8; exec' run_case run-r52a-shell-cpu-ulimit "./loop.sh"
FAULT=cpu CULPRIT=1 FAULT_STEP=4 EPOCHS=8 run_case run-r52a-torchrun-cpu-setrlimit "$TR train.py"
FAULT=cpu CULPRIT=3 FAULT_STEP=3 EPOCHS=8 run_case run-r52a-spawn-cpu-setrlimit "python spawn_main.py"

# --- 5. checkpoint dir of rank N on a 1 MiB tmpfs -> ENOSPC on save
mkdir -p /tmp/h52a/ckpt_small; mountpoint -q /tmp/h52a/ckpt_small || mount -t tmpfs -o size=1M tmpfs /tmp/h52a/ckpt_small
FAULT=ckpt CULPRIT=2 CKPT_DIR_CULPRIT=/tmp/h52a/ckpt_small run_case run-r52a-torchrun-ckpt-enospc "$TR train.py"
FAULT=ckpt CULPRIT=1 CKPT_DIR_CULPRIT=/tmp/h52a/ckpt_small run_case run-r52a-spawn-ckpt-enospc "python spawn_main.py"
umount /tmp/h52a/ckpt_small

# --- 6. tiny RLIMIT_STACK + deep recursion in data code -> SIGSEGV
FAULT=stack CULPRIT=2 STACK_BY_LAUNCHER=1 STACK_WHERE=main WRAP='ulimit -s 256; exec' run_case run-r52a-shell-stack-main "./loop.sh"
FAULT=stack CULPRIT=3 STACK_WHERE=worker run_case run-r52a-torchrun-logdir-stack-worker "$TR --log-dir /tmp/h52a/tlogs --redirects 3 --tee 3 train.py"
FAULT=stack CULPRIT=1 STACK_WHERE=main run_case run-r52a-spawn-stack-main "python spawn_main.py"

# --- 7. healthy noisy runs
FAULT=none NOISY=1 run_case run-r52a-torchrun-healthy-noisy "$TR train.py"
FAULT=none NOISY=1 run_case run-r52a-spawn-healthy-noisy "python spawn_main.py"
FAULT=none NOISY=1 run_case run-r52a-shell-healthy-noisy "./loop.sh"
