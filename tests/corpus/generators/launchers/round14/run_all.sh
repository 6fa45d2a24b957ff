#!/usr/bin/env bash
# Reproduce every round-14 case: real launchers (Slurm srun, two torchrun agents, mp.spawn), torch 2.13.0 CPU,
# gloo. Writes <POOL>/<id>/log.txt (+ ranks/) then runs make_labels.py (label.json per case, every quoted line
# checked as an exact substring of the log).
# usage: bash run_all.sh [case-id ...]        (no argument: all cases)
# env:   VENV (default /work/helpers/venv14), JOB (work dir, default /tmp/r14job),
#        POOL (default tests/blind/pool14)
# Needs: a running single-node Slurm (see README.md: slurm_up.sh), root for the hostoom case (cgroup v1 memory).
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
VENV=${VENV:-/work/helpers/venv14}
JOB=${JOB:-/tmp/r14job}
POOL=${POOL:-$(cd "$HERE/../../../../blind" && pwd)/pool14}
CG=/sys/fs/cgroup/memory/r14oom
export PATH="$VENV/bin:$PATH" PYTHONUNBUFFERED=1 MASTER_ADDR=127.0.0.1
mkdir -p "$JOB/out" "$JOB/logs" "$POOL"
cp "$HERE"/*.py "$HERE"/*.sh "$JOB/"

tagged() {   # pids of live processes carrying R14TAG=<id> in their environment
  local p
  for p in /proc/[0-9]*; do
    tr "\\0" "\\n" 2>/dev/null < "$p/environ" | grep -qx "R14TAG=$1" && echo "${p#/proc/}"
  done
}

# give processes still carrying R14TAG=<id> up to 30 s to exit on their own, then kill (by pid) what is left
cleanup_tag() {
  local tag=$1 p i
  for i in $(seq 30); do [ -z "$(tagged "$tag")" ] && return; sleep 1; done
  for p in $(tagged "$tag"); do kill -9 "$p" 2>/dev/null && echo "  killed leftover pid $p ($tag)"; done
}

rewrite() { sed -e "s#$VENV#/opt/venv#g" -e "s#$JOB#/home/user/job#g" "$1"; }

# run_case <id> <kind> <command...>: run in $JOB, 180 s hard limit, combined stdout+stderr -> log.txt
#   kind -       : console only
#   kind logdir  : also copy torchrun's --log-dir tree ($JOB/logs/<id>/<run_id>/...) into ranks/
#   kind taskout : srun --output=slurm-%j-%t.out: also move $JOB/slurm-*.out (one file per task) into ranks/
#   kind selflog : the command writes $JOB/out/<id>.log itself (two agents appending to one file)
run_case() {
  local id=$1 kind=$2; shift 2
  case " $SELECT " in *" $id "*|"  ") ;; *) return ;; esac
  echo "== $id"
  rm -rf "$POOL/$id" "$JOB/logs/$id" "$JOB"/slurm-*.out; mkdir -p "$POOL/$id"
  local t0=$SECONDS out="$JOB/out/$id.log"
  [ "$kind" = selflog ] && out="$JOB/out/$id.wrapper"
  printf '%s ' "$@" > "$JOB/out/$id.cmd"
  (cd "$JOB" && R14TAG=$id timeout -k 5 180 "$@" > "$out" 2>&1); local rc=$?
  echo "  rc=$rc  $((SECONDS - t0))s"
  echo "$rc" > "$JOB/out/$id.rc"
  cleanup_tag "$id"
  rewrite "$JOB/out/$id.log" > "$POOL/$id/log.txt"
  if [ "$kind" = logdir ]; then
    local top; top=$(ls -d "$JOB/logs/$id"/*/ | head -1)
    (cd "$top" && find . -type f | while read -r f; do
        mkdir -p "$POOL/$id/ranks/$(dirname "$f")"; rewrite "$f" > "$POOL/$id/ranks/$f"; done)
  fi
  if [ "$kind" = taskout ]; then
    mkdir -p "$POOL/$id/ranks"
    for f in "$JOB"/slurm-*.out; do rewrite "$f" > "$POOL/$id/ranks/$(basename "$f")"; done
    rm -f "$JOB"/slurm-*.out
  fi
}

