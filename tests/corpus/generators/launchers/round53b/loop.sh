#!/bin/bash
# Shell-loop launcher: 4 ranks of pp.py in the background, each rank's output prefixed by sed.
cd "$(dirname "$0")"
export MASTER_ADDR=127.0.0.1 MASTER_PORT=${MASTER_PORT:-29540} WORLD_SIZE=${WORLD_SIZE:-4}
pids=()
for r in $(seq 0 $((WORLD_SIZE-1))); do
  ( set -o pipefail; RANK=$r python pp.py 2>&1 | sed -u "s/^/[rank$r] /" ) &
  pids+=($!)
done
rc=0
for r in $(seq 0 $((WORLD_SIZE-1))); do
  wait ${pids[$r]}; s=$?
  if [ $s -gt 128 ]; then echo "launcher: rank $r exited with status $s (killed by SIG$(kill -l $((s-128))))"
  else echo "launcher: rank $r exited with status $s"; fi
  [ $s -ne 0 ] && rc=1
done
exit $rc
