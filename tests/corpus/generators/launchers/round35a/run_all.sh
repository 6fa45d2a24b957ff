#!/bin/bash
# Reproduce every round-35a case: "multi-node" torchrun on one host. Two or three torchrun agents are started at
# once, each playing a node (NODE_NAME=node-a/-b/-c, only used in train.py's log prefix); all agents append their
# stdout+stderr to ONE log.txt (some cases also keep per-agent copies in nodes/<node>.log via tee).
# Faults are in the rendezvous / store / agents (wrong --nnodes / --rdzv-id / endpoint, late or missing node,
# port already taken, store-host agent SIGKILLed, agent SIGTERMed, restarts) plus a few worker-side ones (train.py).
# CPU, gloo, tiny DDP model. c10d rendezvous: node-a gets is_host=1 (it hosts the store), the others is_host=0.
# Usage: run_all.sh [case-id ...]   OUT defaults to /work/helpers/stage35, VENV to /work/helpers/venv35a.
set -u
export HERE="$(cd "$(dirname "$0")" && pwd)"
export VENV="${VENV:-/work/helpers/venv35a}"
export OUT="${OUT:-/work/helpers/stage35}"
export META="${META:-/work/helpers/stage35a.meta}"   # commands + exit codes per case (kept out of case folders)
export WROOT="${WROOT:-/tmp/w35a}"                   # job dirs, rewritten to /home/user/job in log.txt

ORDER="run35a-c10d-healthy-info run35a-c10d-3nodes-healthy-info run35a-static-healthy-info
 run35a-c10d-nproc-mismatch run35a-c10d-nnodes-mismatch run35a-static-nnodes-mismatch run35a-c10d-rdzv-id-mismatch
 run35a-c10d-late-join run35a-c10d-node-never-joins run35a-c10d-eaddrinuse run35a-static-eaddrinuse
 run35a-c10d-endpoint-unresolvable run35a-static-master-addr-unresolvable run35a-c10d-endpoint-wrong-port
 run35a-c10d-store-host-sigkill run35a-static-store-host-sigkill run35a-c10d-restart-kill-once
 run35a-c10d-restart-fail run35a-c10d-agent-sigterm run35a-static-store-host-sigterm
 run35a-c10d-late-rank-pg-timeout run35a-static-late-rank-pg-timeout run35a-c10d-hang
 run35a-static-nnodes-mismatch-exit-hang"