SELECT="${*:-}"
# Slurm must be up (slurm_up.sh base); the hostoom-slurmcgroup case switches it to task/cgroup and back
sinfo -h -o %T 2>/dev/null | grep -qx idle || bash "$HERE/slurm_up.sh" base
# srun: one task per rank on the single node; ranks read SLURM_PROCID / SLURM_NTASKS; each case its own port
S() { local port=$1; shift; echo env MASTER_PORT=$port srun "$@"; }
SL="--label --kill-on-bad-exit=1"

# 1. rank 2 of 3: KeyError on a corrupt sample id in its shard manifest at step 3
run_case run14-srun-raise - $(S 29841 $SL -n 3) python train_job.py --mode raise_key --bad-rank 2 --step 3
# 2. rank 0 of 4: ValueError float('n/a') in its CSV parsing at step 2; the job prints with print(), not logging
run_case run14-srun-raise-rank0 - $(S 29842 $SL -n 4) python train_job.py --mode raise_value --print --bad-rank 0 --step 2
# 3. rank 1 of 4 SIGKILLs itself at step 3 (no traceback)
run_case run14-srun-sigkill - $(S 29843 $SL -n 4) python train_job.py --mode sigkill --bad-rank 1 --step 3
# 3b. srun WITHOUT --kill-on-bad-exit (Slurm's default): rank 2 of 4 SIGKILLs itself at step 2; srun waits for the
#     survivors, which die on their own gloo errors
run_case run14-srun-nokill-sigkill - $(S 29857 --label -n 4) python train_job.py --mode sigkill --bad-rank 2 --step 2
# 4. rank 3 of 4 sleeps 60 s before the loss all_reduce at step 2; PG timeout 15 s
run_case run14-srun-hang - $(S 29844 $SL -n 4) python train_job.py --mode hang --bad-rank 3 --step 2 --sleep 60 --timeout 15
# 5. rank 2 of 3 all_reduces 8 grad-norm stats where ranks 0,1 all_reduce 4 (step 3)
run_case run14-srun-mismatch - $(S 29845 $SL -n 3) python train_job.py --mode mismatch --bad-rank 2 --step 3
# 6. same under TORCH_DISTRIBUTED_DEBUG=DETAIL (gradients averaged by hand: DDP segfaults under DETAIL), rank 1 of 3
run_case run14-srun-mismatch-detail - env TORCH_DISTRIBUTED_DEBUG=DETAIL $(S 29846 $SL -n 3) python train_job.py \
  --mode mismatch --no-ddp --bad-rank 1 --step 3
# 7. rank 1 of 4 alone broadcasts a 1000-element metrics tensor after step 3
run_case run14-srun-mismatch-extrabcast - $(S 29847 $SL -n 4) python train_job.py --mode extra_bcast --bad-rank 1 --step 3 --timeout 20
# 8. torch.compile from step 2; rank 2 of 3 has CXX=/nonexistent/g++
run_case run14-srun-compile - $(S 29848 $SL -n 3) python train_job.py --mode compile --bad-rank 2 --step 2
# 9. torch.compile(fullgraph=True) from step 2; rank 0 of 3 alone runs a data-dependent input check in forward.
#    --no-ddp: fullgraph=True over a DDP module fails on EVERY rank in torch 2.13.0 (dynamo cannot trace DDP's
#    Logger.set_runtime_stats_and_log), so the net itself is compiled and gradients are averaged by hand
run_case run14-srun-compile-fullgraph-rank0 - $(S 29849 $SL -n 3) python train_job.py --mode fullgraph --no-ddp --bad-rank 0 --step 2
# 10. rank 2 of 3 in a 1 GiB memory cgroup caches 128 MiB blocks at step 3 until the OOM killer kills it
case " $SELECT " in *" run14-srun-hostoom "*|"  ")
  rmdir "$CG" 2>/dev/null; mkdir -p "$CG" && echo 1G > "$CG/memory.limit_in_bytes" \
    && { [ ! -e "$CG/memory.memsw.limit_in_bytes" ] || echo 1G > "$CG/memory.memsw.limit_in_bytes"; } \
    && echo "  cgroup $CG limit 1 GiB"
  dmesg > "$JOB/out/dmesg.before" 2>/dev/null
  run_case run14-srun-hostoom - env R14_OOM_CGROUP=$CG $(S 29850 $SL -n 3) python train_job.py --mode hostoom \
    --bad-rank 2 --step 3
  dmesg 2>/dev/null | grep -F -x -v -f "$JOB/out/dmesg.before" | grep -i "out of memory\|oom-kill\|killed process" \
    > "$JOB/out/run14-srun-hostoom.kernel"; cat "$JOB/out/run14-srun-hostoom.kernel"
  echo "  cgroup failcnt $(cat "$CG/memory.failcnt")"; rmdir "$CG" && echo "  cgroup removed" ;;
