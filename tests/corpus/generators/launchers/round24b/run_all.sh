#!/bin/bash
# Round 24b: reproduce every case (or the ids given) into $OUT/<id>/{log.txt,ranks/}; then mk_label.py writes label.json.
# usage: run_all.sh [ids...]     env: V (venv, torch 2.13.0+cpu), OUT, WORK (scratch job dir), META
HERE=$(dirname "$(readlink -f "$0")")
V=${V:-/work/helpers/venv24b}; OUT=${OUT:-/work/helpers/stage24b}; WORK=${WORK:-/tmp/job24b}
META=${META:-/work/helpers/stage24b.meta}
export PATH=$V/bin:$PATH OMP_NUM_THREADS=1 PYTHONUNBUFFERED=1 MASTER_ADDR=127.0.0.1
mkdir -p "$OUT" "$META"

TR="torchrun --nnodes 1 --master-port \$MASTER_PORT"
TRL="$TR --log-dir logs --tee 3"          # per-rank files under logs/<run_id>/attempt_0/<rank>/ + console
SP="python train24b.py --spawn"
SH="./launch24b.sh"
# checkpoint shards for the resume cases: MK <world> then break one rank's shard
MK="python train24b.py --make-ckpt ckpt/step_100 --world"
# id | master port | command (run in $WORK with bash -c)
CASES=(
 "run24b-torchrun-ckptmissing|29711|$MK 3 && rm ckpt/step_100/rank_2.pt && $TR --nproc-per-node 3 train24b.py --resume ckpt/step_100"
 "run24b-spawn-ckptmissing|29712|$MK 4 && rm ckpt/step_100/rank_0.pt && $SP 4 --resume ckpt/step_100"
 "run24b-shloop-ckptmissing|29713|$MK 3 && rm ckpt/step_100/rank_1.pt && $SH 3 --resume ckpt/step_100"
 "run24b-torchrun-ckptcorrupt|29714|$MK 4 && truncate -s 1500 ckpt/step_100/rank_1.pt && $TR --nproc-per-node 4 train24b.py --resume ckpt/step_100"
 "run24b-spawn-ckptcorrupt|29715|$MK 3 && truncate -s 1500 ckpt/step_100/rank_2.pt && $SP 3 --resume ckpt/step_100"
 "run24b-torchrun-unused|29716|$TR --nproc-per-node 3 train24b.py --fault unused --bad-rank 0 --step 2"
 "run24b-shloop-unused|29717|$SH 4 --fault unused --bad-rank 2 --step 3"
 "run24b-torchrun-shape|29718|$TR --nproc-per-node 3 train24b.py --fault shape --bad-rank 0"
 "run24b-spawn-shape|29719|$SP 4 --fault shape --bad-rank 3"
 "run24b-torchrun-earlyexit|29720|$TR --nproc-per-node 3 train24b.py --fault early_exit --bad-rank 1 --step 2"
 "run24b-shloop-earlyexit|29721|$SH 3 --fault early_exit --bad-rank 2 --step 3"
 "run24b-spawn-earlyexit|29731|$SP 3 --fault early_exit --bad-rank 0 --step 1"
 "run24b-torchrun-osexit|29722|$TR --nproc-per-node 4 train24b.py --fault osexit --bad-rank 0 --step 2"
 "run24b-shloop-osexit|29723|$SH 4 --fault osexit --bad-rank 3 --step 1"
 "run24b-spawn-osexit|29724|$SP 3 --fault osexit --bad-rank 1 --step 3"
 "run24b-torchrun-logdir-autograd|29725|$TRL --nproc-per-node 3 train24b.py --fault autograd --bad-rank 1 --step 2"
 "run24b-spawn-autograd|29726|$SP 4 --fault autograd --bad-rank 2 --step 3"
 "run24b-torchrun-compile|29727|$TR --nproc-per-node 3 train24b.py --fault compile --bad-rank 2"
 "run24b-spawn-compile|29728|$SP 3 --fault compile --bad-rank 0"
 "run24b-torchrun-ok-metrics|29729|$TR --nproc-per-node 4 train24b.py --fault ok_metrics --bad-rank 1 --step 2"
 "run24b-shloop-ok-sample|29730|$SH 3 --fault ok_sample --bad-rank 2 --step 1"
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
  if [ -d logs ]; then   # torchrun --log-dir: logs/<run_id>/attempt_0/<rank>/{stdout,stderr}.log -> ranks/attempt_0/...
    mkdir -p "$d/ranks"; cp -r logs/*/* "$d/ranks/"
    find "$d/ranks" -type f -exec sed -i "${rw[@]}" {} +
  fi
  printf '{"cmd": %s, "rc": %d}\n' "$(python3 -c 'import json,sys; print(json.dumps(sys.argv[1]))' "$cmd")" "$rc" > "$META/$id.json"
  cd "$HERE"
}

for c in "${CASES[@]}"; do
  IFS='|' read -r id port cmd <<< "$c"
  if [ $# -eq 0 ] || [[ " $* " == *" $id "* ]]; then run_case "$id" "$port" "$cmd"; fi
done
rm -rf "$WORK"
