#!/bin/bash
# round75a: checkpointing (torch.distributed.checkpoint, per-rank torch.save/torch.load) and object collectives
# failing on one rank, CPU/gloo, torchrun or mp.spawn, 3-4 ranks.  See ckjob.py for the modes.
# Usage: run_all.sh [case-id ...]   (default: all, in order; the healthy save runs come first because later
# resume cases read their checkpoints).  Cases go to $POOL/<id>/log.txt (+ ranks/ for --log-dir runs).
# Paths rewritten in logs: $V -> /opt/venv, $WORK -> /home/user/job.  Needs root for the read-only tmpfs mount.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
V=${V:-/work/helpers/venv75a}
WORK=${WORK:-/tmp/h75a/job}
POOL=${POOL:-/tmp/h75a/pool}
PY=$V/bin/python
TR="$V/bin/torchrun --standalone"
J=ckjob.py
mkdir -p "$WORK" "$POOL"; cp "$HERE/ckjob.py" "$HERE/mangle.py" "$WORK/"
cd "$WORK"
ONLY="${*:-}"

run() {  # run <id> <command...>   (runs in $WORK, relative paths in the job's arguments)
  local id=$1; shift
  if [ -n "$ONLY" ] && ! [[ " $ONLY " == *" $id "* ]]; then return; fi
  echo ">>> $id"; rm -rf "$POOL/$id" "$WORK/logs"; mkdir -p "$POOL/$id"
  timeout -s KILL 180 "$@" > "$POOL/$id/log.txt" 2>&1; echo "    rc=$?"
  if [ -d "$WORK/logs" ]; then   # torchrun --log-dir tree: logs/<run_id>/attempt_0/<rank>/{stdout,stderr}.log
    mkdir -p "$POOL/$id/ranks"; cp -r "$WORK"/logs/*/. "$POOL/$id/ranks/"
    find "$POOL/$id/ranks" -type f -exec sed -i "s#$V#/opt/venv#g; s#$WORK#/home/user/job#g" {} +
    rm -rf "$WORK/logs"
  fi
  sed -i "s#$V#/opt/venv#g; s#$WORK#/home/user/job#g" "$POOL/$id/log.txt"
  sleep 1
}
want() { [ -z "$ONLY" ] || [[ " $ONLY " == *" $1 "* ]]; }
LOGDIR="--log-dir logs --redirects 3"

# ---------------- healthy runs (they also write the checkpoints that the resume cases read) ----------------
# DCP save at step 3 into ckpt/step_3 (3 ranks), DDP find_unused_parameters=True warning
rm -rf ckpt ckpt_t4 ckpt_async
run run-r75a-torchrun-healthy-dcp-save $TR --nproc-per-node 3 $J --mode none --ckpt dcp --step 3 --steps 5 --find-unused
# per-rank torch.save files ckpt_t4/ckpt_rank{0..3}.pt (4 ranks)
run run-r75a-spawn-healthy-tsave $PY $J --spawn 4 --mode none --ckpt tsave --ckpt-dir ckpt_t4 --step 3 --steps 5 --find-unused
# dcp.async_save overlapping training steps, --tee 3
run run-r75a-torchrun-tee-healthy-async-save $TR --nproc-per-node 3 --tee 3 $J --mode none --ckpt async --ckpt-dir ckpt_async --step 2 --steps 5 --find-unused

# ---------------- DCP resume failures (read ckpt/step_3, 3 ranks) ----------------
# rank 2's model has an extra 'adapter' layer -> Missing key in checkpoint state_dict
run run-r75a-torchrun-dcp-load-missing-key-r2 $TR --nproc-per-node 3 $J --mode dcp-load-key --culprit 2 --resume-from ckpt/step_3 --step 3 --steps 5
# rank 1 builds hidden=48 instead of 32 -> Size mismatch (--tee 3)
run run-r75a-torchrun-tee-dcp-load-shape-r1 $TR --nproc-per-node 3 --tee 3 $J --mode dcp-load-shape --culprit 1 --resume-from ckpt/step_3 --step 3 --steps 5
# rank 1 resolves the checkpoint dir with an old naming scheme (step-3) that does not exist
run run-r75a-spawn-dcp-load-missing-dir-r1 $PY $J --spawn 3 --mode dcp-load-missing --culprit 1 --resume-from ckpt/step_3 --step 3 --steps 5
# __2_0.distcp cut short (its tail holds rank 2's own loader state) -> only rank 2 fails reading it
if want run-r75a-torchrun-dcp-truncated-distcp-r2; then
  rm -rf ckpt_trunc; cp -r ckpt/step_3 ckpt_trunc; $PY mangle.py truncate ckpt_trunc/__2_0.distcp 40000
fi
run run-r75a-torchrun-dcp-truncated-distcp-r2 $TR --nproc-per-node 3 $J --mode dcp-resume --culprit 2 --resume-from ckpt_trunc --step 3 --steps 5

# ---------------- DCP save failures ----------------
# custom SavePlanner's key-mapping raises KeyError on rank 3 (it alone holds an 'ema' entry); per-rank log files + @record
rm -rf ckpt_s
run run-r75a-torchrun-logdir-dcp-planner-raise-r3 $TR --nproc-per-node 4 $LOGDIR $J --mode dcp-planner-raise --culprit 3 --ckpt-dir ckpt_s --record
# FileSystemWriter subclass raises OSError ENOSPC in write_data on rank 1
run run-r75a-spawn-dcp-writer-enospc-r1 $PY $J --spawn 3 --mode dcp-writer-raise --culprit 1 --ckpt-dir ckpt_s
# same inside dcp.async_save on rank 2: surfaces at future.result() (--tee 3)
run run-r75a-torchrun-tee-dcp-async-writer-raise-r2 $TR --nproc-per-node 3 --tee 3 $J --mode dcp-async-raise --culprit 2 --ckpt-dir ckpt_s --step 2 --steps 5
# rank 0's checkpoint dir is a read-only mount (root cannot write there either)
if want run-r75a-torchrun-dcp-readonly-dir-r0; then
  mkdir -p ckpt_ro; mountpoint -q ckpt_ro || mount -t tmpfs -o ro,size=1m tmpfs ckpt_ro
fi
run run-r75a-torchrun-dcp-readonly-dir-r0 $TR --nproc-per-node 3 $J --mode dcp-ro --culprit 0 --ckpt-dir ckpt_s --ro-dir ckpt_ro
want run-r75a-torchrun-dcp-readonly-dir-r0 && { umount ckpt_ro; rmdir ckpt_ro; }
# rank 1 SIGKILLed inside its storage writer (per-rank files + --tee 3)
run run-r75a-torchrun-logdir-tee-dcp-sigkill-r1 $TR --nproc-per-node 3 $LOGDIR --tee 3 $J --mode dcp-sigkill --culprit 1 --ckpt-dir ckpt_s --pg-timeout 20
# rank 2 SIGKILLed inside its storage writer, mp.spawn
run run-r75a-spawn-dcp-sigkill-r2 $PY $J --spawn 3 --mode dcp-sigkill --culprit 2 --ckpt-dir ckpt_s --pg-timeout 20

# ---------------- per-rank torch.save / torch.load resume (read ckpt_t4, 4 ranks) ----------------
if want run-r75a-torchrun-tee-tload-truncated-r1; then
  rm -rf ckpt_tc; cp -r ckpt_t4 ckpt_tc; $PY mangle.py truncate ckpt_tc/ckpt_rank1.pt 3000
fi
run run-r75a-torchrun-tee-tload-truncated-r1 $TR --nproc-per-node 4 --tee 3 $J --mode tsave-resume --culprit 1 --resume-from ckpt_tc --step 3 --steps 5
if want run-r75a-spawn-tload-missing-file-r2; then
  rm -rf ckpt_tm; cp -r ckpt_t4 ckpt_tm; $PY mangle.py remove ckpt_tm/ckpt_rank2.pt
fi
run run-r75a-spawn-tload-missing-file-r2 $PY $J --spawn 4 --mode tsave-resume --culprit 2 --resume-from ckpt_tm --step 3 --steps 5
if want run-r75a-torchrun-logdir-tload-weightsonly-r3; then
  rm -rf ckpt_tw; cp -r ckpt_t4 ckpt_tw; $PY mangle.py trainstate ckpt_tw/ckpt_rank3.pt
fi
run run-r75a-torchrun-logdir-tload-weightsonly-r3 $TR --nproc-per-node 4 $LOGDIR $J --mode tsave-resume --culprit 3 --resume-from ckpt_tw --step 3 --steps 5 --record

# ---------------- object collectives ----------------
run run-r75a-torchrun-allgather-object-lock-r2 $TR --nproc-per-node 4 $J --mode obj-allgather-lock --culprit 2
run run-r75a-spawn-bcast-object-reduce-r1 $PY $J --spawn 3 --mode obj-bcast-reduce --culprit 1
run run-r75a-torchrun-tee-gather-object-reduce-r3 $TR --nproc-per-node 4 --tee 3 $J --mode obj-gather-reduce --culprit 3
run run-r75a-torchrun-scatter-object-short-list-r0 $TR --nproc-per-node 3 $J --mode obj-scatter-len --culprit 0
# TORCH_DISTRIBUTED_DEBUG=DETAIL: without DDP (DDP.__init__ segfaults under DETAIL with torch 2.13.0+cpu)
run run-r75a-torchrun-detail-bcast-object-len-r2 env TORCH_DISTRIBUTED_DEBUG=DETAIL $TR --nproc-per-node 3 $J --mode obj-bcast-len --culprit 2 --pg-timeout 20 --no-ddp
run run-r75a-spawn-bcast-object-len-r1 $PY $J --spawn 4 --mode obj-bcast-len --culprit 1 --pg-timeout 20

# no orphan ranks: kill leftovers of this round's job only (exact script path)
for p in $(pgrep -f "ckjob.py"); do
  [ "$(readlink /proc/$p/cwd 2>/dev/null)" = "$WORK" ] && [ "$p" != "$$" ] && kill -9 "$p" 2>/dev/null
done
true
