#!/usr/bin/env bash
# Round 27a: real Hugging Face Transformers Trainer jobs (tiny GPT-2 from config, synthetic data) on CPU with gloo,
# world size 3, launched with torchrun and with `accelerate launch` (acc_cpu.yaml: 3 CPU processes).
# Usage: run_all.sh [OUT_DIR] [case-id ...]   (default OUT_DIR=/work/helpers/stage27a; default: all cases)
# Venv V: torch 2.13.0+cpu, numpy, transformers 5.25.0, accelerate 1.16.0 (datasets, peft installed, unused).
# Each case writes OUT/<id>/log.txt (launcher stdout+stderr, paths rewritten), ranks/ for --log-dir cases,
# and label.json (mk_label.py from labels27a.py; checks exit code and that every decisive line is in the log).
# The hostoom case needs root and cgroup v1 at /sys/fs/cgroup/memory.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=${1:-/work/helpers/stage27a}; shift || true
V=${V:-/work/helpers/venv27a}
WORK=${WORK:-/tmp/r27a}          # scratch dir (working directory of every run)
mkdir -p "$OUT" "$WORK"
ONLY=" $* "
want() { [ "$ONLY" = "  " ] || [[ "$ONLY" == *" $1 "* ]]; }
rewrite() { sed -i -e "s#$V#/opt/venv#g" -e "s#$HERE#/home/user/job#g" -e "s#$WORK#/home/user/job#g" "$@"; }

run_case() {   # run_case <id> <command...>   (command runs in $WORK; env vars may prefix via `env`)
  local id=$1; shift
  want "$id" || return 0
  rm -rf "$OUT/$id" "$WORK/logs_$id"; mkdir -p "$OUT/$id"
  echo "== $id: $*"
  ( cd "$WORK" && PATH="$V/bin:$PATH" exec setsid timeout 300 "$@" ) > "$OUT/$id/log.txt" 2>&1 &
  local pid=$!; wait $pid; local rc=$?
  kill -9 -- -$pid 2>/dev/null
  echo "   exit code $rc"
  rewrite "$OUT/$id/log.txt"
  if [ -d "$WORK/logs_$id" ]; then cp -r "$WORK/logs_$id" "$OUT/$id/ranks"; find "$OUT/$id/ranks" -type f -exec sed -i -e "s#$V#/opt/venv#g" -e "s#$HERE#/home/user/job#g" -e "s#$WORK#/home/user/job#g" {} +; fi
  python3 "$HERE/mk_label.py" "$OUT/$id" "$id" "$rc"
}
H=$HERE/hf27.py
export PYTHONUNBUFFERED=1
TR() { echo torchrun --nproc-per-node 3 --master-port "$1"; }
AL="accelerate launch --config_file $HERE/acc_cpu.yaml --num_processes 3 --main_process_port"

# ---------------- healthy (launcher exits 0) ----------------
# handled ConnectionRefusedError (logger.exception) on rank 1 at step 4, UserWarnings, dataloader worker
run_case run27a-torchrun-healthy-noisy $(TR 29811) "$H" --what healthy-noisy --steps 8 --k 4 --out out_noisy
# eval every 3 steps, numpy RuntimeWarnings in compute_metrics, nan metric in the eval dict
run_case run27a-accelerate-healthy-evalwarn $AL 29812 "$H" --what healthy-evalwarn --steps 8 --out out_evalwarn
prep_resume() {  # prep_resume <dir> <port>: a previous run (not logged here) saves <dir>/checkpoint-4
  rm -rf "$WORK/$1"
  ( cd "$WORK" && PATH="$V/bin:$PATH" timeout 300 torchrun --nproc-per-node 3 --master-port "$2" "$H" --what healthy-resume --steps 4 --out "$1" ) > "$WORK/prep_$1.log" 2>&1
  echo "   prep run (saves $1/checkpoint-4): exit $?"
}
# resume from checkpoint-4 and save checkpoint-8
want run27a-torchrun-healthy-resume && prep_resume out_resume 29813
run_case run27a-torchrun-healthy-resume $(TR 29814) "$H" --what healthy-resume --steps 8 --out out_resume --resume out_resume/checkpoint-4
# save every 3 steps with save_total_limit=1 (checkpoint rotation), handled logger.exception on rank 0 at step 5
run_case run27a-accelerate-healthy-ckpt $AL 29815 "$H" --what healthy-ckpt --steps 8 --k 5 --out out_ckpt

