#!/bin/bash
# xargs -P launcher: one `python train23c.py` per rank, 4 at a time, output prefixed with "[worker R] ".
# usage: launch_xargs.sh N [train args...]
N=$1; shift
export MASTER_ADDR=${MASTER_ADDR:-127.0.0.1} WORLD_SIZE=$N TRAIN_ARGS="$*"
seq 0 $((N - 1)) | xargs -P "$N" -I{} bash -c 'set -o pipefail; RANK={} python train23c.py $TRAIN_ARGS 2>&1 | sed -u "s/^/[worker {}] /"'
