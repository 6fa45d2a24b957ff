#!/bin/bash
# Round 42b: one rank CATCHES and LOGS an error, goes on out of step, the other ranks then time out / fail
# in the next collective. Reproduces every case. Usage: run_all.sh [case-id ...]   (no args: all cases)
# Env: PY (python with torch 2.13.0 CPU + accelerate), JOB (work dir), STAGE (where case folders go).
PY=${PY:-/work/helpers/venv42b/bin/python}
VENV=$(dirname $(dirname $PY))
JOB=${JOB:-/work/helpers/w42b}
STAGE=${STAGE:-/work/helpers/stage42}
HERE=$(cd $(dirname $0) && pwd)
mkdir -p $JOB $STAGE; cp $HERE/outofstep42.py $JOB/
TR="$VENV/bin/torchrun --nnodes 1 --nproc-per-node 3 --master-port 29742"
TR4="$VENV/bin/torchrun --nnodes 1 --nproc-per-node 4 --master-port 29742"
S=outofstep42.py

# run ID CMD... : runs CMD in $JOB, log.txt = its combined output, generous timeout
run() { id=$1; shift; d=$STAGE/$id; rm -rf $d; mkdir -p $d; echo "== $id: $*"
  (cd $JOB && timeout -k 10 240 bash -c "$*" > $d/log.txt 2>&1; echo "exit status $?" > $d/exit.txt); cat $d/exit.txt; }
want() { [ -z "$SEL" ] || [[ " $SEL " == *" $1 "* ]]; }
SEL="$*"

# --- torchrun (plain) ---
# skipped batch -> the skipping rank's next grad all_reduce meets the others' validation all_reduce: gloo size mismatch
want run42b-torchrun-skipbatch-mismatch && run run42b-torchrun-skipbatch-mismatch "$TR $S --fault skip-batch --fault-rank 1 --report exception"
# skipped batch, no validation: the skipping rank is one all_reduce ahead, the last collectives time out
want run42b-torchrun-skipbatch-timeout && run run42b-torchrun-skipbatch-timeout "$TR $S --fault skip-batch --fault-rank 2 --report warning --val-every 100"
# missing shard retried with back-off sleeps: the others time out in the step's all_reduce
want run42b-torchrun4-retry-shard && run run42b-torchrun4-retry-shard "$TR4 $S --fault retry-shard --fault-rank 3 --report warning-tb --val-every 100"
# KeyError in a metric: validation returns early on that rank
want run42b-torchrun-val-keyerror && run run42b-torchrun-val-keyerror "$TR $S --fault val-keyerror --fault-rank 1 --report exception"
want run42b-torchrun-val-keyerror-warning && run run42b-torchrun-val-keyerror-warning "$TR $S --fault val-keyerror --fault-rank 2 --report warning"
# NaN guard trips, the step (backward + all_reduce) is skipped, bare print of the exception
want run42b-torchrun-nan-guard && run run42b-torchrun-nan-guard "$TR $S --fault nan-guard --fault-rank 2 --report print --val-every 100"
# rank trains on a fallback batch but skips the gradient all_reduce
want run42b-torchrun4-skip-noreduce && run run42b-torchrun4-skip-noreduce "$TR4 $S --fault skip-noreduce --fault-rank 2 --report error-short --val-every 100"
# --- mp.spawn (plain) ---
want run42b-spawn-skipbatch && run run42b-spawn-skipbatch "$PY $S --spawn 3 --fault skip-batch --fault-rank 1 --report print-tb --val-every 100"
want run42b-spawn-retry-shard && run run42b-spawn-retry-shard "$PY $S --spawn 3 --fault retry-shard --fault-rank 2 --report exception --val-every 100"
want run42b-spawn-val-keyerror && run run42b-spawn-val-keyerror "$PY $S --spawn 3 --fault val-keyerror --fault-rank 1 --report print"
want run42b-spawn4-nan-guard && run run42b-spawn4-nan-guard "$PY $S --spawn 4 --fault nan-guard --fault-rank 3 --report warning --val-every 100"
# --- torchrun + accelerate.Accelerator(cpu=True, gloo) ---
want run42b-accelerate-skipbatch && run run42b-accelerate-skipbatch "$TR $S --accelerate --fault skip-batch --fault-rank 1 --report warning-tb"
want run42b-accelerate-val-keyerror && run run42b-accelerate-val-keyerror "$TR $S --accelerate --fault val-keyerror --fault-rank 2 --report error-short"
want run42b-accelerate-retry-shard && run run42b-accelerate-retry-shard "$TR $S --accelerate --fault retry-shard --fault-rank 1 --report print --val-every 100"
# --- healthy: error caught and logged, ranks stay in step ---
want run42b-torchrun-healthy-allskip && run run42b-torchrun-healthy-allskip "$TR $S --fault all-skip --report exception"
want run42b-spawn-healthy-syncedskip && run run42b-spawn-healthy-syncedskip "$PY $S --spawn 3 --fault synced-skip --fault-rank 2 --report warning-tb"
want run42b-torchrun4-healthy-outside && run run42b-torchrun4-healthy-outside "$TR4 $S --fault outside --fault-rank 3 --report exception"
want run42b-accelerate-healthy-syncedskip && run run42b-accelerate-healthy-syncedskip "$TR $S --accelerate --fault synced-skip --fault-rank 1 --report print-tb"

# path rewriting + no orphans
for d in $STAGE/run42b-*; do [ -f $d/log.txt ] && sed -i "s#$VENV#/opt/venv#g; s#$JOB#/home/user/job#g" $d/log.txt; done
pgrep -af "outofstep42.py" || echo "no leftover processes"
