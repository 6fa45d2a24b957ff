#!/bin/bash
# Start ONE torchrun agent for "node" $1 (node-a|node-1 -> node rank 0, node-b|node-2 -> node rank 1) running
# job.py scenario $2. The cluster shell tool (pdsh/clush/parallel) runs this once per node name; this host
# plays every node. Env: PORT (master / rendezvous port), RDZV=static|c10d,
# WRONG_PORT_NODE=<node> (that node uses PORT+7), WRONG_NNODES_NODE=<node> (that node says --nnodes 3).
host="$1"; scen="$2"
case "$host" in node-a|node-1) nr=0 ;; node-b|node-2) nr=1 ;; *) echo "unknown node $host" >&2; exit 2 ;; esac
port="${PORT:-29532}"; nnodes=2
[ "$host" = "${WRONG_PORT_NODE:-}" ] && port=$((port + 7))
[ "$host" = "${WRONG_NNODES_NODE:-}" ] && nnodes=3
if [ "${RDZV:-static}" = c10d ]; then
  rdzv=(--rdzv-backend c10d --rdzv-endpoint "127.0.0.1:$port" --rdzv-id job32a --rdzv-conf join_timeout=40)
else
  rdzv=(--master-addr 127.0.0.1 --master-port "$port" --node-rank "$nr" --rdzv-conf timeout=40)
fi
export NODE_NAME="$host"
exec "$VENV/bin/torchrun" --nnodes "$nnodes" --nproc-per-node 2 "${rdzv[@]}" job.py "$scen"
