#!/usr/bin/env bash
# Reproduce every round-49b case ("which number is the rank?"): real launchers, torch 2.13.0 CPU, gloo.
# Writes <POOL>/<id>/log.txt (+ ranks/node0, ranks/node1 for per-node torchrun --log-dir trees), then runs
# make_labels.py (label.json per case; decisive_line etc. checked as exact substrings).
# usage: bash run_all.sh [case-id ...]     (no argument: all cases)
# env:   VENV (default /work/helpers/venv49b), JOB (work dir, default /tmp/h49b/job), POOL (default /tmp/h49b/pool)
# Needs openmpi-bin (mpirun) for the mpirun cases.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
VENV=${VENV:-/work/helpers/venv49b}
JOB=${JOB:-/tmp/h49b/job}
POOL=${POOL:-/tmp/h49b/pool}
export PATH="$VENV/bin:$PATH" OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
mkdir -p "$JOB/out" "$JOB/logs" "$POOL"
cp "$HERE"/*.py "$HERE"/*.sh "$JOB/"

# kill (by pid) every process still carrying R49TAG=<id> in its environment
cleanup_tag() {
  local tag=$1 p
  for p in /proc/[0-9]*; do
    if tr "\\0" "\\n" 2>/dev/null < "$p/environ" | grep -qx "R49TAG=$tag"; then
      kill -9 "${p#/proc/}" 2>/dev/null && echo "  killed leftover pid ${p#/proc/} ($tag)"
    fi
  done
}
rewrite() { sed -e "s#$VENV#/opt/venv#g" -e "s#$JOB#/home/user/job#g" "$1"; }

# run_case <id> <logdir-or-> <command...>: run in $JOB, 120 s hard limit, combined stdout+stderr
run_case() {
  local id=$1 logdir=$2; shift 2
  case " $SELECT " in *" $id "*|"  ") ;; *) return ;; esac
  echo "== $id"
  rm -rf "$POOL/$id" "$JOB/logs/$id"; mkdir -p "$POOL/$id"
  local t0=$SECONDS
  printf '%s ' "$@" > "$JOB/out/$id.cmd"
  (cd "$JOB" && R49TAG=$id timeout -k 5 120 "$@" > "$JOB/out/$id.log" 2>&1); local rc=$?
  echo "  rc=$rc  $((SECONDS - t0))s"
  echo "$rc" > "$JOB/out/$id.rc"
  sleep 1; cleanup_tag "$id"
  rewrite "$JOB/out/$id.log" > "$POOL/$id/log.txt"
  if [ "$logdir" != "-" ]; then   # per node: $JOB/logs/<id>/nodeN/<run_id>_<x>/attempt_0/<local_rank>/{stdout,stderr}.log
    local nd top
    for nd in node0 node1; do
      top=$(ls -d "$JOB/logs/$id/$nd"/*/ | head -1)
      (cd "$top" && find . -type f | while read -r f; do
          mkdir -p "$POOL/$id/ranks/$nd/$(dirname "$f")"; rewrite "$f" > "$POOL/$id/ranks/$nd/$f"; done)
    done
  fi
}

SELECT="${*:-}"
T2="bash two_nodes.sh"
TS="torchrun --standalone --tee 3"
MPI="mpirun --tag-output --oversubscribe -x MASTER_ADDR=127.0.0.1 -x PATH -x PYTHONUNBUFFERED"
SL="bash slurm_loop.sh"
SP="bash spawn_nodes.sh"
DETAIL="env TORCH_DISTRIBUTED_DEBUG=DETAIL"

