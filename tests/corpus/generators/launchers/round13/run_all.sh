#!/usr/bin/env bash
# Reproduce every round-13 case: real launchers, torch 2.13.0 CPU, gloo. Writes <POOL>/<id>/log.txt (+ ranks/)
# then runs make_labels.py (label.json per case, decisive_line checked as an exact substring).
# usage: bash run_all.sh [case-id ...]        (no argument: all cases)
# env:   VENV (default /work/r13venv), JOB (work dir, default /tmp/r13job), POOL (default tests/blind/pool13)
# Needs root for run13-spawn-rank0-hostoom (cgroup v1 memory controller at /sys/fs/cgroup/memory).
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
VENV=${VENV:-/work/r13venv}
JOB=${JOB:-/tmp/r13job}
POOL=${POOL:-$(cd "$HERE/../../../../blind" && pwd)/pool13}
CG=/sys/fs/cgroup/memory/r13oom
export PATH="$VENV/bin:$PATH" OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
mkdir -p "$JOB/out" "$JOB/logs" "$POOL"
cp "$HERE"/*.py "$HERE"/*.sh "$JOB/"

tagged() {   # pids of live processes carrying R13TAG=<id> in their environment
  local p
  for p in /proc/[0-9]*; do
    tr "\\0" "\\n" 2>/dev/null < "$p/environ" | grep -qx "R13TAG=$1" && echo "${p#/proc/}"
  done
}

# give processes still carrying R13TAG=<id> up to 30 s to exit on their own (their output still lands in the
# log), then kill (by pid) whatever is left
cleanup_tag() {
  local tag=$1 p i
  for i in $(seq 30); do [ -z "$(tagged "$tag")" ] && return; sleep 1; done
  for p in /proc/[0-9]*; do
    if tr "\\0" "\\n" 2>/dev/null < "$p/environ" | grep -qx "R13TAG=$tag"; then
      kill -9 "${p#/proc/}" 2>/dev/null && echo "  killed leftover pid ${p#/proc/} ($tag)"
    fi
  done
}

rewrite() { sed -e "s#$VENV#/opt/venv#g" -e "s#$JOB#/home/user/job#g" "$1"; }

# run_case <id> <logdir|-|selflog> <command...>: run in $JOB, 150 s hard limit, combined stdout+stderr.
#   logdir : also copy torchrun's --log-dir tree ($JOB/logs/<id>/<run_id>/attempt_N/...) into ranks/
#   selflog: the command writes $JOB/out/<id>.log itself (two agents appending to one file)
run_case() {
  local id=$1 kind=$2; shift 2
  case " $SELECT " in *" $id "*|"  ") ;; *) return ;; esac
  echo "== $id"
  rm -rf "$POOL/$id" "$JOB/logs/$id"; mkdir -p "$POOL/$id"
  local t0=$SECONDS out="$JOB/out/$id.log"
  [ "$kind" = selflog ] && out="$JOB/out/$id.wrapper"
  printf '%s ' "$@" > "$JOB/out/$id.cmd"
  (cd "$JOB" && R13TAG=$id timeout -k 5 150 "$@" > "$out" 2>&1); local rc=$?
  echo "  rc=$rc  $((SECONDS - t0))s"
  echo "$rc" > "$JOB/out/$id.rc"
  cleanup_tag "$id"
  rewrite "$JOB/out/$id.log" > "$POOL/$id/log.txt"
  if [ "$kind" = logdir ]; then
    local top; top=$(ls -d "$JOB/logs/$id"/*/ | head -1)
    (cd "$top" && find . -type f | while read -r f; do
        mkdir -p "$POOL/$id/ranks/$(dirname "$f")"; rewrite "$f" > "$POOL/$id/ranks/$f"; done)
  fi
}

SELECT="${*:-}"
TR="torchrun --standalone --tee 3"

# 1. rank 0 alone evaluates (~45 s) after step 3; ranks 1-3 wait in dist.barrier(), PG timeout 15 s
run_case run13-torchrun-rank0-eval-barrier - $TR --nproc-per-node 4 ddp_job.py --mode eval_barrier --bad-rank 0 --step 3 --timeout 15
# 2. rank 0 raises ValueError in its data code at step 2
run_case run13-torchrun-rank0-raise - $TR --nproc-per-node 4 ddp_job.py --mode raise_value --bad-rank 0 --step 2
# 3. mp.spawn, 6 ranks, rank 5 SIGKILLs itself at step 3
run_case run13-spawn-w6-lastrank-sigkill - python spawn_job.py --mode sigkill --world 6 --bad-rank 5 --step 3 --port 29733
# 4. two torchrun agents (2 "nodes" x 2 workers) appending to one log; global rank 3 raises RuntimeError at step 2
run_case run13-torchrun-2agents-raise selflog bash two_agents.sh "$JOB/out/run13-torchrun-2agents-raise.log" 29734 \
  ddp_job.py --mode raise_runtime --bad-rank 3 --step 2
