#!/usr/bin/env bash
# Reproduce every round-44b case (what the log shows of time and of which rank; CPU, gloo, torch 2.13.0).
# Usage: VENV=/path/to/venv OUT=/path/to/cases bash run_all.sh [case-id ...]
# Each case runs job.py (or spawn_job.py) under a real launcher from a scratch work dir $WORK; the launcher's
# combined stdout+stderr is log.txt; per-rank log folders are copied into ranks/.  Then only the venv path
# (-> /opt/venv) and the work dir (-> /home/user/job) are rewritten.  label.json files are written by hand.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
VENV=${VENV:-/work/helpers/venv44b}
OUT=${OUT:-/work/helpers/stage44}
WORK=${WORK:-/tmp/r44b/job}
PY=$VENV/bin/python
TR=$VENV/bin/torchrun
MPI="mpirun --allow-run-as-root --oversubscribe --bind-to none --tag-output"
mkdir -p "$WORK" "$OUT"
cp "$HERE/job.py" "$HERE/spawn_job.py" "$WORK/"
# torchtitan run_train.sh style torchrun
TT="$TR --rdzv_backend c10d --rdzv_endpoint=localhost:0 --role rank --tee 3"

# run_case ID 'shell command' [per-rank log folder relative to WORK]
run_case() {
  local id=$1 cmd=$2 rdir=${3:-}
  local d=$OUT/$id
  rm -rf "$d" && mkdir -p "$d"
  [ -n "$rdir" ] && rm -rf "$WORK/$rdir"
  echo "== $id"
  ( cd "$WORK" && exec setsid bash -c "$cmd" > "$d/log.txt" 2>&1 ) &
  local sid=$! t=0   # setsid without fork: its pid is the session id of every process of the case
  while kill -0 $sid 2>/dev/null && [ $t -lt 240 ]; do sleep 1; t=$((t+1)); done
  # clean up: end anything left in the case's session, by pid
  for p in $(ps -eo pid=,sid= | awk -v s=$sid '$2 == s {print $1}'); do kill -9 "$p" 2>/dev/null; done
  wait $sid 2>/dev/null
  if [ -n "$rdir" ] && [ -d "$WORK/$rdir" ]; then cp -r "$WORK/$rdir" "$d/ranks"; fi
  find "$d" -type f -exec sed -i -e "s#$VENV#/opt/venv#g" -e "s#$WORK#/home/user/job#g" {} +
  echo "   $(wc -l < "$d/log.txt") lines, ${t}s"
}

