#!/usr/bin/env bash
# Round 11: real multi-rank failure logs from real launchers (CPU, gloo, torch 2.13.0).
#
#   bash run_all.sh                 # every case
#   bash run_all.sh lightning-hang  # only the cases whose id contains this
#
# Each case writes $POOL/<id>/log.txt (the launcher's console, stdout+stderr) and,
# for two-agent torchrun and torchrun --log-dir, $POOL/<id>/ranks/.  Paths of the
# venv and of this folder are then rewritten to /opt/venv and /home/user/job.
# label.json files are written afterwards by labels11.py (python3 labels11.py).
#
# Every process of a case carries R11_TAG=<id> in its environment; after the case
# any process still carrying it is SIGKILLed by pid, so no rank is left behind.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
VENV=${VENV:-/work/venv-r11}
POOL=${POOL:-/work/main/tests/blind/pool11}
FILTER=${1:-}
export PATH="$VENV/bin:$PATH"
export PYTHONDONTWRITEBYTECODE=1
# Open MPI refuses root unless told; 2 cores here, so allow oversubscription
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
cd "$HERE"
printf 'localhost slots=8\n' > hostfile

kill_tagged() {  # SIGKILL, by pid, every process still carrying R11_TAG=$1
  local tag=$1 pids=() f pid
  for f in /proc/[0-9]*/environ; do
    pid=${f#/proc/}; pid=${pid%/environ}
    [ "$pid" = "$$" ] && continue
    if { tr '\0' '\n' < "$f"; } 2>/dev/null | grep -qxF "R11_TAG=$tag"; then pids+=("$pid"); fi
  done
  if [ ${#pids[@]} -gt 0 ]; then
    echo "  cleanup: SIGKILL leftover pids ${pids[*]}" >&2
    kill -9 "${pids[@]}" 2>/dev/null
  fi
}

rewrite() {  # machine-specific paths only
  sed -i -e "s#$VENV#/opt/venv#g" -e "s#$HERE#/home/user/job#g" "$@"
}

launch() {  # launch OUTFILE CMD...: run a launcher under the case tag, 110 s at most
  local out=$1; shift
  env R11_TAG="$CASE" timeout -k 5 110 "$@" > "$out" 2>&1
}

begin() {  # begin ID: fresh case folder; returns 1 when filtered out
  CASE=$1
  if [ -n "$FILTER" ] && [[ "$CASE" != *"$FILTER"* ]]; then return 1; fi
  DIR="$POOL/$CASE"; rm -rf "$DIR"; mkdir -p "$DIR"
  echo "== $CASE"; T0=$SECONDS
}

finish() {
  kill_tagged "$CASE"
  [ -d "$DIR/ranks" ] && find "$DIR/ranks" -type f -exec sed -i -e "s#$VENV#/opt/venv#g" -e "s#$HERE#/home/user/job#g" {} +
  rewrite "$DIR/log.txt"
  echo "  rc=$RC wall=$((SECONDS - T0))s lines=$(wc -l < "$DIR/log.txt")"
}

TR="torchrun"

# ---- (1) torchrun, two agents on this host (nnodes 2 x nproc 2), c10d rendezvous.
# Only node 1's agent is given the fault (by LOCAL_RANK); log.txt = node0 then node1.
two_agents() {  # two_agents PORT NODE1_FAULT_ARGS...
  local port=$1; shift
  mkdir -p "$DIR/ranks"
  local common=(--nnodes 2 --nproc-per-node 2 --rdzv-backend c10d
                --rdzv-endpoint 127.0.0.1:$port --rdzv-id "$CASE" --max-restarts 0)
  launch "$DIR/ranks/node0.log" $TR "${common[@]}" --node-rank 0 train_plain.py --steps 8 &
  local p0=$!
  sleep 1
  launch "$DIR/ranks/node1.log" $TR "${common[@]}" --node-rank 1 train_plain.py --steps 8 "$@" &
  local p1=$!
  wait $p0; local r0=$?; wait $p1; local r1=$?
  RC="node0:$r0,node1:$r1"
  cat "$DIR/ranks/node0.log" "$DIR/ranks/node1.log" > "$DIR/log.txt"
}
if begin run11-torchrun2n-raise; then
  two_agents 29701 --fault raise --fault-local-rank 1 --fault-step 3; finish; fi
if begin run11-torchrun2n-sigkill; then
  two_agents 29702 --fault sigkill --fault-local-rank 0 --fault-step 4; finish; fi
if begin run11-torchrun2n-hang; then
  two_agents 29717 --fault hang --fault-local-rank 0 --fault-step 2 --timeout-s 20; finish; fi

# ---- (2) accelerate launch --cpu --mpirun_hostfile (MULTI_CPU: accelerate wraps mpirun).
# accelerate always passes `--bind-to socket`; Open MPI then refuses >2 ranks on this
# 2-core VM, so hwloc is shown a synthetic 8-core package (binding stays on the real cpus).
acc() {  # acc NPROC PORT ARGS...
  local n=$1 port=$2; shift 2
  HWLOC_SYNTHETIC="pack:1 core:8 pu:1" HWLOC_THISSYSTEM=1 \
  launch "$DIR/log.txt" accelerate launch --cpu --num_processes "$n" --num_machines 1 \
      --mixed_precision no --dynamo_backend no --mpirun_hostfile hostfile \
      --main_process_port "$port" train_accelerate.py --steps 8 "$@"
  RC=$?
}
if begin run11-accelerate-hang; then
  acc 4 29703 --fault hang --fault-rank 2 --fault-step 2 --timeout-s 20; finish; fi
if begin run11-accelerate-sigkill; then
  acc 3 29704 --fault sigkill --fault-rank 1 --fault-step 3; finish; fi
if begin run11-accelerate-raise; then
  acc 5 29705 --fault raise --fault-rank 3 --fault-step 2; finish; fi

# ---- (3) Lightning Trainer(accelerator="cpu", devices=N, strategy=DDPStrategy(gloo, timeout)).
lit() {  # lit DEVICES PORT ARGS...
  local n=$1 port=$2; shift 2
  MASTER_PORT=$port launch "$DIR/log.txt" python train_lightning.py --devices "$n" --steps 8 "$@"
  RC=$?
}
if begin run11-lightning-sigkill; then
  lit 3 29706 --fault sigkill --fault-rank 2 --fault-step 3 --others-busy-s 8; finish; fi
if begin run11-lightning-hang; then
  lit 4 29707 --fault hang --fault-rank 1 --fault-step 2 --timeout-s 20; finish; fi
if begin run11-lightning-raise; then
  lit 5 29708 --fault raise --raise-kind value --fault-rank 2 --fault-step 4; finish; fi

# ---- (4) torch.multiprocessing.spawn (DETAIL runs: manual grad all_reduce, since the
# DDP constructor segfaults under TORCH_DISTRIBUTED_DEBUG=DETAIL on this build)
if begin run11-spawn-sigkill; then
  launch "$DIR/log.txt" python train_spawn.py --nprocs 6 --port 29709 --fault sigkill --fault-rank 4 --fault-step 3
  RC=$?; finish; fi
if begin run11-spawn-mismatch-shape; then
  TORCH_DISTRIBUTED_DEBUG=DETAIL launch "$DIR/log.txt" python train_spawn.py --nprocs 3 --port 29710 --grad-sync manual \
      --fault mismatch_shape --fault-rank 1 --fault-step 3
  RC=$?; finish; fi
if begin run11-spawn-mismatch-bcast; then
  TORCH_DISTRIBUTED_DEBUG=DETAIL launch "$DIR/log.txt" python train_spawn.py --nprocs 4 --port 29711 --grad-sync manual \
      --fault mismatch_bcast --fault-rank 3 --fault-step 2
  RC=$?; finish; fi

# ---- (5) torchrun --log-dir D --redirects 3 --tee 3: console in log.txt, D tree in ranks/
logdir_run() {  # logdir_run NPROC PORT ARGS...
  local n=$1 port=$2; shift 2
  local d="$HERE/_logs/$CASE"; rm -rf "$d"; mkdir -p "$d"
  launch "$DIR/log.txt" $TR --nproc-per-node "$n" --master-port "$port" --max-restarts 0 \
      --log-dir "$d" --redirects 3 --tee 3 train_plain.py --steps 8 "$@"
  RC=$?
  mkdir -p "$DIR/ranks"; cp -r "$d"/. "$DIR/ranks/"; rm -rf "$d"
}
if begin run11-torchrun-logdir-hang; then
  logdir_run 5 29712 --fault hang --fault-rank 3 --fault-step 3 --timeout-s 20; finish; fi
if begin run11-torchrun-logdir-raise; then
  logdir_run 4 29713 --fault raise --raise-kind value --fault-rank 2 --fault-step 4; finish; fi

# ---- (6) mpirun --tag-output (plain script, env:// rendezvous on MASTER_ADDR/PORT)
mpi() {  # mpi NPROC PORT ARGS...
  local n=$1 port=$2; shift 2
  launch "$DIR/log.txt" mpirun -n "$n" --oversubscribe --bind-to none --tag-output \
      -x MASTER_ADDR=127.0.0.1 -x MASTER_PORT="$port" python train_plain.py --steps 8 "$@"
  RC=$?
}
if begin run11-mpirun-barrier-skip; then
  mpi 4 29714 --fault barrier_skip --fault-rank 1 --fault-step 3 --timeout-s 20; finish; fi
if begin run11-mpirun-exit3; then
  mpi 5 29715 --fault exit3 --fault-rank 3 --fault-step 3; finish; fi
if begin run11-mpirun-raise; then
  mpi 6 29718 --fault raise --fault-rank 5 --fault-step 2; finish; fi

# ---- (7) torchrun: one rank sleeps 60 s before init_process_group(timeout=20 s)
if begin run11-torchrun-lateinit; then
  launch "$DIR/log.txt" $TR --nproc-per-node 5 --master-port 29716 --max-restarts 0 \
      train_plain.py --steps 8 --fault late_init --late-init-s 60 --fault-rank 1 --timeout-s 20
  RC=$?; finish; fi

rm -f hostfile
rmdir "$HERE/_logs" 2>/dev/null
echo "done"
