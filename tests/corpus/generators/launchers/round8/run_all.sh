#!/usr/bin/env bash
# Round-8 real launcher runs (CPU, gloo) on three other PyTorch releases: 2.2.2 (t22), 2.5.1 (t25), 2.8.0 (t28).
# Shapes that stress "which rank started it" (rank 0, middle ranks and the last rank as initiator).
# Each case writes $POOL/<case-id>/log.txt (the launcher's stdout+stderr, `cmd > log.txt 2>&1`; machine paths
# rewritten: venv -> /opt/venv, job dir -> /home/user/job). Labels are written by hand afterwards (label.json).
#
# Usage: run_all.sh [case-id ...]     (no argument: all cases)
# Env:   V22 / V25 / V28 (virtualenvs with torch 2.2.2 / 2.5.1 / 2.8.0; default /tmp/h7b/v22 ...),
#        POOL (default /work/main/tests/blind/test8), JOB (scratch job dir, default /tmp/r8job).
# Needs openmpi-bin (mpirun), root (the hostoom case makes a cgroup-v1 memory cgroup). Ports 29800-29820.
# One case at a time, 2 cores: about 10 minutes in all.
set -u
HERE="$(cd "$(dirname "$0")" && pwd)"
V22="${V22:-/tmp/h7b/v22}"; V25="${V25:-/tmp/h7b/v25}"; V28="${V28:-/tmp/h7b/v28}"
POOL="${POOL:-/work/main/tests/blind/test8}"
JOB="${JOB:-/tmp/r8job}"
MPIRUN="mpirun --allow-run-as-root --oversubscribe"
RUN_TIMEOUT=240
CG=/sys/fs/cgroup/memory/r8-oom

rm -rf "$JOB"; mkdir -p "$JOB"
cp "$HERE"/job8.py "$HERE"/launch_label.sh "$JOB"/
export PYTHONUNBUFFERED=1 OMP_NUM_THREADS=1

# kill (by pid) whatever of ours is still running in the job dir (processes whose cwd is $JOB); with "wait",
# first give orphans up to 60 s to finish by themselves.
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

# run_case <case-id> <venv> <command...>: run in the job dir, in a fresh session under a hard timeout, with the
# venv's bin first on PATH (so mpirun's and the bash launcher's `python` is the venv's); capture the output.
run_case() {
  local id="$1" venv="$2"; shift 2
  local out="$POOL/$id"
  rm -rf "$out"; mkdir -p "$out"
  rm -rf "$JOB/data" "$JOB"/emergency_rank*.pt "$JOB/__pycache__"
  echo "=== $id ($venv): $*"
  local t0=$SECONDS
  ( cd "$JOB" && export PATH="$venv/bin:$PATH" && exec setsid --wait timeout -s KILL "$RUN_TIMEOUT" "$@" ) \
    > "$out/log.txt" 2>&1
  echo "    exit status $? after $((SECONDS - t0))s"
  sleep 2; reap wait
  sed -i -e "s#$venv#/opt/venv#g" -e "s#$JOB#/home/user/job#g" "$out/log.txt"
}

want() { [ "${#SELECT[@]}" -eq 0 ] && return 0; local c; for c in "${SELECT[@]}"; do [ "$c" = "$1" ] && return 0; done; return 1; }
SELECT=("$@")

trn() { echo torchrun --nnodes 1 --nproc-per-node "$1" --master-addr 127.0.0.1 --master-port "$2"; }
mpi() { echo $MPIRUN --tag-output -np "$1" -x MASTER_ADDR=127.0.0.1 -x MASTER_PORT="$2" -x PATH -x PYTHONUNBUFFERED \
  -x OMP_NUM_THREADS; }
spawn() { echo env MASTER_ADDR=127.0.0.1 MASTER_PORT="$1" python job8.py --spawn "$2"; }
J=job8.py

# ---- 1. one rank raises at step k
c=run8-t22-torchrun-tee-raise-last; want $c && run_case $c $V22 $(trn 4 29800) --tee 3 $J --scenario raise-key \
  --fault-rank 3 --fault-step 3
c=run8-t28-torchrun-raise-rank0; want $c && run_case $c $V28 $(trn 5 29801) $J --scenario raise-value \
  --fault-rank 0 --fault-step 2 --log-style asctime
c=run8-t25-mpspawn-raise-last; want $c && run_case $c $V25 $(spawn 29802 3) --scenario raise-zero --fault-rank 2 \
  --fault-step 4
c=run8-t28-mpirun-raise; want $c && run_case $c $V28 $(mpi 6 29803) python $J --scenario raise-type --fault-rank 1 \
  --fault-step 2
# ---- 2. a rank dies without a traceback: SIGKILL, os._exit(3), SIGSEGV
c=run8-t25-torchrun-ws8-sigkill-last; want $c && run_case $c $V25 $(trn 8 29804) --tee 3 $J --scenario sigkill \
  --fault-rank 7 --fault-step 3
