#!/usr/bin/env bash
# A plain shell-loop launcher: starts N ranks in the background, prefixes each rank's output with
# "[rank N] " via sed, waits for all and reports each rank's exit status.
# Usage: shell_launch.sh N python prog.py args...   (MASTER_ADDR/MASTER_PORT from the env)
N="$1"; shift
export MASTER_ADDR="${MASTER_ADDR:-127.0.0.1}" WORLD_SIZE="$N" OMP_NUM_THREADS=1
pids=()
for r in $(seq 0 $((N - 1))); do
  RANK=$r LOCAL_RANK=$r "$@" > >(sed -u "s/^/[rank $r] /") 2>&1 &
  pids+=($!)
done
echo "launched $N ranks: pids ${pids[*]}"
rc=0
for r in $(seq 0 $((N - 1))); do
  wait "${pids[$r]}"; s=$?
  echo "rank $r (pid ${pids[$r]}) exited with status $s"
  [ "$s" -ne 0 ] && rc=1
done
sleep 0.5  # let the sed prefixers drain
exit $rc
