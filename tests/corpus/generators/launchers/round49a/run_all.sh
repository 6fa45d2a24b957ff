#!/usr/bin/env bash
# Round 49a: real runs of ranks that fall out of step in their sequence of collectives (desync),
# 4-6 ranks, gloo, torch 2.13.0 CPU, short process-group timeouts. Program: desync49a.py (its
# docstring says what each --fault induces). Launchers: torchrun (console, or --log-dir logs --tee 3),
# mp.spawn, mpirun --tag-output (Open MPI), and a plain shell loop (shell_launch.sh).
# Each case writes $POOL/<case-id>/log.txt (`cmd > log.txt 2>&1`, venv -> /opt/venv, job dir ->
# /home/user/job) and, for --log-dir cases, ranks/ (the launcher's tree, run-id folder flattened).
# labels49a.py then writes label.json for every case and checks each decisive line with grep -F logic.
#
# Usage: run_all.sh [case-id ...]    (no argument: all cases)
# Env:   VENV (default /work/helpers/venv49a), POOL (default /tmp/h49a/pool), JOB (default /tmp/h49a/job)
# Needs openmpi-bin (mpirun). Ports 29651-29680. Then: python3 labels49a.py "$POOL".
set -u
HERE="$(cd "$(dirname "$0")" && pwd)"
VENV="${VENV:-/work/helpers/venv49a}"
POOL="${POOL:-/tmp/h49a/pool}"
JOB="${JOB:-/tmp/h49a/job}"
PY="$VENV/bin/python"
TORCHRUN="$VENV/bin/torchrun"
RUN_TIMEOUT=240

mkdir -p "$JOB" "$POOL"
cp "$HERE"/desync49a.py "$HERE"/shell_launch.sh "$JOB"/
export PATH="$VENV/bin:$PATH" PYTHONUNBUFFERED=1 MASTER_ADDR=127.0.0.1
unset TORCH_DISTRIBUTED_DEBUG TORCH_CPP_LOG_LEVEL

rewrite() { sed -i -e "s#$VENV#/opt/venv#g" -e "s#$JOB#/home/user/job#g" "$@"; }

