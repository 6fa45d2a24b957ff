#!/usr/bin/env bash
# Round 68a: DistributedDataParallel's own errors on ONE rank under torchrun (gloo, CPU, 3-4 processes), in three
# console layouts: plain console, --tee 3 (prefixed [defaultN]:), and --log-dir D --redirects 3 (per-rank files,
# copied into ranks/). Program: ddp68a.py (--fault ..., see its docstring). Labels: labels68a.py via mk_label.py.
# Usage: run_all.sh [OUT_DIR] [case-id ...]   (default OUT_DIR=/tmp/h68a/pool; default: all cases)
# Venv V (default /work/helpers/venv68a): torch==2.13.0 numpy (torch 2.13.0+cpu).
# Each case writes OUT/<id>/log.txt (launcher stdout+stderr; venv path -> /opt/venv, script and work dirs ->
# /home/user/job), ranks/ for the --log-dir cases, and label.json.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=${1:-/tmp/h68a/pool}; shift || true
V=${V:-/work/helpers/venv68a}
WORK=${WORK:-/tmp/h68a/work}
mkdir -p "$OUT" "$WORK"
ONLY=" $* "
want() { [ "$ONLY" = "  " ] || [[ "$ONLY" == *" $1 "* ]]; }
rw() { sed -i -e "s#$V#/opt/venv#g" -e "s#$HERE#/home/user/job#g" -e "s#$WORK#/home/user/job#g" "$@"; }

run_case() {   # run_case <id> <layout: console|tee|logdir> <nproc> <env...> -- <ddp68a.py args...>
  local id=$1 layout=$2 n=$3; shift 3
  want "$id" || return 0
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done; shift
  local lay=()
  local logdir="$WORK/logs_$id"
  rm -rf "$OUT/$id" "$logdir"; mkdir -p "$OUT/$id"
  case $layout in
    console) lay=() ;;
    tee) lay=(--tee 3) ;;
    logdir) lay=(--log-dir "$logdir" --redirects 3) ;;
  esac
  echo "== $id: ${envs[*]} torchrun --standalone --nproc-per-node $n ${lay[*]} ddp68a.py $*"
  ( cd "$WORK" && PATH="$V/bin:$PATH" exec setsid timeout 240 env "${envs[@]}" PYTHONUNBUFFERED=1 \
      torchrun --standalone --nproc-per-node "$n" "${lay[@]}" "$HERE/ddp68a.py" "$@" ) > "$OUT/$id/log.txt" 2>&1 &
  local pid=$!; wait $pid; local rc=$?
  kill -9 -- -$pid 2>/dev/null   # the whole session (launcher and ranks): no orphans
  echo "   exit code $rc"
  rw "$OUT/$id/log.txt"
  if [ "$layout" = logdir ]; then
    # torchrun --log-dir writes <dir>/<run_id>_<random>/attempt_0/<rank>/{stdout,stderr}.log: keep attempt_0 down
    local top; top=$(find "$logdir" -mindepth 1 -maxdepth 1 -type d | head -1)
    cp -r "$top" "$OUT/$id/ranks"
    find "$OUT/$id/ranks" -type f -exec sed -i -e "s#$V#/opt/venv#g" -e "s#$HERE#/home/user/job#g" -e "s#$WORK#/home/user/job#g" {} +
  fi
  echo "$rc" > "$WORK/rc_$id"
  python3 "$HERE/mk_label.py" "$OUT/$id" "$id" "$rc"
}

# NOTE: TORCH_DISTRIBUTED_DEBUG=DETAIL is not used: with torch 2.13.0+cpu every rank dies of SIGSEGV inside
# DDP.__init__ (logger.set_construction_data_and_log), even on a healthy model.
# ---------------- healthy runs (exit 0, DDP's usual warnings) ----------------
# find_unused_parameters=True but every parameter is used: the reducer's "did not find any unused parameters" warning
run_case run-r68a-healthy-findunused console 4 -- --fault none --find-unused
# torch.compile(aot_eager) of a DDP model with 1 MB buckets and a 600-wide encoder: DDPOptimizer splits the graph (TORCH_LOGS=ddp_graphs)
run_case run-r68a-healthy-compile-ddpopt tee 3 TORCH_LOGS=ddp_graphs -- --fault none --compile aot_eager --hidden 600 --bucket-mb 1
# static_graph=True plus TORCH_DISTRIBUTED_DEBUG=INFO (DDP's INFO logging, the find_unused+static_graph warning)
run_case run-r68a-healthy-static-info logdir 3 TORCH_DISTRIBUTED_DEBUG=INFO TORCH_CPP_LOG_LEVEL=INFO -- --fault none --static-graph --find-unused

