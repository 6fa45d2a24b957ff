#!/bin/bash
# Reproduces the round87a cases: launcher variants (torchrun --local-ranks-filter / --log-dir --redirects 3 --tee 1,
# deprecated torch.distributed.launch with and without --use-env, elastic_launch from Python, @record error files,
# --standalone --max-restarts 1, --nnodes 2 as two agents on one host) with one rank failing, CPU/gloo.
# Usage: run_all.sh [case-id ...]   (default: all). Env: VENV (python venv with torch 2.13.0), POOL (output dir).
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
VENV=${VENV:-/work/helpers/venv87a}
POOL=${POOL:-/tmp/h87a/pool}
JOB=${JOB:-/tmp/h87a/job}          # work dir; rewritten to /home/user/job in logs
PY=$VENV/bin/python
TR="$VENV/bin/torchrun"
mkdir -p "$JOB" "$POOL"; cp "$HERE"/train87.py "$HERE"/elastic87.py "$JOB"/
export OMP_NUM_THREADS=1 PYTHONUNBUFFERED=1

rewrite() {  # machine-specific paths only
  sed -i -e "s#$VENV#/opt/venv#g" -e "s#$JOB#/home/user/job#g" "$@"
}

# run ID ENV... -- CMD...   : runs CMD in $JOB with ENV, log to $POOL/ID/log.txt
run() {
  local id=$1; shift; local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done; shift
  local out=$POOL/$id; rm -rf "$out" "$JOB/logs/$id"; mkdir -p "$out"
  echo "== $id: ${envs[*]} $*" >&2
  (cd "$JOB" && env "${envs[@]}" timeout -k 5 180 "$@" > "$out/log.txt" 2>&1); echo "   rc=$?" >&2
  pkill -f "$JOB/train87.py" 2>/dev/null; pkill -f "$JOB/elastic87.py" 2>/dev/null
  rewrite "$out/log.txt"
}
copy_ranks() {  # copy torchrun's --log-dir tree (LOGDIR/<run_id>_xxx/attempt_N/...) into ranks/
  local id=$1 d; d=$(ls -d "$JOB/logs/$id"/*/ | head -1)
  cp -r "$d" "$POOL/$id/ranks"; find "$POOL/$id/ranks" -type f -exec sed -i -e "s#$VENV#/opt/venv#g" -e "s#$JOB#/home/user/job#g" {} +
}
copy_errors() {  # copy the @record error.json files next to log.txt (error_rank<global rank>.json)
  local id=$1 f r
  for f in $(find "$JOB/logs/$id" -name error.json | sort); do
    r=$(echo "$f" | sed -E 's#.*/attempt_([0-9]+)/([0-9]+)/error.json#a\1_local\2#')
    cp "$f" "$POOL/$id/error_$r.json"
  done
  for f in "$POOL/$id"/error_*.json; do [ -e "$f" ] && rewrite "$f"; done
}
T="$TR --nnodes 1 --master-addr 127.0.0.1"
S="train87.py"

case_() {
case $1 in
# --- torchrun --local-ranks-filter 0,2 (console shows only local ranks 0 and 2) ---
run-r87a-filter-healthy) run $1 FAULT=none -- $T --nproc-per-node 4 --master-port 29701 --local-ranks-filter 0,2 $S ;;
run-r87a-filter-raise-hidden)   # rank 3 (not shown) raises KeyError; @record puts it in torchrun's summary
  run $1 FAULT=raise:3:3 FAULT_EXC=keyerror RECORD=1 -- $T --nproc-per-node 4 --master-port 29702 --local-ranks-filter 0,2 $S ;;
run-r87a-filter-sigkill-hidden) # rank 1 (not shown) SIGKILLed at step 2
  run $1 FAULT=sigkill:1:2 -- $T --nproc-per-node 4 --master-port 29703 --local-ranks-filter 0,2 $S ;;
run-r87a-filter-hang-hidden)    # rank 3 (not shown) sleeps 90 s before all_reduce at step 2, PG timeout 20 s
  run $1 FAULT=hang:3:2 PG_TIMEOUT=20 -- $T --nproc-per-node 4 --master-port 29704 --local-ranks-filter 0,2 $S ;;
run-r87a-filter-raise-shown)    # rank 2 (shown) raises ValueError, 3 ranks
  run $1 FAULT=raise:2:4 FAULT_EXC=valueerror -- $T --nproc-per-node 3 --master-port 29705 --local-ranks-filter 0,2 $S ;;
# --- torchrun --log-dir --redirects 3 --tee 1 (stdout teed, stderr only in files) ---
run-r87a-logdir-tee1-raise)     # rank 1 raises IndexError at step 3; traceback only in attempt_0/1/stderr.log
  run $1 FAULT=raise:1:3 FAULT_EXC=indexerror -- $T --nproc-per-node 3 --master-port 29711 --log-dir logs/$1 --redirects 3 --tee 1 $S
  copy_ranks $1 ;;
run-r87a-logdir-tee1-mismatch-detail) # rank 2 all_reduces a 5-element tensor, TORCH_DISTRIBUTED_DEBUG=DETAIL (DDP=0: DDP+DETAIL segfaults in 2.13 CPU)
  run $1 FAULT=mismatch:2:2 MISMATCH=size DDP=0 TORCH_DISTRIBUTED_DEBUG=DETAIL -- $T --nproc-per-node 3 --master-port 29712 --log-dir logs/$1 --redirects 3 --tee 1 $S
  copy_ranks $1 ;;