want() { [ $# -eq 0 ] && return 0; for c in "${SEL[@]}"; do [ "$c" = "$1" ] && return 0; done; return 1; }
SEL=("$@")
sel() { [ ${#SEL[@]} -eq 0 ] || want "$1"; }

# ---- 1. torchrun --local-ranks-filter (torchtitan style): the failing rank's own output is filtered out
sel run44b-trfilter0-raise && run_case run44b-trfilter0-raise \
  "$TT --nproc_per_node=4 --local-ranks-filter 0 job.py --fault raise --fault-rank 2 --step 3"
sel run44b-trfilter0-raise-record && run_case run44b-trfilter0-raise-record \
  "$TT --nproc_per_node=3 --local-ranks-filter 0 job.py --record --fault raise --fault-rank 1 --step 3"
sel run44b-trfilter0-sigkill && run_case run44b-trfilter0-sigkill \
  "$TT --nproc_per_node=4 --local-ranks-filter 0 job.py --fault sigkill --fault-rank 3 --step 2"
sel run44b-trfilter01-hang && run_case run44b-trfilter01-hang \
  "$TT --nproc_per_node=4 --local-ranks-filter 0,1 job.py --fault hang --fault-rank 2 --step 3 --pg-timeout 15"
sel run44b-trfilter0-mismatch-detail && run_case run44b-trfilter0-mismatch-detail \
  "TORCH_DISTRIBUTED_DEBUG=DETAIL $TT --nproc_per_node=3 --local-ranks-filter 0 job.py --fault mismatch --fault-rank 2 --step 3"
sel run44b-trfilter01-mismatch && run_case run44b-trfilter01-mismatch \
  "$TT --nproc_per_node=4 --local-ranks-filter 0,1 job.py --fault mismatch --fault-rank 3 --step 2"
sel run44b-trfilter0-healthy && run_case run44b-trfilter0-healthy \
  "$TT --nproc_per_node=4 --local-ranks-filter 0 job.py"

# ---- 2. timestamps: a higher rank fails first (KeyError), the metrics rank fails seconds later (store timeout)
# rank fault-rank logs its KeyError, then lingers 8 s ("emergency checkpoint"); the metrics rank's store.get
# times out after 4 s and it exits first, so launchers report the metrics rank as the first failure.
sel run44b-torchrun-ts-cascade && run_case run44b-torchrun-ts-cascade \
  "$TT --nproc_per_node=4 job.py --fault cascade --fault-rank 2 --metrics-rank 1 --step 3 --linger 8"
# print()-style logging to stdout and a SIGTERM handler that exits cleanly.  Under torchrun (which runs python -u)
# and mpirun (pty per rank) stdout is not block-buffered, so the log stays in time order; under mp.spawn with
# PYTHONUNBUFFERED unset it is: the higher rank's earlier error reaches the log only when it is terminated, after
# the lower rank's later traceback.
sel run44b-torchrun-ts-cascade-print && run_case run44b-torchrun-ts-cascade-print \
  "env -u PYTHONUNBUFFERED $TR --nproc-per-node 4 --rdzv-backend c10d --rdzv-endpoint localhost:0 job.py --stream print --sigterm-exit --fault cascade --fault-rank 3 --metrics-rank 1 --step 3 --linger 8"
sel run44b-spawn-ts-cascade-buffered && run_case run44b-spawn-ts-cascade-buffered \
  "env -u PYTHONUNBUFFERED $PY spawn_job.py 4 29639 --stream print --sigterm-exit --fault cascade --fault-rank 3 --metrics-rank 1 --step 3 --linger 8"
sel run44b-spawn-ts-cascade && run_case run44b-spawn-ts-cascade \
  "$PY spawn_job.py 3 29631 --fault cascade --fault-rank 2 --metrics-rank 1 --step 3 --linger 8"
sel run44b-torchrun-glog-cascade && run_case run44b-torchrun-glog-cascade \
  "TORCH_CPP_LOG_LEVEL=INFO $TR --nproc-per-node 3 --rdzv-backend c10d --rdzv-endpoint localhost:0 job.py --fmt glog --fault cascade --fault-rank 2 --metrics-rank 0 --step 3 --linger 8"
sel run44b-mpirun-ts-cascade-print && run_case run44b-mpirun-ts-cascade-print \
  "env -u PYTHONUNBUFFERED $MPI -np 4 -x MASTER_ADDR=127.0.0.1 -x MASTER_PORT=29632 $PY job.py --stream print --sigterm-exit --fault cascade --fault-rank 3 --metrics-rank 1 --step 3 --linger 8"

# ---- 3. per-rank files whose alphabetical order is not the order of time
sel run44b-torchrun-logdir-cascade && run_case run44b-torchrun-logdir-cascade \
  "$TR --nproc-per-node 4 --rdzv-backend c10d --rdzv-endpoint localhost:0 --log-dir logs_tr --redirects 3 job.py --record --fault cascade --fault-rank 3 --metrics-rank 0 --step 3 --linger 8" logs_tr
sel run44b-spawn-hostpid-cascade && run_case run44b-spawn-hostpid-cascade \
  "$PY spawn_job.py 4 29633 --no-console --hostpid-dir logs_hp --fault cascade --fault-rank 2 --metrics-rank 1 --step 3 --linger 8" logs_hp
sel run44b-torchrun-hostpid-hang && run_case run44b-torchrun-hostpid-hang \
  "$TR --nproc-per-node 4 --rdzv-backend c10d --rdzv-endpoint localhost:0 job.py --no-console --hostpid-dir logs_hp2 --fault hang --fault-rank 3 --step 2 --pg-timeout 15" logs_hp2

# ---- 4. two groups of ranks whose clocks (TZ) disagree, as two differently set-up nodes
sel run44b-mpirun-tz-raise && run_case run44b-mpirun-tz-raise \
  "$MPI -np 2 -x MASTER_ADDR=127.0.0.1 -x MASTER_PORT=29634 -x TZ=UTC $PY job.py --fault raise --fault-rank 3 --step 3 : -np 2 -x MASTER_ADDR=127.0.0.1 -x MASTER_PORT=29634 -x TZ=Asia/Kolkata $PY job.py --fault raise --fault-rank 3 --step 3"
# two torchrun agents (static rendezvous, --node-rank): node 0 TZ=America/New_York (ranks 0,1), node 1 TZ=UTC (ranks 2,3)
T2="$TR --nnodes 2 --nproc-per-node 2 --master-addr 127.0.0.1 --master-port 29635"
J2="job.py --fault cascade --fault-rank 2 --metrics-rank 1 --step 3 --linger 8"
sel run44b-torchrun2node-tz-cascade && run_case run44b-torchrun2node-tz-cascade \
  "TZ=America/New_York $T2 --node-rank 0 $J2 & TZ=UTC $T2 --node-rank 1 $J2 & wait"
sel run44b-mpirun-tz-sigkill && run_case run44b-mpirun-tz-sigkill \
  "$MPI -np 2 -x MASTER_ADDR=127.0.0.1 -x MASTER_PORT=29636 -x TZ=UTC $PY job.py --fault sigkill --fault-rank 1 --step 3 : -np 2 -x MASTER_ADDR=127.0.0.1 -x MASTER_PORT=29636 -x TZ=America/New_York $PY job.py --fault sigkill --fault-rank 1 --step 3"
sel run44b-mpirun-tz-healthy && run_case run44b-mpirun-tz-healthy \
  "$MPI -np 2 -x MASTER_ADDR=127.0.0.1 -x MASTER_PORT=29637 -x TZ=UTC $PY job.py : -np 2 -x MASTER_ADDR=127.0.0.1 -x MASTER_PORT=29637 -x TZ=Asia/Kolkata $PY job.py"

# ---- healthy spawn run with timestamps
sel run44b-spawn-healthy && run_case run44b-spawn-healthy "$PY spawn_job.py 3 29638"
exit 0