one() {
  local id="${1:-}" i=0 P; [ -n "$id" ] || return 0
  for x in $ORDER; do [ "$x" = "$id" ] && P=$((29700 + 10 * i)); i=$((i + 1)); done   # fixed ports per case
  local W="$WROOT/$id/job" D="$OUT/$id"
  rm -rf "$W" "$D"; mkdir -p "$W/marks" "$D"; cp "$HERE/train.py" "$W/"
  local L="$D/log.txt" T="$VENV/bin/torchrun" NODES="" TMO=150
  local -A PID=()
  : > "$L"
  # c10d rendezvous args for node $1 (is_host=1 for node-a), join timeout $2
  c10d() { echo "--rdzv-backend c10d --rdzv-endpoint 127.0.0.1:$P --rdzv-id job35 --rdzv-conf join_timeout=$2,is_host=$([ "$1" = node-a ] && echo 1 || echo 0)"; }
  static() { echo "--master-addr 127.0.0.1 --master-port $P --node-rank $1"; }
  # start NODE CMD...: one agent in the background (cwd = job dir), output appended to log.txt (+ nodes/NODE.log)
  start() {
    local n="$1"; shift
    echo "[$n] $*" | sed -e "s#$VENV#/opt/venv#g" >> "$META.cmds"
    if [ -n "$NODES" ]; then
      mkdir -p "$D/nodes"
      ( cd "$W" && exec env NODE_NAME="$n" MARK_DIR="$W/marks" timeout -k 5 "$TMO" "$@" ) > >(tee "$D/nodes/$n.log" >> "$L") 2>&1 &
    else
      ( cd "$W" && exec env NODE_NAME="$n" MARK_DIR="$W/marks" timeout -k 5 "$TMO" "$@" ) >> "$L" 2>&1 &
    fi
    PID[$n]=$!
  }
  agent_pid() { pgrep -P "${PID[$1]}" -f torchrun | head -1; }   # the torchrun under `timeout`
  wait_mark() { local k=0; while [ ! -e "$W/marks/step$1" ] && [ $k -lt 600 ]; do sleep 0.2; k=$((k + 1)); done; }
  local INFO="env LOGLEVEL=INFO TORCH_CPP_LOG_LEVEL=INFO" TRAIN="train.py" rc=0
  echo "== $id" >> "$META.cmds"
  case "$id" in
  run35a-c10d-healthy-info)          # healthy, 2 nodes x 2, INFO logging from agents and c10d
    for n in node-a node-b; do start $n $INFO $T --nnodes 2 --nproc-per-node 2 $(c10d $n 60) $TRAIN --steps 6; done ;;
  run35a-c10d-3nodes-healthy-info)   # healthy, 3 nodes x 1, INFO logging, per-node copies
    NODES=1
    for n in node-a node-b node-c; do start $n $INFO $T --nnodes 3 --nproc-per-node 1 $(c10d $n 60) $TRAIN --steps 6; done ;;
  run35a-static-healthy-info)        # healthy, static rendezvous (--master-addr/--node-rank), INFO logging, --tee 3
    start node-a $INFO $T --nnodes 2 --nproc-per-node 2 --tee 3 $(static 0) $TRAIN --steps 6
    start node-b $INFO $T --nnodes 2 --nproc-per-node 2 --tee 3 $(static 1) $TRAIN --steps 6 ;;
  run35a-c10d-nproc-mismatch)        # node-b started with --nproc-per-node 1 (node-a 2): c10d sums local sizes
    start node-a $T --nnodes 2 --nproc-per-node 2 $(c10d node-a 30) $TRAIN --steps 6
    start node-b $T --nnodes 2 --nproc-per-node 1 $(c10d node-b 30) $TRAIN --steps 6 ;;
  run35a-c10d-nnodes-mismatch)       # node-b started with --nnodes 3 (node-a 2)
    start node-a $INFO $T --nnodes 2 --nproc-per-node 2 $(c10d node-a 25) $TRAIN --steps 6
    sleep 2
    start node-b $INFO $T --nnodes 3 --nproc-per-node 2 $(c10d node-b 25) $TRAIN --steps 6 ;;
  run35a-static-nnodes-mismatch)     # static, INFO: node-b (not the store host) started with --nnodes 3; training
    TMO=100                          # runs, then both agents block in the exit barrier until `timeout` kills them
    start node-a $INFO $T --nnodes 2 --nproc-per-node 2 $(static 0) --rdzv-conf timeout=25 $TRAIN --steps 6
    start node-b $INFO $T --nnodes 3 --nproc-per-node 2 $(static 1) --rdzv-conf timeout=25 $TRAIN --steps 6 ;;
  run35a-c10d-rdzv-id-mismatch)      # node-b started with another --rdzv-id: each waits alone until join_timeout
    NODES=1
    start node-a $T --nnodes 2 --nproc-per-node 2 $(c10d node-a 25) $TRAIN --steps 6
    start node-b $T --nnodes 2 --nproc-per-node 2 $(c10d node-b 25 | sed 's/job35/job35-retry/') $TRAIN --steps 6 ;;
  run35a-c10d-late-join)             # node-b starts 40 s after node-a, whose join_timeout is 20 s
    start node-a $T --nnodes 2 --nproc-per-node 2 $(c10d node-a 20) $TRAIN --steps 6
    sleep 40
    start node-b $T --nnodes 2 --nproc-per-node 2 $(c10d node-b 20) $TRAIN --steps 6 ;;
  run35a-c10d-node-never-joins)      # --nnodes 3 but node-c is never started
    start node-a $T --nnodes 3 --nproc-per-node 1 $(c10d node-a 25) $TRAIN --steps 6
    start node-b $T --nnodes 3 --nproc-per-node 1 $(c10d node-b 25) $TRAIN --steps 6 ;;
  run35a-c10d-eaddrinuse)            # another process already listens on the rendezvous port on node-a
    python3 -c "import socket,time;s=socket.socket();s.bind(('0.0.0.0',$P));s.listen();time.sleep(60)" &
    local BLK=$!; sleep 1
    start node-a $T --nnodes 2 --nproc-per-node 2 $(c10d node-a 25) $TRAIN --steps 6
    start node-b $T --nnodes 2 --nproc-per-node 2 $(c10d node-b 25) $TRAIN --steps 6 ;;
  run35a-static-eaddrinuse)          # static: another process already listens on --master-port on node rank 0
    python3 -c "import socket,time;s=socket.socket();s.bind(('0.0.0.0',$P));s.listen();time.sleep(60)" &
    local BLK=$!; sleep 1
    start node-a $T --nnodes 2 --nproc-per-node 2 $(static 0) --rdzv-conf timeout=25 $TRAIN --steps 6
    start node-b $T --nnodes 2 --nproc-per-node 2 $(static 1) --rdzv-conf timeout=25 $TRAIN --steps 6 ;;
  run35a-c10d-endpoint-unresolvable) # node-b's --rdzv-endpoint names a host that does not resolve
    start node-a $T --nnodes 2 --nproc-per-node 2 $(c10d node-a 25) $TRAIN --steps 6
    start node-b $T --nnodes 2 --nproc-per-node 2 $(c10d node-b 25 | sed 's/127.0.0.1/trainer-0.cluster.invalid/') $TRAIN --steps 6 ;;
  run35a-static-master-addr-unresolvable) # static: node-b's --master-addr does not resolve
    start node-a $T --nnodes 2 --nproc-per-node 2 $(static 0) --rdzv-conf timeout=25 $TRAIN --steps 6
    start node-b $T --nnodes 2 --nproc-per-node 2 $(static 1 | sed 's/127.0.0.1/trainer-0.cluster.invalid/') --rdzv-conf timeout=25 $TRAIN --steps 6 ;;
  run35a-c10d-endpoint-wrong-port)   # node-b's --rdzv-endpoint port: nobody listens there (node-b is not a host)
    start node-a $T --nnodes 2 --nproc-per-node 2 $(c10d node-a 25) $TRAIN --steps 6
    start node-b $T --nnodes 2 --nproc-per-node 2 $(c10d node-b 25 | sed "s/:$P/:$((P + 5))/;s/join_timeout=25/join_timeout=25,read_timeout=20/") $TRAIN --steps 6 ;;
  run35a-c10d-store-host-sigkill)    # node-a's agent (hosts the c10d store) SIGKILLed at step 3; ranks use the store
    for n in node-a node-b; do start $n $T --nnodes 2 --nproc-per-node 2 $(c10d $n 30) $TRAIN --steps 20 --store-heartbeat --pg-timeout 20; done
    wait_mark 3; kill -KILL "$(agent_pid node-a)" ;;
  run35a-static-store-host-sigkill)  # static: node rank 0's agent (hosts the store) SIGKILLed at step 3
    NODES=1
    start node-a $T --nnodes 2 --nproc-per-node 2 $(static 0) $TRAIN --steps 20 --store-heartbeat --pg-timeout 20
    start node-b $T --nnodes 2 --nproc-per-node 2 $(static 1) $TRAIN --steps 20 --store-heartbeat --pg-timeout 20
    wait_mark 3; kill -KILL "$(agent_pid node-a)" ;;
  run35a-static-nnodes-mismatch-exit-hang) # same as static-nnodes-mismatch, but let the 300 s exit barrier run out
    TMO=360                          # (whether the agents block there varies from run to run)
    start node-a $INFO $T --nnodes 2 --nproc-per-node 2 $(static 0) --rdzv-conf timeout=25 $TRAIN --steps 6
    start node-b $INFO $T --nnodes 3 --nproc-per-node 2 $(static 1) --rdzv-conf timeout=25 $TRAIN --steps 6 ;;
  run35a-c10d-restart-kill-once)    # rank 3 SIGKILLed at step 3 of attempt 0 only; --max-restarts 1 (the restart fails, see README)
    for n in node-a node-b; do start $n $T --nnodes 2 --nproc-per-node 2 --max-restarts 1 $(c10d $n 30) $TRAIN --steps 6 --kill-rank 3 --kill-step 3 --kill-once; done ;;
  run35a-c10d-restart-fail)          # rank 2 SIGKILLed at step 3 on every attempt; --max-restarts 1
    for n in node-a node-b; do start $n $T --nnodes 2 --nproc-per-node 2 --max-restarts 1 $(c10d $n 30) $TRAIN --steps 6 --kill-rank 2 --kill-step 3; done ;;
  run35a-c10d-agent-sigterm)         # node-b's agent SIGTERMed at step 3 (scheduler preemption)
    NODES=1
    for n in node-a node-b; do start $n $T --nnodes 2 --nproc-per-node 2 $(c10d $n 30) $TRAIN --steps 20 --pg-timeout 20; done
    wait_mark 3; kill -TERM "$(agent_pid node-b)" ;;
  run35a-static-store-host-sigterm)  # static: node rank 0's agent SIGTERMed at step 3
    start node-a $T --nnodes 2 --nproc-per-node 2 $(static 0) $TRAIN --steps 20 --pg-timeout 20
    start node-b $T --nnodes 2 --nproc-per-node 2 $(static 1) $TRAIN --steps 20 --pg-timeout 20
    wait_mark 3; kill -TERM "$(agent_pid node-a)" ;;
  run35a-c10d-late-rank-pg-timeout)  # rank 3 (node-b) sleeps 45 s before init_process_group(timeout=15 s)
    for n in node-a node-b; do start $n $T --nnodes 2 --nproc-per-node 2 $(c10d $n 30) $TRAIN --steps 6 --pg-timeout 15 --late-rank 3 --late-sec 45; done ;;
  run35a-static-late-rank-pg-timeout) # static, TORCH_CPP_LOG_LEVEL=INFO: rank 1 (node-a) 40 s late, timeout 15 s
    start node-a env TORCH_CPP_LOG_LEVEL=INFO $T --nnodes 2 --nproc-per-node 2 $(static 0) $TRAIN --steps 6 --pg-timeout 15 --late-rank 1 --late-sec 40
    start node-b env TORCH_CPP_LOG_LEVEL=INFO $T --nnodes 2 --nproc-per-node 2 $(static 1) $TRAIN --steps 6 --pg-timeout 15 --late-rank 1 --late-sec 40 ;;
  run35a-c10d-hang)                  # rank 2 (node-b) stops calling collectives at step 3; timeout 15 s
    for n in node-a node-b; do start $n $T --nnodes 2 --nproc-per-node 2 $(c10d $n 30) $TRAIN --steps 8 --pg-timeout 15 --hang-rank 2 --hang-step 3 --hang-sec 60; done ;;
  esac
  for n in "${!PID[@]}"; do wait "${PID[$n]}"; echo "$id $n rc=$?" >> "$META"; done
  [ -n "${BLK:-}" ] && kill "$BLK" 2>/dev/null
  # orphans (workers of a SIGKILLed agent) keep writing to log.txt: give them 40 s, then kill them by pid
  local k=0 left
  while :; do
    left=$(for d in /proc/[0-9]*; do case "$(readlink "$d/cwd" 2>/dev/null)" in "$W"|"$W"/*) echo "${d#/proc/}";; esac; done)
    [ -z "$left" ] && break
    [ $k -ge 40 ] && { echo "$id killing leftovers: $left" >> "$META"; kill -9 $left 2>/dev/null; break; }
    sleep 1; k=$((k + 1))
  done
  sleep 1
  for f in "$L" "$D"/nodes/*.log; do [ -f "$f" ] && sed -i -e "s#$VENV#/opt/venv#g" -e "s#$W#/home/user/job#g" "$f"; done
  echo "$id done"
  rm -rf "$WROOT/$id"
}
export -f one
CASES=("$@"); [ ${#CASES[@]} -eq 0 ] && CASES=($ORDER)
export ORDER
printf '%s\n' "${CASES[@]}" | xargs -P 2 -I{} bash -c 'one "$1"' _ {}
