#!/bin/bash
# Plain shell launcher: start N copies of train24b.py with RANK/WORLD_SIZE/MASTER_* in the environment, prefix each
# worker's output with "[rank R] " (sed), print each worker's exit status, exit 1 if any worker failed.
# usage: launch24b.sh N [train args...]
N=$1; shift
set -o pipefail
export MASTER_ADDR=${MASTER_ADDR:-127.0.0.1} WORLD_SIZE=$N
echo "$(date '+%F %T') starting $N ranks, master ${MASTER_ADDR}:${MASTER_PORT}"
pids=()
for ((r = 0; r < N; r++)); do
  ( RANK=$r LOCAL_RANK=$r python train24b.py "$@"; s=$?; echo "exit status $s"; exit $s ) 2>&1 | sed -u "s/^/[rank $r] /" &
  pids+=($!)
done
rc=0
for p in "${pids[@]}"; do wait "$p" || rc=1; done
echo "$(date '+%F %T') all ranks exited (rc=$rc)"
exit $rc
