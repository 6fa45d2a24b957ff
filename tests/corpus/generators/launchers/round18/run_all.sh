#!/usr/bin/env bash
# Round 18: reproduce every case (legacy torch.distributed.launch, accelerate launch with an FSDP config on CPU,
# torch.distributed.elastic's Python API elastic_launch), rewrite paths, write labels.
#   bash run_all.sh                 # all cases
#   bash run_all.sh <case-id> ...   # some cases
# env: VENV (default /work/helpers/venv17b), JOB (work dir, default /tmp/r18job), POOL (default tests/blind/pool18)
set -u
HERE="$(cd "$(dirname "$0")" && pwd)"
VENV="${VENV:-/work/helpers/venv17b}"
JOB="${JOB:-/tmp/r18job}"
POOL="${POOL:-$(cd "$HERE/../../../../blind" && pwd)/pool18}"
export PATH="$VENV/bin:$PATH"
mkdir -p "$JOB/out" "$POOL"
cp "$HERE/train18.py" "$HERE/elastic_driver.py" "$HERE/train_acc.py" "$HERE/fsdp_cpu.yaml" "$JOB/"
MEMCG=/sys/fs/cgroup/memory/trainjob-5e1c   # cgroup v1 memory cgroup for the host-OOM case (neutral name)

LEG="python -m torch.distributed.launch --nproc_per_node=3 --use-env --master_port @PORT@ train18.py --steps 6"
ACC="accelerate launch --config_file fsdp_cpu.yaml --main_process_port @PORT@ train_acc.py"
ELA="python elastic_driver.py --port @PORT@ --run-id @RID@ -- --steps 6"
# case-id | launcher command (run in $JOB); the fault "<mode>:<rank>:<step>" goes in env TRAIN_FAULT, never on a
# command line
declare -A CMD=(
  [run18-distlaunch-raise]="$LEG" [run18-distlaunch-sigkill]="$LEG" [run18-distlaunch-hang]="$LEG"
  [run18-distlaunch-mismatch]="$LEG" [run18-distlaunch-mismatch-detail]="env TORCH_DISTRIBUTED_DEBUG=DETAIL $LEG"
  [run18-accelerate-raise]="$ACC" [run18-accelerate-sigkill]="$ACC" [run18-accelerate-hang]="$ACC"
  [run18-accelerate-compile]="$ACC"
  [run18-elastic-raise]="$ELA" [run18-elastic-sigkill]="$ELA" [run18-elastic-hostoom]="$ELA"
)
declare -A FAULT=(
  [run18-distlaunch-raise]=raise:1:3 [run18-distlaunch-sigkill]=sigkill:2:3 [run18-distlaunch-hang]=hang:1:2
  [run18-distlaunch-mismatch]=mismatch:2:3 [run18-distlaunch-mismatch-detail]=mismatch:1:3
  [run18-accelerate-raise]=raise:2:3 [run18-accelerate-sigkill]=sigkill:1:2 [run18-accelerate-hang]=hang:2:3
  [run18-accelerate-compile]=compile:1:1
  [run18-elastic-raise]=raise:2:2 [run18-elastic-sigkill]=sigkill:1:3 [run18-elastic-hostoom]=hostoom:2:2
)
ORDER="run18-distlaunch-raise run18-distlaunch-sigkill run18-distlaunch-hang run18-distlaunch-mismatch
 run18-distlaunch-mismatch-detail run18-accelerate-raise run18-accelerate-sigkill run18-accelerate-hang
 run18-accelerate-compile run18-elastic-raise run18-elastic-sigkill run18-elastic-hostoom"
IDS="${*:-$ORDER}"

rewrite() { sed -i -e "s#$VENV#/opt/venv#g" -e "s#$JOB#/home/user/job#g" "$1"; }
free_port() { "$VENV/bin/python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

for id in $IDS; do
  rid="j$(echo "$id$RANDOM" | md5sum | cut -c1-6)"          # neutral run id
  cmd="${CMD[$id]//@PORT@/$(free_port)}"; cmd="${cmd//@RID@/$rid}"
  d="$POOL/$id"
  rm -rf "$d" "$JOB/inductor"
  mkdir -p "$d"
  if [[ $id == *hostoom* ]]; then
    rmdir "$MEMCG" 2>/dev/null; mkdir -p "$MEMCG"
    echo $((1024 * 1024 * 1024)) > "$MEMCG/memory.limit_in_bytes"
    [ -e "$MEMCG/memory.memsw.limit_in_bytes" ] && echo $((1024 * 1024 * 1024)) > "$MEMCG/memory.memsw.limit_in_bytes"
  fi
  echo "== $id: TRAIN_FAULT=${FAULT[$id]} $cmd"
  echo "TRAIN_FAULT=${FAULT[$id]} $cmd" > "$JOB/out/$id.cmd"
  # own session/process group, so everything the launcher started can be killed by its group id afterwards
  (cd "$JOB" && exec setsid env TRAIN_FAULT="${FAULT[$id]}" TRAIN_CACHE_ROOT="$JOB/inductor" TRAIN_MEMCG="$MEMCG" \
     timeout 300 $cmd > "$d/log.txt" 2>&1) &
  pid=$!
  wait $pid; echo $? > "$JOB/out/$id.rc"
  kill -9 -- -"$pid" 2>/dev/null || true
  if [[ $id == *hostoom* ]]; then
    { echo "memory.failcnt=$(cat $MEMCG/memory.failcnt)"; grep -E '^(oom_kill_disable|under_oom|oom_kill) ' \
        "$MEMCG/memory.oom_control"; } > "$JOB/out/$id.memcg"
    sleep 1; rmdir "$MEMCG" || echo "could not remove $MEMCG"
  fi
  rewrite "$d/log.txt"
  echo "   exit $(cat "$JOB/out/$id.rc"), $(wc -l < "$d/log.txt") lines"
done
rm -rf "$JOB/inductor"
"$VENV/bin/python" "$HERE/make_labels.py" --pool "$POOL" --job "$JOB" $IDS
