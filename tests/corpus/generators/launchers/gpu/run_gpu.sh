#!/usr/bin/env bash
# Real 2-GPU failure runs for the Denpex corpus: torchrun and Lightning DDP on NCCL, one GPU per rank,
# rank 1 broken in one way per case (see README.md, train_gpu.py, train_lightning.py).
#
#   OUT=/some/dir bash tests/corpus/generators/launchers/gpu/run_gpu.sh [case-id ...]   (from the repo root)
#
# Made for a machine with 2 x H200, torch 2.11 in the `python3` on PATH, no network.
# One-GPU mode (chosen when torch sees exactly 1 GPU, or forced with GPU_MODE=1): NCCL cannot put two
# ranks on one GPU, so the `run-gpu1-*` cases run instead: torchrun --nproc_per_node 2 with BOTH ranks on
# cuda:0 over gloo (train_gpu.py --one-gpu), plus single-process cases that need no process group at all
# (plain python, Lightning devices=1). GPU_MODE=2 forces the 2-GPU cases (the default with 2+ GPUs).
# For every case:
#   $OUT/<case>/log.txt   the launcher's combined stdout+stderr (`cmd > log.txt 2>&1`)
#   $OUT/<case>/ranks/    the tree `torchrun --log-dir` wrote (the -logdir- cases)
# then ONLY machine paths are rewritten (rewrite_paths.py: the python prefix -> /opt/venv, the job dir and
# the repo -> /home/user/job) and labels.py writes $OUT/<case>/label.json from what each log shows.
# Also: $OUT/versions.txt (torch, triton, NCCL, nvidia-smi -L, ...), $OUT/status.tsv (case, exit status,
# seconds, note), $OUT/commands.tsv (case, extra env, command), $OUT/labels.txt (labels.py's report).
#
# Time: the whole script stays under BUDGET seconds (default 450; 400 in one-GPU mode, so that it ends
# within 7 minutes). The CUDA-OOM cases run first, each alone on the GPUs (so their OOM messages list no
# other jobs' processes); all other cases then run at the same time (different ports, ~1 GiB of GPU memory
# each), bounded by the hang/mismatch cases (20 s NCCL timeout + the watchdog's 60 s flight-recorder wait;
# in one-GPU mode by the compile case, the gloo hang needs only its 20 s). Every case has its own
# `timeout`, cut to what is left of the budget; a case that no longer fits is skipped and says so. Leftover processes of a case are
# found by a marker variable in their environment and SIGKILLed (by pid) after it.
set -u
T0=$SECONDS
RESERVE=25                      # seconds kept for labels.py and the final clean-up
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../../../../.." && pwd)"
OUT="${OUT:?set OUT to the output folder}"
JOB=/tmp/denpex-gpu-job         # the jobs run here (rewritten to /home/user/job)
PYLIBS=/tmp/denpex-gpu-pylibs   # Lightning and its pure-Python deps, from wheels/ (no network there)
PATHMAP=/tmp/denpex-gpu-pathmap.json
RUNTAG="denpex-gpu-$$-$RANDOM"
PY="$(command -v python3)" || { echo "run_gpu.sh: no python3 on PATH"; exit 1; }
if [ -x "$(dirname "$PY")/torchrun" ]; then
  TORCHRUN=("$(dirname "$PY")/torchrun")
else
  TORCHRUN=("$PY" -m torch.distributed.run)
fi
SELECT=("$@")
# CPU_DRY_RUN=1: the same cases on CPU/gloo (train_gpu.py --device cpu, Lightning --accelerator cpu), to test
# this script on a machine without GPU; its logs are NOT corpus material. It runs the 2-GPU cases unless
# GPU_MODE=1 is given (then the run-gpu1-* cases).
TRAIN_EXTRA=(); PL_EXTRA=()
if [ "${CPU_DRY_RUN:-0}" = 1 ]; then TRAIN_EXTRA=(--device cpu); PL_EXTRA=(--accelerator cpu); fi

# NVLink multicast stays off in every process (the GPU hosts are shared); no core files from SIGABRTs.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export PYTHONUNBUFFERED=1
ulimit -c 0

want() {  # the case is selected on the command line (or nothing was selected)
  [ "${#SELECT[@]}" -eq 0 ] && return 0
  local c; for c in "${SELECT[@]}"; do [ "$c" = "$1" ] && return 0; done; return 1
}

status_line() {  # status_line <case> <rc> <seconds> <note>
  printf '%-42s rc=%-4s %4ss  %s\n' "$1" "$2" "$3" "$4"
  printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" >> "$OUT/status.tsv"
}