# ---------------- a parameter without gradient on one rank ----------------
# rank 1 skips the aux head from step 4 (find_unused_parameters=False) -> "Expected to have finished reduction"
run_case run-r68a-unused-console console 4 -- --fault unused --bad-rank 1 --at 3
# the same with TORCH_DISTRIBUTED_DEBUG=INFO (names aux.weight/aux.bias), rank 2, --tee 3
run_case run-r68a-unused-debuginfo-tee tee 4 TORCH_DISTRIBUTED_DEBUG=INFO -- --fault unused --bad-rank 2 --at 2
# the same with TORCH_DISTRIBUTED_DEBUG=INFO, rank 1 of 3, per-rank log files
run_case run-r68a-unused-info-logdir logdir 3 TORCH_DISTRIBUTED_DEBUG=INFO -- --fault unused --bad-rank 1 --at 4
# find_unused_parameters=True, rank 2 starts reentrant activation checkpointing -> "mark a variable ready only once"
run_case run-r68a-ckpt-reentrant-tee tee 3 -- --fault ckpt_reentrant --bad-rank 2 --at 3

# ---------------- model mismatch at DDP construction ----------------
# rank 3 has an extra nn.Parameter -> "DDP expects same model across all ranks"
run_case run-r68a-extra-param console 4 -- --fault extra_param --bad-rank 3
# rank 2 builds a 48-wide encoder -> "params[0] in this process with sizes [48, 16] appears not to match"
run_case run-r68a-shape-logdir logdir 4 -- --fault shape --bad-rank 2
# rank 0 is the odd one: every other rank reports the mismatch against process 0
run_case run-r68a-shape-rank0-tee tee 3 -- --fault shape --bad-rank 0
# rank 1 registers one extra buffer -> the construction-time state broadcast does not match
run_case run-r68a-extra-buffer console 4 -- --fault extra_buffer --bad-rank 1
# rank 2's feature_mean buffer is float64 instead of float32 -> gloo size mismatch in the coalesced broadcast
run_case run-r68a-buffer-dtype-logdir logdir 3 -- --fault buffer_dtype --bad-rank 2

# ---------------- static_graph / no_sync / backward twice ----------------
# static_graph=True, rank 3 (then rank 0, with TORCH_DISTRIBUTED_DEBUG=INFO) skips the aux head at one step
run_case run-r68a-static-graph-tee tee 4 -- --fault static_graph --bad-rank 3 --at 3
run_case run-r68a-static-graph-rank0 console 3 TORCH_DISTRIBUTED_DEBUG=INFO -- --fault static_graph --bad-rank 0 --at 2
# rank 2 alone runs step 4 under ddp.no_sync(): its gradient all-reduce is missing, everyone times out (20 s)
run_case run-r68a-nosync-console console 4 -- --fault no_sync --bad-rank 2 --at 3 --timeout 20
# the same on rank 1 with a per-step loss all_reduce: its 4-byte all_reduce meets the others' gradient bucket
run_case run-r68a-nosync-losssync-logdir logdir 3 -- --fault no_sync --bad-rank 1 --at 2 --loss-sync 1
# rank 1 calls loss.backward() twice at step 4 -> "Trying to backward through the graph a second time"
run_case run-r68a-backward-twice-tee tee 4 -- --fault backward_twice --bad-rank 1 --at 3

# ---------------- DDP + torch.compile (DDPOptimizer) on one rank ----------------
# inductor compile of the DDP model; rank 1 alone has CXX=/nonexistent/g++
run_case run-r68a-compile-cxx console 3 -- --fault compile_cxx --bad-rank 1
# recompile_limit=1 + fail_on_recompile_limit_hit; rank 2's ragged batch at step 5 forces a recompile
run_case run-r68a-compile-recompile-tee tee 3 -- --fault compile_recompile --bad-rank 2 --at 4
# model.compile(fullgraph=True) before DDP; rank 0 alone has a data-dependent finite check in forward
run_case run-r68a-compile-fullgraph-logdir logdir 3 -- --fault compile_fullgraph --bad-rank 0
# torch.compile(aot_eager) of the DDP model; rank 3 skips the aux head from step 3 (recompiles alone, reducer error)
run_case run-r68a-compile-unused console 4 -- --fault compile_unused --bad-rank 3 --at 2

pkill -f "$HERE/ddp68a.py" 2>/dev/null || true   # leftovers of this script only
