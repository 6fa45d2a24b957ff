#!/bin/bash
# Round 45's gpu_shared cases (the scenarios "Added for round 45" in worker.py), all at once (run_cases.sh runs
# them). OUT=dir packs everything into dir/gpus45.tgz.
here=$(cd "$(dirname "$0")" && pwd)
TAG=gpus45
C=(
  "gpus45-torchrun-alloc-conf 200 tr 3 - worker.py alloc-conf --bad-rank 2"
  "gpus45-spawn-alloc-conf 200 spawn 3 - alloc-conf --spawn 3 --bad-rank 1"
  "gpus45-torchrun-no-gpu 200 tr 3 - worker.py no-gpu --bad-rank 1"
  "gpus45-spawn-no-gpu 200 spawn 3 - no-gpu --spawn 3 --bad-rank 2"
  "gpus45-torchrun-mem-fraction 200 tr 3 - worker.py mem-fraction --bad-rank 2"
  "gpus45-logdir-mem-fraction 200 tr 3 - --log-dir LOGDIR --redirects 3 --tee 3 worker.py mem-fraction --bad-rank 1"
  "gpus45-torchrun-sdpa-flash 200 tr 3 - worker.py sdpa-flash --bad-rank 1"
  "gpus45-spawn-sdpa-flash 200 spawn 3 - sdpa-flash --spawn 3 --bad-rank 2"
  "gpus45-torchrun-graph-capture 200 tr 3 - worker.py graph-capture --bad-rank 2"
  "gpus45-spawn-graph-capture 200 spawn 3 - graph-capture --spawn 3 --bad-rank 1"
  "gpus45-torchrun-nccl-ok 200 tr 1 NCCL_DEBUG=INFO worker.py nccl-ok"
  "gpus45-torchrun-nccl-oom 200 tr 1 NCCL_DEBUG=INFO worker.py nccl-oom --bad-rank 0"
  "gpus45-torchrun-nccl-shared 200 tr 2 NCCL_DEBUG=WARN worker.py nccl-shared"
  "gpus45-spawn-nccl-shared 200 spawn 3 - nccl-shared --spawn 3"
)
# shellcheck source=run_cases.sh
. "$here/run_cases.sh"
