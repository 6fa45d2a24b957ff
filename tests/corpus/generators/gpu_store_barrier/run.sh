#!/usr/bin/env bash
# On the GPU machine (torch 2.11, one H200): three NCCL ranks share the one GPU (no collective runs, so NCCL
# never builds a communicator and the duplicate-GPU check never fires); with TORCH_DIST_INIT_BARRIER=1
# dist.new_group() ends in torch's store-based barrier, which rank 2 never enters.
#   bash tests/corpus/generators/gpu_store_barrier/run.sh OUTDIR
set -u
OUT="${1:?outdir}"
HERE="$(cd "$(dirname "$0")/../launchers/store_barrier" && pwd)"
mkdir -p "$OUT"
cd "$HERE"
TORCH_DIST_INIT_BARRIER=1 timeout 180 torchrun --nproc-per-node 3 --master-port 29733 --tee 3 \
  skip_new_group.py --backend nccl --skip-rank 2 --timeout 20 > "$OUT/log.txt" 2>&1
echo "exit status $?" > "$OUT/status.txt"
pkill -f skip_new_group.py || true
# the gloo variant on this machine's torch 2.11: the new group's rendezvous waits for rank 2's address key
mkdir -p "$OUT/gloo"
TORCH_DIST_INIT_BARRIER=1 timeout 150 torchrun --nproc-per-node 3 --master-port 29734 --tee 3 \
  skip_new_group.py --skip-rank 2 --timeout 15 > "$OUT/gloo/log.txt" 2>&1
echo "exit status $?" > "$OUT/gloo/status.txt"
pkill -f skip_new_group.py || true
python -c 'import torch; print(torch.__version__)' > "$OUT/torch_version.txt"
