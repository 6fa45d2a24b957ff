#!/bin/bash
# Round 45's gpu_shared cases (the scenarios "Added for round 45" in worker.py), all at once, each under a
# timeout, as run_round34.sh does: logs to $LOGROOT/<case>/log.txt, exit codes to rc.txt; only the checkout path is
# rewritten (to /home/user/jobs/). Each case names its process count and extra environment ("-" for none).
# OUT=dir packs everything into dir/gpus45.tgz.
set -u
here=$(cd "$(dirname "$0")" && pwd)
LOGROOT=${LOGROOT:-/tmp/gpus45}
rm -rf "$LOGROOT" /tmp/gpus-cache; mkdir -p "$LOGROOT"
export PYTHONUNBUFFERED=1
if command -v torchrun >/dev/null; then TR=torchrun; else TR="python3 -m torch.distributed.run"; fi
{ date -u +%FT%TZ; python3 -c 'import torch,triton;print(torch.__version__, triton.__version__, torch.version.cuda)'
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; } > "$LOGROOT/versions.txt" 2>&1
run() {  # run CASE TIMEOUT HOW PORT NPROC ENV ARGS... ; HOW is "tr" (torchrun) or "spawn"
  local case=$1 t=$2 how=$3 port=$4 nproc=$5 envs=$6; shift 6
  [ "$envs" = - ] && envs=""
  mkdir -p "$LOGROOT/$case"
  if [ "$how" = tr ]; then
    (cd "$here" && env $envs timeout -k 10 "$t" $TR --nproc-per-node "$nproc" --master-port $port "$@") \
      > "$LOGROOT/$case/log.txt" 2>&1
  else
    (cd "$here" && env $envs MASTER_PORT=$port timeout -k 10 "$t" python3 worker.py "$@") > "$LOGROOT/$case/log.txt" 2>&1
  fi
  echo "$case rc=$?" >> "$LOGROOT/rc.txt"
}
C=(
  "gpus45-torchrun-alloc-conf 200 tr 3 - worker.py alloc-conf --bad-rank 2"
  "gpus45-spawn-alloc-conf 200 spawn 3 - alloc-conf --spawn 3 --bad-rank 1"
  "gpus45-torchrun-no-gpu 200 tr 3 - worker.py no-gpu --bad-rank 1"
  "gpus45-spawn-no-gpu 200 spawn 3 - no-gpu --spawn 3 --bad-rank 2"
  "gpus45-torchrun-mem-fraction 200 tr 3 - worker.py mem-fraction --bad-rank 2"
  "gpus45-logdir-mem-fraction 200 tr 3 - --log-dir LOGDIR --redirects 3 --tee 3 worker.py mem-fraction --bad-rank 1"
  "gpus45-torchrun-sdpa-flash 200 tr 3 - worker.py sdpa-flash --bad-rank 1"
  "gpus45-spawn-sdpa-flash 200 spawn 3 - sdpa-flash --spawn 3 --bad-rank 2"
  "gpus45-torchrun-graph-capture 200 tr 3 - worker.py graph-capture --bad-rank 2"
  "gpus45-spawn-graph-capture 200 spawn 3 - graph-capture --spawn 3 --bad-rank 1"
  "gpus45-torchrun-nccl-ok 200 tr 1 NCCL_DEBUG=INFO worker.py nccl-ok"
  "gpus45-torchrun-nccl-oom 200 tr 1 NCCL_DEBUG=INFO worker.py nccl-oom --bad-rank 0"
  "gpus45-torchrun-nccl-shared 200 tr 2 NCCL_DEBUG=WARN worker.py nccl-shared"
  "gpus45-spawn-nccl-shared 200 spawn 3 - nccl-shared --spawn 3"
)
i=0
for spec in "${C[@]}"; do
  read -r case t how nproc envs args <<< "$spec"
  args=${args//LOGDIR/$LOGROOT/$case/ranks_raw}
  run "$case" "$t" "$how" $((29700 + 7 * i)) "$nproc" "$envs" $args &
  i=$((i + 1)); if [ $((i % 7)) = 0 ]; then wait; fi
done
wait
grep -rl "$here" "$LOGROOT" | xargs -r sed -i "s#$here/#/home/user/jobs/#g; s#$here#/home/user/jobs#g"
pkill -f worker.py || true
if [ -n "${OUT:-}" ]; then tar -C "$LOGROOT" -czf "$OUT/gpus45.tgz" .; fi
cat "$LOGROOT/rc.txt"
