#!/bin/bash
# launch.sh LAUNCHER LAYOUT RUNDIR PORT : start every "node" of one job (each via node.sh = own hostname).
#   LAUNCHER: tr2 (torchrun static rdzv, 2 nodes x 2 procs), tr3 (torchrun static, 3 nodes x 1 proc),
#             trc3 (torchrun c10d rdzv at node-a, 3 nodes x 1 proc), mpi (mpirun MPMD, node-a x2 + node-b x2),
#             sh (plain shell loop, node-a x2 + node-b x2; RANK set by the loop)
#   LAYOUT:   one   -> every node's console goes to this script's stdout (one interleaved log)
#             files -> node-a's console to stdout, every other node's console to RUNDIR/nodes/<host>.log
#             logdir-> like files, plus torchrun --log-dir RUNDIR/tlogs/<host> --tee 3 on every node
# Fault selection is passed through the environment (FAULT, FAULT_RANK, ...; see r48b_job.py).
L=$1; LAYOUT=$2; R=$3; PORT=$4
D="$(cd "$(dirname "$0")" && pwd)"; V=${V:-/work/helpers/venv48b}
JOB="$D/r48b_job.py"
mkdir -p "$R/nodes"; cd "$R"
out() { if [ "$LAYOUT" = one ] || [ "$1" = node-a ]; then cat; else cat > "$R/nodes/$1.log"; fi; }
pids=()
tr() { # tr NNODES NPROC RDZV
  local hosts=(node-a node-b node-c) i
  for ((i=0;i<$1;i++)); do
    h=${hosts[$i]}; extra=()
    [ "$LAYOUT" = logdir ] && extra=(--log-dir "$R/tlogs/$h" --tee 3)
    if [ "$3" = c10d ]; then rd=(--rdzv-backend c10d --rdzv-endpoint node-a:$PORT --rdzv-id job48b)
    else rd=(--node-rank $i --master-addr 127.0.0.1 --master-port $PORT); fi
    "$D/node.sh" $h "$V/bin/torchrun" --nnodes $1 --nproc-per-node $2 "${rd[@]}" "${extra[@]}" "$JOB" 2>&1 | out $h &
    pids+=($!)
  done
}
case $L in
  tr2) tr 2 2 static ;;
  tr3) tr 3 1 static ;;
  trc3) tr 3 1 c10d ;;
  mpi) export MASTER_PORT=$PORT
       # one mpirun, two "nodes": ranks 0-1 run under hostname node-a, ranks 2-3 under node-b
       mpirun --allow-run-as-root --oversubscribe -np 2 "$D/node.sh" node-a "$V/bin/python" "$JOB" \
              : -np 2 "$D/node.sh" node-b "$V/bin/python" "$JOB" 2>&1 | out node-a ;;
  sh)  export MASTER_PORT=$PORT WORLD_SIZE=4
       # a plain shell launcher: two ranks per node, each node reports its own workers' exit status
       for n in 0 1; do
         h=$([ $n = 0 ] && echo node-a || echo node-b)
         "$D/node.sh" $h bash -c '
           for lr in 0 1; do RANK=$(( $1 * 2 + lr )) LOCAL_RANK=$lr "$2" "$3" & p[$lr]=$!; done
           for lr in 0 1; do wait ${p[$lr]}; rc=$?; echo "$(hostname): worker pid ${p[$lr]} exited with status $rc"; done' \
           _ $n "$V/bin/python" "$JOB" 2>&1 | out $h &
         pids+=($!)
       done ;;
esac
rc=0; for p in "${pids[@]}"; do wait $p || rc=1; done; exit $rc
