#!/usr/bin/env bash
# NNODES mp.spawn "nodes" on this host (one python parent each, started together), output interleaved.
# Each parent spawns NPROCS children; a child's global rank = node_rank*NPROCS + i (i = mp.spawn's index).
# usage: spawn_nodes.sh NNODES NPROCS PORT job.py args...
nn=$1 np=$2 port=$3; shift 3
pids=()
for nr in $(seq 0 $((nn - 1))); do
  MASTER_ADDR=127.0.0.1 MASTER_PORT=$port python -u "$@" --rank-src spawn --nnodes "$nn" --nprocs "$np" --node-rank "$nr" &
  pids+=($!)
done
rc=0; for p in "${pids[@]}"; do wait "$p" || rc=$?; done
exit $rc
