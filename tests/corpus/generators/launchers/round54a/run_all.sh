#!/bin/bash
# Reproduces every round54a case: a gloo job (4-5 CPU processes) with a STRAGGLER THAT WAKES UP -- one rank
# (never rank 0) is slow at one step (sleep in data loading, fsync-heavy checkpoint save, rank-only eval,
# CPU starvation, pure-Python loop, GC pause, flaky read retried with backoff) for longer than the 15-20 s
# process-group timeout, so the others time out in the step's all_reduce and the slow rank reports its own
# error when it finally reaches the collective.  3 healthy runs: the slow rank stays within the timeout.
# Usage: run_all.sh [case-id-substring]   -> $POOL/<id>/log.txt (+ ranks/ for torchrun --log-dir)
# Labels: python3 make_labels.py $POOL
HERE=$(cd "$(dirname "$0")" && pwd)
VENV=${VENV:-/work/helpers/venv54a}
POOL=${POOL:-/tmp/h54a/pool}
TMPD=/tmp/h54a/tr
export PATH=$VENV/bin:$PATH PYTHONUNBUFFERED=1 PY=$VENV/bin/python
cd "$HERE"
ONLY=$1

run_case() {   # run_case ID CMD...   (case env set by the caller)
  local id=$1; shift
  [ -n "$ONLY" ] && [[ "$id" != *"$ONLY"* ]] && return
  local d=$POOL/$id; rm -rf "$d" "$TMPD/$id"; mkdir -p "$d" "$TMPD"
  echo "== $id: $*" >&2
  local t0=$(date +%s)
  LD=$TMPD/$id timeout 150 bash -c "$*" > "$d/log.txt" 2>&1; echo "   rc=$? $(( $(date +%s)-t0 ))s" >&2
  if [ -d "$TMPD/$id" ]; then           # torchrun --log-dir: copy the tree (<run_id>/attempt_0/<rank>/...)
    cp -r "$TMPD/$id"/*/. "$d/ranks"
  fi
  find "$d" -type f -exec sed -i "s#$VENV#/opt/venv#g; s#$HERE#/home/user/job#g; s#$TMPD/$id#/home/user/job/logs#g; s#/tmp/h54a#/home/user/job/tmp#g" {} +
  # leftovers of this case only (every command line carries this venv's path)
  pkill -f "^$VENV/bin/python[0-9.]* (-u )?(job|spawn_main).py" 2>/dev/null
  pkill -f "^$VENV/bin/python[0-9.]* -c from multiprocessing" 2>/dev/null; sleep 1
}
T="torchrun --nproc-per-node \${NPROCS:-4} --master-port 29871"
S="$VENV/bin/python spawn_main.py"
L="./loop.sh"

# ---- shell loop, every line prefixed "[rankN] " by sed -u (loop's console -> log.txt)
SLOW=dataload CULPRIT=2 SLOW_STEP=3 SLOW_S=25 PG_TIMEOUT=15 TS=1 run_case run-r54a-loop-dataload-sleep "$L"
SLOW=ckpt CULPRIT=3 SLOW_STEP=2 SLOW_S=28 PG_TIMEOUT=20 TS=0 NPROCS=5 run_case run-r54a-loop-ckpt-fsync-nots "$L"
SLOW=affinity CULPRIT=1 SLOW_STEP=4 PY_ITERS=150000000 PG_TIMEOUT=15 TS=1 run_case run-r54a-loop-affinity-starved "$L"
SLOW=retry CULPRIT=4 SLOW_STEP=1 SLOW_S=25 PG_TIMEOUT=15 TS=0 NPROCS=5 run_case run-r54a-loop-retry-backoff-nots "$L"
CATCH=1 SLOW=gc CULPRIT=2 SLOW_STEP=3 GC_OBJS=20000000 PG_TIMEOUT=15 TS=1 run_case run-r54a-loop-catch-gc-pause "$L"
SLOW=dataload CULPRIT=3 SLOW_STEP=2 SLOW_S=8 PG_TIMEOUT=20 TS=1 run_case run-r54a-loop-healthy-slow-loader "$L"

# ---- torchrun console (--monitor-interval 5, the pre-2.3 default, in most: the agent notices later)
SLOW=eval CULPRIT=1 SLOW_STEP=3 EVAL_BATCHES=6500 PG_TIMEOUT=15 TS=1 run_case run-r54a-torchrun-eval-rank1 "$T --monitor-interval 5 job.py"
SLOW=pyloop CULPRIT=3 SLOW_STEP=2 PY_ITERS=320000000 PG_TIMEOUT=20 TS=0 run_case run-r54a-torchrun-pyloop-nots "$T job.py"
SLOW=dataload CULPRIT=2 SLOW_STEP=4 SLOW_S=17 PG_TIMEOUT=15 TS=1 NPROCS=5 run_case run-r54a-torchrun-dataload-w5 "$T --monitor-interval 5 job.py"
CATCH=1 SLOW=dataload CULPRIT=3 SLOW_STEP=1 SLOW_S=17 PG_TIMEOUT=15 TS=1 run_case run-r54a-torchrun-catch-dataload "$T --monitor-interval 5 job.py"
SLOW=eval CULPRIT=2 SLOW_STEP=3 EVAL_BATCHES=1200 PG_TIMEOUT=20 TS=1 run_case run-r54a-torchrun-healthy-eval "$T job.py"
# torchrun --log-dir D --tee 3: per-rank files copied into ranks/
SLOW=ckpt CULPRIT=2 SLOW_STEP=3 SLOW_S=22 PG_TIMEOUT=20 TS=1 run_case run-r54a-torchrun-logdir-ckpt "$T --monitor-interval 5 --log-dir \$LD --tee 3 job.py"
SLOW=retry CULPRIT=1 SLOW_STEP=2 SLOW_S=10 PG_TIMEOUT=15 TS=0 NPROCS=5 run_case run-r54a-torchrun-logdir-retry-nots "$T --monitor-interval 5 --log-dir \$LD --tee 3 job.py"

# ---- mp.spawn (console -> log.txt)
SLOW=dataload CULPRIT=1 SLOW_STEP=3 SLOW_S=16 PG_TIMEOUT=15 TS=1 run_case run-r54a-spawn-dataload-rank1 "$S"
SLOW=affinity CULPRIT=2 SLOW_STEP=2 PY_ITERS=120000000 PG_TIMEOUT=15 TS=0 NPROCS=5 run_case run-r54a-spawn-affinity-nots "$S"
SLOW=gc CULPRIT=3 SLOW_STEP=4 GC_OBJS=20000000 PG_TIMEOUT=15 TS=1 run_case run-r54a-spawn-gc-pause "$S"
SLOW=ckpt CULPRIT=4 SLOW_STEP=3 SLOW_S=21 PG_TIMEOUT=20 TS=0 NPROCS=5 run_case run-r54a-spawn-ckpt-nots "$S"
SLOW=eval CULPRIT=2 SLOW_STEP=1 EVAL_BATCHES=7000 PG_TIMEOUT=20 TS=0 run_case run-r54a-spawn-eval-nots "$S"
SLOW=pyloop CULPRIT=1 SLOW_STEP=3 PY_ITERS=60000000 PG_TIMEOUT=20 TS=1 run_case run-r54a-spawn-healthy-pyloop "$S"
rm -rf /tmp/h54a/ckpt
