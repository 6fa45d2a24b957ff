#!/bin/bash
# Round 80: one GPU. Runs every case of ddp_worker.py (torchrun --nproc-per-node 3, every rank on cuda:0,
# gloo process group, real DDP) and single.py (one plain process), PAR at a time (default 6), each under
# `timeout -k 10 T` with its own --master-port. The console (stdout+stderr) goes to $LOGROOT/<case>/log.txt;
# logdir cases also get `--log-dir <case>/ranks_raw --tee 3`. ddp-expandable-oom runs alone after the others
# (its 512 GiB request under expandable segments must not race the other cases' allocations).
# <case>/case.json records what was induced (for make_cases.py); versions.txt and rc.txt record the run.
# Afterwards the checkout path of this folder is rewritten to /home/user/jobs/ in every text file.
#   cd tests/corpus/generators/gpu_round80 && OUT=$OUT PAR=6 timeout 560 bash run_round80.sh
#   DEVICE=cpu PY=/abs/python PAR=3 TSCALE=3 bash run_round80.sh  # CPU dry run (stand-ins for GPU-only faults)
#   ONLY=regex                                              # a subset of the cases
set -u
here=$(cd "$(dirname "$0")" && pwd)
LOGROOT=${LOGROOT:-/tmp/round80}
CACHE=${CACHE:-/tmp/round80-cache}  # per-case Inductor/Triton caches, outside LOGROOT (not packed)
DEVICE=${DEVICE:-cuda}
PY=${PY:-python3}
PAR=${PAR:-6}
ONLY=${ONLY:-}
LATEST=${LATEST:-330}  # start no case after this many seconds, so the solo case and packing still fit
rm -rf "$LOGROOT" "$CACHE"
mkdir -p "$LOGROOT" "$CACHE"
ulimit -c 0
export PYTHONUNBUFFERED=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export TORCHINDUCTOR_COMPILE_THREADS=${TORCHINDUCTOR_COMPILE_THREADS:-2}
[[ $DEVICE == cpu ]] && export OMP_NUM_THREADS=1

{
  date -u +%Y-%m-%dT%H:%M:%SZ
  $PY -c 'import torch, sys; print("torch", torch.__version__, "cuda", torch.version.cuda, "python", sys.version.split()[0])'
  $PY -c 'import torch; print("cudnn", torch.backends.cudnn.version())'
  $PY -c 'import triton; print("triton", triton.__version__)' 2>&1 | tail -1
  nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv,noheader 2>&1
  command -v "$PY" gcc g++ 2>&1; uname -r
  echo "device: $DEVICE; PAR: $PAR; TORCHINDUCTOR_COMPILE_THREADS=$TORCHINDUCTOR_COMPILE_THREADS"
  echo "env: NCCL_NVLS_ENABLE=$NCCL_NVLS_ENABLE TORCH_SYMM_MEM_DISABLE_MULTICAST=$TORCH_SYMM_MEM_DISABLE_MULTICAST NVSHMEM_DISABLE_NVLS=$NVSHMEM_DISABLE_NVLS"
} > "$LOGROOT/versions.txt" 2>&1

run() {  # run CASE T PORT LAUNCH SCENARIO BAD_RANK [VAR=value ...]   LAUNCH: torchrun | logdir | single
  local case=$1 t=$2 port=$3 launch=$4 scen=$5 bad=$6; shift 6
  local d=$LOGROOT/$case start=$SECONDS extra=() envs=""
  t=$((t * ${TSCALE:-1}))  # TSCALE: longer limits for the slow CPU dry run
  mkdir -p "$d" "$CACHE/$case"
  for kv in "$@"; do envs+="\"$kv\", "; done
  local cenv=(TORCHINDUCTOR_CACHE_DIR="$CACHE/$case/inductor" TRITON_CACHE_DIR="$CACHE/$case/triton")
  if [[ $launch == single ]]; then
    (cd "$here" && env "${cenv[@]}" "$@" timeout -k 10 "$t" $PY single.py "$scen" --device "$DEVICE" \
       --workdir "$CACHE/$case") > "$d/log.txt" 2>&1
  else
    [[ $launch == logdir ]] && extra=(--log-dir "$d/ranks_raw" --tee 3)
    (cd "$here" && env "${cenv[@]}" "$@" timeout -k 10 "$t" $PY -m torch.distributed.run --nproc-per-node 3 \
       --master-port "$port" "${extra[@]}" ddp_worker.py "$scen" --bad-rank "$bad" --device "$DEVICE") \
       > "$d/log.txt" 2>&1
  fi
  local rc=$?
  echo "$case rc=$rc seconds=$((SECONDS - start)) scenario=$scen bad_rank=$bad launch=$launch env: $*" >> "$LOGROOT/rc.txt"
  printf '{"case": "%s", "scenario": "%s", "bad_rank": %s, "launch": "%s", "rc": %s, "seconds": %s, "timeout_s": %s, "device": "%s", "env": [%s]}\n' \
    "$case" "$scen" "$([[ $launch == single ]] && echo null || echo "$bad")" "$launch" "$rc" "$((SECONDS - start))" \
    "$t" "$DEVICE" "${envs%, }" > "$d/case.json"
}

# case                      T   port  launch  scenario              bad  extra env. Compile-heavy cases first.
SPECS=(
  "ddp-compile-inductor        120 29801 torchrun ddp-compile-inductor  1"
  "ddp-compile-inductor-logdir 120 29802 logdir   ddp-compile-inductor  2"
  "aoti-load                   120 0     single   aoti-load             -"
  "flex-attention-compile      120 0     single   flex-attention-compile -"
  "cudagraph-dynamic           120 0     single   cudagraph-dynamic     -    TORCH_LOGS=cudagraphs"
  "cudagraph-or-error          120 0     single   cudagraph-or-error    -    TORCH_LOGS=cudagraphs TORCHINDUCTOR_CUDAGRAPH_OR_ERROR=1"
  "ddp-nan-anomaly             100 29807 torchrun ddp-nan-anomaly       2"
  "ddp-unused-param            100 29808 torchrun ddp-unused-param      1"
  "ddp-unused-param-info       100 29809 torchrun ddp-unused-param      2    TORCH_DISTRIBUTED_DEBUG=INFO"
  "graph-capture-sync          100 0     single   graph-capture-sync    -"
  "ok-single                   120 0     single   ok-single             -"
  "ok-ddp                      100 29812 torchrun ok-ddp                1"
)
SOLO=("ddp-expandable-oom          100 29813 torchrun ddp-expandable-oom    2    PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True")
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
for spec in "${SOLO[@]}"; do
  name=${spec%% *}
  [[ -n $ONLY && ! $name =~ $ONLY ]] && continue
  if (( SECONDS - t0 > LATEST + 60 )); then echo "$name not started: past LATEST+60 s" >> "$LOGROOT/rc.txt"; continue; fi
  run $spec
done
echo "all done after $((SECONDS - t0)) s" >> "$LOGROOT/rc.txt"

# Rewrite only the checkout path of this folder (and the per-case cache/work dir) in the text files.
find "$LOGROOT" -type f \( -name '*.txt' -o -name '*.log' -o -name '*.json' \) -print0 |
  xargs -0 -r sed -i "s#$here/#/home/user/jobs/#g; s#$here#/home/user/jobs#g; s#$CACHE/#/home/user/jobs/work/#g"
cat "$LOGROOT/rc.txt"
rm -rf "$CACHE"
if [[ -n ${OUT:-} ]]; then tar czf "$OUT/round80.tgz" -C "$LOGROOT" . && ls -la "$OUT"; fi
