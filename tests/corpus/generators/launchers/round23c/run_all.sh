#!/bin/bash
# Round 23c: reproduce every case (or the ids given) into $OUT/<id>/{log.txt,ranks/}; labels: mk_label.py.
# usage: run_all.sh [ids...]     env: V (venv, torch 2.13.0+cpu), OUT, WORK (scratch job dir), META
HERE=$(dirname "$(readlink -f "$0")")
V=${V:-/work/helpers/venv23c}; OUT=${OUT:-/work/helpers/stage23c}; WORK=${WORK:-/tmp/job23c}
META=${META:-/work/helpers/stage23c.meta}
export PATH=$V/bin:$PATH OMP_NUM_THREADS=1 PYTHONUNBUFFERED=1 MASTER_ADDR=127.0.0.1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mkdir -p "$OUT" "$META"

TR="torchrun --nnodes 1 --master-port \$MASTER_PORT"
MPI="mpirun --oversubscribe --tag-output --timestamp-output -x MASTER_ADDR -x MASTER_PORT -x TRAIN_FAULT"
# id | master port | command (run in $WORK with bash -c)
CASES=(
 "run23c-torchrun-filter-raise|29611|TRAIN_FAULT=raise:2:3 $TR --nproc-per-node 3 --local-ranks-filter 0 train23c.py --steps 8"
 "run23c-torchrun-filter-sigkill|29612|TRAIN_FAULT=sigkill:3:4 $TR --nproc-per-node 4 --local-ranks-filter 0,1 train23c.py --steps 8"
 "run23c-torchrun-filter-hang|29613|TRAIN_FAULT=hang:1:2 $TR --nproc-per-node 3 --local-ranks-filter 0 train23c.py --steps 6"
 "run23c-torchrun-filter-dlraise-shown|29614|TRAIN_FAULT=dlraise:1:2 $TR --nproc-per-node 3 --local-ranks-filter 1 train23c.py --steps 6 --workers 2"
 "run23c-torchrun-tee-segv|29615|TRAIN_FAULT=segv:1:3 $TR --nproc-per-node 4 --tee 3 --log-dir logs train23c.py --steps 8"
 "run23c-torchrun-tee-dlraise|29616|TRAIN_FAULT=dlraise:3:2 $TR --nproc-per-node 4 --tee 3 --log-dir logs train23c.py --steps 6 --workers 2"
 "run23c-torchrun-tee-mismatch-detail|29617|TRAIN_FAULT=mismatch:0:3 TORCH_DISTRIBUTED_DEBUG=DETAIL $TR --nproc-per-node 3 --tee 3 --log-dir logs train23c.py --steps 6 --manual-sync"
 "run23c-forkserver-raise|29618|TRAIN_FAULT=raise:3:4 python spawn23c.py --mode forkserver --nprocs 4 --steps 8"
 "run23c-forkserver-exit2|29619|TRAIN_FAULT=exit2:1:3 python spawn23c.py --mode forkserver --nprocs 3 --steps 8"
 "run23c-forkserver-ok|29620|python spawn23c.py --mode forkserver --nprocs 3 --steps 6 --workers 2"
 "run23c-spawnjoin-sigkill|29621|TRAIN_FAULT=sigkill:0:3 python spawn23c.py --mode spawnjoin --nprocs 3 --steps 8"
 "run23c-spawnjoin-mismatch|29622|TRAIN_FAULT=mismatch:2:2 MISMATCH_N=64 python spawn23c.py --mode spawnjoin --nprocs 4 --steps 6"
 "run23c-spawnjoin-dlraise|29623|TRAIN_FAULT=dlraise:0:1 python spawn23c.py --mode spawnjoin --nprocs 3 --steps 6 --workers 2"
 "run23c-shloop-segv|29624|TRAIN_FAULT=segv:3:3 ./launch_loop.sh 4 --steps 8"
 "run23c-shloop-exit2|29625|TRAIN_FAULT=exit2:0:2 ./launch_loop.sh 3 --steps 6"
 "run23c-shloop-hang|29626|TRAIN_FAULT=hang:2:2 HANG_SECS=30 ./launch_loop.sh 3 --steps 5"
 "run23c-xargs-raise|29627|TRAIN_FAULT=raise:1:2 ./launch_xargs.sh 3 --steps 6"
 "run23c-mpirun-sigkill|29628|TRAIN_FAULT=sigkill:1:3 $MPI -np 4 python train23c.py --steps 8"
 "run23c-mpirun-mismatch-detail|29629|TRAIN_FAULT=mismatch:3:2 TORCH_DISTRIBUTED_DEBUG=DETAIL $MPI -x TORCH_DISTRIBUTED_DEBUG -np 4 python train23c.py --steps 6 --manual-sync"
 "run23c-mpirun-dlraise|29630|TRAIN_FAULT=dlraise:2:2 $MPI -np 3 python train23c.py --steps 6 --workers 2"
 "run23c-mpirun-ok|29631|$MPI -np 4 python train23c.py --steps 6"
)

run_case() {
  local id=$1 port=$2 cmd=$3
  rm -rf "$WORK"; mkdir -p "$WORK"; cp "$HERE"/*.py "$HERE"/*.sh "$WORK"/; cd "$WORK" || exit 1
  echo "== $id: $cmd"
  local t0=$SECONDS
  # own session/process group so every process of the case can be stopped by group id afterwards
  MASTER_PORT=$port setsid timeout -k 10 240 bash -c "$cmd" > log.txt 2>&1 &
  local pid=$!; wait $pid; local rc=$?
  kill -TERM -- -$pid 2>/dev/null; sleep 1; kill -KILL -- -$pid 2>/dev/null
  echo "   rc=$rc  $((SECONDS - t0))s"
  local d=$OUT/$id; rm -rf "$d"; mkdir -p "$d"
  local rw=(-e "s#$V#/opt/venv#g" -e "s#$WORK#/home/user/job#g")
  sed "${rw[@]}" log.txt > "$d/log.txt"
  local att; att=$(find "$WORK/logs" -maxdepth 3 -type d -name attempt_0 2>/dev/null | head -1)
  if [ -n "$att" ]; then
    cp -r "$(dirname "$att")" "$d/ranks"
    find "$d/ranks" -type f -exec sed -i "${rw[@]}" {} +
  fi
  printf '{"cmd": %s, "rc": %d, "secs": %d}\n' "$(python -c 'import json,sys; print(json.dumps(sys.argv[1]))' "$cmd")" \
    "$rc" $((SECONDS - t0)) > "$META/$id.json"
  cd "$HERE"
}

for c in "${CASES[@]}"; do
  IFS='|' read -r id port cmd <<< "$c"
  if [ $# -eq 0 ] || [[ " $* " == *" $id "* ]]; then run_case "$id" "$port" "$cmd"; fi
done
# report (not kill by name) anything left over
pgrep -af 'train23c.py|spawn23c.py' && echo "WARNING: leftover processes above" || true
