#!/bin/bash
# round68b: HOW THE PROCESS GROUP IS STARTED, and one rank getting it wrong (gloo, CPU, torch 2.13.0).
# One job (initjob.py, small MLP, hand all_reduce, a logger line per step) started three ways:
#   shell  : shell_loop.sh = one `python initjob.py` per rank from a bash loop (& + wait -n), each rank's output
#            to ranks/rank<R>.log and through tee to the combined log (= log.txt); the loop itself can start one
#            rank with a wrong env (RANK_ENV_<i>) or as another user (RUN_AS_<i>)
#   spawn  : python initjob.py --spawn N          (torch.multiprocessing.spawn)
#   torchrun: torchrun --nnodes 1 --nproc-per-node N [--log-dir --tee 3]   (--log-dir tree -> ranks/)
# Rendezvous kinds: env://, tcp://, file:// (FileStore), and store= TCPStore / FileStore / HashStore.
# Faults are per rank (initjob.py --fault RANK:KIND[:ARG], or the shell loop's per-rank env); see each case.
# Usage: run_all.sh [case-id-substring]   -> $POOL/<id>/log.txt (+ ranks/), then: python3 make_labels.py $POOL
HERE=$(cd "$(dirname "$0")" && pwd)
VENV=${VENV:-/work/helpers/venv68b}
POOL=${POOL:-/tmp/h68b/pool}
W=/tmp/h68b/w                     # per-case scratch (torchrun --log-dir trees, shell per-rank files)
SH=/tmp/h68b/shared               # the "shared filesystem" directory for FileStore files (root, mode 755)
export PATH=$VENV/bin:$PATH PYTHONUNBUFFERED=1
cd "$HERE"
ONLY=$1
PORT=31900
J=$HERE/initjob.py

# leftovers of one case: every process of the case carries R68B_CASE=<id> in its environment
kill_case() {
  local p
  for p in $(grep -lsa "R68B_CASE=$1" /proc/[0-9]*/environ | cut -d/ -f3); do
    [ "$p" != $$ ] && [ "$p" != "$BASHPID" ] && kill -9 "$p" 2>/dev/null
  done
}

