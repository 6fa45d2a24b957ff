#!/usr/bin/env bash
# Reproduce the plain-PyTorch launcher cases (CPU, gloo, torch 2.13.0):
#   torchrun --tee 3                          -> run-torchrun-<scenario>
#   torchrun --log-dir D --redirects 3 --tee 3 -> run-torchrun-logdir-<scenario> (+ ranks/ tree)
#   torch.multiprocessing.spawn                -> run-mpspawn-<scenario>
#   Open MPI mpirun --tag-output               -> run-mpirun-<scenario>
# Each case writes log.txt (launcher stdout+stderr, machine paths rewritten) into
# $POOL/<case-id>/; labels.py then writes label.json from what each run induced and checks every
# decisive line against the log.
#
# Usage: run_all.sh [case-id ...]     (no argument: all cases)
# Env:   VENV (python venv with torch 2.13.0), POOL (output dir), JOB (scratch job dir, rewritten
#        to /home/user/job in the logs). Needs root for the hostoom cases (cgroup v1 memory).
set -u
HERE="$(cd "$(dirname "$0")" && pwd)"
VENV="${VENV:-/work/venv-launch}"
POOL="${POOL:-/work/main/tests/blind/pool}"
JOB="${JOB:-/tmp/plain-launch-job}"
PY="$VENV/bin/python"
TORCHRUN="$VENV/bin/torchrun"
MPIRUN="mpirun --allow-run-as-root --oversubscribe --tag-output"
CG_ROOT=/sys/fs/cgroup/memory
RUN_TIMEOUT=240

mkdir -p "$JOB"
cp "$HERE"/ddp_faults.py "$HERE"/train_env.py "$HERE"/train_spawn.py "$JOB"/

rewrite() {  # machine-specific paths only
  sed -i -e "s#$VENV#/opt/venv#g" -e "s#$JOB#/home/user/job#g" "$@"
}

# run_case <case-id> <port> <command...>: run the launcher in its own session, capture its output,
# then kill (by pid) any process of ours still running in the job dir.
run_case() {
  local id="$1" port="$2"; shift 2
  local out="$POOL/$id"
  mkdir -p "$out"
  echo "=== $id (port $port): $*"
  ( cd "$JOB" && export MASTER_PORT="$port" && exec setsid --wait timeout -s KILL "$RUN_TIMEOUT" "$@" ) \
    > "$out/log.txt" 2>&1
  echo "    exit status $?"
  sleep 2
  # leftovers: any process still running in the job dir (only our ranks/launchers run there)
  local p
  for p in $(ls /proc | grep -E '^[0-9]+$'); do
    [ "$(readlink "/proc/$p/cwd" 2>/dev/null)" = "$JOB" ] || continue
    echo "    killing leftover pid $p: $(tr '\0' ' ' < /proc/$p/cmdline 2>/dev/null | cut -c1-100)"
    kill -9 "$p" 2>/dev/null
  done
  rewrite "$out/log.txt"
}

# hostoom: a memory cgroup that only the faulty rank joins (it writes its pid to cgroup.procs)
make_cgroup() {
  local cg="$CG_ROOT/plain_launch_oom_$1"
  mkdir -p "$cg"
  echo $((1024 * 1024 * 1024)) > "$cg/memory.limit_in_bytes"
  [ -e "$cg/memory.memsw.limit_in_bytes" ] && echo $((1024 * 1024 * 1024)) > "$cg/memory.memsw.limit_in_bytes"
  echo "$cg"
}
drop_cgroup() {
  local cg="$CG_ROOT/plain_launch_oom_$1"
  echo "    cgroup oom_control: $(tr '\n' ' ' < "$cg/memory.oom_control")"
  for i in 1 2 3 4 5; do rmdir "$cg" 2>/dev/null && return 0; sleep 1; done
  echo "    WARNING: could not remove $cg"
}

want() {  # case selected on the command line (or no selection)
  [ "${#SELECT[@]}" -eq 0 ] && return 0
  local c; for c in "${SELECT[@]}"; do [ "$c" = "$1" ] && return 0; done; return 1
}
SELECT=("$@")
export TORCHINDUCTOR_COMPILE_THREADS=1
export PYTHONUNBUFFERED=1

