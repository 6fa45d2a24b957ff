#!/bin/bash
# Plain launcher: one `python` per rank from a shell loop, env:// rendezvous, all output to this
# script's stdout/stderr (no per-rank prefix).  RANKS / WORLDS let the loop itself hand one
# process a wrong RANK or WORLD_SIZE (a launcher-side set-up mistake).
# usage: shell_loop.sh NPROC PORT [setup_faults.py args...]
N=$1; PORT=$2; shift 2
HERE=$(cd "$(dirname "$0")" && pwd)
PY=${PY:-python}
RANKS=${RANKS:-$(seq -s' ' 0 $((N-1)))}
read -ra RA <<<"$RANKS"
read -ra WA <<<"${WORLDS:-}"
pids=()
for i in $(seq 0 $((N-1))); do
  RANK=${RA[$i]} WORLD_SIZE=${WA[$i]:-$N} MASTER_ADDR=127.0.0.1 MASTER_PORT=$PORT \
    "$PY" "$HERE/setup_faults.py" "$@" &
  pids+=($!)
done
rc=0
for p in "${pids[@]}"; do wait "$p" || rc=$?; done
exit $rc
