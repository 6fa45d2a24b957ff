#!/bin/bash
# Plain shell-loop launcher: starts 4 ranks of train.py in the background; the culprit rank
# ($CULPRIT) is started through $WRAP (a command prefix evaluated in a subshell, e.g. "ulimit -t 8;").
cd "$(dirname "$0")"
export MASTER_ADDR=127.0.0.1 MASTER_PORT=${MASTER_PORT:-29653} WORLD_SIZE=4
PY=${PY:-python}
pids=()
for r in 0 1 2 3; do
  if [ "$r" = "${CULPRIT:-2}" ] && [ -n "$WRAP" ]; then
    ( export RANK=$r; eval "$WRAP $PY train.py" ) &
  else
    RANK=$r $PY train.py &
  fi
  pids+=($!)
done
rc=0
for r in 0 1 2 3; do
  wait ${pids[$r]}; s=$?
  if [ $s -gt 128 ]; then echo "rank $r (pid ${pids[$r]}) was killed by signal $((s-128)) (SIG$(kill -l $((s-128))))"
  else echo "rank $r exited with status $s"; fi
  [ $s -ne 0 ] && rc=1
done
exit $rc
