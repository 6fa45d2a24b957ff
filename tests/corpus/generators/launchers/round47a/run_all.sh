#!/bin/bash
# Reproduces every round47a case (CPU, gloo, torch 2.13.0+cpu, transformers 5.25, accelerate 1.16, deepspeed 0.19.8).
# Usage: V=/path/to/venv ./run_all.sh [case-id ...]     (raw logs go to $RAW/<case>/log.txt)
# Needs root for the read-only tmpfs (save cases) and the cgroup-v1 memory cgroup (hostoom cases).
cd "$(dirname "$0")"
V=${V:-/work/helpers/venv47a}
RAW=${RAW:-/tmp/r47a/raw}
export PATH=$V/bin:$PATH
export DS_ACCELERATOR=cpu          # DeepSpeed CPU accelerator; without oneccl it falls back to gloo
CG=/sys/fs/cgroup/memory/r47a_oom  # cgroup for the hostoom cases
RO=/tmp/r47a/ro_out                # read-only tmpfs for the save cases
mkdir -p "$RAW" /tmp/r47a/out

TR="torchrun --nproc-per-node 3 --master-port 29621"
DS="deepspeed --num_gpus 3 --master_port 29622"
AC="accelerate launch --config_file accel_ddp_cpu.yaml"   # MULTI_GPU launcher type + Accelerator(cpu=True)

run() {  # run <case-id> <env assignments...> -- <command...>
  local id=$1; shift; local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done; shift
  mkdir -p "$RAW/$id"; echo "== $id: ${envs[*]} $*"
  echo "${envs[*]} $*" > "$RAW/$id/cmd.txt"
  ( env "${envs[@]}" timeout 300 "$@" > "$RAW/$id/log.txt" 2>&1; echo $? > "$RAW/$id/rc" )
  echo "   rc=$(cat $RAW/$id/rc)"
  sleep 2
}
SEL="$*"

mk_cg() { mkdir -p $CG; echo $((1536*1024*1024)) > $CG/memory.limit_in_bytes
          [ -f $CG/memory.memsw.limit_in_bytes ] && echo $((1536*1024*1024)) > $CG/memory.memsw.limit_in_bytes; }
rm_cg() { sleep 2; rmdir $CG 2>/dev/null || true; }
mk_ro() { mkdir -p $RO; mountpoint -q $RO || mount -t tmpfs -o ro,size=1m tmpfs $RO; }
rm_ro() { umount $RO 2>/dev/null || true; }

c() { [ -z "$SEL" ] || [[ " $SEL " == *" $1 "* ]]; }   # run all cases, or only those named

# ---------------- HF Trainer under torchrun (DDP, gloo, ddp_timeout=20) ----------------
c run47a-torchrun-trainer-healthy  && run run47a-torchrun-trainer-healthy FAULT=none -- $TR r47a_trainer_job.py
c run47a-torchrun-trainer-collator && run run47a-torchrun-trainer-collator FAULT=collator FAULT_RANK=2 FAULT_STEP=3 -- $TR r47a_trainer_job.py
c run47a-torchrun-trainer-callback && run run47a-torchrun-trainer-callback FAULT=callback FAULT_RANK=1 FAULT_STEP=4 -- $TR r47a_trainer_job.py
c run47a-torchrun-trainer-sigkill  && run run47a-torchrun-trainer-sigkill FAULT=sigkill FAULT_RANK=2 FAULT_STEP=3 -- $TR r47a_trainer_job.py
c run47a-torchrun-trainer-hang     && run run47a-torchrun-trainer-hang FAULT=hang FAULT_RANK=1 FAULT_STEP=3 PG_TIMEOUT=20 -- $TR r47a_trainer_job.py
c run47a-torchrun-trainer-config   && run run47a-torchrun-trainer-config FAULT=config FAULT_RANK=2 -- $TR r47a_trainer_job.py
if c run47a-torchrun-trainer-save-ro; then mk_ro
  run run47a-torchrun-trainer-save-ro FAULT=save FAULT_RANK=2 FAULT_STEP=3 OUT_DIR_2=$RO -- $TR r47a_trainer_job.py; rm_ro; fi

