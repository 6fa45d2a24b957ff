#!/bin/bash
# Round 64's GPU scenarios (see worker.py's docstring, "Added for round 64"). OUT=dir packs everything into
# dir/gpus64.tgz.
here=$(cd "$(dirname "$0")" && pwd)
TAG=gpus64
C=(
  "gpus64-torchrun-clip-nonfinite 200 tr 3 - worker.py clip-nonfinite --bad-rank 2"
  "gpus64-spawn-clip-nonfinite 200 spawn 3 - clip-nonfinite --spawn 3 --bad-rank 1"
  "gpus64-torchrun-sdpa-mask 200 tr 3 - --tee 3 worker.py sdpa-mask --bad-rank 1"
  "gpus64-spawn-sdpa-mask 200 spawn 3 - sdpa-mask --spawn 3 --bad-rank 2"
  "gpus64-torchrun-gather-oob 200 tr 3 - worker.py gather-oob --bad-rank 2"
  "gpus64-logdir-gather-oob 200 tr 3 - --log-dir LOGDIR --redirects 3 --tee 3 worker.py gather-oob --bad-rank 1"
  "gpus64-torchrun-int-matmul 200 tr 3 - worker.py int-matmul --bad-rank 1"
  "gpus64-spawn-int-matmul 200 spawn 3 - int-matmul --spawn 3 --bad-rank 2"
)
# shellcheck source=run_cases.sh
. "$here/run_cases.sh"
