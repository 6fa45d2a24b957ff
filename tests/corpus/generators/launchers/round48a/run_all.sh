#!/bin/bash
# Round 48a: torchrun elastic restarts (--max-restarts), gloo on CPU, torch 2.13.0+cpu.
# Usage: run_all.sh VENV STAGE [CASE...]   e.g. run_all.sh /work/helpers/venv48a /work/helpers/stage48
# Each case runs in a fresh work dir W (rewritten to /home/user/job in the saved logs; VENV -> /opt/venv).
# All cases but run48a-stale-store-restart set TORCH_DISABLE_SHARE_RDZV_TCP_STORE=1: in torch 2.13 the workers
# otherwise reuse the agent's TCPStore across restarts, and a restarted gloo group reads the dead attempt's
# addresses ("Gloo connectFullMesh failed ... Connection refused"), which that one case records on purpose.
set -u
VENV=$1; STAGE=$2; shift 2
HERE=$(cd "$(dirname "$0")" && pwd)
TR="$VENV/bin/torchrun"
WBASE=/tmp/h48a/work
ONLY="$*"

want() { [ -z "$ONLY" ] || [[ " $ONLY " == *" $1 "* ]]; }

newwork() {  # fresh work dir with the job script and an empty checkpoint dir
  W=$WBASE/$1; rm -rf "$W"; mkdir -p "$W/ckpt"; cp "$HERE/elastic_job.py" "$W/"
}

