#!/bin/bash
# Reproduces every round59a case: more than one thing goes wrong in a 4-rank gloo job, and only time says which
# came first.  Mostly two torchrun agents on this host as two "nodes" of 2 (two_nodes.sh: --nnodes 2
# --node-rank 0/1, static or c10d rendezvous, each agent's console to its own file or --log-dir per node), a
# logger line per step with a clock (job.py FMT: ms / sec / glog / isoz).  Scenarios:
#   twoerr    two ranks raise DIFFERENT errors a few hundred ms to a few s apart; the first in time is not the
#             first in file order
#   teardown  a rank fails, and a second, unrelated error appears while the job tears down (destroy twice,
#             metrics file in finally, rank 0's emergency checkpoint in its except block)
#   tz        the two nodes log in different time zones (TZ per agent; asctime and torch's glog lines are local)
#   hang      a rank stalls (pair group {2,3}) while a rank of the other pair raises later/earlier
#   healthy   noisy healthy runs on two nodes
# Usage: run_all.sh [case-id-substring]  -> $POOL/<id>/log.txt + ranks/   (labels: python3 make_labels.py $POOL)
HERE=$(cd "$(dirname "$0")" && pwd)
VENV=${VENV:-/work/helpers/venv59a}
POOL=${POOL:-/tmp/h59a/pool}
TMPD=/tmp/h59a/tr
export PATH=$VENV/bin:$PATH PYTHONUNBUFFERED=1
cd "$HERE"
ONLY=$1
PORT=29720

# run_case ID two|one      (the case's environment is set by the caller)
#   two: two_nodes.sh; the agents' consoles -> ranks/<name>.log (console mode) and log.txt = the console files
#        concatenated in name order; with LOGDIR each node's --log-dir tree -> ranks/<node>/attempt_0/...
#   one: one torchrun agent with --log-dir --redirects 3 (MI = --monitor-interval): log.txt = its console, ranks/attempt_0/...
run_case() {
  local id=$1 how=$2
  [ -n "$ONLY" ] && [[ "$id" != *"$ONLY"* ]] && return
  PORT=$((PORT+1))
  local d=$POOL/$id; rm -rf "$d" "$TMPD/$id"; mkdir -p "$d" "$TMPD/$id"
  echo "== $id ($how)" >&2
  local t0=$(date +%s) cmd
  if [ $how = two ]; then
    [ -n "$LOGDIR_ON" ] && export LOGDIR=$TMPD/$id/logs || unset LOGDIR
    cmd="bash two_nodes.sh $TMPD/$id/console"
  else
    cmd="torchrun --nproc-per-node 4 --master-port $PORT --monitor-interval ${MI:-0.1} --log-dir $TMPD/$id/logs --redirects 3 job.py > $d/log.txt 2>&1"
  fi
  # own session (setsid) so that every process of this case can be killed by its process-group id afterwards
  MASTER_PORT=$PORT setsid timeout 150 bash -c "$cmd" &
  local pid=$!; wait $pid; local rc=$?
  echo "   rc=$rc $(( $(date +%s)-t0 ))s" >&2
  kill -9 -- -$pid 2>/dev/null; sleep 1       # leftovers of this case only
  if [ $how = two ]; then
    if [ -n "$LOGDIR_ON" ]; then               # per-node --log-dir trees: <node>/<run_id>_<rand>/attempt_0/<local rank>/
      for nd in "$TMPD/$id"/logs/*; do mkdir -p "$d/ranks/$(basename $nd)"; cp -r "$nd"/*/. "$d/ranks/$(basename $nd)"; done
    else
      mkdir -p "$d/ranks"; cp "$TMPD/$id"/console/*.log "$d/ranks/"
    fi
    for f in $(ls "$TMPD/$id"/console/*.log | sort); do cat "$f"; done > "$d/log.txt"
  else
    mkdir -p "$d/ranks"; cp -r "$TMPD/$id"/logs/*/. "$d/ranks"
  fi
  find "$d" -type f -exec sed -i "s#$VENV#/opt/venv#g; s#$HERE#/home/user/job#g; s#$TMPD/$id/logs#/home/user/job/logs#g; s#/tmp/h59a#/home/user/job/tmp#g" {} +
}

