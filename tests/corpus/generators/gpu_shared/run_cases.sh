#!/bin/bash
# The runner run_round45.sh and run_round47.sh source: each sets TAG (the cases' prefix, e.g. gpus45) and C (one
# case per string: "CASE TIMEOUT HOW NPROC ENV ARGS...", HOW "tr" for torchrun or "spawn", ENV "-" for none, LOGDIR in
# ARGS standing for the case's own --log-dir), then sources this. It runs every case, PAR at a time (7 unless set), each under a
# timeout: logs to $LOGROOT/<case>/log.txt, exit codes to rc.txt; only the checkout path is rewritten (to
# /home/user/jobs/). OUT=dir packs everything into dir/$TAG.tgz.
set -u
here=$(cd "$(dirname "$0")" && pwd)
LOGROOT=${LOGROOT:-/tmp/$TAG}
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
i=0
for spec in "${C[@]}"; do
  read -r case t how nproc envs args <<< "$spec"
  args=${args//LOGDIR/$LOGROOT/$case/ranks_raw}
  run "$case" "$t" "$how" $((29700 + 7 * i)) "$nproc" "$envs" $args &
  i=$((i + 1)); if [ $((i % ${PAR:-7})) = 0 ]; then wait; fi
done
wait
grep -rl "$here" "$LOGROOT" | xargs -r sed -i "s#$here/#/home/user/jobs/#g; s#$here#/home/user/jobs#g"
pkill -f worker.py || true
if [ -n "${OUT:-}" ]; then tar -C "$LOGROOT" -czf "$OUT/$TAG.tgz" .; fi
cat "$LOGROOT/rc.txt"
