#!/bin/bash
# Runs every 2-rank scenario of worker.py (torchrun --nproc-per-node 2 on 2 GPUs), all at once, each
# under `timeout`, with stdout+stderr of torchrun combined into $LOGROOT/<case>/log.txt; some with
# `--log-dir <case>/ranks_raw --tee 3` so that per-rank files exist too. Flight Recorder dumps go to
# <case>/fr/nccl_trace_rank_<r> (the default path, /tmp/nccl_trace_rank_, would be shared by the cases
# that run at the same time), and torchfrtrace is run over them where any were written.
# Records versions in $LOGROOT/versions.txt and packs everything into $OUT/multi.tgz when OUT is set.
#   BACKEND=gloo PY=.venv/bin/python ONLY=regex bash run_all.sh    # CPU dry run of a subset
set -u
here=$(cd "$(dirname "$0")" && pwd)
LOGROOT=${LOGROOT:-/tmp/multi}
BACKEND=${BACKEND:-nccl}
PY=${PY:-python3}
ONLY=${ONLY:-}
rm -rf "$LOGROOT"
mkdir -p "$LOGROOT"
ulimit -c 0  # the aborted ranks would otherwise leave core files
# NVLink multicast stays off in every process (these are inherited by torchrun and its workers).
export PYTHONUNBUFFERED=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1

{
  date -u +%Y-%m-%dT%H:%M:%SZ
  $PY -c 'import torch, sys; print("torch", torch.__version__, "cuda", torch.version.cuda, "python", sys.version.split()[0])'
  $PY -c 'import torch; print("nccl", torch.cuda.nccl.version() if torch.cuda.is_available() else None)'
  nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv,noheader 2>&1
  nvidia-smi topo -m 2>&1
  command -v "$PY"; uname -r
  echo "backend: $BACKEND; generators dir: $here"
  echo "env: NCCL_NVLS_ENABLE=$NCCL_NVLS_ENABLE TORCH_SYMM_MEM_DISABLE_MULTICAST=$TORCH_SYMM_MEM_DISABLE_MULTICAST NVSHMEM_DISABLE_NVLS=$NVSHMEM_DISABLE_NVLS"
} > "$LOGROOT/versions.txt" 2>&1

# The ProcessGroupNCCL defaults of this torch (TORCH_NCCL_ASYNC_ERROR_HANDLING, dump on timeout, ...),
# as its own INFO log prints them for a 1-rank group.
if [[ $BACKEND == nccl ]]; then
  (TORCH_CPP_LOG_LEVEL=INFO MASTER_ADDR=127.0.0.1 MASTER_PORT=29590 timeout 60 $PY -c '
import torch, torch.distributed as dist
dist.init_process_group("nccl", rank=0, world_size=1, device_id=torch.device("cuda", 0))
t = torch.ones(4, device="cuda"); dist.all_reduce(t); torch.cuda.synchronize()
dist.destroy_process_group()' 2>&1 | grep -E "ASYNC_ERROR_HANDLING|DUMP_ON_TIMEOUT|TRACE_BUFFER|NCCL version|HeartbeatMonitor" \
    > "$LOGROOT/pg_defaults.txt") &
fi

run() {  # run CASE TIMEOUT PORT tee|notee SCENARIO [VAR=value ...]
  local case=$1 t=$2 port=$3 tee=$4 scen=$5; shift 5
  local d=$LOGROOT/$case start=$SECONDS extra=()
  mkdir -p "$d/fr"
  [[ $tee == tee ]] && extra=(--log-dir "$d/ranks_raw" --tee 3)
  (cd "$here" && env TORCH_FR_DUMP_TEMP_FILE="$d/fr/nccl_trace_rank_" \
     TORCH_NCCL_DEBUG_INFO_TEMP_FILE="$d/fr/nccl_trace_rank_" "$@" \
     timeout -k 10 "$t" $PY -m torch.distributed.run --nproc-per-node 2 --master-port "$port" \
       "${extra[@]}" worker.py "$scen" --backend "$BACKEND") > "$d/log.txt" 2>&1
  local rc=$?
  echo "$case rc=$rc seconds=$((SECONDS - start)) env: $*" >> "$LOGROOT/rc.txt"
  if compgen -G "$d/fr/nccl_trace_rank_*" >/dev/null; then
    (cd "$d" && timeout 60 $PY -m torch.distributed.flight_recorder.fr_trace fr -p nccl_trace_rank_ \
       > fr_trace.txt 2>&1; timeout 60 $PY -m torch.distributed.flight_recorder.fr_trace fr \
       -p nccl_trace_rank_ -j > fr_entries.txt 2>&1)
  fi
}

SPECS=(
  "multi-ok 120 29601 notee ok"
  "multi-oom-watchdog 200 29602 tee oom"
  "multi-oom-watchdog-aeh0 110 29603 notee oom TORCH_NCCL_ASYNC_ERROR_HANDLING=0"
  "multi-oom-watchdog-nccl-info 200 29604 notee oom NCCL_DEBUG=INFO"
  "multi-oom-peer-exit 120 29605 notee oom-exit"
  "multi-straggler 200 29606 notee straggler"
  "multi-mismatch 200 29607 notee mismatch"
  "multi-mismatch-detail 120 29608 notee mismatch TORCH_DISTRIBUTED_DEBUG=DETAIL"
  "multi-mismatch-op 200 29612 notee mismatch-op"
  "multi-mismatch-op-detail 120 29613 notee mismatch-op TORCH_DISTRIBUTED_DEBUG=DETAIL"
  "multi-sigkill 120 29609 tee sigkill"
  "multi-device-assert 200 29610 tee assert"
  "multi-fr-straggler 200 29611 tee straggler TORCH_NCCL_TRACE_BUFFER_SIZE=2000 TORCH_NCCL_DUMP_ON_TIMEOUT=1"
)
t0=$SECONDS
for spec in "${SPECS[@]}"; do
  [[ -n $ONLY && ! ${spec%% *} =~ $ONLY ]] && continue
  run $spec &
done
wait
echo "all done after $((SECONDS - t0)) s" >> "$LOGROOT/rc.txt"
cat "$LOGROOT/rc.txt"
if [[ -n ${OUT:-} ]]; then tar czf "$OUT/multi.tgz" -C "$LOGROOT" . && ls -la "$OUT"; fi
