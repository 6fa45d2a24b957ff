#!/usr/bin/env bash
# Round 29b: older launch styles and torchelastic's own failures. One plain gloo training loop (train29.py), CPU,
# world size 3 or 4, launched with torch.distributed.launch (with and without --use-env), torch.distributed.run
# --standalone, and torchrun (elastic --nnodes 1:2 with a second agent, --max-restarts 2, --monitor-interval,
# @record / no @record, --log-dir). Signals are sent from here (SIGINT to one rank, SIGTERM to the agent).
# Usage: run_all.sh [OUT_DIR] [case-id ...]   (default OUT_DIR=/work/helpers/stage29b; default: all cases)
# Venv V: torch 2.13.0+cpu, numpy. Each case writes OUT/<id>/log.txt (launcher stdout+stderr, venv path ->
# /opt/venv, work/script dirs -> /home/user/job), ranks/ for --log-dir cases, and label.json (mk_label.py from
# labels29b.py, which checks the exit code and that every decisive line is a substring of one log line).
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=${1:-/work/helpers/stage29b}; shift || true
V=${V:-/work/helpers/venv29b}
WORK=${WORK:-/tmp/r29b}          # scratch dir (working directory of every run)
mkdir -p "$OUT" "$WORK"
ONLY=" $* "
want() { [ "$ONLY" = "  " ] || [[ "$ONLY" == *" $1 "* ]]; }
rw() { sed -i -e "s#$V#/opt/venv#g" -e "s#$HERE#/home/user/job#g" -e "s#$WORK#/home/user/job#g" "$@"; }
export PYTHONUNBUFFERED=1
export PATH="$V/bin:$PATH"
S=train29.py                     # copied into $WORK, so tracebacks show /home/user/job/train29.py
cp "$HERE/train29.py" "$WORK/"

start_case() {   # start_case <id> <command...>: runs the command in $WORK, in its own session, in the background
  CID=$1; shift
  rm -rf "$OUT/$CID" "$WORK/logs_$CID" "$WORK/pids_$CID"; mkdir -p "$OUT/$CID" "$WORK/pids_$CID"
  echo "== $CID: $*"
  ( cd "$WORK" && R29B_PIDDIR="$WORK/pids_$CID" exec setsid timeout 240 "$@" ) > "$OUT/$CID/log.txt" 2>&1 &
  CPID=$!
}
finish_case() {  # waits for the launcher started by start_case, cleans up, rewrites paths, writes label.json
  wait $CPID; local rc=$?; LAST_RC=$rc
  kill -9 -- -$CPID 2>/dev/null
  reap
  echo "   exit code $rc"
  rw "$OUT/$CID/log.txt"
  if [ -d "$WORK/logs_$CID" ]; then
    cp -r "$WORK/logs_$CID" "$OUT/$CID/ranks"
    find "$OUT/$CID/ranks" -type f -exec sed -i -e "s#$V#/opt/venv#g" -e "s#$HERE#/home/user/job#g" -e "s#$WORK#/home/user/job#g" {} +
  fi
  python3 "$HERE/mk_label.py" "$OUT/$CID" "$CID" "$rc"
}
reap() {         # torchrun starts each worker in its own session: kill (by pid) any train29.py left running in $WORK
  local p
  for p in $(pgrep -f "train29.py"); do
    [ "$(readlink /proc/$p/cwd 2>/dev/null)" = "$WORK" ] && kill -9 "$p" 2>/dev/null && echo "   reaped leftover pid $p"
  done
}
run_case() { want "$1" || return 0; start_case "$@"; finish_case; }
wait_pid() {     # wait_pid <file>: until a rank (or agent) has written its pid file, up to 60 s
  for _ in $(seq 600); do [ -s "$1" ] && return 0; sleep 0.1; done; echo "   no pid file $1"; return 1
}
wait_log() {     # wait_log <text>: until the running case's log has a line with <text>, up to 60 s
  for _ in $(seq 600); do grep -qF "$1" "$OUT/$CID/log.txt" && return 0; sleep 0.1; done; echo "   no '$1' in the log"; return 1
}
LAUNCH="python -m torch.distributed.launch"
TR() { echo torchrun --nproc-per-node "$1" --master-port "$2"; }

