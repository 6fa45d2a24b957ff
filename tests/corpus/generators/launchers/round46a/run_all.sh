#!/usr/bin/env bash
# Reproduces every round46a case: torch.distributed.rpc (TensorPipe, CPU) jobs with one faulty worker,
# started by torchrun, torch.multiprocessing.spawn and Open MPI mpirun. See README.md for the table.
#   VENV=/path/to/venv (torch 2.13.0+cpu)  STAGE=/where/case/folders/go  ./run_all.sh [case-id ...]
# Each case: the launcher's combined stdout+stderr -> $STAGE/<id>/log.txt, with the venv path rewritten to
# /opt/venv and the job dir to /home/user/job; torchrun --log-dir trees are copied to $STAGE/<id>/ranks/.
# Every launcher runs in its own process group (setsid); afterwards every process still carrying this case's
# H46A_CASE=<id> environment marker is killed by pid (torchrun starts its workers in their own sessions).
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
VENV=${VENV:-/work/helpers/venv46a}
STAGE=${STAGE:-/work/helpers/stage46}
JOB=${JOB:-/tmp/h46a/job}          # work dir the job runs in (rewritten to /home/user/job)
LIMIT=${LIMIT:-240}                 # generous wall-clock limit per run, seconds
mkdir -p "$JOB" "$STAGE"
cp "$HERE/rpc_job.py" "$JOB/"
PY="$VENV/bin/python"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1

# run_case ID PORT LAUNCHER-COMMAND...   (the command runs in $JOB; LOGDIR is $JOB/logs/ID)
run_case() {
  local id=$1 port=$2; shift 2
  local out="$STAGE/$id"; rm -rf "$out" "$JOB/logs/$id"; mkdir -p "$out"
  echo "== $id"
  ( cd "$JOB" && export MASTER_ADDR=127.0.0.1 MASTER_PORT=$port LOGDIR="$JOB/logs/$id" H46A_CASE="$id" &&
    exec setsid bash -c "$*" ) > "$out/log.txt" 2>&1 &
  local pid=$! t=0
  while kill -0 $pid 2>/dev/null && [ $t -lt $LIMIT ]; do sleep 1; t=$((t+1)); done
  [ $t -ge $LIMIT ] && echo "   (hit LIMIT ${LIMIT}s)"
  kill -9 -- -$pid 2>/dev/null; wait $pid 2>/dev/null; echo "   rc=$? after ${t}s"
  sleep 1; local left
  left=$(grep -lsxF "H46A_CASE=$id" --null-data /proc/[0-9]*/environ | cut -d/ -f3)
  [ -n "$left" ] && { echo "   killing leftover pids:" $left; kill -9 $left 2>/dev/null; }
  if [ -d "$JOB/logs/$id" ]; then cp -r "$JOB/logs/$id" "$out/ranks"; fi
  grep -rlI -e "$VENV" -e "$JOB" "$out" | xargs -r sed -i -e "s#$VENV#/opt/venv#g" -e "s#$JOB#/home/user/job#g"
}

TR="$VENV/bin/torchrun --master_addr 127.0.0.1 --master_port \$MASTER_PORT --tee 3"
TRL="$VENV/bin/torchrun --master_addr 127.0.0.1 --master_port \$MASTER_PORT --log-dir \$LOGDIR --redirects 3 --tee 3"
MPI="mpirun --oversubscribe --tag-output -x MASTER_ADDR -x MASTER_PORT -x PYTHONUNBUFFERED"
J="$PY rpc_job.py"; JT="rpc_job.py"   # torchrun takes the script itself

