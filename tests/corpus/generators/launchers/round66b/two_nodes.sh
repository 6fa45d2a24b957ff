#!/bin/bash
# Starts the 4-rank clockjob.py as two torchrun agents ("nodes" of 2) on this host, each agent (and so its
# workers) in its own time zone, and waits for both.
#   two_nodes.sh OUTDIR
# Environment:
#   MASTER_PORT   rendezvous port
#   RDZV          static (default: --master-addr/--master-port --node-rank 0/1; node 0's agent hosts the store)
#                 | c10d (--rdzv-backend c10d --rdzv-endpoint 127.0.0.1:PORT --rdzv-id; group ranks are given out
#                 by the rendezvous; the job's first line per rank says which node/global rank it got)
#   TZ0 TZ1       TZ of the agent started first / second
#   NAME0 NAME1   console file of each agent (node0.log node1.log); LAYOUT=one: both agents append to OUTDIR/all.log
#   ENV0 ENV1     extra "K=V ..." environment of the first / second agent
out=$1; mkdir -p "$out"
common="--nnodes 2 --nproc-per-node 2"
if [ "${RDZV:-static}" = c10d ]; then
  rdzv="--rdzv-backend c10d --rdzv-endpoint 127.0.0.1:$MASTER_PORT --rdzv-id clock66"
else
  rdzv="--master-addr 127.0.0.1 --master-port $MASTER_PORT"
fi
agent() {   # agent NODE_RANK FILE TZ EXTRAENV
  local nr=""; [ "${RDZV:-static}" = c10d ] || nr="--node-rank $1"
  env TZ="$3" $4 torchrun $common $rdzv $nr clockjob.py >> "$out/$2" 2>&1
}
if [ "$LAYOUT" = one ]; then f0=all.log; f1=all.log; else f0=${NAME0:-node0.log}; f1=${NAME1:-node1.log}; fi
agent 0 "$f0" "${TZ0:-UTC}" "$ENV0" &
p0=$!
sleep 0.7
agent 1 "$f1" "${TZ1:-UTC}" "$ENV1" &
p1=$!
wait $p0; r0=$?
wait $p1; r1=$?
echo "agent exit codes: $r0 $r1" >&2
exit $(( r0 | r1 ))
