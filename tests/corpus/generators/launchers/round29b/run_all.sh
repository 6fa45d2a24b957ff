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
  echo "   exit code $rc"
  rw "$OUT/$CID/log.txt"
  if [ -d "$WORK/logs_$CID" ]; then
    cp -r "$WORK/logs_$CID" "$OUT/$CID/ranks"
    find "$OUT/$CID/ranks" -type f -exec sed -i -e "s#$V#/opt/venv#g" -e "s#$HERE#/home/user/job#g" -e "s#$WORK#/home/user/job#g" {} +
  fi
  python3 "$HERE/mk_label.py" "$OUT/$CID" "$CID" "$rc"
}
run_case() { want "$1" || return 0; start_case "$@"; finish_case; }
wait_pid() {     # wait_pid <file>: until a rank (or agent) has written its pid file, up to 60 s
  for _ in $(seq 600); do [ -s "$1" ] && return 0; sleep 0.1; done; echo "   no pid file $1"; return 1
}
LAUNCH="python -m torch.distributed.launch"
TR() { echo torchrun --nproc-per-node "$1" --master-port "$2"; }

# ---------------- healthy (exit 0) ----------------
# deprecated torch.distributed.launch --use-env (FutureWarning), 3 ranks, 6 steps
run_case run29b-launch-healthy $LAUNCH --nproc_per_node 3 --master_port 29901 --use-env $S --what healthy
# python -m torch.distributed.run --standalone (its own c10d rendezvous on a free port), 3 ranks
run_case run29b-standalone-healthy python -m torch.distributed.run --standalone --nproc-per-node 3 $S --what healthy

# ---------------- torch.distributed.launch ----------------
# --use-env, rank 1 loses the 'label' key of its batch at step 3 -> KeyError
run_case run29b-launch-raise $LAUNCH --nproc_per_node 3 --master_port 29902 --use-env $S --what raise --bad-rank 1 --k 3
# no --use-env: the launcher appends --local-rank=N; this old script's argparse only knows --local_rank -> all ranks exit 2
run_case run29b-launch-localrank-argparse $LAUNCH --nproc_per_node 3 --master_port 29903 $S --argstyle old --what healthy
# no --use-env, the script accepts --local-rank/--local_rank; rank 2 calls os._exit(1) at step 2 (world size 4)
run_case run29b-launch-localrank-osexit $LAUNCH --nproc_per_node 4 --master_port 29904 $S --argstyle both --what osexit --bad-rank 2 --k 2

# ---------------- torchrun: restarts ----------------
# --max-restarts 2: rank 2 hits the same KeyError in every attempt; restarts exhausted
run_case run29b-torchrun-restarts-same-rank $(TR 3 29905) --max-restarts 2 $S --what raise --bad-rank 2 --k 2
# --max-restarts 2: rank 1 KeyError in attempts 0 and 1, rank 2 ValueError in the last attempt (2)
run_case run29b-torchrun-restarts-diff-rank $(TR 3 29906) --max-restarts 2 $S --what raise-attempt --bad-rank 1 --last-bad-rank 2 --last-attempt 2 --k 2

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
# SIGINT to rank 1's pid mid-training -> KeyboardInterrupt on rank 1
if want run29b-torchrun-sigint-rank; then
  start_case run29b-torchrun-sigint-rank $(TR 3 29912) $S --what wait-signal --steps 40 --sleep 0.5
  wait_pid "$WORK/pids_$CID/rank1.pid" && sleep 2 && kill -INT "$(cat "$WORK/pids_$CID/rank1.pid")" && echo "   SIGINT -> rank 1"
  finish_case
fi
# SIGTERM to the torchrun agent itself mid-training -> SignalException in the agent, workers SIGTERMed
if want run29b-torchrun-agent-sigterm; then
  start_case run29b-torchrun-agent-sigterm $(TR 3 29913) $S --what wait-signal --steps 40 --sleep 0.5
  wait_pid "$WORK/pids_$CID/rank2.pid" && sleep 2
  AG=$(pgrep -f -n "torchrun --nproc-per-node 3 --master-port 29913") && kill -TERM "$AG" && echo "   SIGTERM -> agent $AG"
  finish_case
fi

# ---------------- elastic --nnodes 1:2 ----------------
# agent A (2 workers) starts alone (min 1 node); agent B (2 workers) joins 15 s later -> re-rendezvous, world size 4;
# then agent B and its workers are SIGKILLed (the node is lost). --max-restarts 0 on agent A. log.txt = agent A.
if want run29b-elastic-node-lost; then
  EL="torchrun --nnodes 1:2 --nproc-per-node 2 --rdzv-backend c10d --rdzv-endpoint localhost:29914 --rdzv-id job29b --max-restarts 0"
  start_case run29b-elastic-node-lost $EL $S --what elastic --steps 200 --sleep 0.5
  sleep 15
  ( cd "$WORK" && exec setsid $EL $S --what elastic --steps 200 --sleep 0.5 ) > "$WORK/agentB_$CID.log" 2>&1 &
  BPID=$!
  wait_pid "$WORK/pids_$CID/rank3.pid" && sleep 4 && kill -9 -- -$BPID && echo "   SIGKILL -> agent B's process group $BPID"
  finish_case
  wait $BPID 2>/dev/null
fi

rm -rf "$WORK"/logs_* "$WORK"/pids_*
echo "leftover processes (should be none):"; pgrep -af "train29.py" || true
