#!/bin/bash
# Start the same command as two "nodes" on this host: NODE_RANK=0 and NODE_RANK=1 share one stdout
# (like a job whose nodes' outputs are collected into one file). Args: the command; "@NODE@" is replaced
# by the node rank (for launchers that take --machine_rank/--node-rank). Waits for both; exit code = max.
# Like a batch scheduler, it reports each node's exit status (and the signal, if one ended it).
export MASTER_ADDR=${MASTER_ADDR:-127.0.0.1}
args0=("${@//@NODE@/0}"); args1=("${@//@NODE@/1}")
NODE_RANK=0 "${args0[@]}" & p0=$!
sleep 0.5
NODE_RANK=1 "${args1[@]}" & p1=$!
report() {  # node pid rc
  if (( $3 > 128 && $3 <= 192 )); then  # 129..192: ended by signal $3-128
    echo "[two_nodes] node $1 (pid $2) terminated by signal $(( $3 - 128 )) ($(kill -l $(( $3 - 128 ))))" >&2
  else
    echo "[two_nodes] node $1 (pid $2) exited with status $3" >&2
  fi
}
wait $p0; r0=$?; wait $p1; r1=$?
report 0 $p0 $r0; report 1 $p1 $r1
exit $(( r0 > r1 ? r0 : r1 ))
