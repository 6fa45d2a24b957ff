#!/bin/bash
# Round 41b: reproduces every case. Usage: run_all.sh [case-id ...]   (no args: all cases)
# Env: PY (python with torch 2.13.0 CPU, tqdm, loguru, colorlog), JOB (work dir), STAGE (where case folders go).
PY=${PY:-/work/helpers/venv41b/bin/python}
VENV=$(dirname $(dirname $PY))
JOB=${JOB:-/work/helpers/w41b}
STAGE=${STAGE:-/work/helpers/stage41}
HERE=$(cd $(dirname $0) && pwd)
mkdir -p $JOB/ext $STAGE; cp $HERE/shape41.py $JOB/
TR="$VENV/bin/torchrun --nnodes 1 --nproc-per-node 3 --master-port 29643"

# run ID CMD... : runs CMD in $JOB, log.txt = its combined output
run() { id=$1; shift; d=$STAGE/$id; rm -rf $d; mkdir -p $d; echo "== $id: $*"
  (cd $JOB && timeout -k 10 240 bash -c "$*" > $d/log.txt 2>&1; echo "exit status $?" > $d/exit.txt); cat $d/exit.txt; }
# runsig ID SIGNAL TARGET MARKER CMD... : starts CMD, waits until MARKER is in the log, sends SIGNAL to TARGET
#   TARGET = "launcher" (the launcher process) or "rankN" (that rank's pid from $PIDDIR)
runsig() { id=$1; sig=$2; tgt=$3; marker=$4; shift 4; d=$STAGE/$id; rm -rf $d; mkdir -p $d; echo "== $id: $* ; kill -$sig $tgt after '$marker'"
  export PIDDIR=$(mktemp -d); cd $JOB
  timeout -k 10 240 bash -c "exec $*" > $d/log.txt 2>&1 & lp=$!
  for i in $(seq 600); do grep -qF "$marker" $d/log.txt && break; sleep 0.2; done; sleep 1
  if [ $tgt = launcher ]; then pid=$(pgrep -P $lp | head -1); [ -z "$pid" ] && pid=$lp; else pid=$(cat $PIDDIR/$tgt.pid); fi
  echo "kill -$sig $pid ($tgt)" > $d/signal.txt; kill -$sig $pid
  wait $lp; echo "exit status $?" > $d/exit.txt; cat $d/exit.txt; cd - >/dev/null; rm -rf $PIDDIR; unset PIDDIR; }

want() { [ -z "$SEL" ] || [[ " $SEL " == *" $1 "* ]]; }
SEL="$*"
S="python shape41.py"
# --- single process (python) ---
want run41b-py-recursion   && run run41b-py-recursion   "$PY shape41.py --fault recursion --fault-rank 0"
want run41b-py-tensor-dump && run run41b-py-tensor-dump "$PY shape41.py --fault tensor --fault-rank 0 --tqdm"
want run41b-py-statedict   && run run41b-py-statedict   "$PY shape41.py --fault statedict --fault-rank 0"
want run41b-py-weakref     && run run41b-py-weakref     "$PY shape41.py --fault weakref --fault-rank 0 --fmt colorlog"
want run41b-py-loguru-cppstack && run run41b-py-loguru-cppstack "TORCH_SHOW_CPP_STACKTRACES=1 $PY shape41.py --fault cppstack --fault-rank 0 --fmt loguru"
want run41b-py-terminate   && run run41b-py-terminate   "EXT_DIR=$JOB/ext TORCH_SHOW_CPP_STACKTRACES=1 $PY shape41.py --fault terminate --fault-rank 0"
want run41b-py-sigint-tqdm && runsig run41b-py-sigint-tqdm INT launcher "rank0 step 2 loss" "$PY shape41.py --steps 40 --step-sleep 1 --tqdm"
want run41b-py-healthy-recursion && run run41b-py-healthy-recursion "$PY shape41.py --fault caught-recursion --fault-rank 0 --tqdm"
# --- torchrun, 3 ranks ---
want run41b-torchrun-recursion   && run run41b-torchrun-recursion   "$TR shape41.py --fault recursion --fault-rank 1"
want run41b-torchrun-tensor-dump && run run41b-torchrun-tensor-dump "$TR shape41.py --fault tensor --fault-rank 2"
want run41b-torchrun-statedict   && run run41b-torchrun-statedict   "$TR shape41.py --fault statedict --fault-rank 2"
want run41b-torchrun-del         && run run41b-torchrun-del         "$TR shape41.py --fault del --fault-rank 1"
want run41b-torchrun-tqdm        && run run41b-torchrun-tqdm        "$TR shape41.py --fault bigdict --fault-rank 2 --tqdm"
want run41b-torchrun-loguru      && run run41b-torchrun-loguru      "$TR shape41.py --fault bigdict --fault-rank 1 --fmt loguru"
want run41b-torchrun-sigint      && runsig run41b-torchrun-sigint INT launcher "waiting for shard refresh" "$TR shape41.py --fault sleep --fault-rank 2 --fault-step 3"
want run41b-torchrun-sigterm     && runsig run41b-torchrun-sigterm TERM launcher "step 3 loss" "$TR shape41.py --steps 40 --step-sleep 1 --fmt colorlog"
want run41b-torchrun-healthy-loguru && run run41b-torchrun-healthy-loguru "$TR shape41.py --fault caught-exception --fault-rank 1 --fmt loguru"
want run41b-torchrun-healthy-tqdm   && run run41b-torchrun-healthy-tqdm   "$TR shape41.py --tqdm"
# --- mp.spawn, 3 ranks ---
want run41b-spawn-bigdict    && run run41b-spawn-bigdict    "$PY shape41.py --spawn 3 --fault bigdict --fault-rank 1"
want run41b-spawn-cppstack   && run run41b-spawn-cppstack   "TORCH_SHOW_CPP_STACKTRACES=1 $PY shape41.py --spawn 3 --fault cppstack --fault-rank 2 --fmt colorlog"
want run41b-spawn-sigterm-rank && runsig run41b-spawn-sigterm-rank TERM rank1 "[rank1] step 3 loss" "$PY shape41.py --spawn 3 --steps 40 --step-sleep 1"
want run41b-spawn-healthy-colorlog && run run41b-spawn-healthy-colorlog "$PY shape41.py --spawn 3 --fault caught-exception --fault-rank 2 --fmt colorlog"

# path rewriting + no orphans
for d in $STAGE/run41b-*; do [ -f $d/log.txt ] && sed -i "s#$VENV#/opt/venv#g; s#$JOB#/home/user/job#g" $d/log.txt; done
# list anything left behind (kill those by pid if any are listed)
pgrep -af "shape41.py" || echo "no leftover processes"
