#!/bin/bash
# Round 69's GPU scenarios (see worker.py's docstring, "Added for round 69"). OUT=dir packs everything into
# dir/gpus69.tgz.
here=$(cd "$(dirname "$0")" && pwd)
TAG=gpus69
C=(
  "gpus69-torchrun-pin-oom 200 tr 3 - worker.py pin-oom --bad-rank 2"
  "gpus69-spawn-pin-oom 200 spawn 3 - pin-oom --spawn 3 --bad-rank 1"
  "gpus69-spawn-amp-dtype 200 spawn 3 - amp-dtype --spawn 3 --bad-rank 1"
  "gpus69-logdir-amp-dtype 200 tr 3 - --log-dir LOGDIR --redirects 3 --tee 3 worker.py amp-dtype --bad-rank 2"
  "gpus69-torchrun-mark-dynamic 240 tr 3 - worker.py mark-dynamic --bad-rank 1"
  "gpus69-spawn-mark-dynamic 240 spawn 3 - mark-dynamic --spawn 3 --bad-rank 2"
  "gpus69-torchrun-scaled-mm 200 tr 3 - --tee 3 worker.py scaled-mm --bad-rank 2"
  "gpus69-torchrun-triton-assert 240 tr 3 - worker.py triton-assert --bad-rank 1"
)
# shellcheck source=run_cases.sh
. "$here/run_cases.sh"
