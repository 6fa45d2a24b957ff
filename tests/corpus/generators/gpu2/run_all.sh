#!/bin/bash
# Runs every gpu2 scenario on a one-GPU machine (each under a timeout, stdout+stderr into
# $LOGROOT/<case>/log.txt), records versions, and packs the logs into $OUT/gpu_logs.tgz.
# Phase A runs in parallel (small memory, own caches and ports); phase B runs alone
# (OOM needs the whole GPU; hiding Python.h must not overlap other compiles).
set -u
here=$(cd "$(dirname "$0")" && pwd)
LOGROOT=${LOGROOT:-/tmp/gpulogs}
JOBS=${JOBS:-7}
rm -rf "$LOGROOT" /tmp/gen2cache
mkdir -p "$LOGROOT" /tmp/gen2cache
export PYTHONUNBUFFERED=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
if command -v torchrun >/dev/null; then TR=torchrun; else TR="python3 -m torch.distributed.run"; fi

{
  date -u +%Y-%m-%dT%H:%M:%SZ
  python3 -c 'import torch,triton;print(torch.__version__, triton.__version__, torch.version.cuda)'
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  python3 -c 'import torch; print("nccl", torch.cuda.nccl.version())'
  command -v python3; uname -r; gcc --version | head -1
  echo "generators dir: $here"
} > "$LOGROOT/versions.txt" 2>&1

run() {  # run CASE TIMEOUT CMD... (cwd = generators dir; own Triton/Inductor caches)
  local case=$1 t=$2; shift 2
  local c=/tmp/gen2cache/$case start=$SECONDS
  mkdir -p "$LOGROOT/$case" "$c"
  (cd "$here" && TRITON_CACHE_DIR=$c/triton TORCHINDUCTOR_CACHE_DIR=$c/inductor \
     timeout -k 10 "$t" "$@") > "$LOGROOT/$case/log.txt" 2>&1
  echo "$case rc=$? seconds=$((SECONDS - start))" >> "$LOGROOT/rc.txt"
}

A=(
  "gpu-triton-oor-shared-pipelined 90 python3 triton_oor_shared_pipelined.py"
  "gpu-triton-oor-threads 90 python3 triton_oor_threads.py"
  "gpu-triton-compile-error-undefined 60 python3 triton_compile_undefined.py"
  "gpu-triton-compile-error-constexpr 60 python3 triton_compile_constexpr.py"
  "gpu-triton-compile-error-type 60 python3 triton_compile_type.py"
  "gpu-triton-dot-small-k 60 python3 triton_dot_small_k.py"
  "gpu-illegal-memory-access-triton-store 60 python3 triton_illegal_store.py"
  "gpu-illegal-memory-access-compiled-index 120 python3 compiled_index_illegal.py"
  "gpu-illegal-memory-access-triton-op-compiled 120 python3 triton_op_compiled_illegal.py"
  "gpu-device-assert-cross-entropy-blocking 60 env CUDA_LAUNCH_BLOCKING=1 python3 device_assert_cross_entropy_blocking.py"
  "gpu-device-assert-index-select 60 python3 device_assert_index_select.py"
  "gpu-device-assert-compiled-embedding 120 python3 device_assert_compiled_embedding.py"
  "gpu-device-assert-compiled-gather-blocking 120 env CUDA_LAUNCH_BLOCKING=1 python3 device_assert_compiled_gather_blocking.py"
  "gpu-cudagraph-output-overwritten-docs 120 python3 cudagraph_output_overwritten_docs.py"
  "gpu-cudagraph-output-overwritten-train 120 python3 cudagraph_output_overwritten_train.py"
  "gpu-cudagraph-cpu-input-partitioned 120 python3 cudagraph_skip_cpu_input.py"
  "gpu-cudagraph-skip-mutated-input 120 python3 cudagraph_skip_mutated_input.py"
  "gpu-nccl-duplicate-gpu-eager-init 90 env NCCL_DEBUG=WARN $TR --nproc-per-node 2 --master-port 29521 nccl_duplicate_gpu_eager_init.py"
  "gpu-nccl-collective-mismatch-2rank 90 env TORCH_DISTRIBUTED_DEBUG=DETAIL $TR --nproc-per-node 2 --master-port 29522 nccl_collective_mismatch_2rank.py"
  "gpu-nccl-collective-mismatch 90 env TORCH_DISTRIBUTED_DEBUG=DETAIL $TR --nproc-per-node 3 --master-port 29524 nccl_collective_mismatch.py"
  "gpu-nccl-watchdog-timeout 100 python3 nccl_watchdog_timeout.py"
  "gpu-dist-store-timeout 60 python3 dist_store_timeout.py"
  "gpu-cuda-visible-devices-wrong 60 env CUDA_VISIBLE_DEVICES=1 python3 cuda_visible_devices_wrong.py"
  "gpu-triton-ld-not-on-path 120 bash triton_ld_not_on_path.sh"
  "gpu-triton-no-c-compiler 120 bash triton_no_c_compiler.sh"
  "gpu-triton-compile-error-in-compile 120 python3 triton_compile_error_in_compile.py"
  "gpu-illegal-memory-access-triton-store-blocking 60 env CUDA_LAUNCH_BLOCKING=1 python3 triton_illegal_store_blocking.py"
  "gpu-triton-cc-missing 60 bash triton_cc_missing.sh"
  "gpu-triton-cache-corrupt-cubin 90 bash triton_cache_corrupt_cubin.sh"
  "gpu-triton-cache-corrupt-json 180 bash triton_cache_corrupt_json.sh"
  "gpu-triton-cache-corrupt-so 90 bash triton_cache_corrupt_so.sh"
  "gpu-ok-ddp-compiled 150 env NCCL_DEBUG=INFO $TR --nproc-per-node 1 --master-port 29523 ok_ddp_compiled.py"
)
B=(
  "gpu-cuda-oom-compiled-autotune-pinned 150 python3 oom_compiled.py"
  "gpu-cuda-oom-compiled 150 python3 oom_compiled_alloc.py"
  "gpu-cuda-oom-expandable-segments 90 env PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True python3 oom_expandable_segments.py"
  "gpu-no-python-headers-triton-jit 60 bash no_python_headers_triton.sh"
)
ONLY=${ONLY:-}  # optional regex to run a subset
t0=$SECONDS
for spec in "${A[@]}"; do
  [[ -n $ONLY && ! ${spec%% *} =~ $ONLY ]] && continue
  while (( $(jobs -rp | wc -l) >= JOBS )); do wait -n; done
  run $spec &
done
wait
echo "phase A done after $((SECONDS - t0)) s" >> "$LOGROOT/rc.txt"
for spec in "${B[@]}"; do
  [[ -n $ONLY && ! ${spec%% *} =~ $ONLY ]] && continue
  run $spec
done
echo "all done after $((SECONDS - t0)) s" >> "$LOGROOT/rc.txt"
cat "$LOGROOT/rc.txt"
if [[ -n ${OUT:-} ]]; then tar czf "$OUT/gpu_logs.tgz" -C "$LOGROOT" . && ls -la "$OUT"; fi