# ---------------- HF Trainer + DeepSpeed ZeRO 1-3 under the deepspeed launcher ----------------
c run47a-deepspeed-trainer-zero2-healthy-warn && run run47a-deepspeed-trainer-zero2-healthy-warn FAULT=warn -- $DS r47a_trainer_job.py --deepspeed ds_zero2.json
c run47a-deepspeed-trainer-zero2-collator && run run47a-deepspeed-trainer-zero2-collator FAULT=collator FAULT_RANK=1 FAULT_STEP=4 -- $DS r47a_trainer_job.py --deepspeed ds_zero2.json
c run47a-deepspeed-trainer-zero3-sigkill  && run run47a-deepspeed-trainer-zero3-sigkill FAULT=sigkill FAULT_RANK=2 FAULT_STEP=3 -- $DS r47a_trainer_job.py --deepspeed ds_zero3.json
# (no DeepSpeed hang case: under DS_ACCELERATOR=cpu the waiting ranks never timed out in 300 s, see README)
c run47a-deepspeed-trainer-zero3-config   && run run47a-deepspeed-trainer-zero3-config FAULT=config FAULT_RANK=1 -- $DS r47a_trainer_job.py --deepspeed ds_zero3.json
if c run47a-deepspeed-trainer-zero2-hostoom; then mk_cg
  run run47a-deepspeed-trainer-zero2-hostoom FAULT=hostoom FAULT_RANK=1 FAULT_STEP=3 OOM_CGROUP=$CG -- $DS r47a_trainer_job.py --deepspeed ds_zero2.json; rm_cg; fi

# ---------------- accelerate launch (config file) running the HF Trainer ----------------
c run47a-accelerate-trainer-eval && run run47a-accelerate-trainer-eval FAULT=eval FAULT_RANK=2 FAULT_STEP=3 -- $AC r47a_trainer_job.py
c run47a-accelerate-trainer-zero3-callback && run run47a-accelerate-trainer-zero3-callback FAULT=callback FAULT_RANK=2 FAULT_STEP=3 -- $AC r47a_trainer_job.py --deepspeed ds_zero3.json

# ---------------- accelerate launch (config file), Accelerate custom loop, InitProcessGroupKwargs(timeout=20s) -------
c run47a-accelerate-ddp-healthy  && run run47a-accelerate-ddp-healthy FAULT=none SAVE=1 SAVE_DIR=/tmp/r47a/ckpt_ok -- $AC r47a_accel_job.py
c run47a-accelerate-ddp-raise    && run run47a-accelerate-ddp-raise FAULT=raise FAULT_RANK=2 FAULT_STEP=3 -- $AC r47a_accel_job.py
c run47a-accelerate-ddp-sigkill  && run run47a-accelerate-ddp-sigkill FAULT=sigkill FAULT_RANK=1 FAULT_STEP=4 -- $AC r47a_accel_job.py
c run47a-accelerate-ddp-hang     && run run47a-accelerate-ddp-hang FAULT=hang FAULT_RANK=2 FAULT_STEP=3 -- $AC r47a_accel_job.py
c run47a-accelerate-ddp-eval     && run run47a-accelerate-ddp-eval FAULT=eval FAULT_RANK=1 -- $AC r47a_accel_job.py
if c run47a-accelerate-ddp-hostoom; then mk_cg
  run run47a-accelerate-ddp-hostoom FAULT=hostoom FAULT_RANK=2 FAULT_STEP=3 OOM_CGROUP=$CG -- $AC r47a_accel_job.py; rm_cg; fi
if c run47a-accelerate-ddp-save-ro; then mk_ro
  run run47a-accelerate-ddp-save-ro FAULT=save FAULT_RANK=2 SAVE_DIR=/tmp/r47a/ckpt SAVE_DIR_2=$RO -- $AC r47a_accel_job.py; rm_ro; fi

# no orphan ranks left behind (only this round's scripts)
pkill -f 'r47a_(trainer|accel)_job[.]py' 2>/dev/null || true
