#!/bin/bash
# Round 49's gpu_shared cases (the scenarios "Added for round 49" in worker.py). The cases that fill the GPU run one
# at a time (PAR=1, tag gpus49m), after the others (tag gpus49); OUT=dir packs each tag into dir/TAG.tgz.
here=$(cd "$(dirname "$0")" && pwd)
TAG=gpus49
C=(
  "gpus49-torchrun-inductor-ima 240 tr 3 - worker.py inductor-ima --bad-rank 2"
  "gpus49-spawn-inductor-ima 240 spawn 3 - inductor-ima --spawn 3 --bad-rank 1"
  "gpus49-torchrun-cg-dynamic-ok 240 tr 3 TORCH_LOGS=perf_hints,recompiles worker.py cg-dynamic-ok"
  "gpus49-spawn-cg-dynamic-ok 240 spawn 3 TORCH_LOGS=perf_hints,recompiles cg-dynamic-ok --spawn 3"
)
# shellcheck source=run_cases.sh
. "$here/run_cases.sh"
TAG=gpus49m
PAR=1
C=(
  "gpus49-torchrun-oom-grow 120 tr 3 - worker.py oom-grow --bad-rank 1"
  "gpus49-spawn-oom-grow 120 spawn 3 - oom-grow --spawn 3 --bad-rank 2"
  "gpus49-logdir-oom-grow 120 tr 3 - --log-dir LOGDIR --redirects 3 --tee 3 worker.py oom-grow --bad-rank 2"
  "gpus49-torchrun-oom-grow-expandable 120 tr 3 PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True worker.py oom-grow --bad-rank 2"
  "gpus49-torchrun-oom-optimizer 120 tr 3 - worker.py oom-optimizer --bad-rank 1"
  "gpus49-logdir-oom-optimizer 120 tr 3 - --log-dir LOGDIR --redirects 3 --tee 3 worker.py oom-optimizer --bad-rank 1"
)
LOGROOT=/tmp/$TAG
# shellcheck source=run_cases.sh
. "$here/run_cases.sh"