# --- deprecated python -m torch.distributed.launch ---
run-r87a-launch-raise)          # no --use-env: script gets --local-rank=N; rank 2 raises KeyError
  run $1 FAULT=raise:2:2 FAULT_EXC=keyerror -- $PY -m torch.distributed.launch --nproc-per-node 3 --master-port 29721 $S ;;
run-r87a-launch-sigkill)        # no --use-env; rank 1 SIGKILLed at step 3
  run $1 FAULT=sigkill:1:3 -- $PY -m torch.distributed.launch --nproc-per-node 4 --master-port 29722 $S ;;
run-r87a-launch-useenv-hang)    # --use-env; rank 2 hangs past the 20 s PG timeout
  run $1 FAULT=hang:2:2 PG_TIMEOUT=20 -- $PY -m torch.distributed.launch --use-env --nproc-per-node 3 --master-port 29723 $S ;;
run-r87a-launch-useenv-mismatch-detail) # --use-env; rank 0 issues an extra broadcast (the one rank-0 culprit);
  # without DETAIL this only shows as gloo timeouts on every rank; DDP=0 since DDP+DETAIL segfaults in 2.13 CPU
  run $1 FAULT=mismatch:0:3 MISMATCH=extra_broadcast DDP=0 TORCH_DISTRIBUTED_DEBUG=DETAIL -- $PY -m torch.distributed.launch --use-env --nproc-per-node 3 --master-port 29724 $S ;;
# --- elastic_launch called from Python ---
run-r87a-elastic-healthy) run $1 FAULT=none PORT=29730 -- $PY elastic87.py ;;
run-r87a-elastic-raise)         # rank 1 raises ValueError; no @record
  run $1 FAULT=raise:1:2 FAULT_EXC=valueerror PORT=29731 -- $PY elastic87.py ;;
run-r87a-elastic-record-mismatch-detail) # rank 1 all_reduces a different size; worker wrapped in @record; DETAIL
  run $1 FAULT=mismatch:1:3 MISMATCH=size DDP=0 TORCH_DISTRIBUTED_DEBUG=DETAIL RECORD=1 PORT=29732 LOG_DIR=logs/$1 -- $PY elastic87.py
  copy_errors $1 ;;
# --- @record with torchrun --log-dir (error.json copied next to log.txt) ---
run-r87a-record-raise)          # rank 2 raises KeyError, @record writes attempt_0/2/error.json
  run $1 FAULT=raise:2:3 FAULT_EXC=keyerror RECORD=1 -- $T --nproc-per-node 4 --master-port 29741 --log-dir logs/$1 $S
  copy_errors $1 ;;
# --- torchrun --standalone --max-restarts 1 (PREFIX_STORE=1: without it attempt 1 dies in gloo connectFullMesh) ---
run-r87a-standalone-restart-same) # rank 1 raises the same ValueError in both attempts
  run $1 FAULT=raise:1:2 FAULT_EXC=valueerror PREFIX_STORE=1 -- $TR --standalone --nproc-per-node 3 --max-restarts 1 $S ;;
run-r87a-standalone-restart-diff) # attempt 0: rank 2 raises KeyError; attempt 1: rank 1 SIGKILLed at step 3
  run $1 FAULT=raise:2:2 FAULT_EXC=keyerror FAULT_A1=sigkill:1:3 PREFIX_STORE=1 -- $TR --standalone --nproc-per-node 3 --max-restarts 1 $S ;;
# --- --nnodes 2: two torchrun agents on this host (static rendezvous), output of both in one log ---
run-r87a-nnodes2-raise|run-r87a-nnodes2-sigkill|run-r87a-nnodes2-hang)
  case $1 in
    *raise) F="FAULT=raise:3:3 FAULT_EXC=indexerror"; P=29751 ;;   # global rank 3 = node 1 local 1
    *sigkill) F="FAULT=sigkill:2:2"; P=29752 ;;                    # global rank 2 = node 1 local 0
    *hang) F="FAULT=hang:1:2 PG_TIMEOUT=20"; P=29753 ;;             # global rank 1 = node 0 local 1
  esac
  N="$TR --nnodes 2 --nproc-per-node 2 --master-addr 127.0.0.1 --master-port $P"
  run $1 $F -- bash -c "$N --node-rank 0 $S & sleep 1; $N --node-rank 1 $S & wait" ;;
*) echo "unknown case $1" >&2 ;;
esac
}

ALL="run-r87a-filter-healthy run-r87a-filter-raise-hidden run-r87a-filter-sigkill-hidden run-r87a-filter-hang-hidden
run-r87a-filter-raise-shown run-r87a-logdir-tee1-raise run-r87a-logdir-tee1-mismatch-detail run-r87a-launch-raise
run-r87a-launch-sigkill run-r87a-launch-useenv-hang run-r87a-launch-useenv-mismatch-detail run-r87a-elastic-healthy
run-r87a-elastic-raise run-r87a-elastic-record-mismatch-detail run-r87a-record-raise run-r87a-standalone-restart-same
run-r87a-standalone-restart-diff run-r87a-nnodes2-raise run-r87a-nnodes2-sigkill run-r87a-nnodes2-hang"
for c in ${@:-$ALL}; do case_ "$c"; done