# run_case ID KIND NPROC [args for initjob.py...]     KIND: shell | spawn | torchrun | torchrun-logdir
# PORT is the job's MASTER_PORT (torchrun --master-port); PORT2 a second free port for tcp:// / TCPStore cases
run_case() {
  local id=$1 kind=$2 n=$3; shift 3
  [ -n "$ONLY" ] && [[ "$id" != *"$ONLY"* ]] && return
  PORT=$((PORT+2)); PORT2=$((PORT+1))
  local d=$POOL/$id w=$W/job-$PORT; rm -rf "$d" "$w"; mkdir -p "$d" "$w"   # neutral scratch name: it shows in the log
  [ -z "${KEEP_SHARED:-}" ] && rm -f "$SH"/*
  local args=("${@//@PORT2@/$PORT2}")
  echo "== $id ($kind x$n) ${args[*]}" >&2
  local t0=$(date +%s) cmd
  case $kind in
    shell)          cmd=("$HERE/shell_loop.sh" "$n" "$PORT" "$w/ranks" "${args[@]}") ;;
    spawn)          cmd=(python "$J" --spawn "$n" --port "$PORT" "${args[@]}") ;;
    torchrun)       cmd=(torchrun --nnodes 1 --nproc-per-node "$n" --master-port "$PORT" "$J" "${args[@]}") ;;
    torchrun-logdir) cmd=(torchrun --nnodes 1 --nproc-per-node "$n" --master-port "$PORT" --log-dir "$w/ranks"
                          --tee 3 "$J" "${args[@]}") ;;
  esac
  R68B_CASE=$id setsid timeout -k 5 ${CASE_TIMEOUT:-150} "${cmd[@]}" > "$d/log.txt" 2>&1 &
  local pid=$!; wait $pid; local rc=$?
  echo "   rc=$rc $(( $(date +%s)-t0 ))s" >&2
  kill -9 -- -$pid 2>/dev/null; kill_case "$id"; sleep 1
  if [ -d "$w/ranks" ]; then
    mkdir -p "$d/ranks"
    if [ "$kind" = torchrun-logdir ]; then cp -r "$w"/ranks/*/attempt_* "$d/ranks/"; else cp "$w"/ranks/*.log "$d/ranks/"; fi
  fi
  find "$d" -type f -exec sed -i "s#$VENV#/opt/venv#g; s#$HERE#/home/user/job#g; s#/tmp/h68b#/home/user/job/tmp#g" {} +
}

# an "earlier run" on file://$SH/initstore that was kill -9'ed mid-training: its FileStore file stays behind
make_stale() {
  rm -f "$SH"/*
  R68B_CASE=earlier setsid "$HERE/shell_loop.sh" 3 31898 "$W/earlier" --init file --file "$SH/initstore" \
     --steps 300 > "$W/earlier.txt" 2>&1 &
  local pg=$!; sleep 14; kill -9 -- -$pg; kill_case earlier; sleep 1
  ls -la "$SH" >&2
}

mkdir -p "$SH" "$W"; chmod 755 "$SH" /tmp/h68b

# ---------------- shell loop: one python per rank
# FileStore file left behind by an earlier killed run: every rank reads the dead run's gloo addresses (no culprit)
case "run-r68b-shell-file-stale" in *"$ONLY"*) make_stale ;; esac
KEEP_SHARED=1 run_case run-r68b-shell-file-stale shell 3 --init file --file $SH/initstore --timeout 12
# rank 2 is started under another account (nobody) that cannot write the shared FileStore directory
RUN_AS_2=nobody run_case run-r68b-shell-file-unwritable shell 3 --init file --file $SH/initstore --timeout 20
# rank 1's host config points the FileStore at node-local /tmp instead of the shared directory
run_case run-r68b-shell-file-node-local shell 3 --init file --file $SH/initstore --fault 1:file:/tmp/pg-initstore --timeout 20
# tcp:// : rank 3's host config carries the previous job's port
run_case run-r68b-shell-tcp-wrong-port shell 4 --init tcp --port @PORT2@ --fault 3:port:39511 --timeout 20
# env:// : the loop hands the process meant to be rank 2 RANK=0 (two rank 0s, no rank 2)
RANK_ENV_2="RANK=0" run_case run-r68b-shell-env-duprank0 shell 3 --timeout 20
# env:// : rank 1 started with WORLD_SIZE=3 in a 4-rank job (world size off by one, below)
RANK_ENV_1="WORLD_SIZE=3" run_case run-r68b-shell-env-world-size-minus-one shell 4 --timeout 15
# env:// : rank 1 started with another MASTER_PORT -> it waits for a store nobody hosts until the 25 s timeout
RANK_ENV_1="MASTER_PORT=39400" run_case run-r68b-shell-env-wrong-port shell 3 --timeout 25
# env:// : rank 2 started with a MASTER_ADDR that does not resolve
RANK_ENV_2="MASTER_ADDR=trainer-0.cluster.internal" run_case run-r68b-shell-env-bad-addr shell 3 --timeout 20
# rank 3 finds no data shard for itself and exits 0 before init_process_group; the others wait
run_case run-r68b-shell-exit-before-init shell 4 --fault 3:exit0 --timeout 20
# tcp:// for all, but rank 1 takes a "local debug" path that builds its group on an in-process HashStore
run_case run-r68b-shell-hashstore shell 3 --init tcp --port @PORT2@ --fault 1:hash --timeout 20

# ---------------- mp.spawn
# rank 2 re-runs setup_distributed() at step 3 -> init_process_group a second time
run_case run-r68b-spawn-init-twice spawn 3 --init tcp --port @PORT2@ --fault 2:twice:3 --timeout 20
# store=TCPStore: rank 1 also creates the store with is_master=True -> it cannot bind the port
run_case run-r68b-spawn-tcpstore-two-masters spawn 3 --init store-tcp --port @PORT2@ --fault 1:master --timeout 20
# store=FileStore: rank 3 opens another file (a per-run suffix from its own config)
run_case run-r68b-spawn-filestore-different-file spawn 4 --init store-file --file $SH/pgstore --fault 3:file:$SH/pgstore.r3 --timeout 20
# new_group with ranks out of range: rank 1 lays out the data-parallel groups from a stale world_size=8
run_case run-r68b-spawn-newgroup-out-of-range spawn 4 --init tcp --port @PORT2@ --groups --fault 1:newgroup:8 --timeout 20
# env:// : rank 0 (the store host) exits 0 before init -> the others cannot reach the store
run_case run-r68b-spawn-rank0-exit-before-init spawn 3 --init env --fault 0:exit0 --timeout 20

# ---------------- torchrun
# rank 1 calls init_process_group a second time at step 2 (per-rank files via --log-dir --tee 3)
run_case run-r68b-torchrun-init-twice torchrun-logdir 3 --fault 1:twice:2 --timeout 20
# rank 2 exits 0 before init; torchrun's agent store: the others time out waiting for rank 2's key
run_case run-r68b-torchrun-exit-before-init torchrun 3 --fault 2:exit0 --timeout 20
# init_method tcp:// on a port other than --master-port: under torchrun no rank hosts a tcp:// store (agent
# store is assumed), so every rank times out connecting (no culprit rank: a job-wide config mistake)
run_case run-r68b-torchrun-tcp-not-master-port torchrun 3 --init tcp --port @PORT2@ --timeout 20
# env:// for all, rank 3 builds on HashStore; C++ INFO logging on
TORCH_CPP_LOG_LEVEL=INFO run_case run-r68b-torchrun-hashstore torchrun-logdir 4 --fault 3:hash --timeout 20
# store=TCPStore hosted by rank 0 on its own port; rank 2's config has another port
run_case run-r68b-torchrun-tcpstore-wrong-port torchrun 3 --init store-tcp --port @PORT2@ --fault 2:port:39611 --timeout 20
# new_group out of range on rank 0 (stale world_size=6), TORCH_DISTRIBUTED_DEBUG=DETAIL
TORCH_DISTRIBUTED_DEBUG=DETAIL run_case run-r68b-torchrun-newgroup-detail torchrun 4 --groups --fault 0:newgroup:6 --timeout 20

# ---------------- healthy
run_case run-r68b-shell-healthy-file shell 3 --init file --file $SH/initstore --steps 8 --timeout 20
run_case run-r68b-spawn-healthy-tcpstore spawn 3 --init store-tcp --port @PORT2@ --steps 8 --timeout 20
TORCH_CPP_LOG_LEVEL=INFO run_case run-r68b-torchrun-healthy-groups torchrun-logdir 4 --groups --steps 6 --timeout 20

rm -rf "$W" "$SH"/* /tmp/pg-initstore
true
