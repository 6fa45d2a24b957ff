#!/usr/bin/env bash
# Round-2 real launcher runs (CPU, gloo, torch 2.13.0): faults not covered by ../plain and ../frameworks.
# Each case writes $POOL/<case-id>/log.txt (the launcher's stdout+stderr, `cmd > log.txt 2>&1`; machine
# paths rewritten: venv -> /opt/venv, job dir -> /home/user/job) and, for torchrun --log-dir cases, a
# ranks/ copy of the launcher's per-rank tree. labels.py then writes label.json and checks every
# decisive line against log.txt.
#
# Usage: run_all.sh [case-id ...]     (no argument: all cases)
# Env:   VENV (venv with torch 2.13.0 + lightning; default /work/helpers/venv-runs2),
#        POOL (default /work/main/tests/blind/pool2), JOB (scratch job dir, default /tmp/r2job).
# Needs openmpi-bin (mpirun). Ports 29900-29930.
set -u
HERE="$(cd "$(dirname "$0")" && pwd)"
VENV="${VENV:-/work/helpers/venv-runs2}"
POOL="${POOL:-/work/main/tests/blind/pool2}"
JOB="${JOB:-/tmp/r2job}"
PY="$VENV/bin/python"
TORCHRUN="$VENV/bin/torchrun"
MPIRUN="mpirun --allow-run-as-root --oversubscribe --tag-output"
RUN_TIMEOUT=300

rm -rf "$JOB"; mkdir -p "$JOB"
cp "$HERE"/faults2.py "$HERE"/job_env.py "$HERE"/job_spawn.py "$HERE"/pl_progress.py "$JOB"/
export PATH="$VENV/bin:$PATH"   # mpirun's `python` is the venv's
export PYTHONUNBUFFERED=1 TORCHINDUCTOR_COMPILE_THREADS=1

rewrite() { sed -i -e "s#$VENV#/opt/venv#g" -e "s#$JOB#/home/user/job#g" "$@"; }