kill_tagged() {  # kill_tagged VAR value: SIGKILL (by pid) every process started with VAR=value in its env
  local tag="$1=$2" d pid n=0
  for d in /proc/[0-9]*; do
    pid=${d#/proc/}
    [ "$pid" = "$$" ] && continue
    if { tr '\0' '\n' < "$d/environ"; } 2>/dev/null | grep -qxF -- "$tag"; then
      kill -9 "$pid" 2>/dev/null && n=$((n + 1))
    fi
  done
  [ "$n" -gt 0 ] && echo "    ($2: killed $n leftover process(es))"
  return 0
}

rewrite() { "$PY" "$HERE/rewrite_paths.py" apply "$PATHMAP" "$@"; }

# run_case <case> <max-seconds> [VAR=value ...] -- <command ...>   (runs in $JOB)
run_case() {
  local id=$1 tmax=$2; shift 2
  local envs=()
  while [ $# -gt 0 ] && [ "$1" != "--" ]; do envs+=("$1"); shift; done
  shift
  local out="$OUT/$id" left t start rc note=""
  left=$(( BUDGET - RESERVE - (SECONDS - T0) ))
  t=$(( tmax < left ? tmax : left ))
  if [ "$t" -lt 30 ]; then
    status_line "$id" - 0 "SKIPPED: only ${left}s of the time budget left"
    return 0
  fi
  rm -rf "$out"; mkdir -p "$out" "$JOB/cache/$id"
  printf '%s\t%s\t%s\n' "$id" "${envs[*]-}" "$*" >> "$OUT/commands.tsv"
  start=$SECONDS
  ( cd "$JOB" && exec env DENPEX_GPU_RUN="$RUNTAG" DENPEX_GPU_CASE="$id" JOB_CACHE_DIR="$JOB/cache/$id" \
      ${envs[@]+"${envs[@]}"} timeout -k 10 -s TERM "$t" "$@" ) > "$out/log.txt" 2>&1 < /dev/null
  rc=$?
  [ "$rc" -eq 124 ] && note="TIMED OUT, "
  sleep 1
  kill_tagged DENPEX_GPU_CASE "$id"
  rewrite "$out/log.txt"
  status_line "$id" "$rc" $((SECONDS - start)) "${note}limit ${t}s, $(wc -l < "$out/log.txt") lines"
}

# torchrun --nproc_per_node 2 [--log-dir ...] train_gpu.py <args>
tr_case() {  # tr_case <case> <max-seconds> <port> [VAR=value ...] -- <train_gpu.py args>
  local id=$1 tmax=$2 port=$3; shift 3
  local envs=()
  while [ $# -gt 0 ] && [ "$1" != "--" ]; do envs+=("$1"); shift; done
  shift
  run_case "$id" "$tmax" ${envs[@]+"${envs[@]}"} -- \
    "${TORCHRUN[@]}" --nproc_per_node 2 --master_port "$port" train_gpu.py "$@" ${TRAIN_EXTRA[@]+"${TRAIN_EXTRA[@]}"}
}
logdir_case() {  # logdir_case <case> <max-seconds> <port> [[VAR=value ...] --] <train_gpu.py args>
  local id=$1 tmax=$2 port=$3; shift 3
  local envs=()
  while [ $# -gt 0 ] && [[ "$1" =~ ^[A-Za-z_][A-Za-z0-9_]*= ]]; do envs+=("$1"); shift; done
  [ "${1-}" = "--" ] && shift
  local ld="$JOB/logs/$id"
  rm -rf "$ld"; mkdir -p "$ld"
  run_case "$id" "$tmax" ${envs[@]+"${envs[@]}"} -- "${TORCHRUN[@]}" --nproc_per_node 2 --master_port "$port" \
    --log-dir "$ld" --redirects 3 --tee 3 train_gpu.py "$@" ${TRAIN_EXTRA[@]+"${TRAIN_EXTRA[@]}"}
  if [ -f "$OUT/$id/log.txt" ]; then
    rm -rf "$OUT/$id/ranks"
    cp -r "$ld" "$OUT/$id/ranks"   # keeps torchrun's layout: <run_id>/attempt_0/<rank>/{stdout,stderr}.log
    rewrite "$OUT/$id/ranks"
  fi
}
single_case() {  # single_case <case> <max-seconds> <train_gpu.py args>: one plain python process, no torchrun
  local id=$1 tmax=$2; shift 2
  run_case "$id" "$tmax" -- "$PY" train_gpu.py "$@" ${TRAIN_EXTRA[@]+"${TRAIN_EXTRA[@]}"}
}
pl_case() {  # pl_case <case> <max-seconds> <port> <train_lightning.py args>
  local id=$1 tmax=$2 port=$3; shift 3
  if [ "$LIGHTNING" != 1 ]; then status_line "$id" - 0 "SKIPPED: Lightning not importable (versions.txt)"; return 0; fi
  run_case "$id" "$tmax" PYTHONPATH="$PYLIBS${PYTHONPATH:+:$PYTHONPATH}" MASTER_PORT="$port" -- \
    "$PY" train_lightning.py "$@" ${PL_EXTRA[@]+"${PL_EXTRA[@]}"}
}

# Lightning from wheels/: only what the python3 there lacks (numpy must be there already)
setup_lightning() {
  local need=() spec
  "$PY" -c 'import numpy' || { echo "lightning: numpy missing, Lightning cases skipped"; return 1; }
  for spec in lightning:lightning lightning_utilities:lightning-utilities torchmetrics:torchmetrics \
              packaging:packaging tqdm:tqdm yaml:PyYAML; do
    "$PY" -c "import ${spec%%:*}" 2>/dev/null || need+=("${spec#*:}")
  done
  echo "lightning: installing from wheels/: ${need[*]-nothing}"
  if [ "${#need[@]}" -gt 0 ]; then
    mkdir -p "$PYLIBS"
    if ! timeout 60 "$PY" -m pip install --no-index --no-deps --disable-pip-version-check --no-compile \
         --find-links "$HERE/wheels" --target "$PYLIBS" "${need[@]}"; then
      echo "lightning: pip failed, unpacking the wheels instead"
      timeout 60 "$PY" - "$HERE/wheels" "$PYLIBS" "${need[@]}" <<'EOF' || return 1
import glob, os, re, sys, zipfile
wheels, target, names = sys.argv[1], sys.argv[2], sys.argv[3:]
tag = "-cp%d%d-" % sys.version_info[:2]
norm = lambda s: re.sub(r"[-_.]+", "_", s).lower()
for name in names:
    cands = [w for w in sorted(glob.glob(os.path.join(wheels, "*.whl")))
             if norm(os.path.basename(w).split("-")[0]) == norm(name) and ("-py3-none-any" in w or tag in w)]
    if not cands:
        sys.exit(f"no wheel for {name} ({tag.strip('-')})")
    zipfile.ZipFile(cands[0]).extractall(target)
    print("unpacked", os.path.basename(cands[0]))
EOF
    fi
  fi
  PYTHONPATH="$PYLIBS${PYTHONPATH:+:$PYTHONPATH}" timeout 60 "$PY" -c \
    'import lightning, lightning.pytorch, torchmetrics; print("lightning", lightning.__version__, lightning.__file__); print("torchmetrics", torchmetrics.__version__)'
}

# ----------------------------------------------------------------------------------------- setup
mkdir -p "$OUT"
rm -rf "$JOB" "$PYLIBS"
mkdir -p "$JOB"
cp "$HERE"/train_gpu.py "$HERE"/train_lightning.py "$HERE"/gpu_model.py "$JOB"/
: > "$OUT/status.tsv"; : > "$OUT/commands.tsv"
"$PY" "$HERE/rewrite_paths.py" map "$JOB" "$REPO" "$PYLIBS" > "$PATHMAP"
{
  date -u +%Y-%m-%dT%H:%M:%SZ
  echo "python3: $PY"
  timeout 60 "$PY" - <<'EOF'
import sys
import torch
print("python", sys.version.split()[0], "prefix", sys.prefix)
print("torch", torch.__version__, "cuda", torch.version.cuda)
print("cuda_available", torch.cuda.is_available(), "device_count", torch.cuda.device_count())
try:
    v = torch.cuda.nccl.version()
    print("nccl", ".".join(map(str, v)) if isinstance(v, tuple) else v)
except Exception as e:
    print("nccl unknown:", e)
try:
    import triton
    print("triton", triton.__version__)
except Exception as e:
    print("triton unknown:", e)
EOF
  timeout 30 nvidia-smi -L
  timeout 30 nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv,noheader
  echo "torchrun: ${TORCHRUN[*]}"
  echo "C compilers on PATH: $(command -v gcc cc clang | tr '\n' ' ')(CC=${CC-<unset>} CXX=${CXX-<unset>})"
  gcc --version 2>&1 | head -1
  echo "kernel $(uname -r), $(nproc) cores"
  echo "env: NCCL_NVLS_ENABLE=$NCCL_NVLS_ENABLE TORCH_SYMM_MEM_DISABLE_MULTICAST=$TORCH_SYMM_MEM_DISABLE_MULTICAST NVSHMEM_DISABLE_NVLS=$NVSHMEM_DISABLE_NVLS"
  echo "path map: $(tr -d '\n' < "$PATHMAP")"
} > "$OUT/versions.txt" 2>&1
NGPU=$(sed -n 's/^cuda_available .* device_count \([0-9]*\)$/\1/p' "$OUT/versions.txt")
# which set of cases: GPU_MODE=auto (default) picks 2 with 2+ GPUs and 1 with exactly one
MODE=${GPU_MODE:-auto}
if [ "$MODE" = auto ]; then
  if [ "${CPU_DRY_RUN:-0}" = 1 ] || [ "${NGPU:-0}" -ge 2 ]; then MODE=2
  elif [ "${NGPU:-0}" -eq 1 ]; then MODE=1
  else MODE=0; fi
fi
case "$MODE" in 1|2) ;; *)
  echo "run_gpu.sh: torch sees ${NGPU:-no} GPUs (GPU_MODE=${GPU_MODE:-auto}), 1 or 2 are needed; see $OUT/versions.txt"
  cat "$OUT/versions.txt"; exit 1 ;;
esac
if [ "${CPU_DRY_RUN:-0}" != 1 ] && [ "${NGPU:-0}" -lt "$MODE" ]; then
  echo "run_gpu.sh: torch sees ${NGPU:-no} GPUs, GPU_MODE=$MODE needs $MODE; see $OUT/versions.txt"; cat "$OUT/versions.txt"; exit 1
fi
BUDGET=${BUDGET:-$([ "$MODE" = 1 ] && echo 400 || echo 450)}
if [ "$MODE" = 1 ]; then
  CASE_IDS=(run-gpu1-torchrun-cudaoom run-gpu1-single-cudaoom run-gpu1-lightning-cudaoom
            run-gpu1-torchrun-raise run-gpu1-torchrun-sigkill run-gpu1-torchrun-hang
            run-gpu1-torchrun-compile run-gpu1-torchrun-compile-fullgraph
            run-gpu1-torchrun-logdir-raise run-gpu1-torchrun-logdir-sigkill run-gpu1-lightning-raise)
else
  CASE_IDS=(run-gpu-torchrun-cudaoom run-gpu-lightning-cudaoom run-gpu-torchrun-raise run-gpu-torchrun-sigkill
            run-gpu-torchrun-hang run-gpu-torchrun-mismatch run-gpu-torchrun-mismatch-detail
            run-gpu-torchrun-mismatch-detail-manual run-gpu-torchrun-compile run-gpu-torchrun-compile-fullgraph
            run-gpu-torchrun-logdir-raise run-gpu-torchrun-logdir-sigkill run-gpu-lightning-raise)
fi
LABEL_IDS=()
for c in "${CASE_IDS[@]}"; do want "$c" && LABEL_IDS+=("$c"); done
for c in ${SELECT[@]+"${SELECT[@]}"}; do
  case " ${CASE_IDS[*]} " in *" $c "*) ;; *) echo "run_gpu.sh: $c is not a case of the ${MODE}-GPU mode, not run";; esac
