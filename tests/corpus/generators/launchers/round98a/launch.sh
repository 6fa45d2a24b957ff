#!/bin/bash
# Shell-loop launcher: starts WORLD copies of train.py in the background with RANK set, then waits for each.
# usage: launch.sh WORLD [train.py flags...]
# If RANK_OUT is set (e.g. RANK_OUT=shared.log), each rank's stdout+stderr is appended (>>) to that file
# by its own redirection; otherwise ranks inherit this script's stdout/stderr.
HERE=$(cd "$(dirname "$0")" && pwd)
PY=${PY:-python}
WORLD=$1; shift
export MASTER_ADDR=127.0.0.1 WORLD_SIZE=$WORLD
export MASTER_PORT=${MASTER_PORT:-$($PY -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])')}
echo "[launch] starting $WORLD ranks, master $MASTER_ADDR:$MASTER_PORT"
pids=()
for ((r = 0; r < WORLD; r++)); do
  if [ -n "$RANK_OUT" ]; then
    RANK=$r LOCAL_RANK=$r $PY "$HERE/train.py" --world "$WORLD" "$@" >> "$RANK_OUT" 2>&1 &
  else
    RANK=$r LOCAL_RANK=$r $PY "$HERE/train.py" --world "$WORLD" "$@" &
  fi
  pids+=($!)
done
status=0
for ((r = 0; r < WORLD; r++)); do
  wait "${pids[$r]}"; rc=$?
  echo "[launch] rank $r (pid ${pids[$r]}) exited with status $rc"
  [ $rc -ne 0 ] && status=1
done
exit $status
