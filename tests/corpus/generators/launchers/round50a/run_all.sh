#!/bin/bash
# Reproduce every round50a case: how frameworks and launchers number their processes.
# 4-6 processes, gloo, CPU, torch 2.13.0; one fault on one process that is never global rank 0
# (FAULT=raise|sigkill|hang|mismatch, see common.py), and the culprit's number in the log is a
# node/local/process index, a pid, or one of several numbers.
#   usage: run_all.sh [case-id-glob]       env: VENV, WORK (scratch), POOL (case folders out)
# Each case runs in $WORK/<id>; log.txt = the launcher command's stdout+stderr (for two "nodes" on this
# host, two_nodes.sh runs both launchers into the same stdout); then the venv path -> /opt/venv and
# the scratch dir -> /home/user/job. Labels are written by make_labels.py.
VENV=${VENV:-/work/helpers/venv50a}
WORK=${WORK:-/tmp/h50a/work}
POOL=${POOL:-/tmp/h50a/pool}
HERE=$(cd "$(dirname "$0")" && pwd)
ONLY=${1:-*}
export PATH=$VENV/bin:$PATH DS_ACCELERATOR=cpu PYTHONUNBUFFERED=1 STEP=3 HANG_S=50
PORT=29720
TWO=$HERE/two_nodes.sh

