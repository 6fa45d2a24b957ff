#!/usr/bin/env bash
# Round-7 real launcher runs (CPU, gloo, torch 2.13.0): shapes that stress "which rank started it".
# Each case writes $POOL/<case-id>/log.txt (the launcher's stdout+stderr, `cmd > log.txt 2>&1`; machine paths
# rewritten: venv -> /opt/venv, job dir -> /home/user/job) and, for the 2-node ranks/ case, ranks/node<N>.log.
# labels.py then writes label.json and checks every decisive line.
#
# Usage: run_all.sh [case-id ...]     (no argument: all cases, then labels.py)
# Env:   VENV (torch 2.13.0 + lightning + accelerate; default /tmp/r7venv), POOL (default
#        /work/main/tests/blind/pool7), JOB (scratch job dir, default /tmp/r7job). Needs openmpi-bin, setpriv,
#        root (the two checkpoint cases drop CAP_DAC_OVERRIDE with setpriv and make a directory mode 555).
# Ports 29700-29719. One case at a time (about 5 minutes in all on 2 cores).
set -u
HERE="$(cd "$(dirname "$0")" && pwd)"
VENV="${VENV:-/tmp/r7venv}"
POOL="${POOL:-/work/main/tests/blind/pool7}"
JOB="${JOB:-/tmp/r7job}"
PY="$VENV/bin/python"
TORCHRUN="$VENV/bin/torchrun"
ACC="$VENV/bin/accelerate"
MPIRUN="mpirun --allow-run-as-root --oversubscribe"
# root without CAP_DAC_OVERRIDE / CAP_DAC_READ_SEARCH: file modes apply to it like to any user, so a mode-555
# directory is read-only for the job (PermissionError: [Errno 13])
NO_DAC="setpriv --bounding-set -dac_override,-dac_read_search"
RUN_TIMEOUT=240

