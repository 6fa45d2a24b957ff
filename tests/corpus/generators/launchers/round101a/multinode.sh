#!/bin/bash
# Starts NNODES torchrun agents on localhost, each acting as one node (2 processes per node, c10d rendezvous),
# each with its own --log-dir OUT/node<k> and --redirects 3 (plus extra torchrun flags, e.g. --tee 3 or
# --role trainer).  Each agent's console goes to OUT/node<k>.console.log.  Fault env vars (FAULT, FAULT_RANK,
# FAULT_STEP, ...) are passed through to train.py.
# usage: multinode.sh OUT NNODES [extra torchrun flags...]
HERE=$(cd "$(dirname "$0")" && pwd)
PY=${PY:-python}
TRAIN=${TRAIN:-$HERE/train.py}
OUT=$1; NN=$2; shift 2
mkdir -p "$OUT"
PORT=$($PY -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])')
pids=()
for ((k = 0; k < NN; k++)); do
  $PY -m torch.distributed.run --nnodes "$NN" --nproc-per-node 2 --rdzv-backend c10d \
    --rdzv-endpoint "localhost:$PORT" --rdzv-id "job${PORT}" --max-restarts 0 \
    --log-dir "$OUT/node$k" --redirects 3 "$@" "$TRAIN" > "$OUT/node$k.console.log" 2>&1 &
  pids+=($!)
  sleep 1
done
for ((k = 0; k < NN; k++)); do
  wait "${pids[$k]}"; echo "node$k agent exit $?" >> "$OUT/exits.txt"
done
