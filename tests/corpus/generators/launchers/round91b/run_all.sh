#!/bin/bash
# Reproduces every round91b case: failures in the EVALUATION / metric-sync part of multi-rank jobs
# (torchrun, mp.spawn, Lightning ddp on CPU, accelerate launch), plus healthy runs with uneven eval handled.
# Usage: run_all.sh [case-id ...]   (no args: all cases). Needs root for the memory cgroup case.
# VENV: virtualenv with torch==2.13.0 (CPU), numpy, torchmetrics, lightning, accelerate.
# WORK: scratch dir (rewritten to /home/user/job). OUT: where case folders are written. One job at a time.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
VENV=${VENV:-/tmp/h91b/venv}
WORK=${WORK:-/tmp/h91b/work}
OUT=${OUT:-/tmp/h91b/stage}
PY=$VENV/bin/python
TR="$VENV/bin/torchrun"
ACC="$VENV/bin/accelerate"
CG=/sys/fs/cgroup/memory/r91b
mkdir -p "$WORK" "$OUT"
cp "$HERE"/*.py "$HERE"/*.yaml "$WORK"/ 2>/dev/null
cd "$WORK"
export PATH="$VENV/bin:$PATH"

# run ID CMD...: runs the launcher command in its own session, writes OUT/ID/log.txt (paths rewritten);
# a torchrun --log-dir tree under WORK/tlogs/ID is copied to OUT/ID/ranks
run() {
  local id=$1; shift
  local d=$OUT/$id
  rm -rf "$d" "$WORK/tlogs/$id"; mkdir -p "$d"
  echo "== $id: $*" >&2
  setsid bash -c "$*" > "$d/log.txt" 2>&1 &
  local pid=$! t=0
  while kill -0 $pid 2>/dev/null && [ $t -lt 300 ]; do sleep 1; t=$((t+1)); done
  kill -- -$pid 2>/dev/null; sleep 1; kill -9 -- -$pid 2>/dev/null
  wait $pid 2>/dev/null; echo "   rc=$? (${t}s)" >&2
  if [ -d "$WORK/tlogs/$id" ]; then cp -r "$WORK/tlogs/$id" "$d/ranks"; fi
  find "$d" -type f -exec sed -i -e "s#$VENV#/opt/venv#g" -e "s#$WORK#/home/user/job#g" {} +
  sleep 2
}

want() { [ -z "$SEL" ] || [[ " $SEL " == *" $1 "* ]]; }
SEL="$*"
EJ=eval_job.py
T4="$TR --nproc-per-node 4 --master-port 29691"
T3="$TR --nproc-per-node 3 --master-port 29691"
SP="$PY spawn_eval.py"

# ---- plain PyTorch eval loop (eval_job.py) ----
# last rank's val file has one batch more; per-batch loss all_reduce; the others go on to a barrier -> hang
want run91-torchrun-uneven-val-timeout && run run91-torchrun-uneven-val-timeout "$T4 --tee 3 $EJ --fault uneven --who last --after barrier --fault-epoch 2 --timeout 20"
# same, TORCH_DISTRIBUTED_DEBUG=DETAIL (no DDP: DDP segfaults under DETAIL here): fingerprint check names the mismatch; rank 1 has the extra batch
want run91-torchrun-uneven-val-detail && run run91-torchrun-uneven-val-detail "TORCH_DISTRIBUTED_DEBUG=DETAIL $T4 --tee 3 $EJ --fault uneven --who 1 --after barrier --fault-epoch 1 --no-ddp --timeout 20"
# mp.spawn: extra 1-element all_reduce (last rank) meets the others' 2-element [correct,total] all_reduce
want run91-spawn-uneven-val-metric-timeout && run run91-spawn-uneven-val-metric-timeout "$SP 3 --fault uneven --who last --after metric --fault-epoch 1 --timeout 20"
# all_gather_object of prediction records; rank 1's records hold a lambda -> pickling fails on rank 1
want run91-spawn-gather-object-unpicklable && run run91-spawn-gather-object-unpicklable "$SP 4 --fault unpicklable --who 1 --fault-epoch 1 --timeout 20"
want run91-torchrun-gather-object-unpicklable-last && run run91-torchrun-gather-object-unpicklable-last "$T3 --tee 3 $EJ --fault unpicklable --who last --fault-epoch 0 --timeout 20"
# rank 0 alone evaluates the full val set (~48 s) while ranks 1-3 wait at a barrier with a 20 s timeout
want run91-torchrun-rank0-eval-timeout && run run91-torchrun-rank0-eval-timeout "$T4 --tee 3 $EJ --fault rank0_eval --fault-epoch 1 --slow 0.75 --timeout 20"
# best-accuracy all_reduce done only by the rank whose local accuracy improved (rank 2)
want run91-torchrun-allreduce-one-rank && run run91-torchrun-allreduce-one-rank "$T4 --tee 3 $EJ --fault allreduce_one --who 2 --fault-epoch 1 --timeout 20"
want run91-spawn-allreduce-one-rank-detail && run run91-spawn-allreduce-one-rank-detail "TORCH_DISTRIBUTED_DEBUG=DETAIL $SP 3 --fault allreduce_one --who 1 --fault-epoch 2 --no-ddp --timeout 20"
# early stopping on the local val loss: only rank 1 stops and waits at the final barrier
want run91-torchrun-early-stop-one-rank && run run91-torchrun-early-stop-one-rank "$T3 --tee 3 $EJ --fault early_stop --who 1 --fault-epoch 1 --epochs 4 --timeout 20"
# the last rank's val shard is empty -> ZeroDivisionError computing the mean val loss
want run91-torchrun-eval-empty-shard && run run91-torchrun-eval-empty-shard "$T4 --tee 3 $EJ --fault zero_div --who last --fault-epoch 2 --timeout 20"
# rank 2 SIGKILLed in validation batch 2 of epoch 1
want run91-spawn-eval-sigkill && run run91-spawn-eval-sigkill "$SP 3 --fault sigkill --who 2 --fault-epoch 1 --fault-step 2 --timeout 20"
# DDP Join for uneven train shards, plus a manual loss all_reduce that Join does not cover (rank 3 has the extra batch)
want run91-torchrun-join-manual-allreduce && run run91-torchrun-join-manual-allreduce "$T4 --tee 3 $EJ --fault join_wrong --who 3 --timeout 20"
# gather_object of predictions: rank 2 builds a ~500 MB raw score table and pickles it; rank 2 runs in a
# 1 GiB memory cgroup (it moves itself in) -> kernel OOM killer SIGKILLs it. torchrun --log-dir tree in ranks/
if want run91-torchrun-gather-object-huge-oom; then
  mkdir -p $CG && echo 1073741824 > $CG/memory.limit_in_bytes && echo 1073741824 > $CG/memory.memsw.limit_in_bytes
  run run91-torchrun-gather-object-huge-oom "R91_CGROUP=$CG R91_CGROUP_RANK=2 $T4 --log-dir tlogs/run91-torchrun-gather-object-huge-oom --tee 3 $EJ --fault huge --who 2 --fault-epoch 1 --timeout 30"
  rmdir $CG
fi
# ---- torchmetrics metric sync (tm_job.py) ----
TM=tm_job.py
# num_classes inferred per rank: rank 2's MulticlassAccuracy states have 5 entries, the others 4
want run91-torchrun-torchmetrics-state-shape && run run91-torchrun-torchmetrics-state-shape "$T4 --tee 3 $TM --fault shape --who 2 --fault-epoch 1 --timeout 20"
# the last rank's custom metric state became float64 (float64 targets), the others float32
want run91-torchrun-torchmetrics-state-dtype && run run91-torchrun-torchmetrics-state-dtype "$T3 --tee 3 $TM --fault dtype --who last --fault-epoch 2 --timeout 20"
# only rank 0 calls compute() (which syncs); ranks 1-3 go on training
want run91-torchrun-torchmetrics-compute-rank0 && run run91-torchrun-torchmetrics-compute-rank0 "$T4 --tee 3 $TM --fault rank0_compute --fault-epoch 1 --timeout 20"
# ---- accelerate (acc_eval.py) ----
AL="$ACC launch --multi_gpu --num_processes 3 --num_machines 1 --mixed_precision no --dynamo_backend no --main_process_port 29691"
AL4="$ACC launch --multi_gpu --num_processes 4 --num_machines 1 --mixed_precision no --dynamo_backend no --main_process_port 29691"
# hand-built eval shards, rank 2's last batch smaller, accelerator.gather() (no padding); with and without ACCELERATE_DEBUG_MODE
want run91-accelerate-gather-uneven-debug && run run91-accelerate-gather-uneven-debug "ACCELERATE_DEBUG_MODE=1 $AL acc_eval.py --fault gather --who last --fault-epoch 1 --timeout 20"
want run91-accelerate-gather-uneven && run run91-accelerate-gather-uneven "$AL4 acc_eval.py --fault gather --who 1 --fault-epoch 2 --timeout 20"
# hand-built eval shards, rank 1 has one batch more: one gather_for_metrics more than the others
want run91-accelerate-gather-for-metrics-extra-batch && run run91-accelerate-gather-for-metrics-extra-batch "$AL acc_eval.py --fault extra --who 1 --fault-epoch 1 --timeout 20"
# healthy: prepared eval loader over 101 samples, gather_for_metrics
want run91-accelerate-healthy-gather-for-metrics && run run91-accelerate-healthy-gather-for-metrics "$AL acc_eval.py --fault none --timeout 20"
# ---- Lightning ddp on CPU (lt_job.py; Lightning starts the 3 processes itself) ----
# self.log(..., sync_dist=True) of an extra metric on rank 1 only
want run91-lightning-sync-dist-one-rank && run run91-lightning-sync-dist-one-rank "MASTER_PORT=29691 $PY lt_job.py --fault sync_dist --who 1 --fault-epoch 1 --timeout 20"
# trainer.should_stop set from the local val loss on the last rank only
want run91-lightning-early-stop-one-rank && run run91-lightning-early-stop-one-rank "MASTER_PORT=29691 $PY lt_job.py --fault stop --who last --fault-epoch 1 --timeout 20"
# healthy: uneven shards, Join used correctly / padded all_gather / single metric all_reduce
want run91-torchrun-healthy-join && run run91-torchrun-healthy-join "$T4 --tee 3 $EJ --fault join_ok --who 1 --timeout 20"
want run91-spawn-healthy-padded-gather && run run91-spawn-healthy-padded-gather "$SP 3 --fault padded --who last --timeout 20"

# labels (decisive lines picked from the fresh logs and checked)
OUT=$OUT $PY "$HERE"/make_labels.py