esac
# 10b. Slurm's own memory enforcement: slurm.conf switched to proctrack/cgroup + task/cgroup (ConstrainRAMSpace,
#     slurm_up.sh cgroup); srun --mem=2500M for the 3-task step; rank 1 caches 128 MiB blocks at step 3 until the
#     step's memory cgroup OOM-kills it
case " $SELECT " in *" run14-srun-hostoom-slurmcgroup "*|"  ")
  bash "$HERE/slurm_up.sh" cgroup
  run_case run14-srun-hostoom-slurmcgroup - $(S 29856 $SL --mem=2500M -n 3) python train_job.py --mode hostoom \
    --bad-rank 1 --step 3
  bash "$HERE/slurm_up.sh" base ;;
esac
# 11. srun WITHOUT --label, one output file per task (--output=slurm-%j-%t.out); rank 1 of 3 KeyError at step 2
run_case run14-srun-taskfiles-raise taskout $(S 29851 --kill-on-bad-exit=1 --output=slurm-%j-%t.out -n 3) \
  python train_job.py --mode raise_key --bad-rank 1 --step 2

# 12./13. two torchrun agents on localhost as 2 nodes (c10d rendezvous), both appending to one log
run_case run14-torchrun2n-sigkill selflog bash two_agents.sh "$JOB/out/run14-torchrun2n-sigkill.log" 29852 tee \
  train_job.py --torchrun --mode sigkill --bad-rank 2 --step 3
run_case run14-torchrun2n-hang selflog bash two_agents.sh "$JOB/out/run14-torchrun2n-hang.log" 29853 \
  "logdir:$JOB/logs/run14-torchrun2n-hang" train_job.py --torchrun --mode hang --bad-rank 3 --step 2 --sleep 60 --timeout 15
if [ -d "$JOB/logs/run14-torchrun2n-hang" ] && [ -d "$POOL/run14-torchrun2n-hang" ]; then
  top=$(ls -d "$JOB/logs/run14-torchrun2n-hang"/*/ | head -1)
  (cd "$top" && find . -type f | while read -r f; do
      mkdir -p "$POOL/run14-torchrun2n-hang/ranks/$(dirname "$f")"; rewrite "$f" > "$POOL/run14-torchrun2n-hang/ranks/$f"; done)
fi

# 14./15. mp.spawn, JSON-lines logging with a "rank" field
run_case run14-spawn-jsonlog-raise - python spawn_jsonlog.py --mode raise --world 3 --bad-rank 1 --step 3 --port 29854
run_case run14-spawn-jsonlog-hang - python spawn_jsonlog.py --mode hang --world 4 --bad-rank 2 --step 2 --port 29855 --timeout 15

# leftovers: Slurm jobs and any of our scripts (listed, then killed by pid)
squeue -h -o %i 2>/dev/null | while read -r j; do echo "  scancel $j"; scancel "$j"; done
for p in $(pgrep -f "$JOB/|train_job.py|spawn_jsonlog.py|two_agents.sh"); do
  [ "$p" != $$ ] && ps -o pid=,args= -p "$p" && kill -9 "$p" 2>/dev/null
done
"$VENV/bin/python" "$HERE/make_labels.py" --pool "$POOL" --job "$JOB" $SELECT