# run_case <case-id> <port> <command...>: run in a fresh session under a hard timeout, capture the
# output, then kill (by pid) whatever of ours is still running in the job dir.
run_case() {
  local id="$1" port="$2"; shift 2
  local out="$POOL/$id"
  rm -rf "$out"; mkdir -p "$out"
  rm -rf "$JOB/logs" "$JOB/vendor_include" "$JOB/lightning_logs" "$JOB"/inductor_cache_rank*
  echo "=== $id (port $port): $*"
  local t0=$SECONDS
  ( cd "$JOB" && export MASTER_PORT="$port" && exec setsid --wait timeout -s KILL "$RUN_TIMEOUT" "$@" ) \
    > "$out/log.txt" 2>&1
  echo "    exit status $? after $((SECONDS - t0))s"
  sleep 2
  local p
  for p in $(ls /proc | grep -E '^[0-9]+$'); do
    [ "$(readlink "/proc/$p/cwd" 2>/dev/null)" = "$JOB" ] || continue
    echo "    killing leftover pid $p: $(tr '\0' ' ' < /proc/$p/cmdline 2>/dev/null | cut -c1-100)"
    kill -9 "$p" 2>/dev/null
  done
  rewrite "$out/log.txt"
  if [ -d "$JOB/logs" ]; then   # torchrun --log-dir tree -> ranks/ (its run-id folder flattened away)
    mkdir -p "$out/ranks"
    cp -r "$JOB"/logs/*/. "$out/ranks/"
    find "$out/ranks" -type f -exec sed -i -e "s#$VENV#/opt/venv#g" -e "s#$JOB#/home/user/job#g" {} +
  fi
}

want() { [ "${#SELECT[@]}" -eq 0 ] && return 0; local c; for c in "${SELECT[@]}"; do [ "$c" = "$1" ] && return 0; done; return 1; }
SELECT=("$@")

tr4() { echo "$TORCHRUN" --nnodes 1 --nproc-per-node 4 --master-addr 127.0.0.1 --master-port "$1" --tee 3; }
tr3() { echo "$TORCHRUN" --nnodes 1 --nproc-per-node 3 --master-addr 127.0.0.1 --master-port "$1" --tee 3; }
J=job_env.py

# --- torchrun elastic features
# rank 2 raises on every attempt; --max-restarts 1: the agent restarts the group once, then gives up
c=run-torchrun-restart-raise; want $c && run_case $c 29900 $TORCHRUN --nnodes 1 --nproc-per-node 4 \
  --master-addr 127.0.0.1 --master-port 29900 --max-restarts 1 --log-dir "$JOB/logs" --redirects 3 --tee 3 \
  $J --scenario restart-raise --fault-rank 2 --fault-step 2
# rank 1 raises before init_process_group on every attempt; --max-restarts 1 (--log-dir tree -> ranks/)
c=run-torchrun-restart-raise-early; want $c && run_case $c 29925 $TORCHRUN --nnodes 1 --nproc-per-node 3 \
  --master-addr 127.0.0.1 --master-port 29925 --max-restarts 1 --log-dir "$JOB/logs" --redirects 3 --tee 3 \
  $J --scenario restart-raise-early --fault-rank 1
# rank 1 raises on attempt 0 only; the restarted group trains to the end (non-fatal)
c=run-torchrun-restart-recover; want $c && run_case $c 29901 $TORCHRUN --nnodes 1 --nproc-per-node 3 \
  --master-addr 127.0.0.1 --master-port 29901 --max-restarts 2 --tee 3 \
  $J --scenario restart-recover --fault-rank 1 --fault-step 2
# c10d rendezvous for 2 nodes x 2 procs, but the second node is never started: join timeout 20 s
c=run-torchrun-rdzv-timeout; want $c && run_case $c 29902 $TORCHRUN --nnodes 2 --nproc-per-node 2 \
  --rdzv-backend c10d --rdzv-endpoint 127.0.0.1:29902 --rdzv-id job-7f3a --rdzv-conf join_timeout=20 \
  $J --scenario none
# the same with torchrun's own INFO logging (LOGLEVEL=INFO): the rendezvous rounds are visible
c=run-torchrun-rdzv-timeout-info; want $c && run_case $c 29927 env LOGLEVEL=INFO $TORCHRUN --nnodes 2 \
  --nproc-per-node 2 --rdzv-backend c10d --rdzv-endpoint 127.0.0.1:29927 --rdzv-id job-7f3a \
  --rdzv-conf join_timeout=20 $J --scenario none

# --- distributed
c=run-torchrun-monitored-barrier; want $c && run_case $c 29903 $(tr4 29903) $J --scenario monitored-barrier \
  --fault-rank 2 --barrier-timeout 10 --hang-seconds 60 --pg-timeout 40
c=run-mpirun-monitored-barrier; want $c && run_case $c 29904 $MPIRUN -np 3 -x MASTER_ADDR=127.0.0.1 \
  -x MASTER_PORT=29904 python $J --scenario monitored-barrier --fault-rank 1 --barrier-timeout 12 --hang-seconds 60 --pg-timeout 40
# world size 4 configured, 3 processes spawned
c=run-mpspawn-worldsize; want $c && run_case $c 29905 $PY job_spawn.py --nprocs 3 --scenario worldsize \
  --world-size-override 4 --pg-timeout 20
c=run-torchrun-worldsize; want $c && run_case $c 29906 $(tr3 29906) $J --scenario worldsize \
  --world-size-override 4 --pg-timeout 20
c=run-torchrun-fsdp-raise; want $c && run_case $c 29907 $(tr4 29907) $J --scenario fsdp-raise --fault-rank 1
c=run-torchrun-dtensor-mixed; want $c && run_case $c 29908 $(tr4 29908) $J --scenario dtensor-mixed --fault-rank 2

# --- data loading
c=run-torchrun-dataloader-raise; want $c && run_case $c 29909 $(tr3 29909) $J --scenario dl-raise --fault-rank 1
c=run-mpspawn-dataloader-kill; want $c && run_case $c 29910 $PY job_spawn.py --nprocs 3 --scenario dl-kill --fault-rank 2
c=run-torchrun-dataloader-kill; want $c && run_case $c 29911 $(tr4 29911) $J --scenario dl-kill --fault-rank 3

# --- numerics
c=run-torchrun-anomaly-nan; want $c && run_case $c 29912 $(tr4 29912) $J --scenario anomaly-nan --fault-rank 3

# --- torch.compile
c=run-torchrun-compile-cpperror; want $c && run_case $c 29913 $(tr3 29913) $J --scenario compile-cpperror --fault-rank 2
c=run-torchrun-compile-graphbreak; want $c && run_case $c 29914 env TORCH_LOGS=graph_breaks $(tr3 29914) \
  $J --scenario compile-graphbreak --fault-rank 1
c=run-mpirun-compile-unsupported; want $c && run_case $c 29915 $MPIRUN -np 3 -x MASTER_ADDR=127.0.0.1 \
  -x MASTER_PORT=29915 python $J --scenario compile-unsupported --fault-rank 2
c=run-torchrun-compile-recompiles; want $c && run_case $c 29916 env TORCH_LOGS=recompiles $(tr3 29916) \
  $J --scenario compile-recompiles --fault-rank 1
c=run-torchrun-compile-recompile-limit; want $c && run_case $c 29917 $(tr3 29917) \
  $J --scenario compile-recompile-limit --fault-rank 1

# --- logging / healthy
c=run-torchrun-logadapter-raise; want $c && run_case $c 29918 $TORCHRUN --nnodes 1 --nproc-per-node 4 \
  --master-addr 127.0.0.1 --master-port 29918 $J --scenario logadapter-raise --fault-rank 2
c=run-torchrun-healthy-chatty; want $c && run_case $c 29919 $(tr4 29919) $J --scenario chatty
c=run-lightning-healthy-progressbar; want $c && run_case $c 29920 $PY pl_progress.py

# --- process death without a Python traceback
c=run-torchrun-segfault; want $c && run_case $c 29921 $(tr4 29921) $J --scenario segfault --fault-rank 1
c=run-mpspawn-segfault-faulthandler; want $c && run_case $c 29922 env PYTHONFAULTHANDLER=1 $PY job_spawn.py \
  --nprocs 3 --scenario segfault --fault-rank 2
c=run-torchrun-sysexit; want $c && run_case $c 29923 $(tr4 29923) $J --scenario sysexit --fault-rank 2
c=run-mpirun-sysexit; want $c && run_case $c 29924 $MPIRUN -np 3 -x MASTER_ADDR=127.0.0.1 \
  -x MASTER_PORT=29924 python $J --scenario sysexit --fault-rank 1

rm -rf "$JOB"
[ "${#SELECT[@]}" -eq 0 ] && "$PY" "$HERE/labels.py" "$POOL"
exit 0