done
if [ "${#LABEL_IDS[@]}" -eq 0 ]; then echo "run_gpu.sh: no case to run"; exit 1; fi
echo "mode: $MODE GPU(s) (torch sees ${NGPU:-0}; GPU_MODE=${GPU_MODE:-auto}), budget ${BUDGET} s" | tee -a "$OUT/versions.txt"
LIGHTNING=0
for c in "${LABEL_IDS[@]}"; do
  case "$c" in *-lightning-*) setup_lightning >> "$OUT/versions.txt" 2>&1 && LIGHTNING=1; break ;; esac
done
echo "setup done after $((SECONDS - T0)) s (lightning importable: $LIGHTNING); $(grep -E '^(torch|nccl|triton) ' "$OUT/versions.txt" | tr '\n' ' ')"

if [ "$MODE" = 2 ]; then
# --------------------------------------------- phase 1: the CUDA OOM cases, one at a time, GPUs idle
c=run-gpu-torchrun-cudaoom;  want $c && tr_case $c 90 29701 -- --scenario cudaoom
c=run-gpu-lightning-cudaoom; want $c && pl_case $c 120 29702 --scenario cudaoom

# ------------------------------------------------------------- phase 2: all other cases at once
c=run-gpu-torchrun-raise;    want $c && tr_case $c 120 29711 -- --scenario raise &
c=run-gpu-torchrun-sigkill;  want $c && tr_case $c 120 29712 -- --scenario sigkill &
c=run-gpu-torchrun-hang;     want $c && tr_case $c 200 29713 -- --scenario hang --pg-timeout 20 &
c=run-gpu-torchrun-mismatch; want $c && tr_case $c 200 29714 -- --scenario mismatch --pg-timeout 20 &
c=run-gpu-torchrun-mismatch-detail
want $c && tr_case $c 150 29715 TORCH_DISTRIBUTED_DEBUG=DETAIL -- --scenario mismatch --pg-timeout 20 &
c=run-gpu-torchrun-mismatch-detail-manual
want $c && tr_case $c 150 29716 TORCH_DISTRIBUTED_DEBUG=DETAIL -- --scenario mismatch --grad-sync manual --pg-timeout 20 &
c=run-gpu-torchrun-compile
want $c && tr_case $c 180 29717 TORCHINDUCTOR_COMPILE_THREADS=1 -- --scenario compile &
c=run-gpu-torchrun-compile-fullgraph
want $c && tr_case $c 180 29718 TORCHINDUCTOR_COMPILE_THREADS=1 -- --scenario compile-fullgraph &
c=run-gpu-torchrun-logdir-raise;   want $c && logdir_case $c 120 29719 --scenario raise &
c=run-gpu-torchrun-logdir-sigkill; want $c && logdir_case $c 120 29720 --scenario sigkill &
c=run-gpu-lightning-raise;         want $c && pl_case $c 150 29721 --scenario raise &
wait

