#!/usr/bin/env bash
# Round 32b: DistributedDataParallel and autograd failing at run time on CPU (gloo), mostly on ONE rank, under
# torchrun (most), torch.multiprocessing.spawn, python -m torch.distributed.run (per-rank --log-dir tree) and
# Lightning's own DDP launcher. Programs: ddp32b.py (--fault ..., see its docstring) and lit32b.py (Lightning).
# Usage: run_all.sh [OUT_DIR] [case-id ...]   (default OUT_DIR=/work/helpers/stage32; default: all cases)
# Venv V (default /work/helpers/venv32b): torch==2.13.0 numpy lightning (torch stays 2.13.0+cpu).
# Each case writes OUT/<id>/log.txt (launcher stdout+stderr; venv path -> /opt/venv, script and work dirs ->
# /home/user/job), ranks/ for the --log-dir case, and label.json (mk_label.py from labels32b.py: checks the exit
# code and that decisive_line is a substring of a log line).
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=${1:-/work/helpers/stage32}; shift || true
V=${V:-/work/helpers/venv32b}
WORK=${WORK:-/tmp/r32b_work}
mkdir -p "$OUT" "$WORK"
ONLY=" $* "
want() { [ "$ONLY" = "  " ] || [[ "$ONLY" == *" $1 "* ]]; }
rewrite() { sed -i -e "s#$V#/opt/venv#g" -e "s#$HERE#/home/user/job#g" -e "s#$WORK#/home/user/job#g" "$@"; }

run_case() {   # run_case <id> <command...>   (env LOGDIR=<dir>: copy that --log-dir tree into ranks/)
  local id=$1; shift
  want "$id" || return 0
  rm -rf "$OUT/$id"; mkdir -p "$OUT/$id"
  echo "== $id: $*"
  ( cd "$WORK" && PATH="$V/bin:$PATH" exec setsid timeout 300 "$@" ) > "$OUT/$id/log.txt" 2>&1 &
  local pid=$!; wait $pid; local rc=$?
  kill -9 -- -$pid 2>/dev/null   # the whole session (launcher and ranks)
  echo "   exit code $rc"
  rewrite "$OUT/$id/log.txt"
  if [ -n "${LOGDIR:-}" ]; then
    # torchrun --log-dir writes <dir>/<run_id>_<random>/attempt_0/<rank>/{stdout,stderr}.log: keep from attempt_0 down
    local top; top=$(find "$LOGDIR" -mindepth 1 -maxdepth 1 -type d | head -1)
    cp -r "$top" "$OUT/$id/ranks"
    find "$OUT/$id/ranks" -type f -exec sed -i -e "s#$V#/opt/venv#g" -e "s#$HERE#/home/user/job#g" -e "s#$WORK#/home/user/job#g" {} +
  fi
  python3 "$HERE/mk_label.py" "$OUT/$id" "$id" "$rc"
}
D=$HERE/ddp32b.py
L=$HERE/lit32b.py
export PYTHONUNBUFFERED=1
TR() { echo torchrun --nproc-per-node "$1" --master-port "$2"; }

# ---------------- healthy runs (exit 0, harmless noise) ----------------
# DDP(find_unused_parameters=True) with nothing unused (reducer warning), cpu autocast with float64 (autocast
# disabled warning), rank 1 logs a handled ValueError traceback for a corrupt sample
run_case run32b-torchrun-healthy-noisy $(TR 3 45301) "$D" --fault noisy --bad-rank 1
# TORCH_DISTRIBUTED_DEBUG=INFO + TORCH_CPP_LOG_LEVEL=INFO: c10d/TCPStore/reducer INFO lines, "DDP Initialized with"
run_case run32b-torchrun-healthy-debuginfo env TORCH_DISTRIBUTED_DEBUG=INFO TORCH_CPP_LOG_LEVEL=INFO $(TR 3 45302) "$D" --fault none
# uneven inputs (rank 2 has 3 fewer batches) handled by torch.distributed.algorithms.Join
run_case run32b-torchrun-healthy-join $(TR 4 45303) "$D" --fault join --bad-rank 2
# the same with mp.spawn, rank 3 short
run_case run32b-spawn-healthy-join python "$D" --spawn 4 --port 45304 --fault join --bad-rank 3

