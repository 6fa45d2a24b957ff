# Label entries for round 29a (read by mk_label.py). keys: category, decisive, also, rank, rc (expected launcher exit
# code), collateral, root_cause, fix, how.
GLOO_CLOSED = "gloo 'Connection closed by peer ... remote worker crashing' RuntimeError on the surviving ranks"
DEPREC = "_pytree.py `isinstance(treespec, LeafSpec)` is deprecated warning (harmless)"
SRUN = "Lightning SLURM hint about `srun` (harmless)"
SYNC = "`self.log('val_loss', ..., sync_dist=True)` recommendation warning (harmless)"

C = {
    "run29a-plddp-train-raise": dict(
        category="user.code_error", decisive="ValueError: label out of range in batch 3: got -7.25", rank=1, rc=1,
        collateral=[GLOO_CLOSED + " (ranks 0 and 2)", SRUN, DEPREC, SYNC],
        root_cause="Rank 1 raised ValueError in training_step at global step 3 (a label outside the normalized range); "
                   "ranks 0 and 2 then lost their gloo peer in DDP's gradient allreduce.",
        fix="Validate/normalize the labels in the data pipeline (or skip bad samples) so training_step never sees "
            "out-of-range targets.",
        how="python pl29.py --fault train_raise --bad-rank 1 --fault-step 3 (Trainer strategy ddp, Lightning launches "
            "ranks 1-2 itself): rank 1 raises ValueError in training_step"),
    "run29a-spawn-sanity-val-raise": dict(
        category="user.code_error", decisive="KeyError: 'label_scale'", also=["-- Process 2 terminated with the following error:"],
        rank=2, rc=1,
        collateral=["gloo 'Connection closed by peer' RuntimeError in SpawnProcess-2 while it was being terminated",
                    "mp.spawn terminates ranks 0 and 1 via SIGTERM ('[rank: N] Received SIGTERM: 15')", SRUN, DEPREC],
        root_cause="During Lightning's sanity check rank 2's validation_step read a missing 'label_scale' key from its "
                   "sample metadata dict (KeyError) before any training step; the spawn launcher then terminated the others.",
        fix="Add 'label_scale' to the validation metadata (or use meta.get('label_scale', 1.0)) in validation_step.",
        how="python pl29.py --strategy ddp_spawn --fault val_raise --bad-rank 2: rank 2's validation_step raises "
            "KeyError while trainer.sanity_checking"),
    "run29a-torchrun-callback-raise": dict(
        category="user.code_error", decisive="RuntimeError: BatchAudit: loss history buffer full on rank 1",
        also=["failed (exitcode: 1) local_rank: 1"], rank=1, rc=1,
        collateral=[GLOO_CLOSED + " (ranks 0 and 2)", "torchrun SIGTERMs ranks 0 and 2 (exitcode -15 in the summary)",
                    SRUN, DEPREC, SYNC],
        root_cause="A user Callback (BatchAudit.on_train_batch_end) raised RuntimeError on rank 1 at global step 2; "
                   "the other ranks then failed in DDP's allreduce and torchrun tore the job down.",
        fix="Fix the BatchAudit callback (grow or reset its loss-history buffer) so on_train_batch_end does not raise.",
        how="torchrun --nproc-per-node 3 pl29.py --fault callback_raise --bad-rank 1 --fault-step 2: the callback "
            "raises on rank 1"),
    "run29a-torchrun-hostoom": dict(
        category="mem.host_oom", decisive="failed (exitcode: -9) local_rank: 2",
        also=["Signal 9 (SIGKILL) received by PID"], rank=2, rc=1,
        collateral=[GLOO_CLOSED + " (ranks 0 and 1)", "torchrun SIGTERMs ranks 0 and 1", SRUN, DEPREC, SYNC],
        root_cause="Rank 2 grew an in-RAM augmentation cache (64 MiB per chunk, ~960 MiB logged) inside a 1 GiB memory "
                   "cgroup and was SIGKILLed by the kernel OOM killer (no Python traceback); torchrun reported exitcode -9.",
        fix="Bound the augmentation cache (or stream batches) so the rank stays under its host memory limit, or raise "
            "the limit.",
        how="torchrun --nproc-per-node 3 pl29.py --fault hostoom --bad-rank 2 --fault-step 3: rank 2 writes its pid to "
            "a cgroup v1 memory cgroup (memory.limit_in_bytes 1 GiB, memsw too) at setup, allocates 64 MiB tensors at "
            "step 3 until the kernel OOM killer SIGKILLs it (memory.oom_control oom_kill 1)"),
    "run29a-spawn-sigkill": dict(
        category="mem.host_oom",
        decisive="torch.multiprocessing.spawn.ProcessExitedException: process 1 terminated with signal SIGKILL",
        rank=1, rc=1,
        collateral=["mp.spawn terminates ranks 0 and 2 via SIGTERM ('[rank: N] Received SIGTERM: 15')", SRUN, DEPREC,
                    SYNC],
        root_cause="Rank 1 was SIGKILLed at global step 4 with no Python traceback (the signature of the kernel OOM "
                   "killer); Lightning's spawn launcher then terminated the other ranks.",
        fix="Find what killed rank 1 (dmesg / cgroup OOM events) and reduce its host memory use or raise the limit.",
        how="python pl29.py --strategy ddp_spawn --fault sigkill --bad-rank 1 --fault-step 4: rank 1 calls "
            "os.kill(os.getpid(), SIGKILL) in training_step"),
    "run29a-plddp-hang": dict(
        category="dist.collective_timeout", decisive="Timed out waiting 20000ms for", rank=2, rc=1,
        also=["INFO train: rank 2: refreshing remote feature store before step 3"],
        collateral=["ranks 0 and 1 raise gloo timeout RuntimeErrors (recv/send) in DDP's allreduce", SRUN, DEPREC,
                    SYNC],
        root_cause="Rank 2 blocked for 90 s in training_step at step 3 (remote feature-store refresh) and never reached "
                   "DDP's gradient allreduce; ranks 0 and 1 hit the 20 s process-group timeout "
                   "(DDPStrategy(timeout=20 s)) waiting for it.",
        fix="Make the feature-store refresh non-blocking / bounded (or do it on all ranks outside the step), or raise "
            "the DDPStrategy timeout above its worst-case duration.",
        how="python pl29.py --fault hang --bad-rank 2 --fault-step 3 --hang-s 90 --timeout-s 20 (strategy ddp): rank 2 "
            "time.sleep(90) in training_step"),
    "run29a-spawn-syncdist-onerank": dict(
        category="dist.collective_timeout", decisive="Timed out waiting 20000ms for", rank=1, rc=1,
        also=["INFO train: rank 1 step 2 loss"],
        collateral=["mp.spawn terminates the remaining processes via SIGTERM", SRUN, DEPREC, SYNC],
        root_cause="Only rank 1 called self.log('grad_scale', ..., sync_dist=True) at step 3, so it entered an "
                   "all_reduce the other ranks never issued (they went on to DDP's gradient allreduce); the mismatched "
                   "collectives never matched up and gloo timed out after 20 s; the log shows only a gloo timeout (for "
                   "whichever process mp.spawn saw fail first) and rank 1 missing its step-3 loss line.",
        fix="Call self.log(..., sync_dist=True) unconditionally on every rank (or log that metric without sync_dist / "
            "with rank_zero_only=True).",
        how="python pl29.py --strategy ddp_spawn --fault syncdist_onerank --bad-rank 1 --fault-step 3 --timeout-s 20: "
            "rank 1 alone logs an extra metric with sync_dist=True"),
    "run29a-plddp-resume-mismatch": dict(
        category="user.code_error",
        decisive="size mismatch for net.0.weight: copying a param with shape torch.Size([64, 16]) from checkpoint, "
                 "the shape in current model is torch.Size([32, 16]).",
        also=["RuntimeError: Error(s) in loading state_dict for RegModel:"], rank=None, rc=1,
        collateral=["every rank prints the same load_state_dict traceback", SRUN],
        root_cause="fit(ckpt_path='other.ckpt') resumed from a checkpoint saved by a model with hidden=64 while this "
                   "model has hidden=32, so load_state_dict failed with size mismatches on every rank.",
        fix="Resume from a checkpoint of the same architecture (hidden=32) or build the model with the checkpoint's "
            "hyperparameters (RegModel.load_from_checkpoint).",
        how="prep: python pl29.py --devices 1 --hidden 64 --max-steps 2 --save-ckpt other.ckpt; then python pl29.py "
            "--ckpt-path other.ckpt (strategy ddp, hidden 32)"),
    "run29a-cli-bad-config-key": dict(
        category="user.code_error", decisive="error: Subcommand 'fit' does not accept option 'model.learning_rate'",
        rank=None, rc=2, collateral=["jsonargparse prints the full `fit` usage text"],
        root_cause="The LightningCLI config sets model.learning_rate but RegModel's argument is lr, so jsonargparse "
                   "rejected the config before any process group was created (exit 2).",
        fix="Rename model.learning_rate to model.lr in the YAML config (check with `cli29.py fit --print_config`).",
        how="python cli29.py fit --config cfg_badkey.yaml (cfg_base.yaml with lr renamed to learning_rate)"),
    "run29a-cli-monitor-missing": dict(
        category="user.code_error",
        decisive="MisconfigurationException: `ModelCheckpoint(monitor='val_acc')` could not find the monitored key "
                 "in the returned metrics",
        rank=None, rc=1, collateral=["every rank raises the same exception after the first validation", SRUN, DEPREC,
                                     SYNC],
        root_cause="The config's ModelCheckpoint monitors val_acc, which the LightningModule never logs (only "
                   "train_loss and val_loss), so every rank raised MisconfigurationException at the first validation "
                   "end (step 4).",
        fix="Monitor a logged metric (monitor: val_loss) or log val_acc in validation_step.",
        how="python cli29.py fit --config cfg_monitor.yaml (ModelCheckpoint monitor val_acc)"),
    "run29a-torchrun-anomaly-nan": dict(
        category="user.code_error", decisive="RuntimeError: Function 'MseLossBackward0' returned nan values in its 0th output.",
        also=["UserWarning: Error detected in MseLossBackward0", "failed (exitcode: 1) local_rank: 2"], rank=2, rc=1,
        collateral=[GLOO_CLOSED + " (ranks 0 and 1)", "torchrun SIGTERMs ranks 0 and 1", SRUN, DEPREC, SYNC],
        root_cause="With torch.autograd.set_detect_anomaly(True), rank 2's batch at step 3 had a feature passed through "
                   "log() of a negative value, giving NaN in the forward; anomaly mode raised in backward "
                   "(MseLossBackward0 returned nan) on rank 2 only.",
        fix="Guard the feature transform (clamp before log / log1p of non-negative values) so no NaN enters the model.",
        how="torchrun --nproc-per-node 3 pl29.py --fault anomaly_nan --bad-rank 2 --fault-step 3: on_train_start calls "
            "set_detect_anomaly(True); rank 2 sets x[:,3] = log(x[:,3] - 5)"),
    "run29a-plddp-logger-readonly": dict(
        category="user.code_error", decisive="OSError: [Errno 30] Read-only file system: '/home/user/job/ro/tb_logs'",
        rank=0, rc=1, collateral=[GLOO_CLOSED + " (ranks 1 and 2)", SRUN],
        root_cause="The TensorBoardLogger/CSVLogger save_dir was on a read-only mount; rank 0 (which creates the log "
                   "directory) failed with OSError EROFS before training, and the other ranks lost their peer.",
        fix="Point the loggers' save_dir at a writable directory.",
        how="python pl29.py --log-dir <WORK>/ro/tb_logs (strategy ddp) with <WORK>/ro a tmpfs mounted read-only "
            "(mount -t tmpfs -o ro)"),
    "run29a-spawn-fork-train-raise": dict(
        category="user.code_error", decisive="ValueError: label out of range in batch 3: got -7.25",
        also=["-- Process 2 terminated with the following error:"], rank=2, rc=1,
        collateral=["gloo 'Connection closed by peer' RuntimeError in ForkProcess-1 while it was being terminated",
                    "mp.start_processes terminates ranks 0 and 1 via SIGTERM", DEPREC, SYNC],
        root_cause="Rank 2 raised ValueError in training_step at global step 3 (a label outside the normalized range) "
                   "under strategy ddp_notebook (fork start method); the launcher terminated the others.",
        fix="Validate/normalize the labels in the data pipeline (or skip bad samples).",
        how="python pl29.py --strategy ddp_notebook --fault train_raise --bad-rank 2 --fault-step 3 (from a script: "
            "DDPStrategy(start_method='fork'))"),
    "run29a-plddp-healthy-warnings": dict(
        category="none", rank=None,
        collateral=["PossibleUserWarning: number of training batches (10) smaller than log_every_n_steps=50", SYNC,
                    SRUN, DEPREC],
        root_cause="Healthy run: 12 steps completed; only harmless Lightning warnings.", fix="Nothing to fix.",
        how="python pl29.py --log-every 50 --max-steps 12 (strategy ddp)"),
    "run29a-spawn-healthy-syncdist": dict(
        category="none", rank=None, collateral=[SYNC, SRUN, DEPREC],
        root_cause="Healthy run under ddp_spawn: 12 steps completed; only harmless Lightning warnings.",
        fix="Nothing to fix.", how="python pl29.py --strategy ddp_spawn --max-steps 12"),
    "run29a-cli-healthy-ckpt-overwrite": dict(
        category="none", rank=None,
        collateral=["'Checkpoint directory ... exists and is not empty.' warning (checkpoints of a previous run)", SYNC,
                    SRUN, DEPREC],
        root_cause="Healthy LightningCLI run that reuses the checkpoint directory of a previous run; warnings only.",
        fix="Nothing to fix.",
        how="python cli29.py fit --config cfg_base.yaml, run twice in the same directory (the first run, not logged, "
            "leaves ckpt/epoch=0-step=8.ckpt and last.ckpt)"),
}
