#!/usr/bin/env bash
# Round 19a: a plain shell launcher (env:// rendezvous): starts N ranks of train19.py on this host and waits.
# usage: launch_ranks.sh N PORT [train19 args...]
# Per-rank environment overrides (as a site's wrapper would set them) come from RANK_ENV_<r>, e.g.
# RANK_ENV_3="WORLD_SIZE=5"; they are applied after the defaults.
set -u
N=$1; PORT=$2; shift 2
pids=()
for ((r = 0; r < N; r++)); do
  v="RANK_ENV_$r"
  env MASTER_ADDR=127.0.0.1 MASTER_PORT="$PORT" RANK=$r LOCAL_RANK=$r WORLD_SIZE="$N" ${!v:-} \
    python train19.py "$@" &
  pids+=($!)
  echo "launch_ranks: started rank $r (pid $!)"
done
declare -A rank_of
for ((r = 0; r < N; r++)); do rank_of[${pids[$r]}]=$r; done
rc=0
for ((i = 0; i < N; i++)); do
  wait -n -p done_pid; s=$?
  echo "launch_ranks: rank ${rank_of[$done_pid]} (pid $done_pid) exited with status $s"
  [ $s -ne 0 ] && rc=1
done
exit $rc
