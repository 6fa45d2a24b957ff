#!/bin/bash
# Runs every gpu_shared case on a one-GPU machine, 6 at a time, each under a timeout: the launcher's
# stdout+stderr go to $LOGROOT/<case>/log.txt (torchrun --log-dir cases also keep ranks/), exit codes to rc.txt.
# Only the checkout path is rewritten (to /home/user/jobs/). OUT=dir packs everything into dir/gpus.tgz.
set -u
here=$(cd "$(dirname "$0")" && pwd)
LOGROOT=${LOGROOT:-/tmp/gpus}
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
  "gpus-torchrun-ok 150 tr worker.py ok"
  "gpus-torchrun-ok-compiled 300 tr --tee 3 worker.py ok-compiled"
  "gpus-torchrun-oom 150 tr worker.py oom --bad-rank 2"
  "gpus-spawn-oom 150 spawn oom --spawn 3 --bad-rank 1"
  "gpus-torchrun-assert 150 tr worker.py assert --bad-rank 1"
  "gpus-spawn-assert 150 spawn assert --spawn 3 --bad-rank 2"
  "gpus-torchrun-ima 150 tr worker.py ima --bad-rank 2"
  "gpus-torchrun-cc-missing 300 tr --tee 3 worker.py cc-missing --bad-rank 1 --tag tr"
  "gpus-spawn-cc-missing 300 spawn cc-missing --spawn 3 --bad-rank 2 --tag spawn"
  "gpus-torchrun-hang 200 tr worker.py hang --bad-rank 1"
  "gpus-spawn-hang 200 spawn hang --spawn 3 --bad-rank 2"
  "gpus-torchrun-sigkill 150 tr worker.py sigkill --bad-rank 2"
  "gpus-torchrun-set-device 150 tr worker.py set-device"
  "gpus-logdir-oom 150 tr --log-dir LOGDIR --redirects 3 --tee 3 worker.py oom --bad-rank 1"
)
i=0
for spec in "${C[@]}"; do
  read -r case t rest <<< "$spec"
  rest=${rest//LOGDIR/$LOGROOT/$case/ranks_raw}
  read -r how args <<< "$rest"
  run "$case" "$t" "$how" $((29700 + 7 * i)) $args &
  i=$((i + 1)); if [ $((i % 6)) = 0 ]; then wait; fi
done
wait
grep -rl "$here" "$LOGROOT" | xargs -r sed -i "s#$here/#/home/user/jobs/#g; s#$here#/home/user/jobs#g"
pkill -f worker.py || true
if [ -n "${OUT:-}" ]; then tar -C "$LOGROOT" -czf "$OUT/gpus.tgz" .; fi
cat "$LOGROOT/rc.txt"