# 1. two torchrun agents = two "nodes"; culprit on node 1 (local rank != global rank)
run_case run-r49b-tr2n-raise-both - $T2 c10d 29811 2 - job.py --fmt both --fault raise --exc key --bad 3 --step 3
run_case run-r49b-tr2n-raise-local-w6 - $T2 static 29812 3 - job.py --fmt local --fault raise --exc value --bad 4 --step 3
run_case run-r49b-tr2n-sigkill-local - $T2 c10d 29813 3 - job.py --fmt local --fault sigkill --bad 5 --step 3
run_case run-r49b-tr2n-sigkill-global - $T2 static 29814 2 - job.py --fmt global --fault sigkill --bad 2 --step 2
run_case run-r49b-tr2n-hang-global - $T2 c10d 29815 2 - job.py --fmt global --fault hang --bad 3 --step 2 --timeout 15
run_case run-r49b-tr2n-hang-both-w6 - $T2 static 29816 3 - job.py --fmt both --fault hang --bad 4 --step 3 --timeout 15
run_case run-r49b-tr2n-mismatch-both - $T2 c10d 29817 2 - job.py --fmt both --fault mismatch --bad 3 --step 3
run_case run-r49b-tr2n-mismatch-detail-local - $DETAIL $T2 static 29818 3 - job.py --fmt local --fault mismatch --bad 4 --step 2
#    ... with per-node --log-dir trees (copied to ranks/node0, ranks/node1)
run_case run-r49b-tr2n-logdir-raise L $T2 c10d 29819 2 "$JOB/logs/run-r49b-tr2n-logdir-raise" job.py --fmt local --fault raise --exc index --bad 3 --step 4
run_case run-r49b-tr2n-logdir-sigkill L $T2 static 29820 2 "$JOB/logs/run-r49b-tr2n-logdir-sigkill" job.py --fmt both --fault sigkill --bad 2 --step 3
run_case run-r49b-tr2n-logdir-hang L $T2 c10d 29821 3 "$JOB/logs/run-r49b-tr2n-logdir-hang" job.py --fmt global --fault hang --bad 5 --step 2 --timeout 15

# 2. the job prints LOCAL_RANK as "rank" (two processes print the same number); --catch exit hides torch's [rankN]: traceback
run_case run-r49b-tr2n-localonly-raise - $T2 c10d 29822 2 - job.py --fmt localonly --catch exit --fault raise --exc key --bad 3 --step 3
run_case run-r49b-tr2n-localonly-sigkill - $T2 static 29823 2 - job.py --fmt localonly --fault sigkill --bad 2 --step 3
run_case run-r49b-tr2n-localonly-hang - $T2 c10d 29824 3 - job.py --fmt localonly --catch exit --fault hang --bad 4 --step 2 --timeout 15
run_case run-r49b-slurm-localonly-raise - $SL 2 2 29825 job.py --rank-src slurm --fmt localonly --catch exit --fault raise --exc value --bad 2 --step 3

# 3. sub-groups of 2 ranks: the fault is inside the sub-group collective (group rank != global rank)
run_case run-r49b-torchrun-pairs-mismatch - $TS --nproc-per-node 4 job.py --group pairs --where group --fault mismatch --bad 3 --step 3
run_case run-r49b-torchrun-pairs-mismatch-detail-w6 - $DETAIL $TS --nproc-per-node 6 job.py --group pairs --where group --fault mismatch --bad 3 --step 2
run_case run-r49b-torchrun-subgroups-hang - $TS --nproc-per-node 4 job.py --group subgroups --where group --fault hang --bad 3 --step 2 --timeout 15
#    same, but the sub-groups keep new_subgroups()' default 30-min timeout: the partner never times out, ranks 0-1 do (world all_reduce)
run_case run-r49b-torchrun-subgroups-hang-grpdefault - $TS --nproc-per-node 4 job.py --group subgroups --group-timeout default --where group --fault hang --bad 3 --step 2 --timeout 15
run_case run-r49b-tr2n-nodegroup-hang - $T2 static 29826 2 - job.py --fmt both --group node --where group --fault hang --bad 3 --step 3 --timeout 15
run_case run-r49b-mpirun-rev-subgroups-mismatch-detail - $MPI -x TORCH_DISTRIBUTED_DEBUG=DETAIL -x MASTER_PORT=29827 -np 4 python -u job.py --rank-src ompi --perm rev --group subgroups --where group --fault mismatch --bad 2 --step 2

