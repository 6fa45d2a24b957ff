#!/bin/bash
# Round 58's GPU scenarios (see worker.py's docstring, "Added for round 58"). OUT=dir packs everything into
# dir/gpus58.tgz.
here=$(cd "$(dirname "$0")" && pwd)
TAG=gpus58
C=(
  "gpus58-torchrun-recompile-limit 240 tr 3 - worker.py recompile-limit --bad-rank 2"
  "gpus58-spawn-recompile-limit 240 spawn 3 - recompile-limit --spawn 3 --bad-rank 1"
  "gpus58-torchrun-flex-mask 240 tr 3 - worker.py flex-mask --bad-rank 1"
  "gpus58-torchrun-anomaly-nan 200 tr 3 - --tee 3 worker.py anomaly-nan --bad-rank 2"
  "gpus58-spawn-anomaly-nan 200 spawn 3 - anomaly-nan --spawn 3 --bad-rank 1"
  "gpus58-torchrun-scaler-bf16 200 tr 3 - worker.py scaler-bf16 --bad-rank 1"
  "gpus58-logdir-ckpt-recompute 200 tr 3 - --log-dir LOGDIR --redirects 3 --tee 3 worker.py ckpt-recompute --bad-rank 2"
  "gpus58-spawn-assert-async 200 spawn 3 - assert-async --spawn 3 --bad-rank 2"
  "gpus58-torchrun-assert-async 200 tr 3 - --tee 3 worker.py assert-async --bad-rank 1"
)
# shellcheck source=run_cases.sh
. "$here/run_cases.sh"
