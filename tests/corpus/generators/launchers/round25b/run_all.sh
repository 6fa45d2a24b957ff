#!/bin/bash
# Round 25b: the same faults seen through six logging set-ups (absl, pid-only logging, unflushed print,
# one shared append file, `ts` timestamps, nohup.out). Reproduces every case (or the ids given) into
# $OUT/<id>/log.txt (paths rewritten); labels are written afterwards by mk_label.py.
# usage: run_all.sh [ids...]      env: V (venv with torch 2.13.0+cpu, absl-py), OUT, WORK, META
HERE=$(dirname "$(readlink -f "$0")")
V=${V:-/work/helpers/venv25b}; OUT=${OUT:-/work/helpers/stage25b}; WORK=${WORK:-/tmp/job25b}
META=${META:-/work/helpers/stage25b.meta}
CG=/sys/fs/cgroup/memory/r25b_oom          # cgroup v1 memory cgroup for the hostoom cases
export PATH=$V/bin:$PATH OMP_NUM_THREADS=1 MASTER_ADDR=127.0.0.1
unset PYTHONUNBUFFERED                       # the print set-up relies on block-buffered stdout
mkdir -p "$OUT" "$META"

TR="torchrun --nnodes 1 --master-port \$MASTER_PORT"
SP="python train25b.py --spawn"
T=train25b.py
# id | master port | log file the case is read from ("-" = the command's console output) | command (bash -c, in $WORK)
CASES=(
 # (1) absl.logging, glog-style lines, rank only in the message
 "run25b-absl-raise|29811|-|$TR --nproc-per-node 3 $T --logging absl --fault raise --bad-rank 2 --step 3"
 "run25b-absl-hang|29812|-|$SP 3 --logging absl --fault hang --bad-rank 1 --step 2 --pg-timeout 15"
 "run25b-absl-ok|29813|-|$TR --nproc-per-node 4 $T --logging absl"
 # (2) logging with %(process)d only; one 'rank R has pid P' line per process
 "run25b-pid-sigkill|29814|-|$TR --nproc-per-node 4 $T --logging pid --fault sigkill --bad-rank 2 --step 2"
 "run25b-pid-mismatch-detail|29815|-|TORCH_DISTRIBUTED_DEBUG=DETAIL $TR --nproc-per-node 3 $T --logging pid --grad-sync manual --fault mismatch --bad-rank 0 --step 2"
 "run25b-pid-dlworker|29816|-|$TR --nproc-per-node 3 $T --logging pid --fault dlworker --bad-rank 1 --step 2"
 # (3) print() without flush, PYTHONUNBUFFERED unset (torchrun itself starts scripts with `python -u`;
 #     --no-python python ... avoids that, so stdout stays block-buffered there too)
 "run25b-print-raise|29817|-|$SP 3 --logging print --fault raise --bad-rank 0 --step 2"
 "run25b-print-sigkill|29818|-|$TR --nproc-per-node 3 --no-python python $T --logging print --fault sigkill --bad-rank 1 --step 3"
 "run25b-print-hostoom|29819|-|$SP 3 --logging print --fault hostoom --bad-rank 2 --step 2"
 # (4) all ranks append to one shared file (FileHandler mode a) and the launcher output is `tee -a`'d into it
 "run25b-shared-hang|29820|train.log|$TR --nproc-per-node 4 $T --logging shared --fault hang --bad-rank 0 --step 2 --pg-timeout 15 2>&1 | tee -a train.log"
 "run25b-shared-hostoom|29821|train.log|$TR --nproc-per-node 3 $T --logging shared --fault hostoom --bad-rank 1 --step 3 2>&1 | tee -a train.log"
 "run25b-shared-mismatch|29822|train.log|$SP 4 --logging shared --fault mismatch --bad-rank 3 --step 1 --pg-timeout 20 2>&1 | tee -a train.log"
 # (5) every line prefixed with a timestamp by moreutils `ts`
 "run25b-ts-sigkill|29823|-|$SP 3 --logging plain --fault sigkill --bad-rank 0 --step 2 2>&1 | ts '[%Y-%m-%d %H:%M:%.S]'"
 "run25b-ts-dlworker|29824|-|$SP 3 --logging plain --fault dlworker --bad-rank 2 --step 1 2>&1 | ts '[%Y-%m-%d %H:%M:%.S]'"
 "run25b-ts-hang|29825|-|$TR --nproc-per-node 3 $T --logging plain --fault hang --bad-rank 2 --step 3 --pg-timeout 15 2>&1 | ts '[%Y-%m-%d %H:%M:%.S]'"
 # (6) nohup under a pseudo-terminal (script), so nohup itself writes nohup.out
 "run25b-nohup-raise|29826|nohup.out|script -qec \"nohup $TR --nproc-per-node 3 $T --logging plain --fault raise --bad-rank 1 --step 2\" /dev/null"
 "run25b-nohup-hostoom|29827|nohup.out|script -qec \"nohup $TR --nproc-per-node 3 $T --logging plain --fault hostoom --bad-rank 0 --step 1\" /dev/null"
 "run25b-nohup-ok|29828|nohup.out|script -qec \"nohup $SP 3 --logging plain\" /dev/null"
)