# 4. mpirun --tag-output [1,N] (N = OMPI rank) while torch's rank is a permutation of it
run_case run-r49b-mpirun-rev-raise - $MPI -x MASTER_PORT=29828 -np 4 python -u job.py --rank-src ompi --perm rev --fault raise --exc key --bad 1 --step 3
run_case run-r49b-mpirun-rev-sigkill - $MPI -x MASTER_PORT=29829 -np 4 python -u job.py --rank-src ompi --perm rev --fault sigkill --bad 2 --step 3
run_case run-r49b-mpirun-rev-hang - $MPI -x MASTER_PORT=29830 -np 4 python -u job.py --rank-src ompi --perm rev --fault hang --bad 3 --step 2 --timeout 15
run_case run-r49b-mpirun-rev-mismatch-w5 - $MPI -x MASTER_PORT=29831 -np 5 python -u job.py --rank-src ompi --perm rev --fault mismatch --bad 1 --step 3
run_case run-r49b-mpirun-rot-sigkill - $MPI -x MASTER_PORT=29832 -np 4 python -u job.py --rank-src ompi --perm rot --fault sigkill --bad 3 --step 2

# 5. mp.spawn on two fake nodes, global rank = node_rank*nprocs + i; Python logging with %(rank)s and SpawnProcess-N
run_case run-r49b-spawn-offset-raise-logfilter - $SP 2 2 29833 job.py --fmt logfilter --fault raise --exc value --bad 3 --step 3
run_case run-r49b-spawn-offset-sigkill-logextra - $SP 2 2 29834 job.py --fmt logextra --fault sigkill --bad 2 --step 3
run_case run-r49b-spawn-offset-hang-logfilter - $SP 2 3 29835 job.py --fmt logfilter --fault hang --bad 4 --step 2 --timeout 15
run_case run-r49b-spawn-offset-mismatch-logextra - $SP 2 2 29836 job.py --fmt logextra --fault mismatch --bad 1 --step 3

# 6. fake SLURM shell loop (cyclic distribution): sed prefix = loop index != SLURM_PROCID = rank
run_case run-r49b-slurm-cyclic-raise - $SL 2 2 29837 job.py --rank-src slurm --fmt global --fault raise --exc index --bad 1 --step 3
run_case run-r49b-slurm-cyclic-sigkill-w6 - $SL 2 3 29838 job.py --rank-src slurm --fmt both --fault sigkill --bad 3 --step 3
run_case run-r49b-slurm-cyclic-hang - $SL 2 2 29839 job.py --rank-src slurm --fmt local --fault hang --bad 2 --step 2 --timeout 15
run_case run-r49b-slurm-cyclic-mismatch-detail-w6 - $DETAIL $SL 2 3 29840 job.py --rank-src slurm --fmt global --fault mismatch --bad 4 --step 2

# 7. healthy runs of the same programs (noisy logging on every rank)
run_case run-r49b-tr2n-healthy-noisy - $T2 c10d 29841 2 - job.py --fmt both --group node --noisy
run_case run-r49b-mpirun-rev-healthy-noisy - $MPI -x MASTER_PORT=29842 -np 4 python -u job.py --rank-src ompi --perm rev --group subgroups --noisy
run_case run-r49b-spawn-offset-healthy-noisy - $SP 2 2 29843 job.py --fmt logfilter --noisy
run_case run-r49b-slurm-cyclic-healthy-noisy - $SL 2 3 29844 job.py --rank-src slurm --fmt localonly --noisy

[ -f "$HERE/make_labels.py" ] && python "$HERE/make_labels.py" --pool "$POOL" --job "$JOB" $SELECT
