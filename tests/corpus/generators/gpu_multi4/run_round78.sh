#!/bin/bash
# Round 78: runs every 4-rank scenario of worker.py (torchrun --nproc-per-node 4 on 4 GPUs), PAR cases at a
# time (default 4; all share the same 4 GPUs), each under `timeout -k 10 T` with its own --master-port.
# torchrun's console (stdout+stderr) goes to $LOGROOT/<case>/log.txt; some cases also get
# `--log-dir <case>/ranks_raw --tee 3` (per-rank files). Flight Recorder dumps go to <case>/fr/ and
# torchfrtrace is run over them where any were written. <case>/case.json records what was induced (for
# make_cases.py). versions.txt, pg_defaults.txt and rc.txt record the run. Afterwards the checkout path of
# this folder is rewritten to /home/user/jobs/ in every text file (not in the Flight Recorder pickles).
#   cd tests/corpus/generators/gpu_multi4 && OUT=$OUT PAR=4 timeout 570 bash run_round78.sh
#   BACKEND=gloo PY=/abs/python bash run_round78.sh       # CPU dry run (4 CPU processes per case)
#   ONLY=regex                                            # a subset of the cases
set -u
here=$(cd "$(dirname "$0")" && pwd)
LOGROOT=${LOGROOT:-/tmp/multi4}
BACKEND=${BACKEND:-nccl}
PY=${PY:-python3}
PAR=${PAR:-4}
ONLY=${ONLY:-}
LATEST=${LATEST:-330}  # start no case after this many seconds, so the pack step still runs inside 570 s
NPROC=4
rm -rf "$LOGROOT"
mkdir -p "$LOGROOT"
ulimit -c 0  # the aborted ranks would otherwise leave core files
# NVLink multicast stays off in every process (inherited by torchrun and its workers).
export PYTHONUNBUFFERED=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
[[ $BACKEND == gloo ]] && export OMP_NUM_THREADS=1

{
  date -u +%Y-%m-%dT%H:%M:%SZ
  $PY -c 'import torch, sys; print("torch", torch.__version__, "cuda", torch.version.cuda, "python", sys.version.split()[0])'
  $PY -c 'import torch; print("nccl", torch.cuda.nccl.version() if torch.cuda.is_available() else None)'
  $PY -c 'import triton; print("triton", triton.__version__)' 2>&1 | tail -1
  nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv,noheader 2>&1
  nvidia-smi topo -m 2>&1
  command -v "$PY"; uname -r
  echo "backend: $BACKEND; nproc-per-node: $NPROC; PAR: $PAR"
  echo "env: NCCL_NVLS_ENABLE=$NCCL_NVLS_ENABLE TORCH_SYMM_MEM_DISABLE_MULTICAST=$TORCH_SYMM_MEM_DISABLE_MULTICAST NVSHMEM_DISABLE_NVLS=$NVSHMEM_DISABLE_NVLS"
} > "$LOGROOT/versions.txt" 2>&1

