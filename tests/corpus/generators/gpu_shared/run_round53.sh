#!/bin/bash
# Round 53's gpu_shared cases (the scenarios "Added for round 53" in worker.py); the one that fills the GPU runs
# alone afterwards (PAR=1, tag gpus53m). OUT=dir packs each tag into dir/TAG.tgz.
here=$(cd "$(dirname "$0")" && pwd)
TAG=gpus53
C=(
  "gpus53-torchrun-deterministic 200 tr 3 - worker.py deterministic --bad-rank 1"
  "gpus53-spawn-deterministic 200 spawn 3 - deterministic --spawn 3 --bad-rank 2"
  "gpus53-torchrun-fork-cuda 200 tr 3 - worker.py fork-cuda --bad-rank 2"
  "gpus53-logdir-fork-cuda 200 tr 3 - --log-dir LOGDIR --redirects 3 --tee 3 worker.py fork-cuda --bad-rank 1"
  "gpus53-torchrun-autotune-fail 200 tr 3 - worker.py autotune-fail --bad-rank 2"
  "gpus53-spawn-autotune-fail 200 spawn 3 - autotune-fail --spawn 3 --bad-rank 1"
)
# shellcheck source=run_cases.sh
. "$here/run_cases.sh"
TAG=gpus53m
PAR=1
C=(
  "gpus53-torchrun-cublas-thread 150 tr 3 - worker.py cublas-thread --bad-rank 1"
  "gpus53-spawn-cublas-thread 150 spawn 3 - cublas-thread --spawn 3 --bad-rank 2"
)
LOGROOT=/tmp/$TAG
# shellcheck source=run_cases.sh
. "$here/run_cases.sh"