# 5. no --tee; the rank is in a logging field; rank 2 raises KeyError at step 3 (uncaught)
run_case run13-torchrun-logfield-raise - torchrun --standalone --nproc-per-node 3 ddp_job.py --mode raise_key --logfield --bad-rank 2 --step 3
# 6. DDP(find_unused_parameters=False); rank 1 skips the aux submodule from step 2 on (no per-step loss
#    all_reduce, so rank 1 reaches its next forward); the -losssync variant keeps the per-step loss all_reduce
run_case run13-torchrun-ddp-unused-param - $TR --nproc-per-node 3 ddp_job.py --mode unused --no-loss-sync --bad-rank 1 --step 2
run_case run13-torchrun-ddp-unused-param-losssync - $TR --nproc-per-node 3 ddp_job.py --mode unused --bad-rank 1 --step 2
# 7./8. rank 0 alone broadcasts a 1000-element metrics tensor after step 3 (plain DDP, then DETAIL: under DETAIL
#    DDP's constructor segfaults in torch 2.13.0 CPU, so that run averages gradients by hand, --no-ddp)
run_case run13-torchrun-rank0-extra-bcast - $TR --nproc-per-node 4 ddp_job.py --mode extra_bcast --bad-rank 0 --step 3 --timeout 20
run_case run13-torchrun-rank0-extra-bcast-detail - env TORCH_DISTRIBUTED_DEBUG=DETAIL $TR --nproc-per-node 4 \
  ddp_job.py --mode extra_bcast --no-ddp --bad-rank 0 --step 3 --timeout 20
# 9. accelerate Accelerator(cpu=True) under torchrun; rank 1's collate raises IndexError on its batch 2
run_case run13-accelerate-under-torchrun-raise - $TR --nproc-per-node 3 accel_job.py --bad-rank 1 --step 2
# 10. Lightning ddp, plain python (Lightning spawns ranks 1-2); rank 0 ZeroDivisionError in validation_step
run_case run13-lightning-rank0-val-raise - python lightning_val.py --bad-rank 0 --batch 1 --devices 3
# 11. torch.compile; rank 2 alone has CXX=/nonexistent/g++; --log-dir + --redirects 3 + --tee 3
run_case run13-torchrun-logdir-compile logdir torchrun --standalone --log-dir "$JOB/logs/run13-torchrun-logdir-compile" \
  --redirects 3 --tee 3 --nproc-per-node 3 ddp_job.py --mode compile --bad-rank 2 --step 2
# 12. mp.spawn, rank 0 in a 1 GiB memory cgroup allocates until the OOM killer SIGKILLs it
case " $SELECT " in *" run13-spawn-rank0-hostoom "*|"  ")
  rmdir "$CG" 2>/dev/null; mkdir -p "$CG" && echo 1G > "$CG/memory.limit_in_bytes" \
    && { [ ! -e "$CG/memory.memsw.limit_in_bytes" ] || echo 1G > "$CG/memory.memsw.limit_in_bytes"; } \
    && echo "  cgroup $CG limit 1 GiB"
  dmesg > "$JOB/out/dmesg.before" 2>/dev/null
  run_case run13-spawn-rank0-hostoom - env R13_OOM_CGROUP=$CG python spawn_job.py --mode hostoom --world 3 \
    --bad-rank 0 --step 3 --port 29736
  dmesg 2>/dev/null | grep -F -x -v -f "$JOB/out/dmesg.before" | grep -i "out of memory\|oom-kill" \
    > "$JOB/out/run13-spawn-rank0-hostoom.kernel"; cat "$JOB/out/run13-spawn-rank0-hostoom.kernel"
  echo "  cgroup failcnt $(cat "$CG/memory.failcnt")"; rmdir "$CG" && echo "  cgroup removed" ;;
esac
# 13. --log-dir + --redirects 3, no --tee; rank 0 SIGKILLs itself at step 3
run_case run13-torchrun-logdir-rank0-sigkill logdir torchrun --standalone --log-dir "$JOB/logs/run13-torchrun-logdir-rank0-sigkill" \
  --redirects 3 --nproc-per-node 3 ddp_job.py --mode sigkill --bad-rank 0 --step 3
# 14. mpirun --tag-output, DETAIL; rank 2 all_reduces float64 where the others use float32 at step 2
run_case run13-mpirun-detail-dtype - mpirun --tag-output --oversubscribe -np 4 -x MASTER_ADDR=127.0.0.1 -x MASTER_PORT=29737 \
  -x TORCH_DISTRIBUTED_DEBUG=DETAIL -x PATH -x R13TAG -x PYTHONUNBUFFERED python mpi_dtype.py --bad-rank 2 --step 2
# 15. 5 ranks; rank 4 sleeps 60 s before the loss all_reduce at step 2, PG timeout 15 s
run_case run13-torchrun-w5-rank4-hang - $TR --nproc-per-node 5 ddp_job.py --mode hang --bad-rank 4 --step 2 --sleep 60 --timeout 15
# 16. mp.spawn, 4 ranks, DETAIL (gradients averaged by hand, see 8.); rank 0's loss weight is None at step 2 -> TypeError
run_case run13-spawn-rank0-raise-detail - env TORCH_DISTRIBUTED_DEBUG=DETAIL python spawn_job.py --mode raise_type --no-ddp --world 4 \
  --bad-rank 0 --step 2 --port 29738

# leftovers of any of our scripts (listed, then killed by pid)
for p in $(pgrep -f "$JOB/|ddp_job.py|spawn_job.py|mpi_dtype.py|accel_job.py|lightning_val.py|two_agents.sh"); do
  [ "$p" != $$ ] && ps -o pid=,args= -p "$p" && kill -9 "$p" 2>/dev/null
done
"$VENV/bin/python" "$HERE/make_labels.py" --pool "$POOL" --job "$JOB" $SELECT
