#!/usr/bin/env bash
# Round 50b: many ranks on one host (12, 16, 24, 32 processes), gloo, torch 2.13.0 CPU, a tiny model, a
# few steps, process-group timeouts of 30-60 s (32 processes on 2 cores are slow to start), OMP_NUM_THREADS=1.
# Program: job50b.py (its docstring says what each --fault induces). Launchers: torchrun (console, or
# --log-dir logs --tee 3), mp.spawn, mpirun --tag-output (Open MPI, env:// from OMPI_COMM_WORLD_RANK/SIZE),
# and a shell loop with sed prefixes (shell_launch.sh).
# Each case writes $POOL/<case-id>/log.txt (`cmd > log.txt 2>&1`, venv -> /opt/venv, job dir ->
# /home/user/job) and, for --log-dir cases, ranks/ (the launcher's tree, run-id folder flattened).
# labels50b.py then writes label.json for every case and checks each decisive line.
#
# Usage: run_all.sh [case-id ...]    (no argument: all cases)
# Env:   VENV (default /work/helpers/venv50b), POOL (default /tmp/h50b/pool), JOB (default /tmp/h50b/job)
# Needs openmpi-bin (mpirun). Ports 29751-29780. Then: python3 labels50b.py "$POOL".
set -u
HERE="$(cd "$(dirname "$0")" && pwd)"
VENV="${VENV:-/work/helpers/venv50b}"
POOL="${POOL:-/tmp/h50b/pool}"
JOB="${JOB:-/tmp/h50b/job}"
TORCHRUN="$VENV/bin/torchrun"
RUN_TIMEOUT=400

mkdir -p "$JOB" "$POOL"
cp "$HERE"/job50b.py "$HERE"/shell_launch.sh "$JOB"/
export PATH="$VENV/bin:$PATH" PYTHONUNBUFFERED=1 MASTER_ADDR=127.0.0.1 OMP_NUM_THREADS=1
unset TORCH_DISTRIBUTED_DEBUG TORCH_CPP_LOG_LEVEL

rewrite() { sed -i -e "s#$VENV#/opt/venv#g" -e "s#$JOB#/home/user/job#g" "$@"; }

