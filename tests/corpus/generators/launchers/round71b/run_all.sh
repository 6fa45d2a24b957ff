#!/bin/bash
# round71b: multi-rank gloo CPU jobs whose logs carry stack dumps (faulthandler, py-spy, excepthook, SIGUSR1).
# Usage: run_all.sh [case-id ...]   (default: all).  Cases are written to $POOL/<id>/log.txt (+ ranks/).
# Paths rewritten in logs: $V -> /opt/venv, $WORK -> /home/user/job.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
V=${V:-/work/helpers/venv71b}
WORK=${WORK:-/tmp/h71b/job}
POOL=${POOL:-/tmp/h71b/pool}
PY=$V/bin/python
TR="$V/bin/torchrun --standalone"
mkdir -p "$WORK" "$POOL"; cp "$HERE/job.py" "$HERE/watchdog.py" "$WORK/"
cd "$WORK"
WD="$PY $WORK/watchdog.py --hb-dir $WORK/hb"

run() {  # run <id> <command...>
  local id=$1; shift
  if [ -n "$ONLY" ] && ! [[ " $ONLY " == *" $id "* ]]; then return; fi
  echo ">>> $id"; rm -rf "$POOL/$id" "$WORK/hb" "$WORK/logs"; mkdir -p "$POOL/$id"
  timeout -s KILL 200 "$@" > "$POOL/$id/log.txt" 2>&1; echo "    rc=$?"
  if [ -d "$WORK/logs" ]; then   # torchrun --log-dir tree: logs/<run_id>/attempt_0/<rank>/...
    mkdir -p "$POOL/$id/ranks"; cp -r "$WORK"/logs/*/. "$POOL/$id/ranks/"
    find "$POOL/$id/ranks" -type f -exec sed -i "s#$V#/opt/venv#g; s#$WORK#/home/user/job#g" {} +
  fi
  sed -i "s#$V#/opt/venv#g; s#$WORK#/home/user/job#g" "$POOL/$id/log.txt"
  sleep 1
}
ONLY="${*:-}"

# ---- (a) faulthandler.dump_traceback_later watchdog inside the job, one rank hangs ----
# rank 1 sleeps in its data code at step 3; every rank dumps all threads after 20 s, gloo times out at 30 s
run run-r71b-torchrun-fhlater-hang-r1  $TR --nproc-per-node 4 $WORK/job.py --mode hang --culprit 1 --step 3 --fh-later 20 --pg-timeout 30
# mp.spawn; dump_traceback_later(20, exit=True): the dumps end the job before the 60 s gloo timeout
run run-r71b-spawn-fhlater-exit-r2     $PY $WORK/job.py --spawn 3 --mode hang --culprit 2 --step 4 --fh-later 20 --fh-exit --pg-timeout 60
# only rank 0 arms the dump; rank 1 deadlocks on a never-released lock; gloo timeout 25 s
run run-r71b-torchrun-fhlater-rank0only-lock-r1 $TR --nproc-per-node 3 $WORK/job.py --mode hang --hang-kind lock --culprit 1 --step 2 --fh-later 20 --fh-ranks 0 --pg-timeout 25
# per-rank log files (--log-dir --redirects 3 --tee 3), rank 3 hangs
run run-r71b-torchrun-fhlater-logdir-r3 $TR --nproc-per-node 4 --log-dir $WORK/logs --redirects 3 --tee 3 $WORK/job.py --mode hang --culprit 3 --step 2 --fh-later 20 --pg-timeout 30

# ---- (b) faulthandler.enable() and a native crash / abort on one rank ----
run run-r71b-torchrun-fhenable-segv-r1        $TR --nproc-per-node 3 $WORK/job.py --mode segv --culprit 1 --step 3 --fh-enable
run run-r71b-spawn-fhenable-abort-r3          $PY $WORK/job.py --spawn 4 --mode abort --culprit 3 --step 3 --fh-enable
run run-r71b-torchrun-fhenable-segv-thread-r2 $TR --nproc-per-node 4 $WORK/job.py --mode segv --in-thread --culprit 2 --step 4 --fh-enable
run run-r71b-torchrun-fhenable-segv-r0        $TR --nproc-per-node 3 $WORK/job.py --mode segv --culprit 0 --step 5 --fh-enable
run run-r71b-torchrun-fhenable-abort-r2       $TR --nproc-per-node 3 $WORK/job.py --mode abort --culprit 2 --step 2 --fh-enable
run run-r71b-spawn-fhenable-segv-r1           $PY $WORK/job.py --spawn 3 --mode segv --culprit 1 --step 3 --fh-enable

# ---- (c) external watchdog appends `py-spy dump --pid` of the stuck rank(s) ----
run run-r71b-torchrun-pyspy-hang-r2     $WD --stall 10 -- $TR --nproc-per-node 3 $WORK/job.py --hb-dir $WORK/hb --mode hang --culprit 2 --step 4 --pg-timeout 30
run run-r71b-spawn-pyspy-all-kill-r1    $WD --stall 10 --all --kill -- $PY $WORK/job.py --spawn 4 --hb-dir $WORK/hb --mode hang --culprit 1 --step 3 --pg-timeout 120

# ---- (d) the job's own excepthook / signal handlers print every thread's stack ----
run run-r71b-torchrun-excepthook-raise-r2   $TR --nproc-per-node 4 $WORK/job.py --mode raise --culprit 2 --step 3 --excepthook
run run-r71b-torchrun-usr1-watchdog-hang-r1 $WD --stall 10 --action usr1 --all -- $TR --nproc-per-node 3 $WORK/job.py --hb-dir $WORK/hb --usr1 frames --mode hang --culprit 1 --step 3 --pg-timeout 30
run run-r71b-torchrun-sigterm-dump-sigkill-r3 $TR --nproc-per-node 4 $WORK/job.py --mode sigkill --culprit 3 --step 4 --sigterm-dump
run run-r71b-torchrun-fhusr1-hang-r0        $WD --stall 10 --action usr1 --all -- $TR --nproc-per-node 3 $WORK/job.py --hb-dir $WORK/hb --usr1 fh --mode hang --culprit 0 --step 3 --pg-timeout 30
run run-r71b-torchrun-excepthook-raise-r0   $TR --nproc-per-node 3 $WORK/job.py --mode raise --exc KeyError --culprit 0 --step 2 --excepthook --fh-enable
run run-r71b-spawn-sigterm-dump-sigkill-r1  $PY $WORK/job.py --spawn 4 --mode sigkill --culprit 1 --step 3 --sigterm-dump

# ---- healthy runs that dump stacks on purpose ----
run run-r71b-torchrun-healthy-periodic-dump $TR --nproc-per-node 3 $WORK/job.py --steps 10 --step-time 0.5 --fh-later 2 --fh-repeat --fh-ranks 0
run run-r71b-torchrun-healthy-usr1-dump     $TR --nproc-per-node 4 $WORK/job.py --usr1 print_stack --self-usr1 2 --step 4
run run-r71b-spawn-healthy-fhusr1           $PY $WORK/job.py --spawn 3 --usr1 fh --self-usr1 1 --step 3

# no orphan ranks: kill leftovers of this round's job only (by exact script path in $WORK)
for p in $(pgrep -f "$WORK/job.py|$WORK/watchdog.py" ); do [ "$p" != "$$" ] && kill -9 "$p" 2>/dev/null; done
true
