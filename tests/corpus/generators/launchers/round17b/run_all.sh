#!/usr/bin/env bash
# Reproduce every round-17b case: real launchers on a single-node Slurm 22.05 (Debian), torch 2.13.0 CPU, gloo:
#   srun launching torchrun agents (one agent per Slurm task = one "node"), Lightning under srun (SLURMEnvironment),
#   submitit (AutoExecutor, 3 tasks), and jobs killed by Slurm's time limit (srun -t 1, sbatch --time=1).
# Writes <POOL>/<id>/log.txt (+ ranks/ for submitit) then runs make_labels.py (label.json per case, every quoted
# line checked as an exact substring of the log / of ranks/<decisive_file>).
# usage: bash run_all.sh [case-id ...]        (no argument: all cases)
# env:   VENV (default /work/helpers/venv17b), JOB (work dir, default /tmp/r17bjob),
#        POOL (default tests/blind/pool17)
# Needs: Slurm with accounting (bash slurm_up.sh acct; submitit polls sacct), see README.md.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
VENV=${VENV:-/work/helpers/venv17b}
JOB=${JOB:-/tmp/r17bjob}
POOL=${POOL:-$(cd "$HERE/../../../../blind" && pwd)/pool17}
export PATH="$VENV/bin:$PATH" PYTHONUNBUFFERED=1
mkdir -p "$JOB/out" "$JOB/submitit" "$POOL"
cp "$HERE"/*.py "$HERE"/timelimit_job.sh "$JOB/"

tagged() {   # pids of live processes carrying R17BTAG=<id> in their environment (srun/sbatch pass the env on)
  local p
  for p in /proc/[0-9]*; do
    tr "\\0" "\\n" 2>/dev/null < "$p/environ" | grep -qx "R17BTAG=$1" && echo "${p#/proc/}"
  done
}
# after a case: give its Slurm job (job name r17b-<tok id>) and processes 30 s to end on their own (a submitit driver
# may exit while its job is still finishing), then scancel the job and kill what is left, by pid
cleanup_tag() {
  local tag=$1 p i
  for i in $(seq 30); do
    squeue -h -o %j 2>/dev/null | grep -qx "r17b-$(tok "$tag")" || [ -n "$(tagged "$tag")" ] || return
    sleep 1
  done
  scancel -n "r17b-$(tok "$tag")" 2>/dev/null && echo "  scancel -n r17b-$(tok "$tag") ($tag)"
  for i in $(seq 15); do [ -z "$(tagged "$tag")" ] && return; sleep 1; done
  for p in $(tagged "$tag"); do kill -9 "$p" 2>/dev/null && echo "  killed leftover pid $p ($tag)"; done
}
# before a case: wait (up to 60 s) until no job of this round is left in squeue (a node still COMPLETING the last job
# makes the next srun print "queued and waiting for resources")
wait_no_jobs() {
  local i
  for i in $(seq 60); do squeue -h -o %j 2>/dev/null | grep -q '^r17b-' || return; sleep 1; done
}
# neutral per-case token for Slurm job names, torchrun rdzv ids and submitit folders (they show up in the logs, so
# they must not name the scenario): tok run17-x-y -> j + 6 hex digits of md5(id)
tok() { echo "j$(printf %s "$1" | md5sum | cut -c1-6)"; }
rewrite() { sed -e "s#$VENV#/opt/venv#g" -e "s#$JOB#/home/user/job#g" "$1"; }

# run_case <id> <kind> <command...>: run in $JOB with a 300 s hard limit; combined stdout+stderr -> log.txt
#   kind -        : console output only
#   kind submitit : also copy the submitit folder $JOB/submitit/<tok id>/ (per-task *_log.out/.err, the sbatch script;
#                   not the binary *.pkl) into ranks/, names kept
#   kind sbatch   : the command is `sbatch --wait --output=$JOB/out/<id>.slurm ...`; log.txt is that job output
#                   file (what sbatch's job wrote), sbatch's own console output is kept in $JOB/out/<id>.log
run_case() {
  local id=$1 kind=$2; shift 2
  case " $SELECT " in *" $id "*|"  ") ;; *) return ;; esac
  echo "== $id"
  wait_no_jobs
  rm -rf "$POOL/$id" "$JOB/submitit/$(tok "$id")" "$JOB/out/$id".*; mkdir -p "$POOL/$id"
  local t0=$SECONDS
  printf '%s ' "$@" > "$JOB/out/$id.cmd"
  (cd "$JOB" && R17BTAG=$id timeout -k 5 300 "$@" > "$JOB/out/$id.log" 2>&1); local rc=$?
  echo "  rc=$rc  $((SECONDS - t0))s"
  echo "$rc" > "$JOB/out/$id.rc"
  cleanup_tag "$id"
  if [ "$kind" = sbatch ]; then rewrite "$JOB/out/$id.slurm" > "$POOL/$id/log.txt"
  else rewrite "$JOB/out/$id.log" > "$POOL/$id/log.txt"; fi
  if [ "$kind" = submitit ]; then
    mkdir -p "$POOL/$id/ranks"
    for f in "$JOB/submitit/$(tok "$id")"/*; do
      case "$f" in *.pkl) continue ;; esac
      rewrite "$f" > "$POOL/$id/ranks/$(basename "$f")"
    done
  fi
}

SELECT="${*:-}"
sinfo -h -o %T 2>/dev/null | grep -qE "^(idle|mixed)$" || bash "$HERE/slurm_up.sh" acct

# ---- 1. srun launching torchrun: 2 Slurm tasks = 2 torchrun agents = 2 "nodes" x 2 workers (world 4), c10d
#         rendezvous on localhost; global ranks follow rendezvous order (which agent gets ranks 0-1 varies)
TR() {  # TR <id> <port> [srun options...] -- <train17.py args...>
  local id=$1 port=$2; shift 2; local so=(); while [ "$1" != -- ]; do so+=("$1"); shift; done; shift
  echo srun -J "r17b-$(tok "$id")" -N1 -n2 --label "${so[@]}" torchrun --nnodes=2 --nproc-per-node=2 --rdzv-backend=c10d \
    --rdzv-endpoint=localhost:$port --rdzv-id="$(tok "$id")" train17.py "$@"
}
# 1a. global rank 2: KeyError on a corrupt sample id at step 3
run_case run17-sruntorchrun-raise - $(TR run17-sruntorchrun-raise 31181 --kill-on-bad-exit=1 -- --mode raise --bad-rank 2 --step 3)
# 1b. global rank 1 SIGKILLs itself after step 3 (no traceback); srun without --kill-on-bad-exit (Slurm default)
run_case run17-sruntorchrun-sigkill - $(TR run17-sruntorchrun-sigkill 31182 -- --mode sigkill --bad-rank 1 --step 3)
# 1c. global rank 2 sleeps 60 s before the step-2 loss all_reduce; gloo PG timeout 15 s
run_case run17-sruntorchrun-hang - $(TR run17-sruntorchrun-hang 31183 --kill-on-bad-exit=1 -- --mode hang --bad-rank 2 --step 2 --sleep 60 --timeout 15)
# 1d. global rank 1 all_reduces 1000 grad-norm stats where the others all_reduce 4 (step 3). (With 8 vs 4 in this
#     world of 4 gloo gave no size error at all: the three 4-element ranks completed and rank 1 timed out, so the
#     sizes differ more here; gloo then aborts a receiving rank with 'op.preamble.length <= op.nbytes')
run_case run17-sruntorchrun-mismatch - $(TR run17-sruntorchrun-mismatch 31184 --kill-on-bad-exit=1 -- --mode mismatch --stats-n 1000 --bad-rank 1 --step 3 --timeout 20)
# 1e. same under TORCH_DISTRIBUTED_DEBUG=DETAIL (gradients averaged by hand: DDP segfaults under DETAIL), rank 2
run_case run17-sruntorchrun-mismatch-detail - env TORCH_DISTRIBUTED_DEBUG=DETAIL $(TR run17-sruntorchrun-mismatch-detail 31185 --kill-on-bad-exit=1 -- --mode mismatch --no-ddp --bad-rank 2 --step 3 --timeout 20)

# ---- 2. Lightning under srun: 3 tasks, Trainer(devices=3, num_nodes=1, strategy=DDPStrategy(gloo)); ranks from
#         Lightning's SLURMEnvironment; srun without --kill-on-bad-exit (Slurm's default)
LS() { local id=$1 port=$2; shift 2; echo env MASTER_PORT=$port srun -J "r17b-$(tok "$id")" -N1 --ntasks-per-node=3 -n3 --label python train_lightning.py "$@"; }
# 2a. rank 1: KeyError in Dataset.__getitem__ (corrupt manifest id) at batch 3
run_case run17-srunlightning-raise - $(LS run17-srunlightning-raise 31186 --mode raise --bad-rank 1 --step 3)
# 2b. rank 2 SIGKILLs itself at the start of training_step 4
run_case run17-srunlightning-sigkill - $(LS run17-srunlightning-sigkill 31187 --mode sigkill --bad-rank 2 --step 4)
# 2c. rank 1 sleeps 60 s at the start of training_step 3; DDPStrategy timeout 20 s
run_case run17-srunlightning-hang - $(LS run17-srunlightning-hang 31188 --mode hang --bad-rank 1 --step 3 --sleep 60 --timeout 20)

# ---- 3. submitit: AutoExecutor, nodes=1, tasks_per_node=3; driver waits with job.results()
SU() { local id=$1; shift; echo python submit_ddp.py --name "r17b-$(tok "$id")" --folder "$JOB/submitit/$(tok "$id")" "$@"; }
# 3a. rank 1: KeyError on a corrupt record id at step 3
run_case run17-submitit-raise submitit $(SU run17-submitit-raise --mode raise --bad-rank 1 --step 3)
# 3b. rank 2 SIGKILLs itself after step 2
run_case run17-submitit-sigkill submitit $(SU run17-submitit-sigkill --mode sigkill --bad-rank 2 --step 2)
# 3c. rank 1 sleeps 45 s before the step-3 loss all_reduce; PG timeout 20 s
run_case run17-submitit-hang submitit $(SU run17-submitit-hang --mode hang --bad-rank 1 --step 3 --sleep 45 --timeout 20)

# ---- 4. Slurm time limit (1 minute) kills a job whose rank hangs in a collective with a PG timeout (600 s) far
#         longer than the limit: no timeout report ever appears, only Slurm's cancellation
# 4a. srun -t 1, 3 tasks (ranks from SLURM_PROCID), rank 2 stalls 900 s before the step-2 loss all_reduce
run_case run17-srun-timelimit - env MASTER_ADDR=127.0.0.1 MASTER_PORT=31189 srun -J "r17b-$(tok run17-srun-timelimit)" -t 1 \
  -N1 -n3 --label python train17.py --rank-from slurm --mode hang --bad-rank 2 --step 2 --sleep 900 --timeout 600 --log-local
# 4b. sbatch --time=1 (batch script runs srun -n3 --label inside), rank 1 stalls 900 s at step 3; log.txt = the
#     job's output file
run_case run17-sbatch-timelimit sbatch sbatch --wait -J "r17b-$(tok run17-sbatch-timelimit)" --time=1 -N1 -n3 \
  --output="$JOB/out/run17-sbatch-timelimit.slurm" "$JOB/timelimit_job.sh" 1 3

# leftovers: this round's Slurm jobs and scripts (listed, then killed by pid)
squeue -h -o "%i %j" 2>/dev/null | awk '$2 ~ /^r17b-/ {print $1}' | while read -r j; do echo "  scancel $j"; scancel "$j"; done
for p in $(pgrep -f "$JOB/|train17.py|train_lightning.py|submit_ddp.py|timelimit_job.sh"); do
  [ "$p" != $$ ] && ps -o pid=,args= -p "$p" && kill -9 "$p" 2>/dev/null
done
"$VENV/bin/python" "$HERE/make_labels.py" --pool "$POOL" --job "$JOB" $SELECT
