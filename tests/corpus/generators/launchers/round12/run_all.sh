#!/usr/bin/env bash
# Reproduce every round-12 case: real launchers, torch 2.13.0 CPU, gloo. Writes <POOL>/<id>/log.txt (+ ranks/)
# then runs make_labels.py (label.json for each case, decisive_line checked as an exact substring).
# usage: bash run_all.sh [case-id ...]        (no argument: all cases)
# env:   VENV (default /work/venv-r12), JOB (work dir, default /tmp/r12job), POOL (default tests/blind/pool12)
# Needs root for the hostoom case (cgroup v1 memory controller at /sys/fs/cgroup/memory).
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
VENV=${VENV:-/work/venv-r12}
JOB=${JOB:-/tmp/r12job}
POOL=${POOL:-$(cd "$HERE/../../../../blind" && pwd)/pool12}
CG=/sys/fs/cgroup/memory/r12oom
export PATH="$VENV/bin:$PATH" OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mkdir -p "$JOB/out" "$JOB/logs" "$POOL"
cp "$HERE"/*.py "$JOB/"

# kill (by pid) every process still carrying R12TAG=<id> in its environment
cleanup_tag() {
  local tag=$1 p
  for p in /proc/[0-9]*; do
    if tr "\\0" "\\n" 2>/dev/null < "$p/environ" | grep -qx "R12TAG=$tag"; then
      kill -9 "${p#/proc/}" 2>/dev/null && echo "  killed leftover pid ${p#/proc/} ($tag)"
    fi
  done
}

rewrite() { sed -e "s#$VENV#/opt/venv#g" -e "s#$JOB#/home/user/job#g" "$1"; }

# run_case <id> <logdir-or-> <command...>: run in $JOB, 110 s hard limit, combined stdout+stderr
run_case() {
  local id=$1 logdir=$2; shift 2
  case " $SELECT " in *" $id "*|"  ") ;; *) return ;; esac
  echo "== $id"
  rm -rf "$POOL/$id" "$JOB/logs/$id"; mkdir -p "$POOL/$id"
  local t0=$SECONDS
  printf '%s ' "$@" > "$JOB/out/$id.cmd"
  (cd "$JOB" && R12TAG=$id timeout -k 5 110 "$@" > "$JOB/out/$id.log" 2>&1); local rc=$?
  echo "  rc=$rc  $((SECONDS - t0))s"
  echo "$rc" > "$JOB/out/$id.rc"
  sleep 1; cleanup_tag "$id"
  rewrite "$JOB/out/$id.log" > "$POOL/$id/log.txt"
  if [ "$logdir" != "-" ]; then          # torchrun --log-dir: D/<run_id>_<x>/attempt_N/<rank>/{stdout,stderr}.log
    local top; top=$(ls -d "$JOB/logs/$id"/*/ | head -1)
    (cd "$top" && find . -type f | while read -r f; do
        mkdir -p "$POOL/$id/ranks/$(dirname "$f")"; rewrite "$f" > "$POOL/$id/ranks/$f"; done)
  fi
}

SELECT="${*:-}"
TR="torchrun --standalone --tee 3"

# 1. Hugging Face Trainer under torchrun
run_case run12-torchrun-hf-collator-raise - $TR --nproc-per-node 3 hf_trainer.py --mode collator_raise --bad-rank 1 --step 4
run_case run12-torchrun-hf-collator-raise-w5 - $TR --nproc-per-node 5 hf_trainer.py --mode collator_raise --bad-rank 4 --step 5
run_case run12-torchrun-hf-callback-sigkill - $TR --nproc-per-node 4 hf_trainer.py --mode callback_sigkill --bad-rank 2 --step 3
run_case run12-torchrun-hf-callback-hang - $TR --nproc-per-node 3 hf_trainer.py --mode callback_hang --own-pg 1 --bad-rank 0 --step 3 --sleep 60

