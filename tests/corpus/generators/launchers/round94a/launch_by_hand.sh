#!/usr/bin/env bash
# Hand-rolled launcher: starts WORLD copies of train.py with RANK/WORLD_SIZE/MASTER_ADDR/MASTER_PORT set,
# as people do from a job script without torchrun. Rank 0 hosts the TCPStore (env:// rendezvous).
# Every rank's stdout+stderr (and bash's own report if the rank dies on a signal) goes through
# `sed -u "s/^/[rank$RANK] /"` (or awk with PREFIX=awk) into the one shared stream this script writes to
# (the caller's log.txt). No watchdog: the script just waits for every rank.
# usage: [PREFIX=awk] launch_by_hand.sh WORLD PORT [train.py args...]
WORLD=$1; PORT=$2; shift 2
export MASTER_ADDR=127.0.0.1 MASTER_PORT=$PORT WORLD_SIZE=$WORLD
echo "launching $WORLD ranks, master $MASTER_ADDR:$MASTER_PORT"
for ((RANK = 0; RANK < WORLD; RANK++)); do
  (
    export RANK LOCAL_RANK=$RANK
    python train.py "$@"
    echo "exit code $?"
  ) 2>&1 | if [ "${PREFIX:-sed}" = awk ]; then
    awk -v r="$RANK" '{ print "[rank" r "] " $0; fflush() }'
  else
    sed -u "s/^/[rank$RANK] /"
  fi &
done
wait
echo "all ranks finished"
