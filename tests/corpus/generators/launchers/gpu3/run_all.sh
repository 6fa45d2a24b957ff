#!/usr/bin/env bash
# Real one-GPU failure runs, round 3 (run3-gpu1-* cases): CUDA device-side asserts, a Triton illegal address,
# Triton compile / shared-memory errors, CUDA-graph skips under reduce-overhead, a user error and graph breaks
# under torch.compile, NCCL's duplicate-GPU error, a leaking rank's CUDA OOM, an invalid device ordinal.
# See README.md for what each program induces.
#
#   OUT=/some/dir bash tests/corpus/generators/launchers/gpu3/run_all.sh [case-id ...]   (from the repo root)
#
# Made for ONE H200, torch 2.11 / Triton 3.6 in the `python3` on PATH, no network. Each case runs under its
# own `timeout 90`; the logs (the launcher's stdout+stderr, `cmd > log.txt 2>&1`, UNEDITED) go to
# $RAW/<case>/log.txt, and $RAW is packed into $OUT/gpu3-raw.tar.gz with status.tsv, commands.tsv,
# versions.txt and pathmap.json (made by ../gpu/rewrite_paths.py with the python that ran the jobs). Paths are
# rewritten afterwards, on the collecting machine:  python3 ../gpu/rewrite_paths.py apply pathmap.json DIR
# Waves: the CUDA-OOM case alone on the idle GPU; then the others in three parallel waves, the illegal-address
# case last (a faulting context should not share a wave with cases that still need the GPU).
set -u
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../../../../.." && pwd)"
OUT="${OUT:?set OUT to the output folder}"
RAW=${RAW:-/tmp/denpex-gpu3-out}
JOB=/tmp/denpex-gpu3-job        # the jobs run here (rewritten to /home/user/job)
PY="$(command -v python3)"
TORCHRUN="$(dirname "$PY")/torchrun"; [ -x "$TORCHRUN" ] || TORCHRUN="$PY -m torch.distributed.run"
TMAX=${TMAX:-90}
SELECT=" $* "
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
ulimit -c 0

rm -rf "$RAW" "$JOB"; mkdir -p "$RAW" "$JOB" "$OUT"
cp "$HERE"/*.py "$JOB"/
: > "$RAW/status.tsv"; : > "$RAW/commands.tsv"
"$PY" "$HERE/../gpu/rewrite_paths.py" map "$JOB" "$REPO" /tmp/denpex-gpu3-pylibs > "$RAW/pathmap.json"
{
  date -u +%Y-%m-%dT%H:%M:%SZ
  timeout 60 "$PY" -c 'import sys, torch, triton; print("python", sys.version.split()[0], sys.prefix); print("torch", torch.__version__, "cuda", torch.version.cuda, "devices", torch.cuda.device_count()); print("nccl", torch.cuda.nccl.version()); print("triton", triton.__version__)'
  timeout 30 nvidia-smi -L
  echo "torchrun: $TORCHRUN; $(nproc) cores; kernel $(uname -r)"
} > "$RAW/versions.txt" 2>&1
cat "$RAW/versions.txt"

want() { [ "$SELECT" = "  " ] || [[ "$SELECT" == *" $1 "* ]]; }

kill_tagged() {  # SIGKILL (by pid) every leftover process whose environment has DENPEX_GPU3_CASE=<case>
  local d pid
  for d in /proc/[0-9]*; do
    pid=${d#/proc/}
    [ "$pid" = "$$" ] && continue
    { tr '\0' '\n' < "$d/environ"; } 2>/dev/null | grep -qxF "DENPEX_GPU3_CASE=$1" && kill -9 "$pid" 2>/dev/null
  done
  return 0
}

# case <id> [VAR=value ...] -- <command ...>     (runs in $JOB under timeout $TMAX)
case_run() {
  local id=$1; shift
  want "$id" || return 0
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done
  shift
  mkdir -p "$RAW/$id"
  printf '%s\t%s\t%s\n' "$id" "${envs[*]-}" "$*" >> "$RAW/commands.tsv"
  local t0=$SECONDS rc
  ( cd "$JOB" && exec env DENPEX_GPU3_CASE="$id" ${envs[@]+"${envs[@]}"} timeout -k 5 "$TMAX" "$@" ) \
    > "$RAW/$id/log.txt" 2>&1 < /dev/null
  rc=$?
  sleep 1; kill_tagged "$id"
  printf '%s\t%s\t%s\t%s\n' "$id" "$rc" $((SECONDS - t0)) "$(wc -l < "$RAW/$id/log.txt")" | tee -a "$RAW/status.tsv"
}
TR="$TORCHRUN --nproc_per_node 2"
pack() { cp "$RAW/status.tsv" "$RAW/versions.txt" "$OUT/"; tar czf "$OUT/gpu3-raw.tar.gz" -C "$RAW" .; }  # after every wave

# wave 1: alone on the idle GPU (rank 1 fills it)
case_run run3-gpu1-torchrun-cudaoom-leak GLOO_SOCKET_IFNAME=lo -- $TR --master_port 29801 dist_jobs.py --scenario cudaoom-leak
pack
# wave 2: torch.compile jobs and the device-side asserts
case_run run3-gpu1-compile-cudagraph-mutation -- "$PY" compile_jobs.py --scenario cudagraph-mutation &
case_run run3-gpu1-compile-cudagraph-cpu -- "$PY" compile_jobs.py --scenario cudagraph-cpu &
case_run run3-gpu1-compile-user-error -- "$PY" compile_jobs.py --scenario user-error &
case_run run3-gpu1-compile-graph-breaks TORCH_LOGS=graph_breaks -- "$PY" compile_jobs.py --scenario graph-breaks &
case_run run3-gpu1-single-device-assert -- "$PY" device_assert.py &
case_run run3-gpu1-torchrun-device-assert GLOO_SOCKET_IFNAME=lo -- $TR --master_port 29802 device_assert.py &
wait; pack
# wave 3: Triton compile-time errors, invalid device ordinal
case_run run3-gpu1-triton-dot-shape -- "$PY" triton_compile_error.py --variant dot-shape &
case_run run3-gpu1-triton-arange-constexpr -- "$PY" triton_compile_error.py --variant arange &
case_run run3-gpu1-triton-shared-memory -- "$PY" triton_shared_memory.py &
case_run run3-gpu1-torchrun-invalid-ordinal GLOO_SOCKET_IFNAME=lo -- $TR --master_port 29803 dist_jobs.py --scenario invalid-ordinal &
wait; pack
# wave 4: NCCL on one GPU, and the Triton illegal address last
case_run run3-gpu1-torchrun-nccl-duplicate NCCL_DEBUG=WARN NCCL_SOCKET_IFNAME=lo -- $TR --master_port 29804 dist_jobs.py --scenario nccl-duplicate &
case_run run3-gpu1-triton-illegal-address -- "$PY" triton_illegal_address.py &
wait

timeout 30 nvidia-smi --query-gpu=index,memory.used,utilization.gpu --format=csv >> "$RAW/versions.txt" 2>&1
pack
# a short look at each log's end, for whoever reads the launcher's output
for f in "$RAW"/*/log.txt; do
  echo "=== $(basename "$(dirname "$f")")"
  grep -E 'Error|error|Assertion|skipping cudagraphs|Graph break|Duplicate|ordinal|finished' "$f" | grep -v '^\s*File ' | head -4 | cut -c1-220
done
