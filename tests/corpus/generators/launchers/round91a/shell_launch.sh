#!/bin/bash
# Shell-loop launcher: shell_launch.sh NPROCS PORT <train args>
# Starts NPROCS `python ranklog_train.py` processes with env rendezvous (two "nodes" of NPROCS/2 ranks each,
# NODE_RANK set accordingly), then waits for each and reports its exit status.
N=$1; PORT=$2; shift 2
HERE=$(cd "$(dirname "$0")" && pwd)
PY=${PYTHON:-python}
LW=$(( (N + 1) / 2 ))
pids=()
for ((r = 0; r < N; r++)); do
  RANK=$r LOCAL_RANK=$((r % LW)) NODE_RANK=$((r / LW)) WORLD_SIZE=$N LOCAL_WORLD_SIZE=$LW \
  MASTER_ADDR=127.0.0.1 MASTER_PORT=$PORT "$PY" "$HERE/ranklog_train.py" "$@" &
  pids+=($!)
  echo "[launch] started rank $r pid ${pids[$r]}"
done
status=0
for ((r = 0; r < N; r++)); do
  wait "${pids[$r]}"; rc=$?
  echo "[launch] rank $r (pid ${pids[$r]}) exited with code $rc"
  [ $rc -ne 0 ] && status=1
done
echo "[launch] done, status $status"
exit $status
