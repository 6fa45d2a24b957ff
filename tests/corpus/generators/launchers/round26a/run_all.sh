#!/usr/bin/env bash
# Round 26a: real CPU/gloo multi-rank runs that must NOT be called failures (healthy but noisy), plus 3 runs whose
# only problem is a non-fatal torch.compile warning (graph break / recompile limit). Launchers: torchrun,
# torch.multiprocessing.spawn, Lightning Trainer (ddp, cpu), accelerate launch.
# Usage: run_all.sh [OUT_DIR] [case-id ...]   (default OUT_DIR=/work/helpers/stage26a; default: all cases)
# Venv V: torch 2.13.0+cpu, numpy, lightning, accelerate. Each case writes OUT/<id>/log.txt (launcher stdout+stderr,
# paths rewritten) and label.json (mk_label.py from labels26a.py; checks exit code 0 and the decisive line).
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=${1:-/work/helpers/stage26a}; shift || true
V=${V:-/work/helpers/venv24a}
WORK=${WORK:-/tmp/r26a}          # scratch dir (working directory of every run)
mkdir -p "$OUT" "$WORK"
ONLY=" $* "
want() { [ "$ONLY" = "  " ] || [[ "$ONLY" == *" $1 "* ]]; }
# (3rd rule: Lightning's SLURM hint cuts the script path to 64 chars, so $HERE appears cut short)
rewrite() { sed -i -e "s#$V#/opt/venv#g" -e "s#$HERE#/home/user/job#g" -e "s#$WORK#/home/user/job#g" -e "s#${HERE%a}#/home/user/job#g" "$@"; }

run_case() {   # run_case <id> <command...>   (command runs in $WORK; env vars may prefix via `env`)
  local id=$1; shift
  want "$id" || return 0
  rm -rf "$OUT/$id"; mkdir -p "$OUT/$id"
  echo "== $id: $*"
  ( cd "$WORK" && PATH="$V/bin:$PATH" exec setsid timeout 300 "$@" ) > "$OUT/$id/log.txt" 2>&1 &
  local pid=$!; wait $pid; local rc=$?
  kill -9 -- -$pid 2>/dev/null
  echo "   exit code $rc"
  rewrite "$OUT/$id/log.txt"
  if [ -d "$WORK/logs_$id" ]; then cp -r "$WORK/logs_$id" "$OUT/$id/ranks"; find "$OUT/$id/ranks" -type f -exec sed -i -e "s#$V#/opt/venv#g" -e "s#$HERE#/home/user/job#g" -e "s#$WORK#/home/user/job#g" {} +; fi
  python3 "$HERE/mk_label.py" "$OUT/$id" "$id" "$rc"
}
N=$HERE/noisy26.py; P=$HERE/pl26.py
export PYTHONUNBUFFERED=1
TR() { echo torchrun --nproc-per-node 3 --master-port "$1"; }
AL="accelerate launch --config_file $HERE/acc_cpu.yaml --num_processes 3 --main_process_port"
W=(env PYTHONWARNINGS=always)

# --- torchrun (3 ranks) ---
# rank 1: metrics upload to 127.0.0.1:9 refused -> logger.exception traceback, training continues
run_case run26a-torchrun-exception-upload $(TR 29721) "$N" --what upload --steps 10
# --max-restarts 1: attempt 0 rank 1 raises RuntimeError at step 3, torchrun restarts the group, attempt 1 completes
# NOTE: flaky: in 2 of 3 tries attempt 1 failed (gloo connectFullMesh to attempt-0 addresses) or hung; the kept log is a try that completed.
# With --rdzv-backend c10d attempt 1 hung silently (killed by the 300 s timeout). Rerun this case until it exits 0.
run_case run26a-torchrun-restart-ok torchrun --nproc-per-node 3 --master-port 29722 --max-restarts 1 "$N" --what restart --steps 8
# rank 2: inf input at step 5 -> NaN loss; guard logs ERROR, all ranks skip the step
run_case run26a-torchrun-nan-guard $(TR 29723) "$N" --what nan --steps 10
# config dump / metric names with error/failed/timeout/killed/oom words; final summary table
run_case run26a-torchrun-keywords $(TR 29724) "$N" --what keywords --steps 8
# WARNING case: torch.compile graph break at .item() (data-dependent branch), TORCH_LOGS=graph_breaks
run_case run26a-torchrun-graphbreak env TORCH_LOGS=graph_breaks $(TR 29725) "$N" --what graphbreak --steps 6

# --- torch.multiprocessing.spawn (3 ranks) ---
# UserWarning + FutureWarning + DeprecationWarning every step (PYTHONWARNINGS=always)
run_case run26a-spawn-warnings "${W[@]}" python "$N" --spawn 3 --port 29731 --what warnings --steps 6
# rank 1: DataLoader worker raises OSError once; caught, workers restarted, batch retried
run_case run26a-spawn-dlworker-restart python "$N" --spawn 3 --port 29732 --what dlworker --steps 8
# checkpoint sync: ConnectionResetError caught, "retrying in 1s", second try ok
run_case run26a-spawn-retry python "$N" --spawn 3 --port 29733 --what retry --steps 8
# WARNING case: torch.compile(dynamic=False) with a new sequence length per step -> recompile limit -> eager fallback
run_case run26a-spawn-recompile-limit python "$N" --spawn 3 --port 29734 --what recompile --steps 12

# --- Lightning Trainer(accelerator=cpu, devices=3, DDPStrategy gloo) (launches its own ranks) ---
# rank 1: torch.profiler chrome-trace export to a missing dir fails -> logger.exception, training goes on
run_case run26a-lightning-exception-profiler python "$P" --what profiler --devices 3
# FutureWarning + broadcasting UserWarning every step, Lightning's own warnings, val_error/oom_skips/timeout_s metrics
run_case run26a-lightning-warnings "${W[@]}" python "$P" --what warnings --devices 3

# --- accelerate launch (CPU config, 3 processes) ---
# rank 0: tensorboard event write fails (parent is a file) -> logger.exception twice, training goes on
run_case run26a-accelerate-exception-tbwrite $AL 29741 "$N" --acc --what tbwrite --steps 8
# checkpoint sync ConnectionResetError retried
run_case run26a-accelerate-retry $AL 29742 "$N" --acc --what retry --steps 8
# WARNING case: graph break from .item() in the compiled model under accelerate (TORCH_LOGS=graph_breaks)
run_case run26a-accelerate-graphbreak env TORCH_LOGS=graph_breaks $AL 29743 "$N" --acc --what graphbreak --steps 6

rm -f "$WORK"/r26a_tb_not_a_dir "$WORK"/.r26a_dl_once_*
echo "leftover processes (should be none):"; pgrep -af "round26a/(noisy26|pl26).py" || true