# ---------------- healthy (exit 0) ----------------
# deprecated torch.distributed.launch --use-env (FutureWarning), 3 ranks, 6 steps
# (a healthy run sometimes aborts at interpreter exit, 'terminate called without an active exception', exit -6; see
# run29b-standalone-teardown-abort: a healthy case is rerun, up to 6 times, until the launcher exits 0)
healthy() { want "$1" || return 0; for _ in 1 2 3 4 5 6; do run_case "$@"; [ "$LAST_RC" = 0 ] && break; done; }
healthy run29b-launch-healthy $LAUNCH --nproc_per_node 3 --master_port 29901 --use-env $S --what healthy
# python -m torch.distributed.run --standalone (its own c10d rendezvous on a free port), 3 ranks
healthy run29b-standalone-healthy python -m torch.distributed.run --standalone --nproc-per-node 3 $S --what healthy

# GENUINE, INTERMITTENT (not induced): the same healthy standalone job; after 'training complete' and
# destroy_process_group() a rank sometimes aborts at interpreter exit ('terminate called without an active
# exception', exit -6). Rerun (up to 10 times) until the launcher exit is non-zero.
if want run29b-standalone-teardown-abort; then
  for _ in 1 2 3 4 5 6 7 8 9 10; do
    run_case run29b-standalone-teardown-abort python -m torch.distributed.run --standalone --nproc-per-node 3 $S --what healthy
    [ "$LAST_RC" != 0 ] && break
  done
fi

# ---------------- torch.distributed.launch ----------------
# --use-env, rank 1 loses the 'label' key of its batch at step 3 -> KeyError
run_case run29b-launch-raise $LAUNCH --nproc_per_node 3 --master_port 29902 --use-env $S --what raise --bad-rank 1 --k 3
# no --use-env: the launcher appends --local-rank=N; this old script's argparse only knows --local_rank -> all ranks exit 2
run_case run29b-launch-localrank-argparse $LAUNCH --nproc_per_node 3 --master_port 29903 $S --argstyle old --what healthy
# no --use-env, the script accepts --local-rank/--local_rank; rank 2 calls os._exit(1) at step 2 (world size 4)
run_case run29b-launch-localrank-osexit $LAUNCH --nproc_per_node 4 --master_port 29904 $S --argstyle both --what osexit --bad-rank 2 --k 2

# ---------------- torchrun: restarts ----------------
# With the default static rendezvous (--master-port) and the agent's shared TCPStore, the restarted attempts of this
# gloo job failed in init_process_group (gloo connectFullMesh: Connection refused to stale peer addresses) or hung
# there (see README: not kept as a case, it is not reproducible the same way twice).
# The restart cases therefore use a c10d rendezvous on one node with TORCH_DISABLE_SHARE_RDZV_TCP_STORE=1 (the
# workers get a fresh TCPStore per attempt, hosted by rank 0), so that every attempt really trains until its fault.
RZ() { echo torchrun --nnodes 1 --nproc-per-node "$1" --rdzv-backend c10d --rdzv-endpoint "localhost:$2" --rdzv-id "job$2"; }
# --max-restarts 2: rank 2 hits the same KeyError in every attempt; restarts exhausted
run_case run29b-torchrun-restarts-same-rank env TORCH_DISABLE_SHARE_RDZV_TCP_STORE=1 $(RZ 3 29905) --max-restarts 2 $S --what raise --bad-rank 2 --k 2
# --max-restarts 2: rank 1 KeyError in attempts 0 and 1, rank 2 ValueError in the last attempt (2)
run_case run29b-torchrun-restarts-diff-rank env TORCH_DISABLE_SHARE_RDZV_TCP_STORE=1 $(RZ 3 29906) --max-restarts 2 $S --what raise-attempt --bad-rank 1 --last-bad-rank 2 --last-attempt 2 --k 2

# ---------------- torchrun: error files / exit styles ----------------
# @record on main, --log-dir: rank 1 KeyError; the error file is written and the summary shows the traceback
run_case run29b-torchrun-record-logdir $(TR 3 29907) --log-dir logs_run29b-torchrun-record-logdir $S --record --what raise --bad-rank 1 --k 3
# no @record: rank 1 KeyError; summary shows error_file: <N/A>
run_case run29b-torchrun-norecord $(TR 3 29908) $S --what raise --bad-rank 1 --k 3
# rank 2 calls sys.exit(3) at step 2, no traceback (world size 4)
run_case run29b-torchrun-sysexit3 $(TR 4 29909) $S --what sysexit --bad-rank 2 --k 2
# rank 1 calls os._exit(1) at step 3
run_case run29b-torchrun-osexit $(TR 3 29910) $S --what osexit --bad-rank 1 --k 3
# --monitor-interval 0.1: rank 2 returns (exit 0) after step 2 while ranks 0 and 1 go on training
run_case run29b-torchrun-early-exit $(TR 3 29911) --monitor-interval 0.1 $S --what early-exit --bad-rank 2 --k 2 --steps 8