# run_case <case-id> <port> <env assignments or -> <command...>
run_case() {
  local id="$1" port="$2" envs="$3"; shift 3
  local out="$POOL/$id"
  rm -rf "$out"; mkdir -p "$out"
  rm -rf "$JOB/logs" "$JOB/inductor_cache"
  echo "=== $id (port $port, env: $envs): $*"
  local t0=$SECONDS
  ( cd "$JOB" && export MASTER_PORT="$port" && { [ "$envs" = "-" ] || export $envs; } &&
    exec setsid --wait timeout -s KILL "$RUN_TIMEOUT" "$@" ) > "$out/log.txt" 2>&1
  echo "    exit status $? after $((SECONDS - t0))s, $(wc -l < "$out/log.txt") lines"
  sleep 2
  local p   # kill (by pid) anything of ours still running in the job dir
  for p in $(ls /proc | grep -E '^[0-9]+$'); do
    [ "$(readlink "/proc/$p/cwd" 2>/dev/null)" = "$JOB" ] || continue
    echo "    killing leftover pid $p: $(tr '\0' ' ' < /proc/$p/cmdline 2>/dev/null | cut -c1-100)"
    kill -9 "$p" 2>/dev/null
  done
  rewrite "$out/log.txt"
  if [ -d "$JOB/logs" ]; then
    mkdir -p "$out/ranks"
    cp -r "$JOB"/logs/*/. "$out/ranks/"
    find "$out/ranks" -type f -exec sed -i -e "s#$VENV#/opt/venv#g" -e "s#$JOB#/home/user/job#g" {} +
  fi
}

want() { [ "${#SELECT[@]}" -eq 0 ] && return 0; local c; for c in "${SELECT[@]}"; do [ "$c" = "$1" ] && return 0; done; return 1; }
SELECT=("$@")

P=job50b.py
trc() { echo "$TORCHRUN --nnodes 1 --nproc-per-node $1 --master-addr 127.0.0.1 --master-port $2"; }   # console
trl() { echo "$(trc "$1" "$2") --log-dir logs --tee 3"; }                                            # + per-rank tree
mpi() { echo "mpirun --allow-run-as-root --oversubscribe --tag-output -np $1 -x PATH -x PYTHONUNBUFFERED -x OMP_NUM_THREADS -x MASTER_ADDR -x MASTER_PORT${2:+ -x $2} python"; }
spw() { echo "python $P --spawn $1"; }
shl() { echo "bash shell_launch.sh $1 python"; }

D=TORCH_DISTRIBUTED_DEBUG=DETAIL
I=TORCH_CPP_LOG_LEVEL=INFO

# id                                       port   env    command
c() { want "$1" && run_case "$@"; }
# 1. raise: KeyError in the culprit's data loading
c run-r50b-torchrun-raise-16            29751 -     $(trl 16 29751) $P --fault raise --culprit 11 --step 3 --timeout 45
c run-r50b-spawn-raise-12               29752 -     $(spw 12) --fault raise --culprit 7 --step 2 --timeout 30
c run-r50b-mpirun-raise-32              29753 -     $(mpi 32) $P --fault raise --culprit 29 --step 1 --timeout 60
c run-r50b-shell-raise-24               29754 -     $(shl 24) $P --fault raise --culprit 17 --step 4 --timeout 45
# 2. sigkill: the culprit is SIGKILLed, no traceback
c run-r50b-torchrun-sigkill-24          29755 -     $(trc 24 29755) $P --fault sigkill --culprit 19 --step 2 --timeout 45
c run-r50b-spawn-sigkill-32             29756 -     $(spw 32) --fault sigkill --culprit 26 --step 3 --timeout 60
c run-r50b-mpirun-sigkill-12            29757 -     $(mpi 12) $P --fault sigkill --culprit 10 --step 2 --timeout 30
c run-r50b-shell-sigkill-16             29758 -     $(shl 16) $P --fault sigkill --culprit 8 --step 1 --timeout 45
# 3. hang: the culprit stalls past the process-group timeout before the gradient all_reduce
c run-r50b-torchrun-hang-12             29759 -     $(trl 12 29759) $P --fault hang --culprit 6 --step 2 --timeout 30
c run-r50b-spawn-hang-16                29760 -     $(spw 16) --fault hang --culprit 14 --step 1 --timeout 40
c run-r50b-mpirun-hang-24               29761 -     $(mpi 24) $P --fault hang --culprit 21 --step 3 --timeout 45
c run-r50b-shell-hang-12                29762 -     $(shl 12) $P --fault hang --culprit 9 --step 2 --timeout 30
# 4. mismatch: the culprit all_reduces a gradient buffer one element longer
c run-r50b-torchrun-mismatch-32         29763 -     $(trc 32 29763) $P --fault mismatch --culprit 27 --step 2 --timeout 60
c run-r50b-spawn-mismatch-12-detail     29764 "$D"  $(spw 12) --fault mismatch --culprit 5 --step 3 --timeout 30
c run-r50b-mpirun-mismatch-16           29765 -     $(mpi 16) $P --fault mismatch --culprit 15 --step 1 --timeout 40
c run-r50b-shell-mismatch-16-detail     29766 "$D"  $(shl 16) $P --fault mismatch --culprit 10 --step 2 --timeout 40
c run-r50b-torchrun-mismatch-24-detail  29767 "$D"  $(trl 24 29767) $P --fault mismatch --culprit 13 --step 4 --timeout 45
# 5. compile: the culprit alone has CXX=/nonexistent/g++; the compiled eval first runs at --step
c run-r50b-torchrun-compile-12          29768 -     $(trl 12 29768) $P --fault compile --culprit 8 --step 2 --timeout 60
c run-r50b-spawn-compile-12             29769 -     $(spw 12) --fault compile --culprit 10 --step 0 --timeout 60
c run-r50b-mpirun-compile-12            29770 -     $(mpi 12) $P --fault compile --culprit 7 --step 1 --timeout 60
c run-r50b-shell-compile-16             29771 -     $(shl 16) $P --fault compile --culprit 12 --step 3 --steps 6 --timeout 60
# 6. healthy, noisy (a handled traceback and retry, a UserWarning, a slow rank, a compiled eval from step 3)
c run-r50b-torchrun-healthy-32          29772 -     $(trl 32 29772) $P --fault none --noisy --steps 5 --timeout 60
c run-r50b-mpirun-healthy-16-cppinfo    29773 "$I"  $(mpi 16 TORCH_CPP_LOG_LEVEL) $P --fault none --noisy --steps 5 --timeout 40
c run-r50b-spawn-healthy-24-detail      29774 "$D"  $(spw 24) --fault none --noisy --steps 5 --timeout 45
c run-r50b-shell-healthy-12             29775 -     $(shl 12) $P --fault none --noisy --steps 6 --timeout 30
exit 0
