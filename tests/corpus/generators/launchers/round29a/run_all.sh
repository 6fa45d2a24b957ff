#!/usr/bin/env bash
# Round 29a: real CPU/gloo PyTorch Lightning 2.6.6 jobs (3 processes), torch 2.13.0+cpu, failing on one rank or on all,
# plus healthy runs with noisy Lightning warnings. Launch modes: Lightning's own DDP launcher (strategy ddp: it
# re-executes the script for ranks 1-2), torchrun --nproc-per-node 3 (Lightning detects torchelastic), ddp_spawn
# and ddp_notebook (fork) via Lightning's multiprocessing launcher, and LightningCLI (`cli29.py fit --config`).
# Usage: run_all.sh [OUT_DIR] [case-id ...]   (default OUT_DIR=/work/helpers/stage29a; default: all cases)
# Venv V (default /work/helpers/venv29a): torch==2.13.0 numpy lightning jsonargparse[signatures] tensorboard.
# Each case writes OUT/<id>/log.txt (launcher stdout+stderr; venv path -> /opt/venv, script and work dirs ->
# /home/user/job) and label.json (mk_label.py from labels29a.py: checks the exit code and that decisive_line is in
# the log). Needs root: the hostoom case uses a cgroup v1 memory cgroup, the logger case a read-only tmpfs mount.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=${1:-/work/helpers/stage29a}; shift || true
V=${V:-/work/helpers/venv29a}
WORK=${WORK:-/tmp/r29a}          # scratch dir: working directory of every run (logs/, ckpt/ land here)
mkdir -p "$OUT" "$WORK"
ONLY=" $* "
want() { [ "$ONLY" = "  " ] || [[ "$ONLY" == *" $1 "* ]]; }
# (Lightning's SLURM hint cuts the script path to 64 chars, so a shortened $HERE may appear: 4th rule)
rewrite() { sed -i -e "s#$V#/opt/venv#g" -e "s#$HERE#/home/user/job#g" -e "s#$WORK#/home/user/job#g" -e "s#${HERE%/round29a}#/home/user/job#g" "$@"; }

run_case() {   # run_case <id> <command...>   (runs in a fresh $WORK; env vars may prefix via `env`)
  local id=$1; shift
  want "$id" || return 0
  rm -rf "$OUT/$id"; mkdir -p "$OUT/$id"
  echo "== $id: $*"
  ( cd "$WORK" && PATH="$V/bin:$PATH" exec setsid timeout 300 "$@" ) > "$OUT/$id/log.txt" 2>&1 &
  local pid=$!; wait $pid; local rc=$?
  kill -9 -- -$pid 2>/dev/null   # the whole session (launcher and ranks)
  echo "   exit code $rc"
  rewrite "$OUT/$id/log.txt"
  python3 "$HERE/mk_label.py" "$OUT/$id" "$id" "$rc"
}
fresh() { rm -rf "$WORK/logs" "$WORK/ckpt" "$WORK/lightning_logs"; }
P=$HERE/pl29.py; CLI=$HERE/cli29.py
export PYTHONUNBUFFERED=1
# (ports 439xx: other jobs on this machine use 299xx)
TR() { echo torchrun --nproc-per-node 3 --master-port "$1"; }

# ===================== FAILING =====================
# strategy ddp (Lightning launches ranks 1,2 itself): rank 1 raises ValueError in training_step at global step 3
fresh; run_case run29a-plddp-train-raise env MASTER_PORT=43911 python "$P" --fault train_raise --bad-rank 1 --fault-step 3
# ddp_spawn: rank 2 raises KeyError in validation_step during the sanity check (before any training step)
fresh; run_case run29a-spawn-sanity-val-raise env MASTER_PORT=43912 python "$P" --strategy ddp_spawn --fault val_raise --bad-rank 2
# torchrun: rank 1's Callback.on_train_batch_end raises RuntimeError at global step 2
fresh; run_case run29a-torchrun-callback-raise $(TR 43913) "$P" --fault callback_raise --bad-rank 1 --fault-step 2
# torchrun: rank 2 joins a 1 GiB memory cgroup at setup, caches 64 MiB buffers at step 3 until the OOM killer strikes
if want run29a-torchrun-hostoom; then
  CG=/sys/fs/cgroup/memory/r29a_oom; rmdir "$CG" 2>/dev/null; mkdir -p "$CG"
  echo $((1024 << 20)) > "$CG/memory.limit_in_bytes"
  [ -e "$CG/memory.memsw.limit_in_bytes" ] && echo $((1024 << 20)) > "$CG/memory.memsw.limit_in_bytes"
  export R29A_CGROUP=$CG
