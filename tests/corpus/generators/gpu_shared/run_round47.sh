#!/bin/bash
# Round 47's gpu_shared cases (the scenarios "Added for round 47" in worker.py), all at once (run_cases.sh runs
# them). OUT=dir packs everything into dir/gpus47.tgz.
here=$(cd "$(dirname "$0")" && pwd)
TAG=gpus47
C=(
  "gpus47-torchrun-gpu-spin 200 tr 3 - worker.py gpu-spin --bad-rank 1"
  "gpus47-spawn-gpu-spin 200 spawn 3 - gpu-spin --spawn 3 --bad-rank 2"
  "gpus47-torchrun-oom-r0 200 tr 3 - worker.py oom --bad-rank 0"
  "gpus47-logdir-oom-r0 200 tr 3 - --log-dir LOGDIR --redirects 3 --tee 3 worker.py oom --bad-rank 0"
  "gpus47-torchrun-ima-blocking 200 tr 3 CUDA_LAUNCH_BLOCKING=1 worker.py ima --bad-rank 2"
  "gpus47-spawn-ima-blocking 200 spawn 3 CUDA_LAUNCH_BLOCKING=1 ima --spawn 3 --bad-rank 1"
  "gpus47-torchrun-event-timing 200 tr 3 - worker.py event-timing --bad-rank 1"
  "gpus47-spawn-event-timing 200 spawn 3 - event-timing --spawn 3 --bad-rank 2"
  "gpus47-logdir-ok 200 tr 3 - --log-dir LOGDIR --redirects 3 --tee 3 worker.py ok"
)
# shellcheck source=run_cases.sh
. "$here/run_cases.sh"
