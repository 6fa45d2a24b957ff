#!/usr/bin/env bash
# Round 27c: real CPU/gloo runs, world size 3, that LOOK alarming but succeed (healthy, category none), and runs whose
# real failure comes after the same kinds of harmless errors. Launchers: torchrun --nproc-per-node 3,
# torch.multiprocessing.spawn (nprocs=3), Lightning Trainer(accelerator="cpu", devices=3, DDPStrategy gloo).
# Usage: run_all.sh [OUT_DIR] [case-id ...]   (default OUT_DIR=/work/helpers/stage27c; default: all cases)
# Venv V (default /work/helpers/venv27c): torch 2.13.0+cpu, numpy, lightning. Each case writes OUT/<id>/log.txt
# (launcher stdout+stderr, venv path -> /opt/venv, work dirs -> /home/user/job) and label.json (mk_label.py from
# labels27c.py; checks the exit code, "training complete" for healthy runs, and that decisive_line is in the log).
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=${1:-/work/helpers/stage27c}; shift || true
V=${V:-/work/helpers/venv27c}
WORK=${WORK:-/tmp/r27c}          # scratch dir (working directory of every run; not a git repo, no ckpt/ in it)
mkdir -p "$OUT" "$WORK"
rm -rf "$WORK/ckpt"
ONLY=" $* "
want() { [ "$ONLY" = "  " ] || [[ "$ONLY" == *" $1 "* ]]; }
# (Lightning's SLURM hint cuts the script path to 64 chars, so a shortened $HERE may appear: 4th rule)
rewrite() { sed -i -e "s#$V#/opt/venv#g" -e "s#$HERE#/home/user/job#g" -e "s#$WORK#/home/user/job#g" -e "s#${HERE%/round27c}#/home/user/job#g" "$@"; }

run_case() {   # run_case <id> <command...>   (command runs in $WORK; env vars may prefix via `env`)
  local id=$1; shift
  want "$id" || return 0
  rm -rf "$OUT/$id"; mkdir -p "$OUT/$id"
  echo "== $id: $*"
  ( cd "$WORK" && PATH="$V/bin:$PATH" exec setsid timeout 300 "$@" ) > "$OUT/$id/log.txt" 2>&1 &
  local pid=$!; wait $pid; local rc=$?
  kill -9 -- -$pid 2>/dev/null   # the whole session (launcher, ranks, DataLoader workers)
  echo "   exit code $rc"
  rewrite "$OUT/$id/log.txt"
  python3 "$HERE/mk_label.py" "$OUT/$id" "$id" "$rc"
}
N=$HERE/noisy27.py; P=$HERE/pl27.py
export PYTHONUNBUFFERED=1
TR() { echo torchrun --nproc-per-node 3 --master-port "$1"; }

# ===================== HEALTHY (exit 0, every step done) =====================
# rank 1: shard-manifest GET answers 503 once -> HTTPError traceback via logger.exception, retry ok
run_case run27c-torchrun-retry-ok $(TR 29871) "$N" --noise retry --steps 10
# rank 1's DataLoader worker: sample 7 fails to decode (ValueError), traceback logged, sample dropped
run_case run27c-spawn-dlskip-ok python "$N" --spawn 3 --port 29872 --noise dlskip --steps 10
# rank 2: "Exception ignored in: <function SharedCache.__del__ ...>" + OSError traceback at interpreter exit
run_case run27c-torchrun-delexit-ok $(TR 29873) "$N" --noise delexit --steps 10
# user warnings: "eval OOM-safe mode: ... failed allocation attempt", "... worker was killed ...", "error norm"
run_case run27c-spawn-warnings-ok python "$N" --spawn 3 --port 29874 --noise warnings --steps 10
# torch.compile(backend="aot_eager"); a short batch -> [__recompiles] guard-failure lines (TORCH_LOGS=recompiles)
run_case run27c-torchrun-recompile-ok env TORCH_LOGS=recompiles $(TR 29875) "$N" --noise compile --steps 10
# every rank: resume from ckpt/last.ckpt -> FileNotFoundError traceback, "no checkpoint found, starting from scratch"
run_case run27c-lightning-ckpt-missing-ok python "$P" --noise ckpt
# rank 0: `git rev-parse HEAD` outside a repo (CalledProcessError traceback) and nvidia-smi not installed, ignored
run_case run27c-spawn-subprocess-ok python "$N" --spawn 3 --port 29877 --noise subproc --steps 10
# rank 0: collect_env ("Could not collect", "Is CUDA available: False", vulnerabilities) and pip freeze dump
run_case run27c-torchrun-envdump-ok $(TR 29878) "$N" --noise envdump --steps 10
# metrics error_rate / loss/nan_count / oom_skipped every step + a user warning with OOM/failed words
run_case run27c-lightning-metrics-ok python "$P" --noise metrics,warnings
# rank 0: metrics flush RuntimeError at step 2, logged with traceback and ignored (control for ...-ignored-then-raise)
run_case run27c-spawn-ignored-ok python "$N" --spawn 3 --port 29880 --noise ignored,metrics --steps 10

# ===================== FAILING (harmless noise first, the real fault later on one rank) =====================
# noise: git/nvidia-smi failures, missing checkpoint, undecodable sample (ValueError in a worker, skipped);
# then rank 1 raises ValueError at step 6
run_case run27c-torchrun-noise-valueerror $(TR 29881) "$N" --noise subproc,ckpt,dlskip --fault valueerror --bad-rank 1 --fault-step 6 --steps 10
# noise: user warnings, 503 retry, error_rate metrics; then rank 2 SIGKILLs itself at step 5
run_case run27c-spawn-noise-sigkill python "$N" --spawn 3 --port 29882 --noise warnings,retry,metrics --fault sigkill --bad-rank 2 --fault-step 5 --steps 10
# noise: missing checkpoint, warnings, metrics; then rank 1 sleeps 60 s before the grad all_reduce at step 4 (PG timeout 15 s)
run_case run27c-torchrun-noise-hang $(TR 29883) "$N" --noise ckpt,warnings,metrics --fault hang --bad-rank 1 --fault-step 4 --pg-timeout 15 --hang-s 60 --steps 10
# noise: missing checkpoint, metrics; then rank 2 all_reduces 64 floats instead of 3 at global step 4 (DDPStrategy timeout 30 s)
run_case run27c-lightning-noise-mismatch python "$P" --noise ckpt,metrics --fault mismatch --bad-rank 2 --fault-step 4
# noise: rank 0 logs-and-ignores a RuntimeError at step 2 (+ git/nvidia-smi); then rank 2 raises a fatal RuntimeError at step 6
run_case run27c-spawn-ignored-then-raise python "$N" --spawn 3 --port 29885 --noise ignored,subproc,metrics --fault runtime --bad-rank 2 --fault-step 6 --steps 10

rm -rf "$WORK/ckpt"
echo "leftover processes (should be none):"; pgrep -af "round27c/(noisy27|pl27).py" || true
