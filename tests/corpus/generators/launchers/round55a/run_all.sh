#!/bin/bash
# Reproduces every round55a case: a gloo job (4 CPU processes, a small model, a logger line per step with the
# rank) that HANDLES ITS OWN FAILURES (elastic @record, try/except + logger.exception, a custom sys.excepthook,
# faulthandler, atexit/signal "shutting down" handlers); one rank (never rank 0) fails at one step.
# 3 healthy runs keep the same handlers installed.
# Usage: run_all.sh [case-id-substring]   -> $POOL/<id>/log.txt (+ ranks/ for torchrun --log-dir / crash files)
# Labels: python3 make_labels.py $POOL
HERE=$(cd "$(dirname "$0")" && pwd)
VENV=${VENV:-/work/helpers/venv55a}
POOL=${POOL:-/tmp/h55a/pool}
TMPD=/tmp/h55a/tr
export PATH=$VENV/bin:$PATH PYTHONUNBUFFERED=1 PY=$VENV/bin/python
cd "$HERE"
ONLY=$1

run_case() {   # run_case ID CMD...   (case env set by the caller)
  local id=$1; shift
  [ -n "$ONLY" ] && [[ "$id" != *"$ONLY"* ]] && return
  local d=$POOL/$id; rm -rf "$d" "$TMPD/$id" "/tmp/h55a/crash/$id"; mkdir -p "$d" "$TMPD"
  echo "== $id: $*" >&2
  local t0=$(date +%s)
  LD=$TMPD/$id CRASH_DIR=/tmp/h55a/crash/$id timeout 150 bash -c "$*" > "$d/log.txt" 2>&1
  echo "   rc=$? $(( $(date +%s)-t0 ))s" >&2
  if [ -d "$TMPD/$id" ]; then           # torchrun --log-dir: copy the tree (<run_id>/attempt_0/<rank>/...)
    mkdir -p "$d/ranks"; cp -r "$TMPD/$id"/*/. "$d/ranks"
  fi
  if [ -d "/tmp/h55a/crash/$id" ]; then  # per-rank files the handlers wrote (traceback / failure report)
    mkdir -p "$d/ranks/crash"; cp -r "/tmp/h55a/crash/$id"/. "$d/ranks/crash"
  fi
  find "$d" -type f -exec sed -i "s#$VENV#/opt/venv#g; s#$HERE#/home/user/job#g; s#/tmp/h55a/crash/$id#/home/user/job/crash#g; s#$TMPD/$id#/home/user/job/logs#g; s#/tmp/h55a#/home/user/job/tmp#g" {} +
  # leftovers of this case only (every command line carries this venv's path)
  pkill -f "^$VENV/bin/python[0-9.]* (-u )?(job|spawn_main).py" 2>/dev/null
  pkill -f "^$VENV/bin/python[0-9.]* -c from multiprocessing" 2>/dev/null; sleep 1
}
T="torchrun --nproc-per-node 4 --master-port 29891"
TL="$T --log-dir \$LD --tee 3"
S="$VENV/bin/python spawn_main.py"
L="./loop.sh"

# ---- torchrun console
HANDLER=record FAULT=keyerror CULPRIT=2 STEP=3 run_case run-r55a-torchrun-record-keyerror "$T job.py"
HANDLER=except,noise FAULT=valueerror CULPRIT=3 STEP=2 run_case run-r55a-torchrun-except-noise-valueerror "$T job.py"
HANDLER=hook_line FAULT=keyerror CULPRIT=2 STEP=4 run_case run-r55a-torchrun-hookline-keyerror "$T job.py"
HANDLER=faulthandler,noise FAULT=abort CULPRIT=1 STEP=3 run_case run-r55a-torchrun-faulthandler-abort "$T job.py"
HANDLER=except,noise FAULT=sigkill CULPRIT=3 STEP=2 run_case run-r55a-torchrun-except-noise-sigkill "$T job.py"
HANDLER=except_destroy FAULT=hang CULPRIT=1 STEP=3 PG_TIMEOUT=15 HANG_S=30 run_case run-r55a-torchrun-except-destroy-hang "$T job.py"
HANDLER=record,except_reraise FAULT=mismatch CULPRIT=2 STEP=5 run_case run-r55a-torchrun-record-reraise-mismatch "$T job.py"
HANDLER=record,noise FAULT=none run_case run-r55a-torchrun-healthy-record-noise "$T job.py"
# torchrun --log-dir D --tee 3: per-rank files copied into ranks/
HANDLER=record FAULT=shape CULPRIT=1 STEP=2 run_case run-r55a-torchrun-logdir-record-shape "$TL job.py"
HANDLER=record FAULT=cuda CULPRIT=3 STEP=4 run_case run-r55a-torchrun-logdir-record-cuda "$TL job.py"
HANDLER=hook_file FAULT=valueerror CULPRIT=1 STEP=3 run_case run-r55a-torchrun-logdir-hookfile-valueerror "$TL job.py"
HANDLER=except_broken,noise FAULT=shape CULPRIT=2 STEP=2 run_case run-r55a-torchrun-logdir-broken-handler-shape "$TL job.py"

# ---- mp.spawn (console -> log.txt)
HANDLER=except_reraise FAULT=shape CULPRIT=1 STEP=4 run_case run-r55a-spawn-except-reraise-shape "$S"
HANDLER=except_destroy FAULT=mismatch CULPRIT=2 STEP=3 run_case run-r55a-spawn-except-destroy-mismatch "$S"
HANDLER=faulthandler,noise FAULT=segv CULPRIT=3 STEP=2 run_case run-r55a-spawn-faulthandler-segv "$S"
HANDLER=except_broken FAULT=keyerror CULPRIT=2 STEP=1 run_case run-r55a-spawn-broken-handler-keyerror "$S"
HANDLER=except_reraise,noise FAULT=hang CULPRIT=3 STEP=2 PG_TIMEOUT=20 HANG_S=35 run_case run-r55a-spawn-reraise-noise-hang "$S"
HANDLER=except,noise FAULT=none run_case run-r55a-spawn-healthy-except-noise "$S"

# ---- shell loop, every line prefixed "[rankN] " by sed -u
HANDLER=hook_line FAULT=cuda CULPRIT=1 STEP=2 run_case run-r55a-loop-hookline-cuda "$L"
HANDLER=hook_file,noise FAULT=shape CULPRIT=3 STEP=3 run_case run-r55a-loop-hookfile-noise-shape "$L"
HANDLER=except,noise FAULT=mismatch CULPRIT=1 STEP=4 TORCH_DISTRIBUTED_DEBUG=DETAIL run_case run-r55a-loop-except-noise-mismatch-detail "$L"
HANDLER=record,noise FAULT=hang CULPRIT=2 STEP=4 PG_TIMEOUT=18 HANG_S=32 run_case run-r55a-loop-record-noise-hang "$L"
HANDLER=faulthandler,noise FAULT=sigkill CULPRIT=2 STEP=5 run_case run-r55a-loop-faulthandler-noise-sigkill "$L"
HANDLER=hook_line,faulthandler,noise FAULT=none run_case run-r55a-loop-healthy-hook-noise "$L"
rm -rf /tmp/h55a/crash