# ProcessGroupNCCL's own INFO print of its defaults (async error handling, dump on timeout, ...).
if [[ $BACKEND == nccl ]]; then
  (TORCH_CPP_LOG_LEVEL=INFO MASTER_ADDR=127.0.0.1 MASTER_PORT=29790 timeout 60 $PY -c '
import torch, torch.distributed as dist
dist.init_process_group("nccl", rank=0, world_size=1, device_id=torch.device("cuda", 0))
t = torch.ones(4, device="cuda"); dist.all_reduce(t); torch.cuda.synchronize()
dist.destroy_process_group()' 2>&1 | grep -E "ASYNC_ERROR_HANDLING|DUMP_ON_TIMEOUT|TRACE_BUFFER|NCCL version|HeartbeatMonitor" \
    > "$LOGROOT/pg_defaults.txt") &
fi

run() {  # run CASE T PORT tee|notee SCENARIO BAD_RANK [VAR=value ...]
  local case=$1 t=$2 port=$3 tee=$4 scen=$5 bad=$6; shift 6
  local d=$LOGROOT/$case start=$SECONDS extra=() envs=""
  mkdir -p "$d/fr"
  [[ $tee == tee ]] && extra=(--log-dir "$d/ranks_raw" --tee 3)
  for kv in "$@"; do envs+="\"$kv\", "; done
  (cd "$here" && env TORCH_FR_DUMP_TEMP_FILE="$d/fr/nccl_trace_rank_" "$@" \
     timeout -k 10 "$t" $PY -m torch.distributed.run --nproc-per-node $NPROC --master-port "$port" \
       "${extra[@]}" worker.py "$scen" --bad-rank "$bad" --backend "$BACKEND") > "$d/log.txt" 2>&1
  local rc=$?
  echo "$case rc=$rc seconds=$((SECONDS - start)) scenario=$scen bad_rank=$bad tee=$tee env: $*" >> "$LOGROOT/rc.txt"
  printf '{"case": "%s", "scenario": "%s", "bad_rank": %s, "tee": %s, "rc": %s, "seconds": %s, "timeout_s": %s, "backend": "%s", "env": [%s]}\n' \
    "$case" "$scen" "$bad" "$([[ $tee == tee ]] && echo true || echo false)" "$rc" "$((SECONDS - start))" \
    "$t" "$BACKEND" "${envs%, }" > "$d/case.json"
  if compgen -G "$d/fr/nccl_trace_rank_*" >/dev/null; then
    (cd "$d" && timeout 30 $PY -m torch.distributed.flight_recorder.fr_trace fr -p nccl_trace_rank_ \
       > fr_trace.txt 2>&1; timeout 30 $PY -m torch.distributed.flight_recorder.fr_trace fr \
       -p nccl_trace_rank_ -j > fr_entries.txt 2>&1)
  fi
}

FR="TORCH_NCCL_TRACE_BUFFER_SIZE=2000 TORCH_NCCL_DUMP_ON_TIMEOUT=1"
# case                 T    port  tee   scenario       bad  extra env. Longest (watchdog) cases first.
SPECS=(
  "ddp-oom             150 29701 tee   ddp-oom        2"
  "fsdp2-oom           150 29702 notee fsdp2-oom      1"
  "ddp-hang            150 29703 tee   ddp-hang       3    $FR"
  "mismatch-size       130 29704 notee mismatch-size  2"
  "compile-fail        150 29705 tee   compile-fail   2    TORCHINDUCTOR_COMPILE_THREADS=4"
  "device-assert       120 29706 tee   device-assert  3"
  "ok-compiled         150 29707 notee ok-compiled    1    TORCHINDUCTOR_COMPILE_THREADS=4"
  "mismatch-size-detail 100 29708 notee mismatch-size 3    TORCH_DISTRIBUTED_DEBUG=DETAIL"
  "ddp-sigkill         100 29709 tee   ddp-sigkill    1"
  "nan-check           100 29710 notee nan-check      1"
  "ok                  100 29711 notee ok             2"
)
t0=$SECONDS
pids=()
alive() { local n=0 p; for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && n=$((n + 1)); done; echo $n; }
for spec in "${SPECS[@]}"; do
  name=${spec%% *}
  [[ -n $ONLY && ! $name =~ $ONLY ]] && continue
  while (( $(alive) >= PAR )); do wait -n; done
  if (( SECONDS - t0 > LATEST )); then echo "$name not started: past LATEST=$LATEST s" >> "$LOGROOT/rc.txt"; continue; fi
  run $spec &
  pids+=($!)
  sleep 1
done
wait
echo "all done after $((SECONDS - t0)) s" >> "$LOGROOT/rc.txt"

# Rewrite only the checkout path of this folder (text files; the Flight Recorder pickles stay as dumped).
find "$LOGROOT" -type f \( -name '*.txt' -o -name '*.log' -o -name '*.json' \) -print0 |
  xargs -0 -r sed -i "s#$here/#/home/user/jobs/#g; s#$here#/home/user/jobs#g"
cat "$LOGROOT/rc.txt"
if [[ -n ${OUT:-} ]]; then tar czf "$OUT/multi4.tgz" -C "$LOGROOT" . && ls -la "$OUT"; fi