# ---------------- failures ----------------
# GENUINE, INTERMITTENT (not induced): without destroy_process_group() (R27A_NO_DESTROY=1) a rank often aborts at
# interpreter exit after training completed: "terminate called without an active exception", exit -6. The kept logs
# are runs where it happened (2 of 4 healthy runs in the first pass); rerun a case until its exit code is non-zero.
run_case run27a-accelerate-teardown-abort env R27A_NO_DESTROY=1 $AL 29816 "$H" --what healthy-evalwarn --steps 8 --out out_evalwarn
want run27a-torchrun-teardown-abort-resume && prep_resume out_resume 29817
run_case run27a-torchrun-teardown-abort-resume env R27A_NO_DESTROY=1 $(TR 29818) "$H" --what healthy-resume --steps 8 --out out_resume --resume out_resume/checkpoint-4
# rank 1: data collator KeyError: 'labels' at its 4th call
run_case run27a-torchrun-collator-raise $(TR 29821) "$H" --what collator-raise --bad-rank 1 --k 4 --steps 10 --out out_x
# same with torchrun --log-dir (per-rank files in ranks/), rank 2, --tee 3 so the console shows them too
run_case run27a-torchrun-collator-raise-logdir torchrun --nproc-per-node 3 --master-port 29822 --log-dir "logs_run27a-torchrun-collator-raise-logdir" --redirects 3 --tee 3 "$H" --what collator-raise --bad-rank 2 --k 5 --steps 10 --out out_x
# rank 2: compute_metrics KeyError during the first evaluation (step 3)
run_case run27a-accelerate-metrics-raise $AL 29823 "$H" --what metrics-raise --bad-rank 2 --steps 8 --out out_x
# rank 2: TrainerCallback.on_step_end KeyError: 'eval_loss' at step 3
run_case run27a-accelerate-callback-raise $AL 29824 "$H" --what callback-raise --bad-rank 2 --k 3 --steps 8 --out out_x
# rank 1 SIGKILLed by a callback at step 4 (torchrun) / rank 2 at step 3 (accelerate)
run_case run27a-torchrun-sigkill $(TR 29825) "$H" --what sigkill --bad-rank 1 --k 4 --steps 10 --out out_x
run_case run27a-accelerate-sigkill $AL 29826 "$H" --what sigkill --bad-rank 2 --k 3 --steps 10 --out out_x
# rank 2 sleeps 120 s at the start of step 3; ddp_timeout=20 -> ranks 0,1 time out in gloo (this case uses
# use_cpu=False: with use_cpu=True transformers 5.25 does not pass ddp_timeout to the process group)
run_case run27a-torchrun-hang $(TR 29827) "$H" --what hang --bad-rank 2 --k 3 --steps 8 --out out_x
# rank 1's model has an extra v_head: DDP's parameter verification fails when Trainer wraps the model
run_case run27a-torchrun-mismatch $(TR 29828) "$H" --what mismatch --bad-rank 1 --steps 6 --out out_x
run_case run27a-accelerate-mismatch-detail env TORCH_DISTRIBUTED_DEBUG=DETAIL $AL 29829 "$H" --what mismatch --bad-rank 2 --steps 6 --out out_x
# output_dir is a regular file: rank 0 fails creating it in Trainer.__init__ (makedirs), before any step
if want run27a-torchrun-ckpt-notdir; then rm -rf "$WORK/out_notdir"; echo "not a directory" > "$WORK/out_notdir"; fi
run_case run27a-torchrun-ckpt-notdir $(TR 29830) "$H" --what ckpt-notdir --steps 8 --out out_notdir
# a stale regular file out_stale/checkpoint-3: rank 0 fails at its step-3 save (makedirs)
if want run27a-accelerate-ckpt-stale; then rm -rf "$WORK/out_stale"; mkdir -p "$WORK/out_stale"; echo "stale" > "$WORK/out_stale/checkpoint-3"; fi
run_case run27a-accelerate-ckpt-stale $AL 29832 "$H" --what ckpt-stale --steps 8 --out out_stale
# rank 1 moves itself into a 1 GiB memory cgroup at step 3 and allocates until the OOM killer SIGKILLs it
if want run27a-torchrun-hostoom; then
  CG=/sys/fs/cgroup/memory/r27a_oom; rmdir "$CG" 2>/dev/null; mkdir -p "$CG"
  echo $((1024 << 20)) > "$CG/memory.limit_in_bytes"
  [ -e "$CG/memory.memsw.limit_in_bytes" ] && echo $((1024 << 20)) > "$CG/memory.memsw.limit_in_bytes"
  export R27A_CGROUP=$CG
fi
run_case run27a-torchrun-hostoom $(TR 29831) "$H" --what hostoom --bad-rank 1 --k 3 --steps 8 --out out_x
if want run27a-torchrun-hostoom; then echo "   cgroup oom_kill events: $(grep oom_kill /sys/fs/cgroup/memory/r27a_oom/memory.oom_control 2>/dev/null)"; sleep 1; rmdir /sys/fs/cgroup/memory/r27a_oom; fi

rm -rf "$WORK"/out_x "$WORK"/out_notdir "$WORK"/out_stale
echo "leftover processes (should be none):"; pgrep -af "round27a/hf27.py" || true
