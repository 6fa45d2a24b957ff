#!/usr/bin/env bash
# Round-3 real launcher runs (CPU, gloo, torch 2.13.0): variants not covered by ../plain, ../frameworks,
# ../round2. Each case writes $POOL/<case-id>/log.txt (the launcher's stdout+stderr, `cmd > log.txt 2>&1`;
# machine paths rewritten: venv -> /opt/venv, job dir -> /home/user/job) and, where the launcher writes
# per-rank or per-node files, a ranks/ copy of them. labels.py then writes label.json and checks every
# decisive line against log.txt.
#
# Usage: run_all.sh [case-id ...]     (no argument: all cases)
# Env:   VENV (venv with torch 2.13.0 + lightning + accelerate; default /work/helpers/venv-runs3),
#        POOL (default /work/main/tests/blind/pool3), JOB (scratch job dir, default /tmp/r3job).
# Needs openmpi-bin (mpirun). Ports 29950-29979.
set -u
HERE="$(cd "$(dirname "$0")" && pwd)"
VENV="${VENV:-/work/helpers/venv-runs3}"
POOL="${POOL:-/work/main/tests/blind/pool3}"
JOB="${JOB:-/tmp/r3job}"
PY="$VENV/bin/python"
TORCHRUN="$VENV/bin/torchrun"
ACC="$VENV/bin/accelerate"
MPIRUN="mpirun --allow-run-as-root --oversubscribe"
RUN_TIMEOUT=300

rm -rf "$JOB"; mkdir -p "$JOB"
cp "$HERE"/job3.py "$HERE"/acc_compile.py "$HERE"/pl_warnings.py "$JOB"/
export PATH="$VENV/bin:$PATH"   # mpirun's `python` is the venv's
export PYTHONUNBUFFERED=1 OMP_NUM_THREADS=1 TORCHINDUCTOR_COMPILE_THREADS=1

rewrite() { sed -i -e "s#$VENV#/opt/venv#g" -e "s#$JOB#/home/user/job#g" "$@"; }

# kill (by pid) whatever of ours is still running in the job dir; with "wait", first give orphans
# (processes whose launcher already exited) up to 60 s to finish by themselves.
reap() {
  local p n=0
  if [ "${1:-}" = wait ]; then
    while [ $n -lt 60 ]; do
      local any=0
      for p in $(ls /proc | grep -E '^[0-9]+$'); do
        [ "$(readlink "/proc/$p/cwd" 2>/dev/null)" = "$JOB" ] && any=1 && break
      done
      [ $any = 0 ] && break
      sleep 1; n=$((n + 1))
    done
  fi
  for p in $(ls /proc | grep -E '^[0-9]+$'); do
    [ "$(readlink "/proc/$p/cwd" 2>/dev/null)" = "$JOB" ] || continue
    echo "    killing leftover pid $p: $(tr '\0' ' ' < /proc/$p/cmdline 2>/dev/null | cut -c1-100)"
    kill -9 "$p" 2>/dev/null
  done
}

prepare() {
  local out="$POOL/$1"
  rm -rf "$out"; mkdir -p "$out"
  rm -rf "$JOB/logs" "$JOB/nodes" "$JOB"/crash_rank*.pt "$JOB/lightning_logs"
}