# ---------------- 1. two different errors; the first in time is not the first in file order
# rank 2 KeyError 0.3 s into step 3's (slow) read, rank 1 ValueError 0.5 s later; rank 2's node sorts second
FMT=ms FAULTS="2:keyerror:3:0.3;1:valueerror:3:0.8" SLOW="3:1.2" run_case run-r59a-2n-twoerr-500ms two
# no sub-second clock: 2.4 s apart so the seconds differ
FMT=sec FAULTS="2:keyerror:3:0.2;1:valueerror:3:2.6" SLOW="3:3.0" run_case run-r59a-2n-twoerr-sec two
# pair groups: ranks 0,1 do not need rank 2, so rank 1 reaches step 4 and raises there, ~1 s after rank 2
PAIRS=1 LOAD_S=0.5 FMT=ms FAULTS="2:keyerror:3:0.2;1:valueerror:4:0.4" run_case run-r59a-2n-pairs-twoerr-step4 two
# per-node --log-dir trees, torch-like glog clock; 400 ms apart
LOGDIR_ON=1 FMT=glog FAULTS="2:keyerror:3:0.2;1:valueerror:3:0.6" SLOW="3:1.0" run_case run-r59a-2n-logdir-twoerr-glog two
# ONE agent, --log-dir, --monitor-interval 3: both failures land before the agent looks; attempt_0/1 sorts first
MI=3 FMT=ms FAULTS="2:keyerror:3:0.3;1:valueerror:3:0.9" SLOW="3:1.5" run_case run-r59a-1n-logdir-twoerr-mi3 one
# c10d rendezvous, consoles named by host: host-b's agent starts first (ranks 0,1), host-a holds ranks 2,3.
# rank 1 fails first (host-b.log, sorts second), rank 2 1.2 s later (host-a.log, sorts first)
RDZV=c10d NAME0=host-b.log NAME1=host-a.log FMT=ms FAULTS="1:valueerror:3:0.3;2:keyerror:3:1.5" SLOW="3:1.8" run_case run-r59a-2n-c10d-hostfiles-twoerr two
# rank 3 first, rank 1 0.8 s later, with C++ INFO logging (glog lines from torch itself) in both consoles
TORCH_CPP_LOG_LEVEL=INFO FMT=glog FAULTS="3:keyerror:2:0.2;1:valueerror:2:1.0" SLOW="2:1.4" run_case run-r59a-2n-twoerr-cppinfo two

# ---------------- 2. a rank fails; a second, unrelated error while the job tears down
FMT=ms FAULTS="3:keyerror:3:0.2" TEARDOWN=destroy_twice run_case run-r59a-2n-teardown-destroy-twice two
FMT=sec FAULTS="2:valueerror:4:0.2" TEARDOWN=ckpt CKPT_DIR=/mnt/ckpt/run59 run_case run-r59a-2n-teardown-ckpt two
LOGDIR_ON=1 FMT=ms FAULTS="1:keyerror:2:0.3" TEARDOWN=metrics METRICS_DIR=/mnt/metrics/run59 run_case run-r59a-2n-logdir-teardown-metrics two
FMT=glog FAULTS="2:sigkill:3:0.2" TEARDOWN=ckpt,destroy_twice run_case run-r59a-2n-teardown-sigkill-ckpt two

# ---------------- 3. the two nodes' clocks are in different time zones
TZ0=America/New_York TZ1=UTC FMT=ms FAULTS="2:keyerror:3:0.3;1:valueerror:3:1.3" SLOW="3:1.6" run_case run-r59a-2n-tz-ny-utc two
TZ0=UTC TZ1=Asia/Tokyo FMT=glog FAULTS="3:keyerror:3:0.2;1:valueerror:3:1.0" SLOW="3:1.3" run_case run-r59a-2n-tz-utc-tokyo two
TZ0=Asia/Tokyo TZ1=UTC FMT=isoz FAULTS="1:valueerror:3:0.2;2:keyerror:3:1.5" SLOW="3:1.8" run_case run-r59a-2n-tz-tokyo-utc-isoz two
TZ0=UTC TZ1=America/New_York PAIRS=1 LOAD_S=1.0 STEPS=40 PG_TIMEOUT=15 FMT=ms FAULTS="3:hang:2:0.1;1:valueerror:6:0.3" run_case run-r59a-2n-tz-pairs-hang-raise two

# ---------------- 4. a rank hangs; another rank raises (later, or earlier) - pair groups {0,1} {2,3}
# rank 3 stalls at step 2 (t~1 s), rank 1 raises at step 6 (t~5.5 s), rank 2 times out at t~16 s
PAIRS=1 LOAD_S=1.0 STEPS=40 PG_TIMEOUT=15 FMT=ms FAULTS="3:hang:2:0.1;1:valueerror:6:0.3" run_case run-r59a-2n-pairs-hang-then-raise two
# rank 2 stalls at step 2, rank 3 times out at t~16 s, rank 1 raises at step 20 (t~19.5 s)
PAIRS=1 LOAD_S=1.0 STEPS=40 PG_TIMEOUT=15 FMT=sec FAULTS="2:hang:2:0.1;1:keyerror:20:0.3" run_case run-r59a-2n-pairs-hang-timeout-raise two
# rank 1 raises first (step 3, t~2 s); rank 3 stalls later (step 5, t~4 s) and rank 2 times out at t~19 s
LOGDIR_ON=1 PAIRS=1 LOAD_S=1.0 STEPS=40 PG_TIMEOUT=15 FMT=glog FAULTS="1:valueerror:3:0.3;3:hang:5:0.1" run_case run-r59a-2n-logdir-pairs-raise-then-hang two

# ---------------- 5. healthy, noisy, two nodes
NOISY=1 TORCH_CPP_LOG_LEVEL=INFO FMT=ms STEPS=8 run_case run-r59a-2n-healthy-noisy-cppinfo two
NOISY=1 RDZV=c10d TZ0=Asia/Tokyo TZ1=UTC FMT=glog STEPS=8 run_case run-r59a-2n-healthy-noisy-tz two
NOISY=1 LOGDIR_ON=1 TEE=3 PAIRS=1 FMT=isoz STEPS=8 run_case run-r59a-2n-healthy-noisy-logdir-pairs two
rm -rf "$TMPD"
