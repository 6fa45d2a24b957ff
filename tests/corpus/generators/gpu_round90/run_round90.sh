#!/bin/bash
# Round 90: one GPU. Runs every case of ddp_worker.py (torchrun --nproc-per-node 3, every rank on cuda:0;
# ok-nccl-single with --nproc-per-node 1) and single.py (one plain process), PAR at a time (default 6),
# compile-heavy cases first, each under `timeout -k 10 T` with its own --master-port. The console
# (stdout+stderr) goes to $LOGROOT/<case>/log.txt; the logdir case also gets `--log-dir <case>/ranks_raw
# --tee 3`. <case>/case.json records what was induced (for make_cases.py); versions.txt and rc.txt record
# the run. Afterwards the checkout path of this folder is rewritten to /home/user/jobs/ in every text file.
#   cd tests/corpus/generators/gpu_round90 && OUT=$OUT PAR=6 timeout 420 bash run_round90.sh
#   DEVICE=cpu PY=/abs/python PAR=2 TSCALE=3 bash run_round90.sh  # CPU dry run (stand-ins for GPU-only faults)
#   ONLY=regex                                              # a subset of the cases
set -u
here=$(cd "$(dirname "$0")" && pwd)
LOGROOT=${LOGROOT:-/tmp/round90}
CACHE=${CACHE:-/tmp/round90-cache}  # per-case Inductor/Triton caches, outside LOGROOT (not packed)
DEVICE=${DEVICE:-cuda}
PY=${PY:-python3}
PAR=${PAR:-6}
ONLY=${ONLY:-}
TSCALE=${TSCALE:-1}  # longer limits for the slow CPU dry run
PORT_SHIFT=${PORT_SHIFT:-0}  # added to every --master-port (a shared dry-run machine may hold 2990x)
LATEST=${LATEST:-$((280 * TSCALE))}  # start no case after this many seconds (the run must stay < 400 s)
rm -rf "$LOGROOT" "$CACHE"
mkdir -p "$LOGROOT" "$CACHE"
ulimit -c 0
export PYTHONUNBUFFERED=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export TORCHINDUCTOR_COMPILE_THREADS=${TORCHINDUCTOR_COMPILE_THREADS:-2}
unset CUDA_LAUNCH_BLOCKING
[[ $DEVICE == cpu ]] && export OMP_NUM_THREADS=1

{
  date -u +%Y-%m-%dT%H:%M:%SZ
  $PY -c 'import torch, sys; print("torch", torch.__version__, "cuda", torch.version.cuda, "python", sys.version.split()[0])'
  $PY -c 'import torch; print("nccl", torch.cuda.nccl.version() if torch.cuda.is_available() else None)' 2>&1 | tail -1
  $PY -c 'import triton; print("triton", triton.__version__)' 2>&1 | tail -1
  nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv,noheader 2>&1
  command -v "$PY" gcc g++ 2>&1; uname -r
  echo "device: $DEVICE; PAR: $PAR; TORCHINDUCTOR_COMPILE_THREADS=$TORCHINDUCTOR_COMPILE_THREADS"
  echo "env: NCCL_NVLS_ENABLE=$NCCL_NVLS_ENABLE TORCH_SYMM_MEM_DISABLE_MULTICAST=$TORCH_SYMM_MEM_DISABLE_MULTICAST NVSHMEM_DISABLE_NVLS=$NVSHMEM_DISABLE_NVLS"
} > "$LOGROOT/versions.txt" 2>&1

run() {  # run CASE T PORT LAUNCH SCENARIO BAD_RANK [VAR=value ...]   LAUNCH: torchrun | torchrun1 | logdir | single
  local case=$1 t=$2 port=$3 launch=$4 scen=$5 bad=$6; shift 6
  local d=$LOGROOT/$case start=$SECONDS extra=() envs="" nproc=3
  t=$((t * TSCALE))
  [[ $port != 0 ]] && port=$((port + PORT_SHIFT))
  mkdir -p "$d" "$CACHE/$case"
  for kv in "$@"; do envs+="\"$kv\", "; done
  local cenv=(TORCHINDUCTOR_CACHE_DIR="$CACHE/$case/inductor" TRITON_CACHE_DIR="$CACHE/$case/triton")
  if [[ $launch == single ]]; then
    (cd "$here" && env "${cenv[@]}" "$@" timeout -k 10 "$t" $PY single.py "$scen" --device "$DEVICE" \
       --workdir "$CACHE/$case") > "$d/log.txt" 2>&1
  else
    [[ $launch == logdir ]] && extra=(--log-dir "$d/ranks_raw" --tee 3)
    [[ $launch == torchrun1 ]] && nproc=1
    (cd "$here" && env "${cenv[@]}" "$@" timeout -k 10 "$t" $PY -m torch.distributed.run --nproc-per-node $nproc \
       --master-port "$port" "${extra[@]}" ddp_worker.py "$scen" --bad-rank "$bad" --device "$DEVICE") \
       > "$d/log.txt" 2>&1
  fi
  local rc=$?
  echo "$case rc=$rc seconds=$((SECONDS - start)) scenario=$scen bad_rank=$bad launch=$launch env: $*" >> "$LOGROOT/rc.txt"
  printf '{"case": "%s", "scenario": "%s", "bad_rank": %s, "launch": "%s", "nproc": %s, "rc": %s, "seconds": %s, "timeout_s": %s, "device": "%s", "env": [%s]}\n' \
    "$case" "$scen" "$([[ $launch == single ]] && echo null || echo "$bad")" "$launch" \
    "$([[ $launch == single ]] && echo null || echo "$nproc")" "$rc" "$((SECONDS - start))" \
    "$t" "$DEVICE" "${envs%, }" > "$d/case.json"
}

# case                      T   port  launch    scenario              bad  extra env. Compile-heavy cases first.
SPECS=(
  "compiled-oom               150 0     single    compiled-oom          -"
  "ok-triton                  120 0     single    ok-triton             -    TORCH_LOGS=recompiles"
  "triton-shared-memory        90 0     single    triton-shared-memory  -"
  "ddp-gpu-hang                60 29901 torchrun  ddp-gpu-hang          2"
  "nccl-duplicate-gpu          60 29902 torchrun  nccl-duplicate-gpu    1    NCCL_DEBUG=WARN"
  "ddp-device-assert           90 29903 torchrun  ddp-device-assert     2"
  "ddp-device-assert-logdir    90 29904 logdir    ddp-device-assert     1"
  "ddp-invalid-ordinal         60 29905 torchrun  ddp-invalid-ordinal   2"
  "ddp-no-gpu-rank             60 29906 torchrun  ddp-no-gpu-rank       1"
  "triton-illegal-access       60 0     single    triton-illegal-access -"
  "triton-compile-error        60 0     single    triton-compile-error  -"
  "ok-nccl-single              60 29907 torchrun1 ok-nccl-single        0"
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

# Rewrite only the checkout path of this folder (and the per-case cache/work dir) in the text files.
find "$LOGROOT" -type f \( -name '*.txt' -o -name '*.log' -o -name '*.json' \) -print0 |
  xargs -0 -r sed -i "s#$here/#/home/user/jobs/#g; s#$here#/home/user/jobs#g; s#$CACHE/#/home/user/jobs/work/#g"
cat "$LOGROOT/rc.txt"
rm -rf "$CACHE"
if [[ -n ${OUT:-} ]]; then tar czf "$OUT/round90.tgz" -C "$LOGROOT" . && ls -la "$OUT"; fi