# ---------------------------------------------------------------- (1) torchrun --tee 3, 4 ranks
TR=("$TORCHRUN" --nnodes 1 --nproc-per-node 4 --master-addr 127.0.0.1 --tee 3)
trp() { echo --master-port "$1"; }
c=run-torchrun-raise;    want $c && run_case $c 29630 "${TR[@]}" $(trp 29630) train_env.py --scenario raise --fault-rank 2
c=run-torchrun-sigkill;  want $c && run_case $c 29631 "${TR[@]}" $(trp 29631) train_env.py --scenario sigkill --fault-rank 1
c=run-torchrun-hang;     want $c && run_case $c 29632 "${TR[@]}" $(trp 29632) train_env.py --scenario hang --fault-rank 3 --pg-timeout 15
c=run-torchrun-mismatch; want $c && run_case $c 29633 "${TR[@]}" $(trp 29633) train_env.py --scenario mismatch --fault-rank 2
c=run-torchrun-mismatch-detail; want $c && TORCH_DISTRIBUTED_DEBUG=DETAIL run_case $c 29634 "${TR[@]}" $(trp 29634) train_env.py --scenario mismatch --fault-rank 1 --grad-sync manual
c=run-torchrun-compile;  want $c && TORCHINDUCTOR_CACHE_DIR="$JOB/cache/$c" run_case $c 29635 "${TR[@]}" $(trp 29635) train_env.py --scenario compile --compile-fault cxx --fault-rank 3
c=run-torchrun-compile-fullgraph; want $c && TORCHINDUCTOR_CACHE_DIR="$JOB/cache/$c" run_case $c 29636 "${TR[@]}" $(trp 29636) train_env.py --scenario compile --compile-fault fullgraph --fault-rank 2
c=run-torchrun-hostoom
if want $c; then
  cg=$(make_cgroup $c)
  FAULT_CGROUP="$cg" run_case $c 29637 "${TR[@]}" $(trp 29637) train_env.py --scenario hostoom --fault-rank 2
  drop_cgroup $c
fi

# -------------------------------- (2) torchrun --log-dir D --redirects 3 --tee 3, 3 ranks, ranks/ tree
# logdir_case <case-id> <port> <train args...>
logdir_case() {
  local id="$1" port="$2"; shift 2
  local ld="$JOB/logs/$id"
  rm -rf "$ld"; mkdir -p "$ld"
  run_case "$id" "$port" "$TORCHRUN" --nnodes 1 --nproc-per-node 3 --master-addr 127.0.0.1 \
    --master-port "$port" --log-dir "$ld" --redirects 3 --tee 3 train_env.py "$@"
  rm -rf "$POOL/$id/ranks"
  # keep the layout torchrun wrote: <run_id>/attempt_0/<rank>/{stdout,stderr}.log
  cp -r "$ld" "$POOL/$id/ranks"
  find "$POOL/$id/ranks" -type f -exec sed -i -e "s#$VENV#/opt/venv#g" -e "s#$JOB#/home/user/job#g" {} +
}
c=run-torchrun-logdir-raise;    want $c && logdir_case $c 29640 --scenario raise --fault-rank 1
c=run-torchrun-logdir-sigkill;  want $c && logdir_case $c 29641 --scenario sigkill --fault-rank 2
c=run-torchrun-logdir-hang;     want $c && logdir_case $c 29642 --scenario hang --fault-rank 1 --pg-timeout 20
c=run-torchrun-logdir-mismatch; want $c && logdir_case $c 29643 --scenario mismatch --fault-rank 1
c=run-torchrun-logdir-mismatch-detail; want $c && TORCH_DISTRIBUTED_DEBUG=DETAIL logdir_case $c 29644 --scenario mismatch --fault-rank 2 --grad-sync manual
c=run-torchrun-logdir-compile;  want $c && TORCHINDUCTOR_CACHE_DIR="$JOB/cache/$c" logdir_case $c 29645 --scenario compile --compile-fault fullgraph --fault-rank 1
c=run-torchrun-logdir-hostoom
if want $c; then
  cg=$(make_cgroup $c)
  FAULT_CGROUP="$cg" logdir_case $c 29646 --scenario hostoom --fault-rank 2
  drop_cgroup $c
