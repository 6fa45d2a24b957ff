#!/bin/bash
# Reproduces every round58a case: gloo jobs of 4 (some 6 or 8) CPU processes that build process groups SMALLER
# than the world (dist.new_subgroups, dist.new_group, a 2-D init_device_mesh dp x tp with DTensor
# ColwiseParallel/RowwiseParallel, a hand-written send/recv pipeline) and log group-local ranks
# ("group_rank=1", "tp_rank 1 dp_rank 0", "pp_rank 1 dp_rank 1").  One rank (never global rank 0; its rank in
# the faulting sub-group differs from its global rank) fails at one step.  3 healthy runs.
# Usage: run_all.sh [case-id-substring]   -> $POOL/<id>/log.txt (+ ranks/ for torchrun --log-dir)
# Labels: python3 make_labels.py $POOL
HERE=$(cd "$(dirname "$0")" && pwd)
VENV=${VENV:-/work/helpers/venv58a}
POOL=${POOL:-/tmp/h58a/pool}
TMPD=/tmp/h58a/tr
export PATH=$VENV/bin:$PATH PYTHONUNBUFFERED=1
cd "$HERE"
ONLY=$1
PORT=29600

run_case() {   # run_case ID CMD...   (case env set by the caller)
  local id=$1; shift
  [ -n "$ONLY" ] && [[ "$id" != *"$ONLY"* ]] && return
  PORT=$((PORT+1))
  local d=$POOL/$id; rm -rf "$d" "$TMPD/$id"; mkdir -p "$d" "$TMPD"
  echo "== $id: $*" >&2
  local t0=$(date +%s)
  # own session (setsid) so that every process of this case can be killed by its process-group id afterwards
  LD=$TMPD/$id MASTER_PORT=$PORT setsid timeout 180 bash -c "$*" > "$d/log.txt" 2>&1 &
  local pid=$!; wait $pid; local rc=$?
  echo "   rc=$rc $(( $(date +%s)-t0 ))s" >&2
  kill -9 -- -$pid 2>/dev/null; sleep 1       # leftovers of this case only
  if [ -d "$TMPD/$id" ]; then                  # torchrun --log-dir: copy the tree (<run_id>/attempt_0/<rank>/...)
    mkdir -p "$d/ranks"; cp -r "$TMPD/$id"/*/. "$d/ranks"
  fi
  find "$d" -type f -exec sed -i "s#$VENV#/opt/venv#g; s#$HERE#/home/user/job#g; s#$TMPD/$id#/home/user/job/logs#g; s#/tmp/h58a#/home/user/job/tmp#g" {} +
}
T4="torchrun --nproc-per-node 4 --master-port \$MASTER_PORT"
T6="torchrun --nproc-per-node 6 --master-port \$MASTER_PORT"
T8="torchrun --nproc-per-node 8 --master-port \$MASTER_PORT"
LOGD="--log-dir \$LD --tee 3"
S="$VENV/bin/python spawn_main.py"

# ---- torchrun console
LAYOUT=subgroups FAULT=keyerror CULPRIT=3 STEP=3 run_case run-r58a-torchrun-subgroups-keyerror "$T4 job.py"
LAYOUT=newgroup FAULT=sizemismatch CULPRIT=2 STEP=4 run_case run-r58a-torchrun-newgroup-sizemismatch "$T4 job.py"
LAYOUT=mesh FAULT=shape CULPRIT=2 STEP=2 run_case run-r58a-torchrun-mesh-tp-shape "$T4 job.py"
LAYOUT=mesh FAULT=placement CULPRIT=3 STEP=3 run_case run-r58a-torchrun-mesh-placement "$T4 job.py"
LAYOUT=mesh FAULT=hang CULPRIT=3 STEP=3 PG_TIMEOUT=15 HANG_S=30 run_case run-r58a-torchrun-mesh-tp-hang "$T4 job.py"
LAYOUT=pipe LOGSTYLE=both FAULT=sigkill CULPRIT=4 STEP=3 run_case run-r58a-torchrun-pipe6-sigkill "$T6 job.py"
LAYOUT=pipe FAULT=hang CULPRIT=3 STEP=2 PG_TIMEOUT=18 HANG_S=35 run_case run-r58a-torchrun-pipe4-hang "$T4 job.py"
LAYOUT=pipe LOGSTYLE=both FAULT=sizemismatch CULPRIT=2 STEP=3 run_case run-r58a-torchrun-pipe4-sizemismatch "$T4 job.py"
LAYOUT=newgroup FAULT=sigkill CULPRIT=1 STEP=4 run_case run-r58a-torchrun-newgroup-sigkill "$T4 job.py"
LAYOUT=subgroups FAULT=opmismatch CULPRIT=2 STEP=2 TORCH_DISTRIBUTED_DEBUG=DETAIL run_case run-r58a-torchrun-subgroups-opmismatch-detail "$T4 job.py"
LAYOUT=mesh FAULT=none run_case run-r58a-torchrun-mesh-healthy "$T4 job.py"
# torchrun --log-dir D --tee 3: per-rank files copied into ranks/
LAYOUT=subgroups FAULT=hang CULPRIT=2 STEP=4 PG_TIMEOUT=15 HANG_S=30 run_case run-r58a-torchrun-logdir-subgroups-hang "$T4 $LOGD job.py"
LAYOUT=newgroup FAULT=keyerror CULPRIT=3 STEP=2 run_case run-r58a-torchrun-logdir-newgroup-keyerror "$T4 $LOGD job.py"
LAYOUT=mesh FAULT=opmismatch CULPRIT=1 STEP=3 TORCH_DISTRIBUTED_DEBUG=DETAIL run_case run-r58a-torchrun-logdir-mesh-opmismatch-detail "$T4 $LOGD job.py"
LAYOUT=pipe FAULT=keyerror CULPRIT=7 STEP=2 run_case run-r58a-torchrun-logdir-pipe8-keyerror "$T8 $LOGD job.py"
LAYOUT=subgroups FAULT=none run_case run-r58a-torchrun-logdir-subgroups-healthy "$T4 $LOGD job.py"

# ---- mp.spawn (console -> log.txt)
LAYOUT=subgroups FAULT=sigkill CULPRIT=2 STEP=3 run_case run-r58a-spawn-subgroups-sigkill "$S"
LAYOUT=newgroup FAULT=skip CULPRIT=1 STEP=3 PG_TIMEOUT=15 run_case run-r58a-spawn-newgroup-skip "$S"
LAYOUT=mesh FAULT=sizemismatch CULPRIT=3 STEP=2 run_case run-r58a-spawn-mesh-dp-sizemismatch "$S"
LAYOUT=pipe FAULT=keyerror CULPRIT=2 STEP=3 run_case run-r58a-spawn-pipe4-keyerror "$S"
LAYOUT=mesh FAULT=hang CULPRIT=2 STEP=2 PG_TIMEOUT=20 HANG_S=35 run_case run-r58a-spawn-mesh-tp-hang "$S"
NPROCS=6 LAYOUT=pipe FAULT=opmismatch CULPRIT=5 STEP=2 TORCH_DISTRIBUTED_DEBUG=DETAIL run_case run-r58a-spawn-pipe6-opmismatch-detail "$S"
LAYOUT=subgroups FAULT=skip CULPRIT=3 STEP=4 PG_TIMEOUT=15 TORCH_DISTRIBUTED_DEBUG=DETAIL run_case run-r58a-spawn-subgroups-skip-detail "$S"
NPROCS=6 LAYOUT=pipe FAULT=none run_case run-r58a-spawn-pipe6-healthy "$S"
rm -rf "$TMPD"