finish() {  # copy log (+ ranks tree) into the stage folder, rewriting machine paths only
  local id=$1 out=$STAGE/$1
  rm -rf "$out"; mkdir -p "$out"
  sed -e "s#$VENV#/opt/venv#g" -e "s#$W#/home/user/job#g" "$W/log.txt" > "$out/log.txt"
  if [ -d "$W/logs" ]; then
    local run; run=$(ls -d "$W"/logs/*/ | head -1)
    cp -r "$run" "$out/ranks"
    find "$out/ranks" -type f -exec sed -i -e "s#$VENV#/opt/venv#g" -e "s#$W#/home/user/job#g" {} +
  fi
  pgrep -af "$W/elastic_job.py" && echo "LEFTOVER ranks of $id: kill these pids"  # none seen in round 48a
}

# single agent: case ID, nproc, max-restarts, mode (tee|logdir), plan, extra job args...
single() {
  local id=$1 n=$2 mr=$3 mode=$4 plan=$5; shift 5
  want "$id" || return 0
  newwork "$id"; cd "$W"
  local out=(--tee 3)
  [ "$mode" = logdir ] && out=(--log-dir "$W/logs" --redirects 3)
  echo "== $id: torchrun --standalone --nproc-per-node $n --max-restarts $mr ${out[*]} elastic_job.py --ckpt-dir ckpt --plan '$plan' $*"
  timeout 300 "$TR" --standalone --nproc-per-node "$n" --max-restarts "$mr" "${out[@]}" \
      elastic_job.py --ckpt-dir ckpt --plan "$plan" "$@" > log.txt 2>&1
  echo "   rc=$?"
  finish "$id"
}

export TORCH_DISABLE_SHARE_RDZV_TCP_STORE=1

# the same rank fails the same way in every attempt until restarts run out
single run48a-same-rank-raise-tee        4 2 tee    '*:raise@2:4'
USE_RECORD=1 single run48a-same-rank-keyerror-logdir 3 1 logdir '*:keyerror@1:5'
single run48a-sigkill-every-attempt-tee  4 2 tee    '*:sigkill@3:4'
# a different rank fails in each attempt (flaky data shards)
single run48a-flaky-shard-tee            4 2 tee    '0:raise@1:3,1:raise@3:5,2:raise@2:7'
USE_RECORD=1 single run48a-flaky-shard-logdir 3 3 logdir '0:keyerror@2:2,1:raise@1:4,2:raise@2:6,3:raise@1:7'
# attempt 0 fails, attempt 1 succeeds (healthy overall)
single run48a-recover-tee                4 1 tee    '0:raise@3:4'
single run48a-recover-sigkill-logdir     3 3 logdir '0:sigkill@1:3'
# attempt 0 fails one way, the last attempt another way
single run48a-raise-then-hang-tee        4 1 tee    '0:raise@1:3,1:hang@3:6' --pg-timeout 15 --hang-s 60
USE_RECORD=1 single run48a-raise-then-sigkill-logdir 4 1 logdir '0:raise@2:3,1:sigkill@1:5'
single run48a-hang-then-raise-tee        3 1 tee    '0:hang@2:3,1:raise@1:5' --pg-timeout 15 --hang-s 60
# attempt 0 leaves a half-written per-rank checkpoint; later attempts fail to resume from it
single run48a-halfckpt-raise-tee         4 2 tee    '0:badsave@2:4'
USE_RECORD=1 single run48a-halfckpt-raise-logdir 3 1 logdir '0:badsave@1:3'
# shared agent store (torch default): restarts cannot rebuild the gloo group
TORCH_DISABLE_SHARE_RDZV_TCP_STORE=0 single run48a-stale-store-restart 4 2 tee '*:raise@2:4'

# two agents on one host (c10d rendezvous), outputs labelled like `srun --label` ("0: ", "1: ").
# pair ID NNODES MR_A MR_B PLAN KILLB(yes|no) [rdzv-conf]
pair() {
  local id=$1 nn=$2 mra=$3 mrb=$4 plan=$5 killb=$6 conf=${7:-join_timeout=20,last_call_timeout=5}
  want "$id" || return 0
  newwork "$id"; cd "$W"
  local port=$((29700 + RANDOM % 200))
  local common=(--nnodes "$nn" --nproc-per-node 2 --rdzv-backend c10d --rdzv-endpoint "127.0.0.1:$port"
                --rdzv-id "job48" --rdzv-conf "$conf" --tee 3)
  echo "== $id: agents A(--max-restarts $mra) B(--max-restarts $mrb) ${common[*]} --plan '$plan' killB=$killb"
  {
    "$TR" "${common[@]}" --max-restarts "$mra" elastic_job.py --ckpt-dir ckpt --plan "$plan" --steps 10 \
        > >(sed -u 's/^/0: /') 2>&1 &
    A=$!
    sleep 3   # A starts first and hosts the rendezvous store
    "$TR" "${common[@]}" --max-restarts "$mrb" elastic_job.py --ckpt-dir ckpt --plan "$plan" --steps 10 \
        > >(sed -u 's/^/1: /') 2>&1 &
    B=$!
    if [ "$killb" = yes ]; then
      # wait until step 3 has been logged, then SIGKILL node B's agent and its workers (node lost)
      for i in $(seq 120); do grep -q ' step 3/' log.txt 2>/dev/null && break; sleep 0.5; done
      pkill -9 -P "$B"; kill -9 "$B"
    fi
    ( sleep 240; kill "$A" "$B" 2>/dev/null ) & WD=$!
    wait "$A"; echo "agent A exited rc=$?"
    wait "$B"; echo "agent B exited rc=$?"
    kill "$WD" 2>/dev/null
    sleep 1
  } > log.txt 2>&1
  finish "$id"
}

# membership change: node B lost; A re-rendezvouses alone (--nnodes 1:2) and finishes
pair run48a-elastic-node-lost-recover 1:2 1 1 '' yes
# membership change: node B lost; A has no restarts left and fails
pair run48a-elastic-node-lost-fail    1:2 0 0 '' yes
# fixed --nnodes 2: node B lost; A restarts and its re-rendezvous times out waiting for B
pair run48a-elastic-rdzv-timeout      2   2 2 '' yes
# fixed --nnodes 2: a rank on B raises, B has no restarts left and exits; A restarts and waits for B in vain
pair run48a-elastic-rdzv-after-raise  2   2 0 '*:raise@3:4' no