else
# ================================ one-GPU mode: run-gpu1-*, both torchrun ranks on cuda:0 over gloo
# (train_gpu.py --one-gpu), GLOO_SOCKET_IFNAME=lo (one host, no network); ports 29731-29741.
G1=(--one-gpu)
# --------------------------------------------- phase 1: the CUDA OOM cases, one at a time, GPU idle
c=run-gpu1-torchrun-cudaoom;  want $c && tr_case $c 75 29731 GLOO_SOCKET_IFNAME=lo -- --scenario cudaoom "${G1[@]}"
c=run-gpu1-single-cudaoom;    want $c && single_case $c 60 --scenario cudaoom
c=run-gpu1-lightning-cudaoom; want $c && pl_case $c 90 29732 --scenario cudaoom --devices 1

# ------------------------------------------------------------- phase 2: all other cases at once
c=run-gpu1-torchrun-raise;   want $c && tr_case $c 100 29733 GLOO_SOCKET_IFNAME=lo -- --scenario raise "${G1[@]}" &
c=run-gpu1-torchrun-sigkill; want $c && tr_case $c 100 29734 GLOO_SOCKET_IFNAME=lo -- --scenario sigkill "${G1[@]}" &
c=run-gpu1-torchrun-hang
want $c && tr_case $c 150 29735 GLOO_SOCKET_IFNAME=lo -- --scenario hang --pg-timeout 20 "${G1[@]}" &
c=run-gpu1-torchrun-compile
want $c && tr_case $c 180 29736 GLOO_SOCKET_IFNAME=lo TORCHINDUCTOR_COMPILE_THREADS=1 -- --scenario compile "${G1[@]}" &
c=run-gpu1-torchrun-compile-fullgraph
want $c && tr_case $c 150 29737 GLOO_SOCKET_IFNAME=lo TORCHINDUCTOR_COMPILE_THREADS=1 -- --scenario compile-fullgraph "${G1[@]}" &
c=run-gpu1-torchrun-logdir-raise
want $c && logdir_case $c 100 29738 GLOO_SOCKET_IFNAME=lo -- --scenario raise "${G1[@]}" &
c=run-gpu1-torchrun-logdir-sigkill
want $c && logdir_case $c 100 29739 GLOO_SOCKET_IFNAME=lo -- --scenario sigkill "${G1[@]}" &
c=run-gpu1-lightning-raise;  want $c && pl_case $c 120 29740 --scenario raise --devices 1 &
wait
fi

# ------------------------------------------------------------------------------ labels, clean-up
kill_tagged DENPEX_GPU_RUN "$RUNTAG"
rewrite "$OUT/commands.tsv"
timeout "$([ "$MODE" = 1 ] && echo 20 || echo 60)" "$PY" "$HERE/labels.py" "$OUT" "${LABEL_IDS[@]}" 2>&1 | tee "$OUT/labels.txt"
echo "run_gpu.sh done after $((SECONDS - T0)) s (budget ${BUDGET} s, ${MODE}-GPU mode)"
