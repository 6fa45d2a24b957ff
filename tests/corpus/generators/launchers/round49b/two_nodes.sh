#!/usr/bin/env bash
# Two torchrun agents on this host acting as two "nodes"; both agents' output goes to this script's stdout/stderr.
# usage: two_nodes.sh c10d|static PORT NPROC LOGDIR|- job.py args...
#   c10d:   --rdzv-backend c10d (node rank = order of joining: node 0 starts 2 s before node 1)
#   static: --rdzv-backend static with --node-rank 0/1 (the default torchrun backend with --master-addr/port)
#   LOGDIR: per-node --log-dir trees LOGDIR/node0 and LOGDIR/node1 (- for none)
rdzv=$1 port=$2 nproc=$3 logdir=$4; shift 4
agent() {
  local nr=$1; shift
  local ld=(); [ "$logdir" != "-" ] && ld=(--log-dir "$logdir/node$nr")
  if [ "$rdzv" = c10d ]; then
    torchrun --nnodes 2 --node-rank "$nr" --nproc-per-node "$nproc" --rdzv-backend c10d \
      --rdzv-endpoint "localhost:$port" --rdzv-id "job$port" --tee 3 "${ld[@]}" "$@"
  else
    torchrun --nnodes 2 --node-rank "$nr" --nproc-per-node "$nproc" --master-addr localhost \
      --master-port "$port" --tee 3 "${ld[@]}" "$@"
  fi
}
agent 0 "$@" & a0=$!
sleep 2
agent 1 "$@" & a1=$!
wait $a0; r0=$?
wait $a1; r1=$?
exit $(( r0 > r1 ? r0 : r1 ))
