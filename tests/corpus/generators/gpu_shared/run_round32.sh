#!/bin/bash
# Round 32's gpu_shared cases (the scenarios "Added for round 32" in worker.py), 6 at a time, each under a
# timeout, as run_all.sh does: logs to $LOGROOT/<case>/log.txt, exit codes to rc.txt; only the checkout path is
# rewritten (to /home/user/jobs/). OUT=dir packs everything into dir/gpus32.tgz.
set -u
here=$(cd "$(dirname "$0")" && pwd)
LOGROOT=${LOGROOT:-/tmp/gpus32}
rm -rf "$LOGROOT" /tmp/gpus-cache; mkdir -p "$LOGROOT"
export PYTHONUNBUFFERED=1
if command -v torchrun >/dev/null; then TR=torchrun; else TR="python3 -m torch.distributed.run"; fi
{ date -u +%FT%TZ; python3 -c 'import torch,triton;print(torch.__version__, triton.__version__, torch.version.cuda)'
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; } > "$LOGROOT/versions.txt" 2>&1
run() {  # run CASE TIMEOUT HOW PORT ARGS... ; HOW is "tr" (torchrun) or "spawn"
  local case=$1 t=$2 how=$3 port=$4; shift 4
  mkdir -p "$LOGROOT/$case"
  if [ "$how" = tr ]; then
    (cd "$here" && timeout -k 10 "$t" $TR --nproc-per-node 3 --master-port $port "$@") > "$LOGROOT/$case/log.txt" 2>&1
  else
    (cd "$here" && MASTER_PORT=$port timeout -k 10 "$t" python3 worker.py "$@") > "$LOGROOT/$case/log.txt" 2>&1
  fi
  echo "$case rc=$?" >> "$LOGROOT/rc.txt"
}
C=(
  "gpus32-torchrun-triton-smem 200 tr worker.py triton-smem --bad-rank 2"
  "gpus32-spawn-triton-compile 200 spawn triton-compile --spawn 3 --bad-rank 1"
  "gpus32-torchrun-triton-compile 200 tr --tee 3 worker.py triton-compile --bad-rank 0"
  "gpus32-torchrun-cg-overwrite 240 tr worker.py cg-overwrite --bad-rank 1"
  "gpus32-torchrun-cg-skip-ok 240 tr worker.py cg-skip-ok --tag cgskip"
  "gpus32-torchrun-oom-backward 200 tr worker.py oom-backward --bad-rank 2"
  "gpus32-spawn-oom-compiled 240 spawn oom-compiled --spawn 3 --bad-rank 1"
  "gpus32-logdir-oom-compiled 240 tr --log-dir LOGDIR --redirects 3 --tee 3 worker.py oom-compiled --bad-rank 2"
  "gpus32-torchrun-device-mismatch 200 tr worker.py device-mismatch --bad-rank 1"
  "gpus32-spawn-device-mismatch 200 spawn device-mismatch --spawn 3 --bad-rank 0"
  "gpus32-spawn-cg-overwrite 240 spawn cg-overwrite --spawn 3 --bad-rank 2"
  "gpus32-torchrun-ok-tee 200 tr --tee 3 worker.py ok"
)
i=0
for spec in "${C[@]}"; do
  read -r case t rest <<< "$spec"
  rest=${rest//LOGDIR/$LOGROOT/$case/ranks_raw}
  read -r how args <<< "$rest"
  if [ "$case" = gpus32-torchrun-cg-skip-ok ]; then export TORCH_LOGS=perf_hints; else unset TORCH_LOGS; fi
  run "$case" "$t" "$how" $((29700 + 7 * i)) $args &
  i=$((i + 1)); if [ $((i % 6)) = 0 ]; then wait; fi
done
wait
grep -rl "$here" "$LOGROOT" | xargs -r sed -i "s#$here/#/home/user/jobs/#g; s#$here#/home/user/jobs#g"
pkill -f worker.py || true
if [ -n "${OUT:-}" ]; then tar -C "$LOGROOT" -czf "$OUT/gpus32.tgz" .; fi
cat "$LOGROOT/rc.txt"
