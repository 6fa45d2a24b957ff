#!/bin/bash
# Round 47's gpu_shared cases (the scenarios "Added for round 47" in worker.py), all at once, each under a
# timeout, as run_round34.sh does: logs to $LOGROOT/<case>/log.txt, exit codes to rc.txt; only the checkout path is
# rewritten (to /home/user/jobs/). Each case names its process count and extra environment ("-" for none).
# OUT=dir packs everything into dir/gpus47.tgz.
set -u
here=$(cd "$(dirname "$0")" && pwd)
LOGROOT=${LOGROOT:-/tmp/gpus47}
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
  "gpus47-torchrun-gpu-spin 200 tr 3 - worker.py gpu-spin --bad-rank 1"
  "gpus47-spawn-gpu-spin 200 spawn 3 - gpu-spin --spawn 3 --bad-rank 2"
  "gpus47-torchrun-oom-r0 200 tr 3 - worker.py oom --bad-rank 0"
  "gpus47-logdir-oom-r0 200 tr 3 - --log-dir LOGDIR --redirects 3 --tee 3 worker.py oom --bad-rank 0"
  "gpus47-torchrun-ima-blocking 200 tr 3 CUDA_LAUNCH_BLOCKING=1 worker.py ima --bad-rank 2"
  "gpus47-spawn-ima-blocking 200 spawn 3 CUDA_LAUNCH_BLOCKING=1 ima --spawn 3 --bad-rank 1"
  "gpus47-torchrun-event-timing 200 tr 3 - worker.py event-timing --bad-rank 1"
  "gpus47-spawn-event-timing 200 spawn 3 - event-timing --spawn 3 --bad-rank 2"
  "gpus47-logdir-ok 200 tr 3 - --log-dir LOGDIR --redirects 3 --tee 3 worker.py ok"
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
if [ -n "${OUT:-}" ]; then tar -C "$LOGROOT" -czf "$OUT/gpus47.tgz" .; fi
cat "$LOGROOT/rc.txt"