fi

# ------------------------------------------------------- (3) torch.multiprocessing.spawn, 3 ranks
SP=("$PY" train_spawn.py --nprocs 3)
export MASTER_ADDR=127.0.0.1
c=run-mpspawn-raise;    want $c && run_case $c 29650 "${SP[@]}" --scenario raise --fault-rank 2
c=run-mpspawn-sigkill;  want $c && run_case $c 29651 "${SP[@]}" --scenario sigkill --fault-rank 1
c=run-mpspawn-hang;     want $c && run_case $c 29652 "${SP[@]}" --scenario hang --fault-rank 2 --pg-timeout 15
c=run-mpspawn-mismatch; want $c && run_case $c 29653 "${SP[@]}" --scenario mismatch --fault-rank 2
c=run-mpspawn-mismatch-detail; want $c && TORCH_DISTRIBUTED_DEBUG=DETAIL run_case $c 29654 "${SP[@]}" --scenario mismatch --fault-rank 1 --grad-sync manual
c=run-mpspawn-compile;  want $c && TORCHINDUCTOR_CACHE_DIR="$JOB/cache/$c" run_case $c 29655 "${SP[@]}" --scenario compile --compile-fault cxx --fault-rank 1
c=run-mpspawn-hostoom
if want $c; then
  cg=$(make_cgroup $c)
  FAULT_CGROUP="$cg" run_case $c 29656 "${SP[@]}" --scenario hostoom --fault-rank 1
  drop_cgroup $c
fi

# ------------------------------------------------------------ (4) Open MPI mpirun, 4 ranks
# ranks read OMPI_COMM_WORLD_RANK/SIZE; gloo rendezvous via env:// on 127.0.0.1
mpi() {  # mpi <port> [extra -x ...] -- <train args>
  local port="$1"; shift
  echo $MPIRUN -np 4 -x MASTER_ADDR=127.0.0.1 -x MASTER_PORT="$port" -x PYTHONUNBUFFERED=1
}
c=run-mpirun-raise;    want $c && run_case $c 29660 $(mpi 29660) "$PY" train_env.py --scenario raise --fault-rank 3
c=run-mpirun-sigkill;  want $c && run_case $c 29661 $(mpi 29661) "$PY" train_env.py --scenario sigkill --fault-rank 2
c=run-mpirun-hang;     want $c && run_case $c 29662 $(mpi 29662) "$PY" train_env.py --scenario hang --fault-rank 1 --pg-timeout 15
c=run-mpirun-mismatch; want $c && run_case $c 29663 $(mpi 29663) "$PY" train_env.py --scenario mismatch --fault-rank 3
c=run-mpirun-mismatch-detail; want $c && run_case $c 29664 $(mpi 29664) -x TORCH_DISTRIBUTED_DEBUG=DETAIL "$PY" train_env.py --scenario mismatch --fault-rank 2 --grad-sync manual
c=run-mpirun-compile;  want $c && run_case $c 29665 $(mpi 29665) -x TORCHINDUCTOR_CACHE_DIR="$JOB/cache/run-mpirun-compile" -x TORCHINDUCTOR_COMPILE_THREADS=1 "$PY" train_env.py --scenario compile --compile-fault cxx --fault-rank 1
c=run-mpirun-compile-fullgraph; want $c && run_case $c 29666 $(mpi 29666) -x TORCHINDUCTOR_CACHE_DIR="$JOB/cache/run-mpirun-compile-fullgraph" -x TORCHINDUCTOR_COMPILE_THREADS=1 "$PY" train_env.py --scenario compile --compile-fault fullgraph --fault-rank 3
c=run-mpirun-hostoom
if want $c; then
  cg=$(make_cgroup $c)
  run_case $c 29667 $(mpi 29667) -x FAULT_CGROUP="$cg" "$PY" train_env.py --scenario hostoom --fault-rank 2
  drop_cgroup $c
fi
# label.json for every case (decisive lines are checked against the fresh logs)
"$PY" "$HERE/labels.py" "$POOL" "${SELECT[@]}"
echo "done"
