#!/bin/bash
# Runs every GPU pair/trace case on the device machine (one H200, PyTorch 2.11), from the repo root.
# Each run: `python train_gpu.py ARGS > log.txt 2>&1`; the failed run = the healthy ARGS + one flag.
# Paths are then rewritten (venv -> /opt/venv, work dir -> /home/user/job) and everything is tarred to $OUT.
set -u
export PYTHONUNBUFFERED=1
S=tests/corpus/generators/pairs/gpu/train_gpu.py
R=/tmp/gpuruns
PY=$(command -v python3)
mkdir -p $R
one() {  # one <dir> <args...>
  local d=$R/$1; shift; mkdir -p $d
  echo "== $d: python $S $*"
  ( timeout 150 python3 $S "$@" > $d/log.txt 2>&1; echo "exit=$?" > $d/rc.txt )
  cat $d/rc.txt; tail -n 2 $d/log.txt
}
one gpu-oom/healthy        --task mlp --steps 8
one gpu-oom/failed         --task mlp --steps 8 --grow-batch-at 5
one gpu-devassert/healthy  --task lm --steps 8 --batch 64
one gpu-devassert/failed   --task lm --steps 8 --batch 64 --bad-token-at 4
one gpu-nan/healthy        --task mlp --steps 10 --lr 0.001
one gpu-nan/failed         --task mlp --steps 10 --lr 20000
one gpu-triton-smem/healthy --task triton --steps 6
one gpu-triton-smem/failed  --task triton --steps 6 --block-k 256
one gpu-fullgraph/healthy  --task compile --steps 6
one gpu-fullgraph/failed   --task compile --steps 6 --fullgraph
# TORCH_TRACE cases: compiled model, healthy vs OOM inside the compiled graph at step 4
mkdir -p $R/trace-gpu-healthy/trace $R/trace-gpu-compile-oom/trace
TORCH_TRACE=$R/trace-gpu-healthy/trace one trace-gpu-healthy --task compile --steps 6
TORCH_TRACE=$R/trace-gpu-compile-oom/trace one trace-gpu-compile-oom --task compile --steps 6 --grow-batch-at 4
python3 -c 'import torch, triton; print(torch.__version__, triton.__version__, torch.version.cuda)' > $R/versions.txt 2>&1
cat $R/versions.txt; du -sh $R; ls -la $R/trace-*/trace
# path rewrite: venv prefix and the work dir only
VENV=$(python3 -c 'import sys; print(sys.prefix)')
find $R -type f \( -name '*.txt' -o -name '*.log' \) -print0 | xargs -0 sed -i -e "s#$VENV#/opt/venv#g" -e "s#$PWD#/home/user/job#g" -e "s#$R#/home/user/job/runs#g"
tar czf $OUT/gpu.tar.gz -C $R .
ls -la $OUT