# 2. Lightning: ddp_spawn raise; ddp (under torchrun) host OOM in a memory cgroup
run_case run12-lightning-ddpspawn-raise - python lightning_job.py --mode spawn_raise --devices 3 --bad-rank 2 --step 3
case " $SELECT " in *" run12-torchrun-lightning-hostoom "*|"  ")
  rmdir "$CG" 2>/dev/null; mkdir -p "$CG" && echo 1536M > "$CG/memory.limit_in_bytes" \
    && echo 1536M > "$CG/memory.memsw.limit_in_bytes" && echo "  cgroup $CG limit 1.5 GiB"
  dmesg > "$JOB/out/dmesg.before" 2>/dev/null
  run_case run12-torchrun-lightning-hostoom - \
    env R12_OOM_CGROUP=$CG $TR --nproc-per-node 3 lightning_job.py --mode ddp_hostoom --devices 3 --bad-rank 1 --step 3
  dmesg 2>/dev/null | grep -F -x -v -f "$JOB/out/dmesg.before" | grep -i "out of memory\|oom-kill" \
    > "$JOB/out/run12-torchrun-lightning-hostoom.kernel"; cat "$JOB/out/run12-torchrun-lightning-hostoom.kernel"
  echo "  cgroup failcnt $(cat "$CG/memory.failcnt")"; rmdir "$CG" && echo "  cgroup removed" ;;
esac

# 3. torchrun elastic restarts
run_case run12-torchrun-elastic-same - $TR --nproc-per-node 3 --max-restarts 1 elastic_ddp.py --mode same --rank-a 0 --step 3
run_case run12-torchrun-elastic-switch - $TR --nproc-per-node 4 --max-restarts 1 elastic_ddp.py --mode switch --rank-a 1 --rank-b 3 --step 3
run_case run12-torchrun-elastic-recover - $TR --nproc-per-node 3 --max-restarts 1 elastic_ddp.py --mode recover --rank-a 2 --step 2
run_case run12-torchrun-elastic-switch-logdir logdir torchrun --standalone --log-dir "$JOB/logs/run12-torchrun-elastic-switch-logdir" \
  --redirects 3 --tee 3 --nproc-per-node 5 --max-restarts 1 elastic_ddp.py --mode switch --rank-a 0 --rank-b 4 --step 2
run_case run12-torchrun-elastic-recover-logdir logdir torchrun --standalone --log-dir "$JOB/logs/run12-torchrun-elastic-recover-logdir" \
  --redirects 3 --tee 3 --nproc-per-node 4 --max-restarts 2 elastic_ddp.py --mode recover --rank-a 0 --step 4

# 4. torchrun, rank in a logging field, no --tee: logged traceback then exit 1
run_case run12-torchrun-logfmt-raise - torchrun --standalone --nproc-per-node 4 logfmt_raise.py --bad-rank 3 --step 4

# 5. mp.spawn, exception in a DataLoader worker (num_workers=2)
run_case run12-mpspawn-dataloader-worker-raise - python spawn_dl_worker.py --world 3 --port 29631 --bad-rank 1 --bad-index 301

# 6. Open MPI mpirun --tag-output
run_case run12-mpirun-allgather-mismatch - mpirun --tag-output --oversubscribe -np 4 -x MASTER_PORT=29641 -x PATH \
  python mpi_job.py --mode allgather_size --bad-rank 0 --step 3
run_case run12-mpirun-segv - mpirun --tag-output --oversubscribe -np 3 -x MASTER_PORT=29642 -x PATH \
  python mpi_job.py --mode segv --bad-rank 2 --step 3

# leftovers of any of our scripts (listed, then killed by pid)
for p in $(pgrep -f "$JOB/|hf_trainer.py|lightning_job.py|elastic_ddp.py|logfmt_raise.py|spawn_dl_worker.py|mpi_job.py"); do
  [ "$p" != $$ ] && ps -o pid=,args= -p "$p" && kill -9 "$p" 2>/dev/null
done
"$VENV/bin/python" "$HERE/make_labels.py" --pool "$POOL" --job "$JOB" $SELECT
