#!/bin/bash
# Plain bash launcher: starts N workers on this host, each with RANK/WORLD_SIZE/MASTER_* in its env, and
# prefixes every output line with "<rank>: " (as `srun --label` does). One rank gets a wrong MASTER_PORT
# (a stale per-node env file).
# Usage: launch_label.sh <nprocs> <master_port> <bad_rank> <bad_port> <python> <script> [args...]
n=$1 port=$2 bad=$3 badport=$4; shift 4
export MASTER_ADDR=127.0.0.1 WORLD_SIZE=$n
for ((r = 0; r < n; r++)); do
  p=$port; [ "$r" -eq "$bad" ] && p=$badport
  RANK=$r LOCAL_RANK=$r MASTER_PORT=$p "$@" 2>&1 | sed -u "s/^/$r: /" &
done
wait
