#!/bin/bash
# Second device call: trace case with OOM inside the compiled graph, compiled dynamic=True (one compile,
# trace file < 2 MB; the first attempt without --dynamic recompiled at the batch change and wrote 2.2 MB).
set -u
export PYTHONUNBUFFERED=1
S=tests/corpus/generators/pairs/gpu/train_gpu.py
R=/tmp/gpuruns2; d=$R/trace-gpu-compile-oom; mkdir -p $d/trace
TORCH_TRACE=$d/trace timeout 150 python3 $S --task compile --dynamic --steps 6 --grow-batch-at 4 > $d/log.txt 2>&1; echo "exit=$?"
tail -n 3 $d/log.txt; ls -la $d/trace
VENV=$(python3 -c 'import sys; print(sys.prefix)')
find $R -type f \( -name '*.txt' -o -name '*.log' \) -print0 | xargs -0 sed -i -e "s#$VENV#/opt/venv#g" -e "s#$PWD#/home/user/job#g" -e "s#$R#/home/user/job/runs#g"
tar czf $OUT/gpu2.tar.gz -C $R .
