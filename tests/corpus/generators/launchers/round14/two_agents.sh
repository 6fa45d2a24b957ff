#!/usr/bin/env bash
# Two torchrun agents on localhost acting as two nodes (--nnodes 2 --node-rank 0/1 --nproc-per-node 2, c10d
# rendezvous on 127.0.0.1:PORT); both agents run in the background and append their output to the SAME log file.
# MODE: "tee"          both agents --tee 3 (worker lines prefixed [defaultN]:)
#       "logdir:DIR"   agent 0 --tee 3; agent 1 --redirects 3 --log-dir DIR (its workers' output goes to files only)
# usage: two_agents.sh LOG PORT MODE script args...     exit status: the larger of the two agents' statuses
log=$1 port=$2 mode=$3; shift 3
: > "$log"
pids=()
for nr in 0 1; do
  extra=(--tee 3)
  if [ "$nr" = 1 ] && [ "${mode#logdir:}" != "$mode" ]; then extra=(--redirects 3 --log-dir "${mode#logdir:}"); fi
  torchrun --nnodes 2 --node-rank $nr --nproc-per-node 2 --rdzv-backend c10d --rdzv-endpoint 127.0.0.1:$port \
    --rdzv-id r14job "${extra[@]}" "$@" >> "$log" 2>&1 &
  pids+=($!)
  sleep 1
done
rc=0
for p in "${pids[@]}"; do wait "$p"; r=$?; echo "agent pid $p exit $r"; [ $r -gt $rc ] && rc=$r; done
exit $rc
