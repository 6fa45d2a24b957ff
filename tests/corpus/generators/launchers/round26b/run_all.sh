#!/bin/bash
# Round 26b: one rank fails at different PHASES of a job (init, resume, first step, validation after epoch 1,
# final checkpoint save, teardown, and torchrun --max-restarts 1 with both attempts failing the same way),
# with three faults (raise, SIGKILL, hang past a 15 s gloo timeout), under torchrun and mp.spawn, world size 3.
# Writes $OUT/<id>/log.txt (paths rewritten; ranks/ for the --log-dir case); labels come from mk_label.py.
# usage: run_all.sh [ids...]      env: V (venv with torch 2.13.0+cpu), OUT, WORK, META
HERE=$(dirname "$(readlink -f "$0")")
V=${V:-/work/helpers/venv24b}; OUT=${OUT:-/work/helpers/stage26b}; WORK=${WORK:-/tmp/job26b}
META=${META:-/work/helpers/stage26b.meta}
export PATH=$V/bin:$PATH OMP_NUM_THREADS=1 MASTER_ADDR=127.0.0.1
mkdir -p "$OUT" "$META"

TR="torchrun --nnodes 1 --nproc-per-node 3 --master-port \$MASTER_PORT train26b.py"
SP="python train26b.py --spawn 3"
# id | master port | command (bash -c, in $WORK)
CASES=(
 # init: before init_process_group returns
 "run26b-torchrun-init-raise|29911|$TR --phase init --fault raise --bad-rank 2"        # int('25six') in its shard spec
 "run26b-torchrun-init-sigkill|29912|$TR --phase init --fault sigkill --bad-rank 0"
 "run26b-spawn-init-hang|29913|$SP --phase init --fault hang --bad-rank 1"             # never joins the group
 # resume: while loading this rank's checkpoint shard (the others wait in the step all-reduce)
 "run26b-torchrun-resume-raise|29914|$TR --phase resume --fault raise --bad-rank 1"    # KeyError: 'optimizer'
 "run26b-spawn-resume-sigkill|29915|$SP --phase resume --fault sigkill --bad-rank 2"
 "run26b-torchrun-resume-hang|29916|$TR --phase resume --fault hang --bad-rank 0"
 # first training step
 "run26b-spawn-step1-raise|29917|$SP --phase step1 --fault raise --bad-rank 0"
 "run26b-torchrun-step1-sigkill|29918|$TR --phase step1 --fault sigkill --bad-rank 1"
 # validation after epoch 1
 "run26b-torchrun-valid-hang|29919|$TR --phase valid --val-on rank0 --fault hang --bad-rank 0"  # others already in epoch 2
 "run26b-spawn-valid-raise|29920|$SP --phase valid --val-on all --fault raise --bad-rank 2"     # ZeroDivisionError; others in eval all_reduce
 "run26b-torchrun-valid-sigkill|29921|$TR --phase valid --val-on all --fault sigkill --bad-rank 1"
 # final checkpoint save (every rank writes its shard + manifest, then barrier)
 "run26b-torchrun-save-raise|29922|$TR --phase save --fault raise --bad-rank 0"        # json TypeError (tensor in manifest)
 "run26b-spawn-save-hang|29923|$SP --phase save --fault hang --bad-rank 1"
 # teardown after training
 "run26b-torchrun-teardown-sigkill|29924|$TR --phase teardown --fault sigkill --bad-rank 2"  # atexit handler
 "run26b-spawn-teardown-raise|29925|$SP --phase teardown --fault raise --bad-rank 1"          # before final barrier
 "run26b-spawn-teardown-hang|29926|$SP --phase teardown --fault hang --bad-rank 0"
 # torchrun --max-restarts 1: both attempts fail the same way (one with --log-dir, ranks/ tree kept)
 "run26b-torchrun-restart-raise|29927|torchrun --nnodes 1 --nproc-per-node 3 --master-port \$MASTER_PORT --max-restarts 1 --log-dir logs --tee 3 train26b.py --attempt-store --phase step1 --fault raise --bad-rank 1"
 "run26b-torchrun-restart-sigkill|29928|torchrun --nnodes 1 --nproc-per-node 3 --master-port \$MASTER_PORT --max-restarts 1 train26b.py --attempt-store --phase resume --fault sigkill --bad-rank 2"
 # the same without --attempt-store: the restarted attempt fails in init_process_group (gloo connectFullMesh,
 # stale addresses of attempt 0 in torchrun's store), not with the fault again
 "run26b-torchrun-restart-sigkill-meshfail|29929|torchrun --nnodes 1 --nproc-per-node 3 --master-port \$MASTER_PORT --max-restarts 1 train26b.py --phase resume --fault sigkill --bad-rank 2"
)

run_case() {
  local id=$1 port=$2 cmd=$3
  rm -rf "$WORK"; mkdir -p "$WORK"; cp "$HERE"/train26b.py "$WORK"/; cd "$WORK" || exit 1
  [[ $cmd == *"--phase resume"* ]] && python train26b.py --make-ckpt 3     # the checkpoint it resumes from
  echo "== $id: $cmd"
  local t0=$SECONDS
  # own session/process group, so every process of the case can be stopped by group id afterwards
  MASTER_PORT=$port setsid timeout -k 10 240 bash -c "$cmd" > console.txt 2>&1 < /dev/null &
  local pid=$!; wait $pid; local rc=$?
  kill -TERM -- -$pid 2>/dev/null; sleep 1; kill -KILL -- -$pid 2>/dev/null
  echo "   rc=$rc  $((SECONDS - t0))s"
  local d=$OUT/$id; rm -rf "$d"; mkdir -p "$d"
  local rw=(-e "s#$V#/opt/venv#g" -e "s#$WORK#/home/user/job#g")
  sed "${rw[@]}" console.txt > "$d/log.txt"
  if [ -d logs ]; then      # torchrun --log-dir tree, same layout, same rewriting
    (cd logs && find . -type f) | while read -r f; do mkdir -p "$d/ranks/$(dirname "$f")"; sed "${rw[@]}" "logs/$f" > "$d/ranks/$f"; done
  fi
  python3 - "$cmd" "$rc" > "$META/$id.json" <<'PY'
import json, sys
print(json.dumps({"cmd": sys.argv[1], "rc": int(sys.argv[2])}))
PY
  cd "$HERE"
}

for c in "${CASES[@]}"; do
  IFS='|' read -r id port cmd <<< "$c"
  if [ $# -eq 0 ] || [[ " $* " == *" $id "* ]]; then run_case "$id" "$port" "$cmd"; fi
done
