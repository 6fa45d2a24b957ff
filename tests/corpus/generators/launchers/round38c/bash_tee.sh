#!/bin/bash
# Homegrown launcher: starts NPROC ranks in the background, prefixes every line with "[N] " via sed,
# and tees all ranks into one file train.log (also shown on the console); each rank's subshell
# reports the python exit status (PIPESTATUS[0]). Waits for all ranks.
# usage: bash_tee.sh NPROC   (fault selected by FAULT/FAIL_RANK/... env, see train38c.py)
NPROC=$1
export MASTER_ADDR=127.0.0.1 MASTER_PORT=${PORT:-29538} WORLD_SIZE=$NPROC
: > train.log
for ((r = 0; r < NPROC; r++)); do
  (
    RANK=$r python -u train38c.py 2>&1 | sed -u "s/^/[$r] /" | tee -a train.log
    echo "[$r] exit status ${PIPESTATUS[0]}" | tee -a train.log
  ) &
done
wait
echo "all ranks exited" | tee -a train.log
