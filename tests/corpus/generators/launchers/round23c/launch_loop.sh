#!/bin/bash
# Plain shell launcher: start N copies of train23c.py with RANK/WORLD_SIZE set, merge their output with
# "[worker R] " prefixes (sed), report each worker's exit status, exit non-zero if any worker failed.
# usage: launch_loop.sh N [train args...]   (MASTER_ADDR/MASTER_PORT from the environment)
N=$1; shift
set -o pipefail   # a pipeline's status is the worker's, not sed's
export MASTER_ADDR=${MASTER_ADDR:-127.0.0.1} WORLD_SIZE=$N
echo "launching $N workers on $(hostname -s), master ${MASTER_ADDR}:${MASTER_PORT}"
pids=()
for ((r = 0; r < N; r++)); do
  ( RANK=$r python train23c.py "$@"; s=$?; echo "exited with status $s"; exit $s ) 2>&1 | sed -u "s/^/[worker $r] /" &
  pids+=($!)
done
rc=0
for p in "${pids[@]}"; do wait "$p" || rc=1; done
echo "all workers exited"
exit $rc
