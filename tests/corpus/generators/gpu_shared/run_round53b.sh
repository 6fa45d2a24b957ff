#!/bin/bash
# Round 53's second GPU call: torch.use_deterministic_algorithms(True) then an op with no deterministic CUDA kernel
# (deterministic-op in worker.py). OUT=dir packs everything into dir/gpus53b.tgz.
here=$(cd "$(dirname "$0")" && pwd)
TAG=gpus53b
C=(
  "gpus53-torchrun-deterministic-op 200 tr 3 - worker.py deterministic-op --bad-rank 2"
  "gpus53-spawn-deterministic-op 200 spawn 3 - deterministic-op --spawn 3 --bad-rank 1"
)
# shellcheck source=run_cases.sh
. "$here/run_cases.sh"
