#!/usr/bin/env bash
# Round 22: HEALTHY runs (every one exits 0) whose logs carry alarming-looking but normal noise.
# Usage: run_all.sh [OUT_DIR] [case-id ...]    (default OUT_DIR=/work/helpers/stage22; default: all cases)
# Venvs: V17 (torch 2.13.0+cpu, accelerate, lightning), V19 (torch 2.13.0+cpu, loguru, structlog, rich, tqdm).
# One job at a time; each case writes OUT/<id>/log.txt (launcher stdout+stderr, paths rewritten) and label.json.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=${1:-/work/helpers/stage22}; shift || true
V17=${V17:-/work/helpers/venv17b}
V19=${V19:-/work/helpers/venv19b}
WORK=${WORK:-/tmp/r22}          # scratch dir (checkpoints); rewritten to /home/user/job in logs
mkdir -p "$OUT" "$WORK"
ONLY=" $* "

want() { [ "$ONLY" = "  " ] || [[ "$ONLY" == *" $1 "* ]]; }

run_case() {   # run_case <id> <venv> <command...>   (command runs in $WORK)
  local id=$1 venv=$2; shift 2
  want "$id" || return 0
  mkdir -p "$OUT/$id"
  echo "== $id: $*"
  ( cd "$WORK" && PATH="$venv/bin:$PATH" timeout 400 "$@" ) > "$OUT/$id/log.txt" 2>&1
  local rc=$?
  echo "   exit code $rc"
  sed -i -e "s#$venv#/opt/venv#g" -e "s#$HERE#/home/user/job#g" -e "s#$WORK#/home/user/job#g" "$OUT/$id/log.txt"
  python3 "$HERE/mk_label.py" "$OUT/$id" "$id" "$rc"
}

T=$HERE/train22.py
# 1. torchrun, 4 ranks: gloo/c10d INFO chatter, user+torch warnings, 503 metrics upload retried
run_case run22-torchrun-warnings-ok "$V19" env TORCH_CPP_LOG_LEVEL=INFO TORCH_DISTRIBUTED_DEBUG=INFO \
  torchrun --nproc-per-node 4 "$T" --warn --http-retry --steps 6
# 2. torchrun, 3 ranks: DataLoader workers (start/stop), corrupted records skipped with logger.exception, tqdm, checkpoint save
want run22-torchrun-workers-corrupt-ok && rm -f "$WORK/ckpt_tr.pt"
run_case run22-torchrun-workers-corrupt-ok "$V19" \
  torchrun --nproc-per-node 3 "$T" --workers 2 --bad 2:3,1:10 --warn --progress tqdm --ckpt "$WORK/ckpt_tr.pt" --steps 8
# 3. torchrun, 2 ranks: resume from case 2's checkpoint, NaN batch skipped, early stopping, loguru
run_case run22-torchrun-resume-ok "$V19" \
  torchrun --nproc-per-node 2 "$T" --resume "$WORK/ckpt_tr.pt" --nan-at 0:10 --early-stop 1 --eval-every 1 --logger loguru --steps 8
# 4. torchrun, 2 ranks: torch.compile(inductor) of DDP with TORCH_LOGS=recompiles,graph_breaks (ragged batches + print in forward)
run_case run22-torchrun-compile-recompiles-ok "$V19" env TORCH_LOGS=recompiles,graph_breaks \
  torchrun --nproc-per-node 2 "$T" --compile inductor --dyn-shapes --graph-break --steps 8
# 5. single process: TORCH_LOGS=+dynamo debug chatter, structlog, NaN batch skipped
run_case run22-single-dynamo-debug-ok "$V19" env TORCH_LOGS=+dynamo \
  python "$T" --compile inductor --dyn-shapes --graph-break --nan-at 0:3 --logger structlog --steps 6
# 6. single process: rich progress, DataLoader workers, corrupted record with traceback.print_exc(), early stop, loguru
run_case run22-single-rich-printexc-ok "$V19" \
  python "$T" --progress rich --workers 2 --bad 0:5 --print-exc --warn --early-stop 1 --eval-every 1 --logger loguru --steps 10
# 7. mp.spawn, 4 ranks: c10d INFO chatter, 503 upload retried, NaN batch on rank 2 skipped, warnings
run_case run22-mpspawn-http-nan-ok "$V19" env TORCH_CPP_LOG_LEVEL=INFO MASTER_PORT=29641 \
  python "$T" --spawn 4 --http-retry --nan-at 2:3 --warn --steps 8
# 8. mp.spawn, 2 ranks: TORCH_DISTRIBUTED_DEBUG=INFO + TORCH_CPP_LOG_LEVEL=INFO, compile(aot_eager)+TORCH_LOGS=recompiles, workers, print_exc, tqdm, ckpt
run_case run22-mpspawn-compile-workers-ok "$V19" env TORCH_DISTRIBUTED_DEBUG=INFO TORCH_CPP_LOG_LEVEL=INFO TORCH_LOGS=recompiles MASTER_PORT=29642 \
  python "$T" --spawn 2 --compile aot_eager --dyn-shapes --workers 2 --bad 1:4 --print-exc --progress tqdm --ckpt "$WORK/ckpt_sp.pt" --steps 9
# 9. accelerate launch (MULTI_GPU + use_cpu -> MULTI_CPU), 4 processes: corrupted label skipped, save_state
want run22-accelerate-save-ok && rm -rf "$WORK/ckpt_acc"
run_case run22-accelerate-save-ok "$V17" env TORCH_CPP_LOG_LEVEL=INFO \
  accelerate launch --config_file "$HERE/acc_cpu.yaml" --num_processes 4 "$HERE/acc22.py" --bad-index 13 --ckpt-dir "$WORK/ckpt_acc" --steps 8
# 10. accelerate launch, 2 processes: load_state resume from case 9, early stopping
run_case run22-accelerate-resume-earlystop-ok "$V17" \
  accelerate launch --config_file "$HERE/acc_cpu.yaml" --num_processes 2 "$HERE/acc22.py" --resume --ckpt-dir "$WORK/ckpt_acc" --early-stop 1 --lr 0.3 --steps 12
# 11. Lightning DDP on CPU, 2 devices: EarlyStopping fires, ModelCheckpoint, corrupted sample with print_exc
want run22-lightning-ddp-earlystop-ok && rm -rf "$WORK/pl22_ckpt"
run_case run22-lightning-ddp-earlystop-ok "$V17" \
  python "$HERE/pl22.py" --devices 2 --ckpt-dir "$WORK/pl22_ckpt" --bad-index 40
# 12. Lightning DDP on CPU, 3 devices, TORCH_DISTRIBUTED_DEBUG=INFO + TORCH_CPP_LOG_LEVEL=INFO: resume from case 11's last.ckpt
run_case run22-lightning-resume-ok "$V17" env TORCH_DISTRIBUTED_DEBUG=INFO TORCH_CPP_LOG_LEVEL=INFO \
  python "$HERE/pl22.py" --devices 3 --ckpt-dir "$WORK/pl22_ckpt" --ckpt-path "$WORK/pl22_ckpt/last.ckpt" --max-epochs 7 --patience 3
# 13. torchrun --standalone, world size 1: compile(aot_eager) recompiles, warnings, one DataLoader worker
run_case run22-torchrun-ws1-ok "$V19" env TORCH_LOGS=recompiles TORCH_CPP_LOG_LEVEL=INFO \
  torchrun --standalone --nproc-per-node 1 "$T" --compile aot_eager --dyn-shapes --warn --workers 1 --progress tqdm --steps 6
echo "leftover processes (should be none):"; pgrep -af 'train22.py|acc22.py|pl22.py' || true