c=run8-t25-mpspawn-sigkill-rank0; want $c && run_case $c $V25 $(spawn 29805 4) --scenario sigkill --fault-rank 0 \
  --fault-step 2 --log-style asctime
c=run8-t28-torchrun-exit3-rank0; want $c && run_case $c $V28 $(trn 3 29806) --tee 3 $J --scenario exit3 \
  --fault-rank 0 --fault-step 3
c=run8-t22-mpirun-segv-last; want $c && run_case $c $V22 $(mpi 4 29807) python $J --scenario segv --fault-rank 3 \
  --fault-step 2
# ---- 3. one rank hangs before a collective, the others time out
c=run8-t22-torchrun-hang-rank0-timed; want $c && run_case $c $V22 $(trn 4 29808) --tee 3 $J --scenario hang \
  --fault-rank 0 --fault-step 3 --hang-seconds 60 --pg-timeout 15 --log-style asctime
c=run8-t25-torchrun-mbarrier-last; want $c && run_case $c $V25 $(trn 5 29809) $J --scenario hang-mbarrier \
  --fault-rank 4 --fault-step 2 --hang-seconds 60 --pg-timeout 15
c=run8-t28-mpirun-hang; want $c && run_case $c $V28 $(mpi 3 29810) python $J --scenario hang --fault-rank 1 \
  --fault-step 2 --hang-seconds 60 --pg-timeout 20
# ---- 4. collective mismatch, TORCH_DISTRIBUTED_DEBUG=DETAIL, 4 ranks
c=run8-t28-torchrun-mismatch-size-detail; want $c && run_case $c $V28 env TORCH_DISTRIBUTED_DEBUG=DETAIL \
  $(trn 4 29811) --tee 3 $J --scenario mismatch-size --fault-rank 3 --fault-step 2 --pg-timeout 20
c=run8-t22-mpirun-mismatch-op-detail-rank0; want $c && run_case $c $V22 $(mpi 4 29812) \
  -x TORCH_DISTRIBUTED_DEBUG=DETAIL python $J --scenario mismatch-op --fault-rank 0 --fault-step 3 --pg-timeout 20
# ---- 5. store/rendezvous: a bash launcher (srun --label style "N: ") gives one rank a wrong MASTER_PORT
c=run8-t25-label-store-wrong-port-rank0; want $c && run_case $c $V25 bash launch_label.sh 4 29813 0 29814 \
  python $J --pg-timeout 20
c=run8-t22-label-store-wrong-port-last; want $c && run_case $c $V22 bash launch_label.sh 3 29815 2 29816 \
  python $J --pg-timeout 20
# ---- 6. two ranks fail at different times (accumulation: no collective before step 8)
#      timed: rank 2 fails first (step 2) and spends 3 s on an emergency checkpoint; rank 0 fails at step 4 and
#      exits at once, so mpirun names rank 0
c=run8-t25-mpirun-twofail-timed; want $c && run_case $c $V25 $(mpi 4 29817) python $J --scenario twofail \
  --fault-rank 2 --fault-step 1 --fault-rank2 0 --fault-step2 3 --accum 8 --step-seconds 0.5 --linger-seconds 3 \
  --log-style asctime
#      untimed: rank 4 fails first (step 1), rank 1 at step 3 and exits first
c=run8-t22-torchrun-twofail-untimed; want $c && run_case $c $V22 $(trn 5 29818) --tee 3 $J --scenario twofail \
  --fault-rank 4 --fault-step 0 --fault-rank2 1 --fault-step2 2 --accum 8 --step-seconds 0.5 --linger-seconds 3
# ---- 7. one rank OOM-killed in a memory cgroup (cgroup v1, 1 GiB incl. swap); the faulty rank moves itself in
#      (writes its pid to $R8_OOM_CGROUP/cgroup.procs at startup). in_cgroup <case-id> <venv> <command...>
in_cgroup() {
  [ -d $CG ] && rmdir $CG
  mkdir $CG && echo $((1024 * 1024 * 1024)) > $CG/memory.limit_in_bytes && \
    { [ ! -f $CG/memory.memsw.limit_in_bytes ] || echo $((1024 * 1024 * 1024)) > $CG/memory.memsw.limit_in_bytes; } && \
    run_case "$@"
  echo "    cgroup oom_kill: $(grep oom_kill $CG/memory.oom_control | tr '\n' ' ')"; rmdir $CG
}
c=run8-t28-torchrun-hostoom; want $c && in_cgroup $c $V28 env R8_OOM_CGROUP=$CG $(trn 3 29819) --tee 3 $J \
  --scenario hostoom --fault-rank 1 --fault-step 3
c=run8-t25-mpirun-hostoom-rank0; want $c && in_cgroup $c $V25 $(mpi 4 29820) -x R8_OOM_CGROUP=$CG python $J \
  --scenario hostoom --fault-rank 0 --fault-step 2 --log-style asctime

rm -rf "$JOB"
exit 0
