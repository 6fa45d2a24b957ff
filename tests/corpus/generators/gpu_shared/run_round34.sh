#!/bin/bash
# Round 34's gpu_shared cases (the scenarios "Added for round 34" in worker.py), all at once, each under a
# timeout, as run_all.sh does: logs to $LOGROOT/<case>/log.txt, exit codes to rc.txt; only the checkout path is
# rewritten (to /home/user/jobs/). OUT=dir packs everything into dir/gpus34.tgz.
set -u
here=$(cd "$(dirname "$0")" && pwd)
LOGROOT=${LOGROOT:-/tmp/gpus34}
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
  "gpus34-torchrun-oom-backward 200 tr worker.py oom-backward-big --bad-rank 2"
  "gpus34-spawn-oom-backward 200 spawn oom-backward-big --spawn 3 --bad-rank 1"
  "gpus34-torchrun-triton-stages 240 tr worker.py triton-stages --bad-rank 1"
  "gpus34-spawn-triton-stages 240 spawn triton-stages --spawn 3 --bad-rank 2"
  "gpus34-torchrun-compiled-assert 240 tr worker.py compiled-assert --bad-rank 2"
  "gpus34-logdir-compiled-assert 240 tr --log-dir LOGDIR --redirects 3 --tee 3 worker.py compiled-assert --bad-rank 1"
  "gpus34-torchrun-autotune-ok 300 tr worker.py autotune-ok"
)
i=0
for spec in "${C[@]}"; do
  read -r case t rest <<< "$spec"
  rest=${rest//LOGDIR/$LOGROOT/$case/ranks_raw}
  read -r how args <<< "$rest"
  run "$case" "$t" "$how" $((29700 + 7 * i)) $args &
  i=$((i + 1)); if [ $((i % 8)) = 0 ]; then wait; fi
done
wait
grep -rl "$here" "$LOGROOT" | xargs -r sed -i "s#$here/#/home/user/jobs/#g; s#$here#/home/user/jobs#g"
pkill -f worker.py || true
if [ -n "${OUT:-}" ]; then tar -C "$LOGROOT" -czf "$OUT/gpus34.tgz" .; fi
cat "$LOGROOT/rc.txt"