# ---------------- DDP reducer / model-consistency failures ----------------
# every rank: the same block checkpointed twice with use_reentrant=True -> "marked as ready twice"
run_case run32b-torchrun-ckpt-twice $(TR 3 45311) "$D" --fault ckpt_twice
# rank 1 skips the aux head at step 3, find_unused_parameters=False -> "Expected to have finished reduction"
run_case run32b-torchrun-unused-onerank $(TR 3 45312) "$D" --fault unused --bad-rank 1 --at 3
# static_graph=True, rank 2 skips the aux head at step 4
run_case run32b-torchrun-static-graph $(TR 4 45313) "$D" --fault static_graph --bad-rank 2 --at 4
# rank 1 sets requires_grad=False on one layer before DDP -> "DDP expects same model across all ranks"
run_case run32b-torchrun-reqgrad $(TR 3 45314) "$D" --fault reqgrad --bad-rank 1
# rank 3 has an extra nn.Parameter -> the same construction-time check
run_case run32b-torchrun-extra-param $(TR 4 45315) "$D" --fault extra_param --bad-rank 3
# rank 2 registers an extra buffer; TORCH_DISTRIBUTED_DEBUG=DETAIL -> collective fingerprint mismatch (BROADCAST sizes)
run_case run32b-torchrun-extra-buffer-detail env TORCH_DISTRIBUTED_DEBUG=DETAIL $(TR 3 45316) "$D" --fault extra_buffer --bad-rank 2
# python -m torch.distributed.run with a per-rank log tree: rank 3 skips the aux head at step 2
rm -rf "$WORK/logs_unused"
LOGDIR=$WORK/logs_unused run_case run32b-distrun-unused-logdir python -m torch.distributed.run --nproc-per-node 4 --master-port 45317 \
  --log-dir "$WORK/logs_unused" --redirects 3 --tee 3 "$D" --fault unused --bad-rank 3 --at 2
# Lightning strategy=DDPStrategy (find_unused_parameters=False, 20 s timeout): rank 2 skips the aux head at step 3
run_case run32b-lightning-unused python "$L" --fault unused --bad-rank 2 --at 3

# ---------------- autograd misuse / the job's own errors on one rank ----------------
run_case run32b-torchrun-inplace $(TR 3 45321) "$D" --fault inplace --bad-rank 1 --at 3
run_case run32b-torchrun-backward-twice $(TR 4 45322) "$D" --fault backward_twice --bad-rank 2 --at 2
run_case run32b-torchrun-commhook $(TR 3 45323) "$D" --fault commhook --bad-rank 1 --at 3
run_case run32b-torchrun-zero-state $(TR 3 45324) "$D" --fault zero_state --bad-rank 1 --at 3
run_case run32b-torchrun-syncbn-cpu $(TR 3 45325) "$D" --fault syncbn
run_case run32b-torchrun-nan-check $(TR 3 45326) "$D" --fault nan_check --bad-rank 1 --at 4
run_case run32b-torchrun-anomaly $(TR 4 45327) "$D" --fault anomaly --bad-rank 2 --at 3
run_case run32b-torchrun-scaler-twice $(TR 3 45328) "$D" --fault scaler_twice --bad-rank 1 --at 3
run_case run32b-spawn-inplace python "$D" --spawn 3 --port 45329 --fault inplace --bad-rank 2 --at 2
run_case run32b-lightning-inplace python "$L" --fault inplace --bad-rank 2 --at 3

# ---------------- uneven inputs without Join ----------------
# rank 1 runs out of data after 5 of 8 steps, logs "done" and exits 0 -> peers lose the connection
run_case run32b-torchrun-uneven-exit $(TR 3 45331) "$D" --fault uneven_exit --bad-rank 1
# rank 1 runs out of data and starts a long local evaluation -> peers time out in all_reduce (20 s)
run_case run32b-torchrun-uneven-eval $(TR 3 45332) "$D" --fault uneven_eval --bad-rank 1
# the same under mp.spawn, rank 2 short
run_case run32b-spawn-uneven-eval python "$D" --spawn 3 --port 45333 --fault uneven_eval --bad-rank 2

# no orphan ranks: run_case kills each launcher's whole session (setsid) by its pid
rm -rf "$WORK"
exit 0
