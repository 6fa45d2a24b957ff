#!/usr/bin/env bash
# Round 15: reproduce every case (Ray Train TorchTrainer, DeepSpeed launcher), rewrite paths, write labels.
#   bash run_all.sh                 # all cases
#   bash run_all.sh <case-id> ...   # some cases
# env: VENV (default /work/helpers/venv15), JOB (work dir, default /tmp/r15job), POOL (default tests/blind/pool15)
# The hostoom cases need root (cgroup v1 memory controller at /sys/fs/cgroup/memory).
set -u
HERE="$(cd "$(dirname "$0")" && pwd)"
VENV="${VENV:-/work/helpers/venv15}"
JOB="${JOB:-/tmp/r15job}"
POOL="${POOL:-$(cd "$HERE/../../../../blind" && pwd)/pool15}"
CG=/sys/fs/cgroup/memory/r15oom
export PATH="$VENV/bin:$PATH"
mkdir -p "$JOB/out" "$POOL"
cp "$HERE/train_ray.py" "$HERE/train_ds.py" "$JOB/"

# case-id | launcher command (run in $JOB); RAY = python train_ray.py, DS = deepspeed launcher
declare -A CMD=(
  [run15-raytrain-raise]="python train_ray.py --mode raise --workers 4 --bad-rank 2 --step 3"
  [run15-raytrain-sigkill]="python train_ray.py --mode sigkill --workers 4 --bad-rank 1 --step 3"
  [run15-raytrain-hang]="python train_ray.py --mode hang --workers 4 --bad-rank 3 --step 2"
  [run15-raytrain-mismatch]="python train_ray.py --mode mismatch --workers 3 --bad-rank 2 --step 3"
  [run15-raytrain-mismatch-detail]="python train_ray.py --mode mismatch-detail --workers 3 --bad-rank 1 --step 3"
  [run15-raytrain-compile]="python train_ray.py --mode compile --workers 3 --bad-rank 1 --step 3"
  [run15-raytrain-compile-fullgraph]="python train_ray.py --mode compile-fullgraph --workers 4 --bad-rank 2 --step 3"
  [run15-raytrain-hostoom]="python train_ray.py --mode hostoom --workers 3 --bad-rank 2 --step 3"
  [run15-deepspeed-raise]="deepspeed --num_gpus 3 train_ds.py --steps 6 --lr 0.05"
  [run15-deepspeed-sigkill]="deepspeed --num_gpus 3 train_ds.py --steps 6 --lr 0.05"
  [run15-deepspeed-hang]="deepspeed --num_gpus 4 train_ds.py --steps 6 --lr 0.05"
  [run15-deepspeed-mismatch]="deepspeed --num_gpus 3 train_ds.py --steps 6 --lr 0.05"
  [run15-deepspeed-hostoom]="deepspeed --num_gpus 3 train_ds.py --steps 6 --lr 0.05"
  [run15-deepspeed-eachranklog-raise]="deepspeed --num_gpus 3 --enable_each_rank_log $JOB/ranklogs train_ds.py --steps 6 --lr 0.05"
  [run15-deepspeed-eachranklog-hang]="deepspeed --num_gpus 3 --enable_each_rank_log $JOB/ranklogs train_ds.py --steps 6 --lr 0.05"
)
# DeepSpeed cases: the fault (<mode>:<rank>:<step>) goes in R15_FAULT, out of the command lines the launcher prints
declare -A FAULT=(
  [run15-deepspeed-raise]=raise:1:3 [run15-deepspeed-sigkill]=sigkill:1:3 [run15-deepspeed-hang]=hang:2:2
  [run15-deepspeed-mismatch]=mismatch:1:3 [run15-deepspeed-hostoom]=hostoom:2:3
  [run15-deepspeed-eachranklog-raise]=raise:1:2 [run15-deepspeed-eachranklog-hang]=hang:2:3
)
ORDER="run15-raytrain-raise run15-raytrain-sigkill run15-raytrain-hang run15-raytrain-mismatch
 run15-raytrain-mismatch-detail run15-raytrain-compile run15-raytrain-compile-fullgraph run15-raytrain-hostoom
 run15-deepspeed-raise run15-deepspeed-sigkill run15-deepspeed-hang run15-deepspeed-mismatch
 run15-deepspeed-hostoom run15-deepspeed-eachranklog-raise run15-deepspeed-eachranklog-hang"
IDS="${*:-$ORDER}"

rewrite() { sed -i -e "s#$VENV#/opt/venv#g" -e "s#$JOB#/home/user/job#g" "$1"; }

for id in $IDS; do
  cmd="${CMD[$id]}"
  d="$POOL/$id"
  rm -rf "$d" "$JOB/ranklogs" "$JOB/ray_results"
  mkdir -p "$d"
  envs="${FAULT[$id]:+R15_FAULT=${FAULT[$id]}}"
  case "$id" in
    run15-deepspeed-mismatch) ;;                          # accelerator auto-detected (prints its CPU warning)
    run15-deepspeed-*) envs="$envs DS_ACCELERATOR=cpu" ;;
  esac
  if [[ "$id" == *hostoom ]]; then
    rmdir "$CG" 2>/dev/null; mkdir -p "$CG"
    echo 1536M > "$CG/memory.limit_in_bytes"; echo 1536M > "$CG/memory.memsw.limit_in_bytes" 2>/dev/null
    envs="$envs HOSTOOM_CGROUP=$CG"
    kbefore=$(dmesg | wc -l)
  fi
  # a Ray driver started right after the previous run can see that run's gcs_server still shutting down
  # ("Found multiple active Ray instances"): wait (up to 60 s) until no Ray GCS process is left
  if [[ "$id" == run15-raytrain-* ]]; then
    for _ in $(seq 60); do pgrep -x gcs_server > /dev/null || break; sleep 1; done
  fi
  echo "== $id: $envs $cmd"
  echo "$envs $cmd" > "$JOB/out/$id.cmd"
  # own session/process group, so everything the launcher started can be killed by its group id afterwards
  (cd "$JOB" && exec setsid env $envs timeout 600 $cmd > "$d/log.txt" 2>&1) &
  pid=$!
  wait $pid; echo $? > "$JOB/out/$id.rc"
  kill -9 -- -"$pid" 2>/dev/null || true
  if [[ "$id" == *hostoom ]]; then
    dmesg | tail -n +"$((kbefore + 1))" | grep -E "Memory cgroup out of memory|oom-kill" > "$JOB/out/$id.kernel" || true
    sleep 1; rmdir "$CG" 2>/dev/null || true
  fi
  if [ -d "$JOB/ranklogs" ]; then cp -r "$JOB/ranklogs" "$d/ranks"; fi
  rewrite "$d/log.txt"
  if [ -d "$d/ranks" ]; then find "$d/ranks" -type f | while read -r f; do rewrite "$f"; done; fi
  echo "   exit $(cat "$JOB/out/$id.rc"), $(wc -l < "$d/log.txt") lines"
done
rm -rf "$JOB/ray_results"
"$VENV/bin/python" "$HERE/make_labels.py" --pool "$POOL" --job "$JOB" --venv "$VENV" $IDS