rm -rf "$JOB"; mkdir -p "$JOB"
cp "$HERE"/job7.py "$HERE"/acc7.py "$HERE"/pl7.py "$JOB"/
chmod 755 "$JOB"; chmod 644 "$JOB"/*.py
export PATH="$VENV/bin:$PATH"   # mpirun's `python` is the venv's
export PYTHONUNBUFFERED=1 OMP_NUM_THREADS=1

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
  rm -rf "$JOB/nodes" "$JOB"/emergency_rank*.pt "$JOB/lightning_logs" "$JOB/checkpoints" "$JOB/data"
  rm -rf "$JOB/.cache" "$JOB/.config" "$JOB"/.triton "$JOB/__pycache__"
}

finish() {   # rewrite paths; copy per-node files to ranks/ when asked
  local out="$POOL/$1"
  [ -f "$out/log.txt" ] && rewrite "$out/log.txt"
  if [ "${2:-}" = ranks ] && [ -d "$JOB/nodes" ]; then mkdir -p "$out/ranks"; cp -r "$JOB"/nodes/. "$out/ranks/"; fi
  [ -d "$out/ranks" ] && find "$out/ranks" -type f -exec sed -i -e "s#$VENV#/opt/venv#g" -e "s#$JOB#/home/user/job#g" {} +
  return 0
}

# run_case <case-id> <command...>: run in a fresh session under a hard timeout, capture the output.
run_case() {
  local id="$1"; shift
  local out="$POOL/$id"
  [ -n "${PREPARED:-}" ] || prepare "$id"
  PREPARED=
  echo "=== $id: $*"
  local t0=$SECONDS
  ( cd "$JOB" && exec setsid --wait timeout -s KILL "$RUN_TIMEOUT" "$@" ) > "$out/log.txt" 2>&1
  echo "    exit status $? after $((SECONDS - t0))s"
  sleep 2; reap wait
  finish "$id"
}

# run_2node <case-id> <layout> <port> <torchrun extra flags> <job args...>: two torchrun agents on this machine
# (--nnodes 2, 2 procs each, c10d rendezvous on 127.0.0.1:<port>; node 0 hosts the rendezvous store
# (is_host=1), node 1 joins), started together. Each agent's console goes to nodes/node<N>.log.
#   layout cat:   log.txt = node0.log followed by node1.log (cat node0 node1)
#   layout ranks: log.txt = both consoles appended as they are printed (one shared job log);
#                 ranks/node0.log, ranks/node1.log = each agent's own console
run_2node() {
  local id="$1" layout="$2" port="$3" tflags="$4"; shift 4
  local out="$POOL/$id"
  prepare "$id"; mkdir -p "$JOB/nodes"; : > "$out/log.txt"
  echo "=== $id ($layout): 2 x torchrun --nnodes 2 --nproc-per-node 2 (port $port) $tflags job7.py $*"
  local t0=$SECONDS n
  for n in 0 1; do
    local hostflag=$([ $n = 0 ] && echo 1 || echo 0)
    local cmd="$TORCHRUN --nnodes 2 --nproc-per-node 2 --node-rank $n --rdzv-backend c10d \
      --rdzv-endpoint 127.0.0.1:$port --rdzv-id job-2n-$port --rdzv-conf is_host=$hostflag $tflags job7.py $*"
    if [ "$layout" = cat ]; then
      ( cd "$JOB" && NODE_NAME=node$n exec setsid --wait timeout -s KILL "$RUN_TIMEOUT" bash -c "$cmd" ) \
        > "$JOB/nodes/node$n.log" 2>&1 &
    else
      ( cd "$JOB" && NODE_NAME=node$n exec setsid --wait timeout -s KILL "$RUN_TIMEOUT" bash -c \
        "$cmd 2>&1 | tee nodes/node$n.log" ) >> "$out/log.txt" 2>&1 &
    fi
  done
  wait
  echo "    done after $((SECONDS - t0))s"
  sleep 2; reap wait
  [ "$layout" = cat ] && cat "$JOB/nodes/node0.log" "$JOB/nodes/node1.log" > "$out/log.txt"
  finish "$id" "$([ "$layout" = ranks ] && echo ranks)"
}

want() { [ "${#SELECT[@]}" -eq 0 ] && return 0; local c; for c in "${SELECT[@]}"; do [ "$c" = "$1" ] && return 0; done; return 1; }
SELECT=("$@")

trn() { echo "$TORCHRUN" --nnodes 1 --nproc-per-node "$1" --master-addr 127.0.0.1 --master-port "$2"; }
mpi() { echo $MPIRUN --tag-output -np "$1" -x MASTER_ADDR=127.0.0.1 -x MASTER_PORT="$2" -x PATH -x PYTHONUNBUFFERED; }
spawn() { echo env MASTER_ADDR=127.0.0.1 MASTER_PORT="$1" "$PY" job7.py --spawn "$2"; }
J=job7.py

# ---- 1. rank 0 is the culprit
c=run7-torchrun-rank0-sigkill; want $c && run_case $c $(trn 4 29700) --tee 3 $J --scenario sigkill --fault-rank 0 \
  --fault-step 3
#   (mp.spawn was tried here first: it SIGTERMs the other ranks the moment rank 0 exits, before they print)
c=run7-mpirun-rank0-raise; want $c && run_case $c $(mpi 4 29701) python $J --scenario raise-metric --fault-rank 0 \
  --fault-step 3 --log-style asctime --destroy-on-error
c=run7-accelerate-rank0-hang; want $c && run_case $c $ACC launch --multi_gpu --num_processes 3 --num_machines 1 \
  --mixed_precision no --dynamo_backend no --num_cpu_threads_per_process 1 --main_process_port 29702 acc7.py \
  --fault-step 3 --hang-seconds 60 --pg-timeout 15
# ---- 2. world size 8 / 6, a middle rank fails
c=run7-torchrun-ws8-raise; want $c && run_case $c $(trn 8 29703) --tee 3 $J --scenario raise-parse --fault-rank 5 \
  --fault-step 2
c=run7-mpspawn-ws6-sigkill; want $c && run_case $c $(spawn 29704 6) --scenario sigkill --fault-rank 3 --fault-step 4 \
  --log-style asctime
# ---- 3. two ranks fail at different times (rank 3 at step 2 first, rank 1 at step 4)
#      timed: only rank 3 writes an emergency checkpoint (3 s) before re-raising, so rank 1 EXITS first
c=run7-mpirun-twofail-timed; want $c && run_case $c $(mpi 4 29705) python $J --scenario twofail --accum 8 \
  --step-seconds 0.5 --log-style asctime --linger-ranks 3
#      untimed (print lines): both write an emergency checkpoint, rank 3 also exits first
c=run7-torchrun-twofail-untimed; want $c && run_case $c $(trn 4 29706) --tee 3 $J --scenario twofail --accum 8 \
  --step-seconds 0.5 --log-style plain --linger-ranks 3,1
# ---- 4. two torchrun agents as two nodes on localhost; global rank 3 raises
c=run7-torchrun-2node-cat; want $c && run_2node $c cat 29707 "" --scenario raise-shape --fault-rank 3 --fault-step 3 \
  --log-style asctime
c=run7-torchrun-2node-ranks; want $c && run_2node $c ranks 29708 "--tee 3" --scenario raise-missing --fault-rank 3 \
  --fault-step 2
# ---- 5. rank only in a logging field, no launcher prefix; logger.exception then re-raise
c=run7-torchrun-rankfield-logexc; want $c && run_case $c $(trn 4 29709) $J --scenario raise-none --fault-rank 2 \
  --fault-step 3 --log-style rankfield
c=run7-mpspawn-adapter-logexc; want $c && run_case $c $(spawn 29710 4) --scenario raise-index --fault-rank 1 \
  --fault-step 4 --log-style adapter
# ---- 6. checkpoint save fails with PermissionError (a read-only, mode-555 directory; CAP_DAC_OVERRIDE dropped)
#      Lightning: rank 2's own local-state directory checkpoints/rank_2 is read-only
c=run7-lightning-ckpt-permission
if want $c; then
  prepare $c; mkdir -p "$JOB/checkpoints/rank_2"; chmod 555 "$JOB/checkpoints/rank_2"
  PREPARED=1 run_case $c $NO_DAC env MASTER_PORT=29711 "$PY" pl7.py --scenario ckpt-perm --fault-rank 2 --pg-timeout 20
fi
#      torchrun: rank 0 saves the checkpoint; checkpoints/ itself is read-only (makedirs of step_000004 fails)
c=run7-torchrun-ckpt-rank0-permission
if want $c; then
  prepare $c; mkdir -p "$JOB/checkpoints"; chmod 555 "$JOB/checkpoints"
  PREPARED=1 run_case $c $NO_DAC $(trn 3 29712) --tee 3 $J --scenario ckpt-perm --fault-rank 0 --fault-step 3 \
    --log-style asctime --pg-timeout 20
fi
# ---- 7. a DataLoader worker raises on one rank (Lightning DDP, num_workers=2)
c=run7-lightning-dataloader-worker; want $c && run_case $c env MASTER_PORT=29713 "$PY" pl7.py --scenario dl-worker \
  --fault-rank 1
# ---- 8. mpirun --tag-output, 4 ranks: rank 2 SIGKILLed; rank 1 hangs before a barrier (gloo timeout 15 s)
c=run7-mpirun-sigkill; want $c && run_case $c $(mpi 4 29714) python $J --scenario sigkill --fault-rank 2 --fault-step 3 \
  --log-style asctime
c=run7-mpirun-barrier-hang; want $c && run_case $c $(mpi 4 29715) python $J --scenario hang --hang-barrier \
  --fault-rank 1 --fault-step 2 --hang-seconds 60 --pg-timeout 15

rm -rf "$JOB"
[ "${#SELECT[@]}" -eq 0 ] && "$PY" "$HERE/labels.py" "$POOL"
exit 0