finish() {   # copy the launcher's per-rank / per-node files to ranks/ and rewrite paths
  local out="$POOL/$1"
  rewrite "$out/log.txt"
  if [ -d "$JOB/logs" ]; then   # torchrun --log-dir tree -> ranks/ (its run-id folder flattened away)
    mkdir -p "$out/ranks"; cp -r "$JOB"/logs/*/. "$out/ranks/"
  fi
  if [ -d "$JOB/nodes" ]; then mkdir -p "$out/ranks"; cp -r "$JOB"/nodes/. "$out/ranks/"; fi
  [ -d "$out/ranks" ] && find "$out/ranks" -type f -exec sed -i -e "s#$VENV#/opt/venv#g" -e "s#$JOB#/home/user/job#g" {} +
  return 0
}

# run_case <case-id> <command...>: run in a fresh session under a hard timeout, capture the output.
run_case() {
  local id="$1"; shift
  local out="$POOL/$id"
  prepare "$id"
  echo "=== $id: $*"
  local t0=$SECONDS
  ( cd "$JOB" && exec setsid --wait timeout -s KILL "$RUN_TIMEOUT" "$@" ) > "$out/log.txt" 2>&1
  echo "    exit status $? after $((SECONDS - t0))s"
  sleep 2; reap wait
  finish "$id"
}

# run_2node <case-id> <port> <job args...>: two torchrun agents on this machine (--nnodes 2, 2 procs
# each, c10d rendezvous on 127.0.0.1:<port>; node 0 hosts the rendezvous store, node 1 only joins).
# Both agents write into the one log.txt (appending, as a shared console or job log would) and each
# also into ranks/node<N>.log (tee).
run_2node() {
  local id="$1" port="$2"; shift 2
  local out="$POOL/$id"
  prepare "$id"; mkdir -p "$JOB/nodes"; : > "$out/log.txt"
  echo "=== $id: 2 x torchrun --nnodes 2 --nproc-per-node 2 (port $port) job3.py $*"
  local t0=$SECONDS n
  for n in 0 1; do
    local hostflag=$([ $n = 0 ] && echo 1 || echo 0)
    ( cd "$JOB" && exec setsid --wait timeout -s KILL "$RUN_TIMEOUT" bash -c \
      "$TORCHRUN --nnodes 2 --nproc-per-node 2 --node-rank $n --rdzv-backend c10d --rdzv-endpoint 127.0.0.1:$port \
       --rdzv-id job-2n-$port --rdzv-conf is_host=$hostflag --tee 3 job3.py $* 2>&1 | tee nodes/node$n.log" ) \
      >> "$out/log.txt" 2>&1 &
    [ $n = 0 ] && sleep 1
  done
  wait
  echo "    done after $((SECONDS - t0))s"
  sleep 2; reap wait
  finish "$id"
}

want() { [ "${#SELECT[@]}" -eq 0 ] && return 0; local c; for c in "${SELECT[@]}"; do [ "$c" = "$1" ] && return 0; done; return 1; }
SELECT=("$@")

trn() { echo "$TORCHRUN" --nnodes 1 --nproc-per-node "$1" --master-addr 127.0.0.1 --master-port "$2"; }
J=job3.py

# 1. two ranks fail at different times: rank 2 at step 3 (first), rank 1 at step 5; timestamps in every line
c=run3-torchrun-twofail-timed; want $c && run_case $c $(trn 4 29950) --tee 3 $J --scenario twofail --accum 8 \
  --step-seconds 0.5
# 2. two torchrun agents as two nodes (c10d rendezvous on localhost); global rank 3 raises / rank 2 is killed
c=run3-torchrun-2node-raise; want $c && run_2node $c 29951 --scenario target-oob --fault-rank 3 --fault-step 3
c=run3-torchrun-2node-sigkill; want $c && run_2node $c 29952 --scenario sigkill --fault-rank 2 --fault-step 3
# 3. the rank only in a logging field: `... | rank=1 | ERROR | ...` (torchrun without --tee: no [rankN]: prefix)
c=run3-torchrun-rankfield-raise; want $c && run_case $c $(trn 4 29953) $J --scenario rankfield-raise --fault-rank 1
#    JSON-lines logging with "rank": 2; mpirun without --tag-output
c=run3-mpirun-jsonlog-raise; want $c && run_case $c $MPIRUN -np 3 -x MASTER_ADDR=127.0.0.1 -x MASTER_PORT=29954 \
  python $J --scenario jsonlog-raise --fault-rank 2
# 4. console filtered to local rank 0 (the failing rank 2's output is not on the console); main() under @record
c=run3-torchrun-ranksfilter-raise; want $c && run_case $c env JOB3_RECORD=1 $(trn 3 29955) --tee 3 \
  --local-ranks-filter 0 $J --scenario zerodiv --fault-rank 2
#    --tee 2: only the ranks' stderr on the console (the per-step log lines go to stdout)
c=run3-torchrun-tee2-raise; want $c && run_case $c $(trn 4 29956) --tee 2 $J --scenario cat-none --fault-rank 1
# 5. logger.error then sys.exit(1), no traceback (mp.spawn)
c=run3-mpspawn-logerror-exit; want $c && run_case $c env MASTER_ADDR=127.0.0.1 MASTER_PORT=29957 \
  python $J --spawn 3 --scenario logerror-exit --fault-rank 2
# 6. NaN loss detected on one rank (mpirun --tag-output)
c=run3-mpirun-nanloss; want $c && run_case $c $MPIRUN --tag-output -np 4 -x MASTER_ADDR=127.0.0.1 \
  -x MASTER_PORT=29958 python $J --scenario nanloss --fault-rank 1 --fault-step 4
# 7. one rank skips a barrier; one rank broadcasts from another src
c=run3-torchrun-skip-barrier; want $c && run_case $c $(trn 3 29959) --tee 3 $J --scenario skip-barrier --fault-rank 1 \
  --pg-timeout 20
c=run3-mpirun-bcast-src; want $c && run_case $c $MPIRUN --tag-output -np 3 -x MASTER_ADDR=127.0.0.1 \
  -x MASTER_PORT=29960 python $J --scenario bcast-src --fault-rank 2 --pg-timeout 20
#    the same barrier skip under TORCH_DISTRIBUTED_DEBUG=DETAIL (mpirun -x): the fingerprint check names it
c=run3-mpirun-skip-barrier-detail; want $c && run_case $c $MPIRUN --tag-output -np 3 -x MASTER_ADDR=127.0.0.1 \
  -x MASTER_PORT=29967 -x TORCH_DISTRIBUTED_DEBUG=DETAIL python $J --scenario skip-barrier --fault-rank 2 --pg-timeout 20
# 8. TORCH_DISTRIBUTED_DEBUG=DETAIL, a float64 all_reduce on one rank
c=run3-torchrun-detail-dtype; want $c && run_case $c env TORCH_DISTRIBUTED_DEBUG=DETAIL $(trn 4 29961) --tee 3 \
  $J --scenario dtype-mismatch --fault-rank 3 --pg-timeout 20
# 9. rank 0 (hosting the env:// TCPStore) SIGKILLed during init; mpirun --tag-output
c=run3-mpirun-store-rank0-killed; want $c && run_case $c $MPIRUN --tag-output -np 3 -x MASTER_ADDR=127.0.0.1 \
  -x MASTER_PORT=29962 python $J --scenario store-rank0 --fault-rank 2 --pg-timeout 20
# 10. DataLoader worker raising in __getitem__ (mp.spawn)
c=run3-mpspawn-dataloader-raise; want $c && run_case $c env MASTER_ADDR=127.0.0.1 MASTER_PORT=29963 \
  python $J --spawn 3 --scenario dl-raise --fault-rank 1
# 11. torch.compile with a custom backend that fails on one rank, under accelerate launch
c=run3-accelerate-compile-backend; want $c && run_case $c $ACC launch --multi_gpu --num_processes 3 --num_machines 1 \
  --mixed_precision no --dynamo_backend no --num_cpu_threads_per_process 1 --main_process_port 29964 acc_compile.py
# 12. healthy Lightning run, warnings every step and a handled, logged exception every few steps
c=run3-lightning-healthy-warnings; want $c && run_case $c env PYTHONWARNINGS=always MASTER_PORT=29965 python pl_warnings.py
# 13. --max-restarts 1: attempt 0 fails on rank 1, attempt 1 on rank 3 (--log-dir tree -> ranks/)
c=run3-torchrun-restart-diffrank; want $c && run_case $c $(trn 4 29966) --max-restarts 1 --log-dir "$JOB/logs" \
  --redirects 3 --tee 3 $J --scenario restart-diff

rm -rf "$JOB"
[ "${#SELECT[@]}" -eq 0 ] && "$PY" "$HERE/labels.py" "$POOL"
exit 0