declare -A CASES=(
  # ---- healthy
  [run46a-torchrun-ps-healthy]="29601 $TR --nproc_per_node 4 $JT --launcher torchrun --pattern ps --fault none"
  [run46a-mpirun-hub-healthy]="29602 $MPI -np 3 $J --launcher mpirun --pattern hub --fault none"
  [run46a-spawn-obs-retry]="29603 $J --launcher spawn --nprocs 4 --pattern obs --fault retry --fault-rank 2"
  # ---- remote function raises (caller gets the remote KeyError re-raised)
  [run46a-torchrun-ps-raise]="29611 $TR --nproc_per_node 3 $JT --launcher torchrun --pattern ps --fault raise --fault-rank 2"
  [run46a-spawn-obs-raise]="29612 $J --launcher spawn --nprocs 4 --pattern obs --fault raise --fault-rank 1"
  [run46a-mpirun-ps-raise]="29613 $MPI -np 4 $J --launcher mpirun --pattern ps --fault raise --fault-rank 3"
  # ---- worker SIGKILLed mid-call
  [run46a-torchrun-obs-sigkill]="29621 $TR --nproc_per_node 4 $JT --launcher torchrun --pattern obs --fault sigkill --fault-rank 2"
  [run46a-spawn-ps-sigkill]="29622 $J --launcher spawn --nprocs 3 --pattern ps --fault sigkill --fault-rank 2"
  [run46a-mpirun-obs-sigkill]="29623 $MPI -np 3 $J --launcher mpirun --pattern obs --fault sigkill --fault-rank 1"
  # ---- worker hangs inside an RPC -> caller's rpc_timeout (15 s) fires
  [run46a-torchrun-ps-hang-logdir]="29631 $TRL --nproc_per_node 3 $JT --launcher torchrun --pattern ps --fault hang --fault-rank 2 --rpc-timeout 15"
  [run46a-spawn-obs-hang]="29632 $J --launcher spawn --nprocs 3 --pattern obs --fault hang --fault-rank 2 --rpc-timeout 15"
  [run46a-mpirun-ps-hang]="29633 $MPI -np 4 $J --launcher mpirun --pattern ps --fault hang --fault-rank 1 --rpc-timeout 15"
  # ---- wrong worker name registered / unknown worker name called
  [run46a-torchrun-obs-badname]="29641 $TR --nproc_per_node 3 $JT --launcher torchrun --pattern obs --fault badname --fault-rank 2"
  [run46a-spawn-hub-callbad]="29642 $J --launcher spawn --nprocs 4 --pattern hub --fault callbad --fault-rank 2"
  [run46a-mpirun-hub-callbad]="29643 $MPI -np 3 $J --launcher mpirun --pattern hub --fault callbad --fault-rank 1"
  # ---- unpicklable return value
  [run46a-torchrun-obs-pickle-logdir]="29651 $TRL --nproc_per_node 3 $JT --launcher torchrun --pattern obs --fault pickle --fault-rank 2"
  [run46a-mpirun-ps-pickle]="29652 $MPI -np 3 $J --launcher mpirun --pattern ps --fault pickle --fault-rank 2"
  # ---- early rpc.shutdown(graceful=False) on one worker
  [run46a-torchrun-obs-shutdown]="29661 $TR --nproc_per_node 3 $JT --launcher torchrun --pattern obs --fault shutdown --fault-rank 2 --steps 10"
  [run46a-spawn-ps-shutdown]="29662 $J --launcher spawn --nprocs 4 --pattern ps --fault shutdown --fault-rank 3 --steps 10"
  # ---- world size mismatch at init_rpc: the job hangs in init_rpc (gloo group inside the TensorPipe agent waits
  #      30 min by default), so the launcher runs under `timeout -s TERM 60`, like a scheduler's wall-time limit;
  #      with world_size-1 on the last rank gloo refuses at once (rank < size)
  [run46a-torchrun-hub-worldsize]="29671 timeout -s TERM 60 $TR --nproc_per_node 3 $JT --launcher torchrun --pattern hub --fault worldsize --fault-rank 2 --rpc-timeout 30"
  #   (mpirun with world_size+1 was tried too: mpirun prints nothing on SIGTERM, so only the small variant is kept)
  [run46a-mpirun-hub-worldsize-small]="29673 timeout -s TERM 60 $MPI -np 3 $J --launcher mpirun --pattern hub --fault worldsize_small --fault-rank 2 --rpc-timeout 30"
)

ids=("$@"); [ ${#ids[@]} -eq 0 ] && ids=($(printf '%s\n' "${!CASES[@]}" | sort))
for id in "${ids[@]}"; do
  spec=${CASES[$id]}
  run_case "$id" "${spec%% *}" "${spec#* }"
done
