#!/bin/bash
# Homegrown launcher: starts NPROC ranks in the background with '&', each writing logs/rank$N.log,
# then 'wait's for each pid and reports its exit code (and the signal, if any).
# usage: bash_bg.sh NPROC   (fault selected by FAULT/FAIL_RANK/... env, see train38c.py)
NPROC=$1
export MASTER_ADDR=127.0.0.1 MASTER_PORT=${PORT:-29538} WORLD_SIZE=$NPROC
mkdir -p logs
pids=()
for ((r = 0; r < NPROC; r++)); do
  RANK=$r python -u train38c.py > "logs/rank$r.log" 2>&1 &
  pids+=($!)
  echo "[launch] started rank $r pid ${pids[$r]} -> logs/rank$r.log"
done
fail=0
for ((r = 0; r < NPROC; r++)); do
  wait "${pids[$r]}"; rc=$?
  if ((rc > 128)); then
    echo "[launch] rank $r (pid ${pids[$r]}) terminated by signal $(kill -l $((rc - 128))) (exit $rc)"
  else
    echo "[launch] rank $r (pid ${pids[$r]}) exited with code $rc"
  fi
  ((rc != 0)) && fail=1
done
if ((fail)); then echo "[launch] job FAILED, see logs/rank*.log"; exit 1; fi
echo "[launch] all $NPROC ranks finished OK"