fi
fresh; run_case run29a-torchrun-hostoom $(TR 43914) "$P" --fault hostoom --bad-rank 2 --fault-step 3
if want run29a-torchrun-hostoom; then echo "   cgroup: $(grep oom_kill /sys/fs/cgroup/memory/r29a_oom/memory.oom_control | tr '\n' ' ')"; sleep 1; rmdir /sys/fs/cgroup/memory/r29a_oom; fi
# ddp_spawn: rank 1 SIGKILLs itself in training_step at global step 4 (no traceback)
fresh; run_case run29a-spawn-sigkill env MASTER_PORT=43915 python "$P" --strategy ddp_spawn --fault sigkill --bad-rank 1 --fault-step 4
# strategy ddp: rank 2 sleeps 90 s in training_step at step 3; DDPStrategy(timeout=20 s): the others time out in DDP's allreduce
fresh; run_case run29a-plddp-hang env MASTER_PORT=43916 python "$P" --fault hang --bad-rank 2 --fault-step 3 --hang-s 90 --timeout-s 20
# ddp_spawn: only rank 1 calls self.log("grad_scale", ..., sync_dist=True) at step 3 -> an all_reduce only it enters
fresh; run_case run29a-spawn-syncdist-onerank env MASTER_PORT=43917 python "$P" --strategy ddp_spawn --fault syncdist_onerank --bad-rank 1 --fault-step 3 --timeout-s 20
# strategy ddp: resume (ckpt_path) from a checkpoint saved by a model with hidden=64 (this one has hidden=32): every rank fails
if want run29a-plddp-resume-mismatch; then
  fresh; ( cd "$WORK" && rm -f other.ckpt && "$V/bin/python" "$P" --devices 1 --hidden 64 --max-steps 2 --save-ckpt other.ckpt > prep_other.log 2>&1 ); echo "   prep: other.ckpt saved ($?)"
fi
fresh; run_case run29a-plddp-resume-mismatch env MASTER_PORT=43918 python "$P" --ckpt-path other.ckpt
# LightningCLI: config has model.learning_rate (the argument is model.lr) -> jsonargparse usage error, exit 2
fresh; run_case run29a-cli-bad-config-key env MASTER_PORT=43919 python "$CLI" fit --config "$HERE/cfg_badkey.yaml"
# LightningCLI: ModelCheckpoint(monitor="val_acc"), only val_loss/train_loss are logged -> MisconfigurationException on every rank
fresh; run_case run29a-cli-monitor-missing env MASTER_PORT=43920 python "$CLI" fit --config "$HERE/cfg_monitor.yaml"
# torchrun: set_detect_anomaly(True); rank 2's batch at step 3 gets log() of a negative feature -> NaN -> anomaly RuntimeError
fresh; run_case run29a-torchrun-anomaly-nan $(TR 43921) "$P" --fault anomaly_nan --bad-rank 2 --fault-step 3
# strategy ddp: TensorBoardLogger/CSVLogger save_dir on a read-only mount (rank 0 creates the log dir)
if want run29a-plddp-logger-readonly; then
  mkdir -p "$WORK/ro"; mountpoint -q "$WORK/ro" || mount -t tmpfs -o ro,size=1m tmpfs "$WORK/ro"
fi
fresh; run_case run29a-plddp-logger-readonly env MASTER_PORT=43922 python "$P" --log-dir "$WORK/ro/tb_logs"
if want run29a-plddp-logger-readonly; then umount "$WORK/ro"; rmdir "$WORK/ro"; fi
# ddp_notebook (fork start method, used from a script): rank 2 raises ValueError in training_step at step 3
fresh; run_case run29a-spawn-fork-train-raise env MASTER_PORT=43923 python "$P" --strategy ddp_notebook --fault train_raise --bad-rank 2 --fault-step 3

# ===================== HEALTHY (exit 0; noisy but harmless Lightning warnings) =====================
# strategy ddp: log_every_n_steps=50 > 10 batches (PossibleUserWarning), val_loss without sync_dist warning, srun hint
fresh; run_case run29a-plddp-healthy-warnings env MASTER_PORT=43924 python "$P" --log-every 50 --max-steps 12
# ddp_spawn: sync_dist recommendation warning, deprecation warnings, full run
fresh; run_case run29a-spawn-healthy-syncdist env MASTER_PORT=43925 python "$P" --strategy ddp_spawn --max-steps 12
# LightningCLI: a previous run left checkpoints in ckpt/ -> "Checkpoint directory ... exists and is not empty." warning
if want run29a-cli-healthy-ckpt-overwrite; then
  fresh; ( cd "$WORK" && MASTER_PORT=43926 "$V/bin/python" "$CLI" fit --config "$HERE/cfg_base.yaml" > prep_cli.log 2>&1 ); echo "   prep: first CLI run ($?) left $(ls "$WORK/ckpt" | tr '\n' ' ')"
fi
rm -rf "$WORK/logs"; run_case run29a-cli-healthy-ckpt-overwrite env MASTER_PORT=43927 python "$CLI" fit --config "$HERE/cfg_base.yaml"

fresh
echo "leftover processes (should be none):"; pgrep -af "round29a/(pl29|cli29).py" || true
