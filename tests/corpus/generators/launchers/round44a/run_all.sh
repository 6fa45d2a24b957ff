#!/bin/bash
# Reproduce every round44a case: real DeepSpeed engine jobs (deepspeed 0.19.8, torch 2.13.0 CPU,
# DS_ACCELERATOR=cpu, dist_backend='gloo' passed to deepspeed.init_distributed) with one fault each.
#   usage: run_all.sh [case-id-pattern]     (e.g. run_all.sh 'run44a-ds-hang*')
#   env:   VENV (virtualenv with torch 2.13.0+cpu + deepspeed), WORK (scratch), STAGE (case folders out)
# Each case runs in its own scratch dir $WORK/<id>; log.txt = launcher stdout+stderr, then the venv path is
# rewritten to /opt/venv and the scratch dir to /home/user/job. Labels (label.json) are written by hand.
VENV=${VENV:-/work/helpers/venv44a}
WORK=${WORK:-/tmp/w44a}
STAGE=${STAGE:-/work/helpers/stage44}
HERE=$(cd "$(dirname "$0")" && pwd)
ONLY=${1:-*}
export PATH=$VENV/bin:$PATH DS_ACCELERATOR=cpu
PORT=29600

kill_leftovers() {  # kill, by pid, any process still running in this case's scratch dir
  local d=$1 p
  for p in /proc/[0-9]*; do
    [[ ${p#/proc/} == $$ || ${p#/proc/} == $BASHPID ]] && continue  # not this script
    [[ "$(readlink "$p/cwd" 2>/dev/null)" == "$d" ]] && kill -9 "${p#/proc/}" 2>/dev/null
  done
}

# run <id> <setup-fn|-> <command...>
run() {
  local id=$1 setup=$2; shift 2
  PORT=$((PORT + 1))
  [[ $id == $ONLY ]] || return 0
  local d=$WORK/$id
  rm -rf "$d"; mkdir -p "$d"; cp "$HERE"/ds_train.py "$HERE"/ds_spawn.py "$d"/
  cd "$d" || return
  [[ $setup != - ]] && $setup "$d"
  echo "== $id: $*"
  MASTER_PORT=$PORT timeout 420 "$@" > log.txt 2>&1
  echo "rc=$?" > rc; cat rc
  sleep 2; kill_leftovers "$d"
  [[ $setup != - ]] && type "${setup}_done" >/dev/null 2>&1 && "${setup}_done" "$d"
  mkdir -p "$STAGE/$id"
  sed -e "s#$VENV#/opt/venv#g" -e "s#$d#/home/user/job#g" log.txt > "$STAGE/$id/log.txt"
  if [[ -d logs ]]; then  # --enable_each_rank_log tree
    rm -rf "$STAGE/$id/ranks"; mkdir -p "$STAGE/$id/ranks"
    (cd logs && find . -type f | while read -r f; do mkdir -p "$STAGE/$id/ranks/$(dirname "$f")"
       sed -e "s#$VENV#/opt/venv#g" -e "s#$d#/home/user/job#g" "$f" > "$STAGE/$id/ranks/$f"; done)
  fi
  cd "$WORK"
}

# --- setups -----------------------------------------------------------------------------------------
CG=/sys/fs/cgroup/memory/run44a_oom
oom_cg() {  # a 1.5 GiB memory cgroup that only the faulty rank joins (it writes its own pid)
  mkdir -p $CG; echo $((1536 * 1024 * 1024)) > $CG/memory.limit_in_bytes
  [[ -f $CG/memory.memsw.limit_in_bytes ]] && echo $((1536 * 1024 * 1024)) > $CG/memory.memsw.limit_in_bytes
  export OOM_CGROUP=$CG
}
oom_cg_done() { unset OOM_CGROUP; sleep 1; rmdir $CG; }
ro_mount() { mkdir -p "$1/ro_ckpt"; mount -t tmpfs -o ro,size=4m tmpfs "$1/ro_ckpt"; export RO_CKPT=$1/ro_ckpt; }
ro_mount_done() { umount "$1/ro_ckpt"; unset RO_CKPT; }
ckpt_ws4() {  # a ZeRO-2 checkpoint saved by a healthy 4-rank run (its log is not a case)
  deepspeed --num_gpus 4 --master_port $((PORT + 50)) ds_train.py --fault none --stage 2 --ckpt ckpt > setup_ws4.txt 2>&1
  kill_leftovers "$1"
}

DS="deepspeed --master_port"
TR="torchrun --nnodes 1 --master_port"
MPI="mpirun --allow-run-as-root --oversubscribe --bind-to none -x PATH -x DS_ACCELERATOR -x MASTER_PORT -np"

# --- healthy ----------------------------------------------------------------------------------------
run run44a-ds-healthy-z2          - $DS $((PORT+1)) --num_gpus 3 ds_train.py --fault none --stage 2
run run44a-ds-healthy-z3-eachlog  - $DS $((PORT+1)) --num_nodes 1 --num_gpus 4 --enable_each_rank_log logs ds_train.py --fault none --stage 3
run run44a-torchrun-healthy-warn  - $TR $((PORT+1)) --nproc_per_node 3 ds_train.py --fault warn --stage 1
# --- config error every rank raises alike (client optimizer under ZeRO, no zero_allow_untested_optimizer) ---
run run44a-torchrun-untested-opt-z1 - $TR $((PORT+1)) --nproc_per_node 3 ds_train.py --fault untested_opt --stage 1
# --- raise in rank's own code -------------------------------------------------------------------------
run run44a-ds-raise-z2            - $DS $((PORT+1)) --num_gpus 3 ds_train.py --fault raise --stage 2 --bad-rank 1 --step 3
run run44a-torchrun-raise-z1      - $TR $((PORT+1)) --nproc_per_node 4 ds_train.py --fault raise --stage 1 --bad-rank 2 --step 2
run run44a-mpirun-raise-z3        - $MPI 3 python3 -u ds_train.py --fault raise --stage 3 --bad-rank 2 --step 4
# --- SIGKILL ---------------------------------------------------------------------------------------
run run44a-ds-sigkill-z2          - $DS $((PORT+1)) --num_gpus 4 ds_train.py --fault sigkill --stage 2 --bad-rank 2 --step 3
run run44a-spawn-sigkill-z0       - python3 -u ds_spawn.py --fault sigkill --stage 0 --bad-rank 1 --step 2
# --- hang before collectives (gloo timeout 20 s) -----------------------------------------------------
# (ZeRO 0/1/2 on CPU: DeepSpeed's all_reduce goes through its shm comm op, which has no timeout: the others
#  just wait until the sleeper wakes; so the hang cases use ZeRO 3, whose all_gather/reduce_scatter use gloo)
run run44a-ds-hang-z3             - $DS $((PORT+1)) --num_gpus 3 ds_train.py --fault hang --stage 3 --bad-rank 1 --step 3 --timeout 20
run run44a-torchrun-hang-z3       - $TR $((PORT+1)) --nproc_per_node 3 ds_train.py --fault hang --stage 3 --bad-rank 2 --step 2 --timeout 20
# --- config differs on one rank ------------------------------------------------------------------------
run run44a-ds-cfg-mbs             - $DS $((PORT+1)) --num_gpus 3 ds_train.py --fault cfg_mbs --stage 1 --bad-rank 1
run run44a-torchrun-cfg-ga        - $TR $((PORT+1)) --nproc_per_node 4 ds_train.py --fault cfg_ga --stage 2 --bad-rank 3
run run44a-ds-cfg-stage           - $DS $((PORT+1)) --num_gpus 3 ds_train.py --fault cfg_stage --stage 2 --bad-rank 2 --timeout 20
# --- parameter shape differs on one rank -----------------------------------------------------------------
run run44a-ds-shape-z1            - $DS $((PORT+1)) --num_gpus 3 ds_train.py --fault shape --stage 1 --bad-rank 1 --timeout 20
run run44a-torchrun-shape-z3-detail - env TORCH_DISTRIBUTED_DEBUG=DETAIL $TR $((PORT+1)) --nproc_per_node 3 ds_train.py --fault shape --stage 3 --bad-rank 2 --timeout 20
# --- checkpoint save / load --------------------------------------------------------------------------------
run run44a-ds-save-ro-z2-eachlog  ro_mount $DS $((PORT+1)) --num_gpus 3 --enable_each_rank_log logs ds_train.py --fault save_ro --stage 2 --bad-rank 1
run run44a-mpirun-save-missing-z2 - $MPI 3 python3 -u ds_train.py --fault save_missing --stage 2 --bad-rank 2
run run44a-ds-load-missing        - $DS $((PORT+1)) --num_gpus 3 ds_train.py --fault load_missing --stage 2
run run44a-ds-load-ws4to3         ckpt_ws4 $DS $((PORT+1)) --num_gpus 3 ds_train.py --fault load_ws --stage 2
# --- host OOM in a memory cgroup on one rank ------------------------------------------------------------------
run run44a-ds-hostoom-z2          oom_cg $DS $((PORT+1)) --num_gpus 3 ds_train.py --fault hostoom --stage 2 --bad-rank 1 --step 2
