#!/bin/bash
# Plain shell-loop launcher: starts NPROCS (default 4) ranks of job.py in the background; every line of a
# rank's stdout+stderr gets a "[rankN] " prefix from `sed -u`, all on the loop's console. Waits for all.
cd "$(dirname "$0")"
N=${NPROCS:-4}
export MASTER_ADDR=127.0.0.1 MASTER_PORT=${MASTER_PORT:-29894} WORLD_SIZE=$N
pids=()
for ((r=0; r<N; r++)); do
  ( RANK=$r LOCAL_RANK=$r ${PY:-python} job.py 2>&1 | sed -u "s/^/[rank$r] /"; exit ${PIPESTATUS[0]} ) &
  pids+=($!)
done
echo "launched $N ranks: ${pids[*]}"
rc=0
for ((r=0; r<N; r++)); do
  wait ${pids[$r]}; s=$?
  echo "rank $r exited with status $s"; [ $s -ne 0 ] && rc=1
done
exit $rc
