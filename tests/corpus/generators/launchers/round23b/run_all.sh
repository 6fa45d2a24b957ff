#!/usr/bin/env bash
# Round 23b: real multi-rank failures (and 3 healthy runs) from five programs, all under torchrun, CPU/gloo:
#   fsdp23.py  FSDP2 fully_shard training        tp23.py   DTensor tensor parallel (parallelize_module)
#   hydra23.py Hydra-configured DDP training     mb23.py   DDP + dist.monitored_barrier(timeout=...)
#   fh23.py    DDP run with `python -X faulthandler` and a faulthandler.dump_traceback_later() step watchdog
# Usage: run_all.sh [OUT_DIR] [case-id ...]   (default OUT_DIR=/work/helpers/stage23b; default: all cases)
# Venv: V (torch 2.13.0+cpu, numpy, hydra-core). One job at a time; each case writes OUT/<id>/log.txt (launcher
# stdout+stderr, paths rewritten), ranks/ for --log-dir cases, and label.json (mk_label.py).
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=${1:-/work/helpers/stage23b}; shift || true
V=${V:-/work/helpers/venv23b}
WORK=${WORK:-/tmp/r23b}          # scratch dir (checkpoints, hydra outputs, torchrun log dirs)
mkdir -p "$OUT" "$WORK"
ONLY=" $* "
want() { [ "$ONLY" = "  " ] || [[ "$ONLY" == *" $1 "* ]]; }
rewrite() { sed -i -e "s#$V#/opt/venv#g" -e "s#$HERE#/home/user/job#g" -e "s#$WORK#/home/user/job#g" "$@"; }