kill_leftovers() {  # kill -9, by pid, any process still running in this case's scratch dir
  local d=$1 p
  for p in /proc/[0-9]*; do
    [[ ${p#/proc/} == $$ || ${p#/proc/} == $BASHPID ]] && continue
    [[ "$(readlink "$p/cwd" 2>/dev/null)" == "$d" ]] && kill -9 "${p#/proc/}" 2>/dev/null
  done
}

# run <id> <env assignments...> -- <command...>   ("@PORT@" in the command becomes this case's port)
run() {
  local id=$1; shift
  PORT=$((PORT + 3))
  [[ $id == $ONLY ]] || return 0
  local envs=()
  while [[ $1 != -- ]]; do envs+=("$1"); shift; done; shift
  local cmd=("${@//@PORT@/$PORT}")
  local d=$WORK/$id
  rm -rf "$d"; mkdir -p "$d"; cp "$HERE"/*.py "$d"/
  cd "$d" || return
  printf 'localhost slots=4\n' > hostfile
  printf 'localhost slots=6\n' > hostfile6
  printf 'node0 slots=2\nnode1 slots=2\n' > hostfile2
  echo "== $id: ${envs[*]} ${cmd[*]}"
  env MASTER_PORT=$PORT "${envs[@]}" timeout 400 "${cmd[@]}" > log.txt 2>&1
  echo "rc=$?" > rc; cat rc
  sleep 2; kill_leftovers "$d"
  rm -rf "$POOL/$id"; mkdir -p "$POOL/$id"
  sed -e "s#$VENV#/opt/venv#g" -e "s#$d#/home/user/job#g" log.txt > "$POOL/$id/log.txt"
  for t in logs ranks_src; do  # per-rank trees (deepspeed --enable_each_rank_log, torchrun --log-dir)
    [[ -d $t ]] || continue
    mkdir -p "$POOL/$id/ranks"
    (cd $t && find . -type f | while read -r f; do mkdir -p "$POOL/$id/ranks/$(dirname "$f")"
       sed -e "s#$VENV#/opt/venv#g" -e "s#$d#/home/user/job#g" "$f" > "$POOL/$id/ranks/$f"; done)
  done
  cd "$WORK"
}

# ---- 1. Lightning Fabric: 2 "nodes" (NODE_RANK 0/1) x devices=2; bad = (BAD_NODE, BAD_LOCAL) ----
run run-r50a-fabric-raise-n1l1     FAULT=raise    BAD_NODE=1 BAD_LOCAL=1 -- $TWO python fab_job.py   # global 3
run run-r50a-fabric-sigkill-n1l0   FAULT=sigkill  BAD_NODE=1 BAD_LOCAL=0 -- $TWO python fab_job.py   # global 2 (node 1 main process)
run run-r50a-fabric-hang-n0l1      FAULT=hang     BAD_NODE=0 BAD_LOCAL=1 -- $TWO python fab_job.py   # global 1
run run-r50a-fabric-mismatch-n1l0  FAULT=mismatch BAD_NODE=1 BAD_LOCAL=0 -- $TWO python fab_job.py   # global 2
run run-r50a-fabric-healthy        FAULT=none -- $TWO python fab_job.py
# ---- Lightning Trainer, same layout ----
run run-r50a-trainer-raise-n1l0    FAULT=raise    BAD_NODE=1 BAD_LOCAL=0 -- $TWO python trainer_job.py  # global 2
run run-r50a-trainer-hang-n1l1     FAULT=hang     BAD_NODE=1 BAD_LOCAL=1 -- $TWO python trainer_job.py  # global 3
# (with TORCH_DISTRIBUTED_DEBUG=DETAIL both Lightning node processes segfaulted at setup here: not used)
run run-r50a-trainer-mismatch-n0l1 FAULT=mismatch BAD_NODE=0 BAD_LOCAL=1 -- $TWO python trainer_job.py   # global 1

# ---- 2. Accelerate: 4 processes; two machines (machine_rank 0/1, 2 each) or one machine ----
ACC2=(accelerate launch --multi_gpu --num_processes 4 --num_machines 2 --machine_rank @NODE@ --main_process_ip 127.0.0.1
      --main_process_port @PORT@ --rdzv_backend static --same_network --mixed_precision no --dynamo_backend no)
ACC1=(accelerate launch --multi_gpu --num_processes 4 --num_machines 1 --main_process_port @PORT@ --mixed_precision no --dynamo_backend no)
run run-r50a-accel-2m-sigkill-p3   FAULT=sigkill  BAD_INDEX=3 -- $TWO "${ACC2[@]}" acc_job.py
run run-r50a-accel-2m-raise-p2     FAULT=raise    BAD_INDEX=2 -- $TWO "${ACC2[@]}" acc_job.py
run run-r50a-accel-2m-hang-p1      FAULT=hang     BAD_INDEX=1 -- $TWO "${ACC2[@]}" acc_job.py
run run-r50a-accel-1m-mismatch-p3  FAULT=mismatch BAD_INDEX=3 -- "${ACC1[@]}" acc_job.py
run run-r50a-accel-2m-healthy      FAULT=none -- $TWO "${ACC2[@]}" acc_job.py

# ---- 3. deepspeed launcher (hostfile, --no_ssh two nodes, --include, --enable_each_rank_log) ----
DSL=(deepspeed --no_ssh_check --master_addr 127.0.0.1 --master_port @PORT@)
run run-r50a-ds-hostfile-raise-r2  FAULT=raise    BAD_RANK=2 -- "${DSL[@]}" --hostfile hostfile ds_job.py
run run-r50a-ds-2node-sigkill-r3   FAULT=sigkill  BAD_RANK=3 -- $TWO deepspeed --hostfile hostfile2 --no_ssh --node_rank @NODE@ \
    --master_addr 127.0.0.1 --master_port @PORT@ ds_job.py
run run-r50a-ds-include-hang-r2    FAULT=hang     BAD_RANK=2 -- "${DSL[@]}" --hostfile hostfile6 --include localhost:1,2,4,5 ds_job.py
run run-r50a-ds-eachlog-mismatch-r1 FAULT=mismatch BAD_RANK=1 ZERO_STAGE=0 -- "${DSL[@]}" --hostfile hostfile --enable_each_rank_log logs ds_job.py
run run-r50a-ds-numgpus-raise-r3   FAULT=raise    BAD_RANK=3 -- deepspeed --num_nodes 1 --num_gpus 4 --master_port @PORT@ ds_job.py
run run-r50a-ds-hostfile-healthy   FAULT=none -- "${DSL[@]}" --hostfile hostfile ds_job.py

# ---- 4. torchrun: --role, --local-ranks-filter, --rdzv-id; the job logs host+pid, never a rank ----
TR2=(torchrun --nnodes 2 --nproc-per-node 2 --node-rank @NODE@ --master-addr 127.0.0.1 --master-port @PORT@ --role trainer)
run run-r50a-torchrun-roles-sigkill-r2   FAULT=sigkill BAD_RANK=2 -- $TWO "${TR2[@]}" tr_job.py
run run-r50a-torchrun-filter-raise-r3    FAULT=raise   BAD_RANK=3 -- torchrun --nproc-per-node 4 --master-port @PORT@ \
    --local-ranks-filter 0 --log-dir ranks_src --role worker tr_job.py
run run-r50a-torchrun-rdzv-hang-r3       FAULT=hang    BAD_RANK=3 -- $TWO torchrun --nnodes 2 --nproc-per-node 2 \
    --rdzv-backend c10d --rdzv-endpoint 127.0.0.1:@PORT@ --rdzv-id job-r50a-7 --role learner tr_job.py
# not a case: with TORCH_DISTRIBUTED_DEBUG=DETAIL every process segfaulted in DDP's _ddp_init_helper (torch 2.13 CPU, gloo)
# run run-r50a-torchrun-filter-mismatch-detail-r1 FAULT=mismatch BAD_RANK=1 TORCH_DISTRIBUTED_DEBUG=DETAIL -- torchrun \
#     --nproc-per-node 4 --master-port @PORT@ --local-ranks-filter 0,2 tr_job.py
PORT=$((PORT + 3))  # keep the later cases' ports
run run-r50a-torchrun-6p-mismatch-r5     FAULT=mismatch BAD_RANK=5 -- torchrun --nproc-per-node 6 --master-port @PORT@ \
    --rdzv-id 4417 tr_job.py
run run-r50a-torchrun-roles-healthy      FAULT=none -- $TWO "${TR2[@]}" tr_job.py

# ---- 5. Ray Train TorchTrainer, 4 CPU workers ----
run run-r50a-ray-raise-r2     FAULT=raise    BAD_RANK=2 -- python ray_job.py
run run-r50a-ray-sigkill-r3   FAULT=sigkill  BAD_RANK=3 -- python ray_job.py
run run-r50a-ray-hang-r1      FAULT=hang     BAD_RANK=1 -- python ray_job.py
run run-r50a-ray-mismatch-r2  FAULT=mismatch BAD_RANK=2 RAY_DEDUP_LOGS=0 -- python ray_job.py
# make sure nothing of ours is left (ray's own daemons started by the jobs)
[[ $ONLY == '*' || $ONLY == *ray* ]] && $VENV/bin/ray stop --force >/dev/null 2>&1
exit 0