# run_case <case-id> <port> <env assignments or -> <command...>
run_case() {
  local id="$1" port="$2" envs="$3"; shift 3
  local out="$POOL/$id"
  rm -rf "$out"; mkdir -p "$out"
  rm -rf "$JOB/logs"
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

P=desync49a.py
trc() { echo "$TORCHRUN --nnodes 1 --nproc-per-node $1 --master-addr 127.0.0.1 --master-port $2"; }   # console
trl() { echo "$(trc "$1" "$2") --log-dir logs --tee 3"; }                                            # + per-rank tree
mpi() { echo "mpirun --allow-run-as-root --oversubscribe --tag-output -np $1 -x PATH -x PYTHONUNBUFFERED -x MASTER_ADDR -x MASTER_PORT${2:+ -x $2}${3:+ -x $3} python"; }
spw() { echo "python $P --spawn $1"; }
shl() { echo "bash shell_launch.sh $1 python"; }

D=TORCH_DISTRIBUTED_DEBUG=DETAIL
I=TORCH_CPP_LOG_LEVEL=INFO

# id                                     port   env      command
c() { want "$1" && run_case "$@"; }
# 1. skip one all_reduce
c run-r49a-torchrun-skip              29651 -        $(trc 4 29651) $P --fault skip --culprit 3 --step 2 --timeout 15
c run-r49a-shell-skip-detail          29652 "$D"     $(shl 5) $P --fault skip --culprit 2 --step 3 --timeout 20
c run-r49a-spawn-skip-detail-cppinfo  29653 "$D $I"  $(spw 6) --fault skip --culprit 4 --step 2 --timeout 20
# 2. collectives in another order
c run-r49a-mpirun-order               29654 -        $(mpi 4) $P --fault order --culprit 2 --step 2 --timeout 15
c run-r49a-torchrun-order-detail      29655 "$D"     $(trl 5 29655) $P --fault order --culprit 4 --step 2 --timeout 20
# 3. other dtype / op / element count
c run-r49a-spawn-dtype                29656 -        $(spw 4) --fault dtype --culprit 1 --step 3 --timeout 15
c run-r49a-torchrun-op                29657 -        $(trc 6 29657) $P --fault op --culprit 5 --step 2 --timeout 20
c run-r49a-shell-count                29658 -        $(shl 4) $P --fault count --culprit 2 --step 3 --timeout 15
c run-r49a-mpirun-dtype-detail        29659 "$D"     $(mpi 5 TORCH_DISTRIBUTED_DEBUG) $P --fault dtype --culprit 3 --step 2 --timeout 20
c run-r49a-spawn-op-detail-cppinfo    29660 "$D $I"  $(spw 4) --fault op --culprit 2 --step 3 --timeout 15
c run-r49a-torchrun-count-detail      29661 "$D"     $(trl 4 29661) $P --fault count --culprit 1 --step 2 --timeout 15
# 4. one rank runs one step fewer
c run-r49a-torchrun-short             29662 -        $(trl 4 29662) $P --fault short --culprit 2 --step 4 --timeout 15
c run-r49a-spawn-exit0                29663 -        $(spw 4) --fault exit0 --culprit 3 --step 4 --timeout 15
c run-r49a-mpirun-short               29664 -        $(mpi 5) $P --fault short --culprit 4 --step 4 --timeout 20
c run-r49a-shell-short-detail         29665 "$D"     $(shl 4) $P --fault short --culprit 1 --step 4 --timeout 15
c run-r49a-torchrun-exit0-detail-cppinfo 29666 "$D $I" $(trc 5 29666) $P --fault exit0 --culprit 3 --step 4 --timeout 20
# 5. an extra barrier / extra all_reduce on one rank
c run-r49a-spawn-extra-barrier        29667 -        $(spw 5) --fault extra_barrier --culprit 4 --step 2 --timeout 15
c run-r49a-shell-extra-reduce         29668 -        $(shl 6) $P --fault extra_reduce --culprit 3 --step 2 --timeout 20
c run-r49a-mpirun-extra-barrier       29669 -        $(mpi 4) $P --fault extra_barrier --culprit 1 --step 3 --timeout 15
c run-r49a-torchrun-extra-reduce-detail 29670 "$D"   $(trc 4 29670) $P --fault extra_reduce --culprit 2 --step 3 --timeout 15
c run-r49a-mpirun-extra-reduce-detail 29671 "$D $I"  $(mpi 6 TORCH_DISTRIBUTED_DEBUG TORCH_CPP_LOG_LEVEL) $P --fault extra_reduce --culprit 5 --step 2 --timeout 20
c run-r49a-shell-extra-barrier-detail 29672 "$D"     $(shl 5) $P --fault extra_barrier --culprit 3 --step 2 --timeout 20
# 7. monitored_barrier with one or two ranks stuck elsewhere
c run-r49a-torchrun-monitored         29673 -        $(trl 4 29673) $P --fault monitored --culprit 2 --step 2 --timeout 15
c run-r49a-mpirun-monitored-two       29674 -        $(mpi 5) $P --fault monitored --culprit 1,3 --step 2 --timeout 15
c run-r49a-spawn-monitored            29675 "$D"     $(spw 4) --fault monitored --culprit 3 --step 3 --timeout 15
c run-r49a-shell-monitored-two        29676 -        $(shl 6) $P --fault monitored --culprit 2,5 --step 2 --timeout 20
# 8. healthy runs
c run-r49a-torchrun-healthy           29677 -        $(trl 4 29677) $P --fault none --steps 8 --timeout 15
c run-r49a-mpirun-healthy             29678 -        $(mpi 5) $P --fault none --steps 6 --timeout 20
c run-r49a-spawn-healthy-detail       29679 "$D"     $(spw 4) --fault none --steps 7 --timeout 15
c run-r49a-shell-healthy              29680 -        $(shl 6) $P --fault none --steps 6 --timeout 20
exit 0