run_case() {   # run_case <id> <command...>   (command runs in $WORK; torchrun --log-dir $WORK/logs/<id> is copied to ranks/)
  local id=$1; shift
  want "$id" || return 0
  rm -rf "$OUT/$id" "$WORK/logs/$id" "$WORK/ckpt_fsdp" "$WORK/checkpoints" "$WORK/hy"
  mkdir -p "$OUT/$id"
  echo "== $id: $*"
  # own session (setsid): after the run, anything left of it is killed by its process-group id
  ( cd "$WORK" && PATH="$V/bin:$PATH" HYDRA_OUT="$WORK/hy" exec setsid timeout 300 "$@" ) > "$OUT/$id/log.txt" 2>&1 &
  local pid=$!; wait $pid; local rc=$?
  kill -9 -- -$pid 2>/dev/null
  echo "   exit code $rc"
  rewrite "$OUT/$id/log.txt"
  if [ -d "$WORK/logs/$id" ]; then   # torchrun --log-dir layout: <run_id>/attempt_0/<rank>/{stdout,stderr}.log
    mkdir -p "$OUT/$id/ranks"; cp -r "$WORK/logs/$id"/*/* "$OUT/$id/ranks/"
    find "$OUT/$id/ranks" -type f -exec sed -i -e "s#$V#/opt/venv#g" -e "s#$HERE#/home/user/job#g" -e "s#$WORK#/home/user/job#g" {} +
  fi
  python3 "$HERE/mk_label.py" "$OUT/$id" "$id" "$rc"
}
TR="torchrun"
F=$HERE/fsdp23.py; T=$HERE/tp23.py; H=$HERE/hydra23.py; M=$HERE/mb23.py; FH=$HERE/fh23.py
FHPY=(--no-python python -X faulthandler "$FH")

# --- FSDP2 (fully_shard) ---
# ValueError in rank 2's data loading at step 3 (4 ranks; per-rank files via --log-dir, also tee'd to the console)
run_case run23b-torchrun-fsdp2-raise $TR --nproc-per-node 4 --master-port 31311 --log-dir "$WORK/logs/run23b-torchrun-fsdp2-raise" --tee 3 "$F" --fault raise --bad-rank 2 --step 3
# rank 1 SIGKILLs itself at step 4 (3 ranks)
run_case run23b-torchrun-fsdp2-sigkill $TR --nproc-per-node 3 --master-port 31312 "$F" --fault sigkill --bad-rank 1 --step 4
# NaN input on the last rank (3 of 4) at step 2 -> FloatingPointError from the finite-loss check
run_case run23b-torchrun-fsdp2-nan $TR --nproc-per-node 4 --master-port 31313 "$F" --fault nan --bad-rank 3 --step 2
# rank 0's shard directory is never created -> torch.save fails (3 ranks)
run_case run23b-torchrun-fsdp2-ckpt $TR --nproc-per-node 3 --master-port 31314 "$F" --fault ckpt --bad-rank 0
# last rank (2 of 3) sleeps 60 s before step 3; process group timeout 15 s
run_case run23b-torchrun-fsdp2-hang $TR --nproc-per-node 3 --master-port 31315 "$F" --fault hang --bad-rank 2 --step 3 --sleep 60 --pg-timeout 15
# healthy, 4 ranks: UserWarning + a failed-then-retried metrics push
run_case run23b-torchrun-fsdp2-ok $TR --nproc-per-node 4 --master-port 31316 "$F" --noisy --steps 8

# --- DTensor tensor parallel ---
# rank 0 all_reduces an 8-element tensor where the others use 4, with TORCH_DISTRIBUTED_DEBUG=DETAIL (3 ranks)
run_case run23b-torchrun-tp-mismatch-detail env TORCH_DISTRIBUTED_DEBUG=DETAIL $TR --nproc-per-node 3 --master-port 31321 "$T" --fault mismatch --mismatch size --bad-rank 0 --step 3
# rank 2 of 4 calls all_gather where the others all_reduce (no debug env)
run_case run23b-torchrun-tp-mismatch-op $TR --nproc-per-node 4 --master-port 31322 "$T" --fault mismatch --mismatch op --bad-rank 2 --step 2 --pg-timeout 20
# KeyError on rank 1 (3 ranks) at step 3
run_case run23b-torchrun-tp-raise $TR --nproc-per-node 3 --master-port 31323 "$T" --fault raise --bad-rank 1 --step 3
# last rank (3 of 4) SIGKILLed at step 2
run_case run23b-torchrun-tp-sigkill $TR --nproc-per-node 4 --master-port 31324 "$T" --fault sigkill --bad-rank 3 --step 2

# --- Hydra ---
run_case run23b-torchrun-hydra-raise $TR --nproc-per-node 3 --master-port 31331 "$H" fault.kind=raise fault.rank=1 fault.step=4
run_case run23b-torchrun-hydra-nan $TR --nproc-per-node 4 --master-port 31332 "$H" fault.kind=nan_loss fault.rank=0 fault.step=3 train.steps=6
run_case run23b-torchrun-hydra-ckpt $TR --nproc-per-node 3 --master-port 31333 "$H" fault.kind=ckpt fault.rank=2 train.steps=5
run_case run23b-torchrun-hydra-ok $TR --nproc-per-node 3 --master-port 31334 "$H" noisy=true train.steps=6

# --- monitored_barrier ---
# rank 2 of 3 stalls after epoch 2 and misses the monitored barrier (timeout 10 s)
run_case run23b-torchrun-mbarrier-hang $TR --nproc-per-node 3 --master-port 31341 "$M" --missing 2 --epoch 2 --sleep 40
# rank 1 of 4 misses the barrier after epoch 1; wait_all_ranks=True
run_case run23b-torchrun-mbarrier-hang-waitall $TR --nproc-per-node 4 --master-port 31342 "$M" --missing 1 --epoch 1 --sleep 40 --wait-all

# --- python -X faulthandler + dump_traceback_later watchdog ---
# rank 1 of 4: prefetch thread stalls; watchdog dumps all threads on every rank after 8 s, gloo times out after 20 s
run_case run23b-torchrun-faulthandler-hang $TR --nproc-per-node 4 --master-port 31351 "${FHPY[@]}" --fault hang --bad-rank 1 --step 3 --sleep 60
# last rank (2 of 3) all_reduces a 3-element tensor where the others use 1 (no debug env)
run_case run23b-torchrun-faulthandler-mismatch $TR --nproc-per-node 3 --master-port 31352 "${FHPY[@]}" --fault mismatch --mismatch size --bad-rank 2 --step 4
# rank 0 of 3: IndexError in the prefetch thread, re-raised in the main thread
run_case run23b-torchrun-faulthandler-raise $TR --nproc-per-node 3 --master-port 31353 "${FHPY[@]}" --fault raise --bad-rank 0 --step 2
# healthy, 3 ranks: rank 0's checkpoint save outlasts the 4 s watchdog -> one harmless all-thread stack dump
run_case run23b-torchrun-faulthandler-ok $TR --nproc-per-node 3 --master-port 31354 "${FHPY[@]}" --slow-save --watchdog 4

echo "leftover processes (should be none):"; pgrep -af "round23b/(fsdp23|tp23|hydra23|mb23|fh23).py" || true
