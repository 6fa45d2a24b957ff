#!/bin/bash
# Starts a 4-rank job as two torchrun agents ("nodes" of 2) on this host and waits for both.
#   two_nodes.sh OUTDIR
# Environment:
#   MASTER_PORT   port of the rendezvous
#   RDZV          static (default: --master-addr/--master-port/--node-rank, node 0's agent hosts the TCPStore)
#                 | c10d (--rdzv-backend c10d --rdzv-endpoint 127.0.0.1:PORT; node ranks follow the order of the
#                 agents' pids, so the first agent started becomes group rank 0)
#   NAME0 NAME1   console file names of the agent started first / second (node0.log node1.log)
#   TZ0 TZ1       time zone of each agent (and so of its workers' asctime and of torch's own glog-style lines)
#   LOGDIR        if set: each agent gets --log-dir $LOGDIR/<name without .log> (per-rank stdout/stderr files)
#   TEE           with LOGDIR: --tee value (the console then shows the workers' output too); else --redirects 3
#   MI            --monitor-interval of both agents (torchrun's default 0.1)
#   ENV0 ENV1     extra "K=V K=V" environment for the first / second agent (e.g. FAULTS only on one node)
out=$1; mkdir -p "$out"
N0=${NAME0:-node0.log}; N1=${NAME1:-node1.log}
common="--nnodes 2 --nproc-per-node 2 --monitor-interval ${MI:-0.1}"
if [ "${RDZV:-static}" = c10d ]; then
  rdzv="--rdzv-backend c10d --rdzv-endpoint 127.0.0.1:$MASTER_PORT --rdzv-id job59"
else
  rdzv="--master-addr 127.0.0.1 --master-port $MASTER_PORT"
fi
agent() {   # agent NODE_RANK FILE TZ EXTRAENV
  local ld=""
  if [ -n "$LOGDIR" ]; then   # --redirects 3: the ranks' output goes to the files only; --tee 3: files and console
    ld="--log-dir $LOGDIR/${2%.log}"; [ -n "$TEE" ] && ld="$ld --tee $TEE" || ld="$ld --redirects 3"
  fi
  env TZ="$3" $4 torchrun $common $rdzv --node-rank "$1" $ld job.py > "$out/$2" 2>&1
}
agent 0 "$N0" "${TZ0:-UTC}" "$ENV0" &
p0=$!
sleep 0.7
agent 1 "$N1" "${TZ1:-UTC}" "$ENV1" &
p1=$!
wait $p0; r0=$?
wait $p1; r1=$?
echo "agent exit codes: $r0 $r1" >&2
exit $(( r0 | r1 ))