# ---------------- signals sent from outside ----------------
# SIGINT to rank 1's pid mid-training (once rank 1 logged step 4) -> KeyboardInterrupt on rank 1
if want run29b-torchrun-sigint-rank; then
  start_case run29b-torchrun-sigint-rank $(TR 3 29912) $S --what wait-signal --steps 40 --sleep 0.5
  wait_pid "$WORK/pids_$CID/rank1.pid" && wait_log "rank 1 step 4 loss" && kill -INT "$(cat "$WORK/pids_$CID/rank1.pid")" && echo "   SIGINT -> rank 1"
  finish_case
fi
# SIGTERM to the torchrun agent itself mid-training (once rank 2 logged step 4) -> SignalException in the agent, workers SIGTERMed
if want run29b-torchrun-agent-sigterm; then
  start_case run29b-torchrun-agent-sigterm $(TR 3 29913) $S --what wait-signal --steps 40 --sleep 0.5
  wait_pid "$WORK/pids_$CID/rank2.pid" && wait_log "rank 2 step 4 loss"
  AG=$(pgrep -f -n "torchrun --nproc-per-node 3 --master-port 29913") && kill -TERM "$AG" && echo "   SIGTERM -> agent $AG"
  finish_case
fi

# ---------------- elastic --nnodes 1:2 (two agents on this host) ----------------
# elastic_case <id> <last_call_timeout> <delay>: agent A (2 workers, min 1 max 2 nodes, --max-restarts 0) starts; agent
# B (2 workers) is started <delay> s later on the same host. As soon as B's workers train, agent B and its workers are
# SIGKILLed (the node is lost); if they never train, B is killed once A has exited. log.txt = agent A's output only.
elastic_case() {
  want "$1" || return 0
  local EL="torchrun --nnodes 1:2 --nproc-per-node 2 --rdzv-backend c10d --rdzv-endpoint localhost:29914 --rdzv-id job-$1 --rdzv-conf last_call_timeout=$2 --max-restarts 0"
  start_case "$1" $EL $S --what elastic --steps 200 --sleep 0.5
  local PB="$WORK/pidsB_$CID"; rm -rf "$PB"; mkdir -p "$PB"
  sleep "$3"
  ( cd "$WORK" && R29B_PIDDIR="$PB" exec setsid $EL $S --what elastic --steps 200 --sleep 0.5 ) > "$WORK/agentB_$CID.log" 2>&1 &
  local BPID=$! BW
  while kill -0 $CPID 2>/dev/null && [ -z "$(ls "$PB")" ]; do sleep 0.2; done
  if [ -n "$(ls "$PB")" ]; then
    sleep 5
    BW=$(pgrep -P "$BPID" | tr '\n' ' ')      # agent B's workers (each in its own session); BPID is agent B itself
    kill -9 $BPID $BW && echo "   SIGKILL -> agent B ($BPID) and its workers ($BW)"
  else
    echo "   agent A exited before agent B's workers started; SIGKILL -> agent B"; kill -9 $BPID
  fi
  finish_case
  wait $BPID 2>/dev/null
}
# B starts 8 s after A, inside A's 30 s last-call window: one rendezvous of both nodes (world size 4); then B is lost
elastic_case run29b-elastic-node-lost 30 8
# GENUINE (meant as the membership-change case): A rendezvouses alone (last_call_timeout 2 s) and trains with world
# size 2; B joins 12 s later; A stops its workers for the new round, and the re-rendezvous never completes: A times out
# after 60 s waiting for the role_info keys (DistStoreError) while B's workers never start.
elastic_case run29b-elastic-rejoin-store-timeout 2 12

rm -rf "$WORK"/logs_* "$WORK"/pids*_*
echo "leftover processes (should be none):"; pgrep -af "train29.py" || true
