#!/usr/bin/env bash
# Two torchrun agents on localhost acting as two nodes (static rendezvous on one master addr/port, --node-rank
# 0 and 1, 2 workers each); both agents run in the background and append their output to the SAME log file.
# usage: two_agents.sh LOG PORT script args...     exit status: the larger of the two agents' statuses
log=$1 port=$2; shift 2
: > "$log"
pids=()
for nr in 0 1; do
  torchrun --nnodes 2 --node-rank $nr --nproc-per-node 2 --master-addr 127.0.0.1 --master-port "$port" \
    --tee 3 "$@" >> "$log" 2>&1 &
  pids+=($!)
done
rc=0
for p in "${pids[@]}"; do wait "$p"; r=$?; echo "agent pid $p exit $r"; [ $r -gt $rc ] && rc=$r; done
exit $rc