run_case() {
  local id=$1 port=$2 logf=$3 cmd=$4
  rm -rf "$WORK"; mkdir -p "$WORK"; cp "$HERE"/train25b.py "$WORK"/; cd "$WORK" || exit 1
  if [[ $cmd == *hostoom* ]]; then   # 1 GiB memory (+swap) limit; the bad rank moves itself in
    rmdir "$CG" 2>/dev/null; mkdir -p "$CG"
    echo 1G > "$CG/memory.limit_in_bytes"; echo 1G > "$CG/memory.memsw.limit_in_bytes" 2>/dev/null
    export HOSTOOM_CGROUP=$CG
  fi
  echo "== $id: $cmd"
  local t0=$SECONDS
  # own session/process group, so every process of the case can be stopped by group id afterwards
  MASTER_PORT=$port setsid timeout -k 10 180 bash -c "$cmd" > console.txt 2>&1 < /dev/null &
  local pid=$!; wait $pid; local rc=$?
  kill -TERM -- -$pid 2>/dev/null; sleep 1; kill -KILL -- -$pid 2>/dev/null
  # script(1) puts nohup cases into a session of their own: stop any rank of this round left behind, by pid
  for p in $(pgrep -f "train25b.py"); do kill -KILL "$p" 2>/dev/null; done
  echo "   rc=$rc  $((SECONDS - t0))s"
  local oomk=""
  if [[ $cmd == *hostoom* ]]; then
    oomk=$(cat "$CG/memory.oom_control" 2>/dev/null | tr '\n' ' '); sleep 1; rmdir "$CG"; unset HOSTOOM_CGROUP
  fi
  local d=$OUT/$id; rm -rf "$d"; mkdir -p "$d"
  local rw=(-e "s#$V#/opt/venv#g" -e "s#$WORK#/home/user/job#g")
  if [ "$logf" = "-" ]; then sed "${rw[@]}" console.txt > "$d/log.txt"; else sed "${rw[@]}" "$logf" > "$d/log.txt"; fi
  python3 - "$cmd" "$rc" "$logf" "$oomk" > "$META/$id.json" <<'EOF'
import json, sys
print(json.dumps({"cmd": sys.argv[1], "rc": int(sys.argv[2]), "logfile": sys.argv[3], "oom_control": sys.argv[4]}))
EOF
  cd "$HERE"
}

for c in "${CASES[@]}"; do
  IFS='|' read -r id port logf cmd <<< "$c"
  if [ $# -eq 0 ] || [[ " $* " == *" $id "* ]]; then run_case "$id" "$port" "$logf" "$cmd"; fi
done
rm -rf "$WORK"
