#!/bin/bash
# round82a: expert-parallel MoE / uneven collectives on CPU + gloo (torch 2.13.0) failing on ONE rank.
# moe_job.py (see its docstring) runs a toy MoE with one expert per rank; --mode/--culprit/--at-step pick the fault.
# Usage: run_all.sh [case-id ...]   (default: all).  Cases go to $POOL/<id>/log.txt (+ ranks/ for --log-dir runs);
# then `python make_labels.py $POOL` writes the label.json files.
# Paths rewritten in logs: $V -> /opt/venv, $WORK -> /home/user/job.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
V=${V:-/work/helpers/venv82a}
WORK=${WORK:-/tmp/h82a/job}
POOL=${POOL:-/tmp/h82a/pool}
PY=$V/bin/python
TR="$V/bin/torchrun --standalone"
J=moe_job.py
mkdir -p "$WORK" "$POOL"; cp "$HERE/moe_job.py" "$WORK/"
cd "$WORK"
ONLY="${*:-}"

# every process this script starts carries R82A_TAG in its environment; reap() kills leftovers by pid (no orphans)
export R82A_TAG="r82a-$$"
reap() {
  local p
  for p in $(grep -l -a "R82A_TAG=$R82A_TAG" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3); do
    [ "$p" != "$$" ] && [ "$p" != "$BASHPID" ] && grep -q -a moe_job.py "/proc/$p/cmdline" 2>/dev/null && kill -KILL "$p" 2>/dev/null
  done
}
want() { [ -z "$ONLY" ] || [[ " $ONLY " == *" $1 "* ]]; }
run() {  # run <id> <command...>
  local id=$1; shift
  want "$id" || return 0
  echo ">>> $id  ($(date +%T))"; rm -rf "$POOL/$id" "$WORK/logs"; mkdir -p "$POOL/$id"
  timeout -s KILL 240 "$@" > "$POOL/$id/log.txt" 2>&1; echo "    rc=$? ($(date +%T)) $(wc -l < "$POOL/$id/log.txt") lines"
  if [ -d "$WORK/logs" ]; then   # torchrun --log-dir tree: logs/<run_id>/attempt_0/<rank>/{stdout,stderr}.log
    mkdir -p "$POOL/$id/ranks"; cp -r "$WORK"/logs/*/. "$POOL/$id/ranks/"
    find "$POOL/$id/ranks" -type f -exec sed -i "s#$V#/opt/venv#g; s#$WORK#/home/user/job#g" {} +
    rm -rf "$WORK/logs"
  fi
  sed -i "s#$V#/opt/venv#g; s#$WORK#/home/user/job#g" "$POOL/$id/log.txt"
  reap
  sleep 1
}
LOGDIR="--log-dir logs --redirects 3"

# ---------------- healthy runs (ordinary warnings only, exit 0) ----------------
run run-r82a-torchrun-healthy $TR --nproc-per-node 4 $J --steps 30 --warn autocast,sched
run run-r82a-torchrun-tee-healthy-zero $TR --nproc-per-node 3 --tee 3 $J --steps 30 --dispatch fixed --zero \
    --warn tensorcopy
run run-r82a-spawn-healthy-list $PY $J --spawn 3 --steps 30 --dispatch list --warn autocast,tensorcopy

# ---------------- a rank sends more tokens than the receiver expects ----------------
# fixed-capacity dispatch: rank 2's capacity-factor schedule (another config) goes to 1.5 at step 8 -> it packs
# 16 slots/expert, peers expect 14 -> gloo on a receiving rank aborts (EnforceNotMet, SIGABRT)
run run-r82a-torchrun-capfixed-r2 $TR --nproc-per-node 3 $J --dispatch fixed --mode cap-fixed --culprit 2 --at-step 8 \
    --warn autocast
run run-r82a-spawn-capfixed-r3 $PY $J --spawn 4 --dispatch fixed --mode cap-fixed --culprit 3 --at-step 12 --warn sched
# list dispatch (dist.all_to_all): rank 1 packs 16-row send chunks but sizes receive chunks 14 -> rejected locally
run run-r82a-torchrun-tee-caplist-r1 $TR --nproc-per-node 3 --tee 3 $J --dispatch list --mode cap-list --culprit 1 \
    --at-step 8 --warn tensorcopy
# dynamic dispatch, routing bug: announces clamped counts, packs all routed tokens (overflow to the next rank)
run run-r82a-torchrun-routepeer-r1 $TR --nproc-per-node 4 $J --mode route-peer --culprit 1 --at-step 14 --warn autocast
run run-r82a-torchrun-logdir-routepeer-r0 $TR --nproc-per-node 3 $LOGDIR $J --mode route-peer --culprit 0 --at-step 11 \
    --warn sched
# same bug, overflow into the culprit's own expert -> gloo alltoallv enforce on the culprit
run run-r82a-torchrun-routeself-r2 $TR --nproc-per-node 3 $J --mode route-self --culprit 2 --at-step 9 --warn autocast
# rank 1 drops the overflow tokens but passes the un-clamped counts as input_split_sizes
run run-r82a-spawn-splitsum-r1 $PY $J --spawn 3 --mode split-sum --culprit 1 --at-step 3 --warn autocast,tensorcopy

# ---------------- a rank skips the exchange at step k ----------------
run run-r82a-torchrun-skip-r3 $TR --nproc-per-node 4 $J --mode skip --culprit 3 --at-step 13 --pg-timeout 20 \
    --warn autocast
run run-r82a-torchrun-tee-skip-detail-r2 env TORCH_DISTRIBUTED_DEBUG=DETAIL $TR --nproc-per-node 3 --tee 3 $J \
    --mode skip --culprit 2 --at-step 7 --pg-timeout 20 --warn sched

# ---------------- a rank's expert stalls past the process-group timeout ----------------
run run-r82a-torchrun-hang-r2 $TR --nproc-per-node 3 $J --mode hang --culprit 2 --at-step 10 --pg-timeout 20 \
    --warn autocast
run run-r82a-spawn-hang-r0 $PY $J --spawn 4 --mode hang --culprit 0 --at-step 16 --pg-timeout 25 --warn tensorcopy

# ---------------- a rank raises inside its expert ----------------
run run-r82a-torchrun-raisedtype-r1 $TR --nproc-per-node 3 $J --mode raise-dtype --culprit 1 --at-step 9 --warn autocast
run run-r82a-torchrun-logdir-raisecap-r3 $TR --nproc-per-node 4 $LOGDIR $J --mode raise-cap --culprit 3 --at-step 6 \
    --warn sched

# ---------------- a rank is SIGKILLed inside its expert (mem.host_oom per corpus convention) ----------------
run run-r82a-torchrun-sigkill-r2 $TR --nproc-per-node 4 $J --mode sigkill --culprit 2 --at-step 12 --warn autocast
run run-r82a-spawn-sigkill-r1 $PY $J --spawn 3 --dispatch fixed --mode sigkill --culprit 1 --at-step 7 --warn sched

# ---------------- ZeRO-style reduce_scatter_tensor / all_gather_into_tensor with a wrong size on one rank ----------------
run run-r82a-torchrun-rswrong-r1 $TR --nproc-per-node 3 $J --zero --dispatch fixed --mode rs-wrong --culprit 1 \
    --at-step 10 --warn tensorcopy
run run-r82a-torchrun-tee-rswrong-detail-r0 env TORCH_DISTRIBUTED_DEBUG=DETAIL $TR --nproc-per-node 4 --tee 3 $J \
    --zero --mode rs-wrong --culprit 0 --at-step 5 --warn autocast
run run-r82a-torchrun-agwrong-r2 $TR --nproc-per-node 4 $J --zero --mode ag-wrong --culprit 2 --at-step 6 --warn sched

# ---------------- all_gather of uneven per-rank eval results ----------------
run run-r82a-spawn-aguneven-r2 $PY $J --spawn 3 --mode ag-uneven --culprit 2 --at-step 10 --eval-every 5 \
    --warn autocast
