# Labels for round 32b (read by mk_label.py). rc: expected launcher exit code. rank: initiating rank (None: every
# rank). decisive: exact substring of one log line. file: decisive file relative to ranks/ (the --log-dir case).
TR3, TR4 = "torchrun --nproc-per-node 3 ddp32b.py", "torchrun --nproc-per-node 4 ddp32b.py"
SIGTERM = "torchrun SIGTERMs the surviving ranks (exitcode -15) and prints ChildFailedError"
CLOSED = "the other ranks fail in the DDP all-reduce with gloo 'Connection closed by peer'"
UNUSED_FIX = "Use every parameter in every iteration on every rank (e.g. multiply the skipped branch by 0) or create DDP with find_unused_parameters=True."

# ---------------- healthy ----------------
C["run32b-torchrun-healthy-noisy"] = dict(launcher="torchrun", category="none", rc=0,
    collateral=["[W ... reducer.cpp] Warning: find_unused_parameters=True was specified in DDP constructor, but did not find any unused parameters (every rank)",
                "UserWarning: In CPU autocast, but the target dtype is not supported. Disabling autocast. (every rank)",
                "rank 1 logs 'skipping bad sample, substituting a zero sample' with a ValueError traceback (handled)"],
    root_cause="Healthy outcome: the DDP find_unused_parameters performance warning, the cpu-autocast-float64 'Disabling autocast' warning and a logged-and-handled ValueError for one corrupt sample on rank 1 are harmless; all ranks finish with exit 0.",
    fix="Nothing required; optionally drop find_unused_parameters=True and the float64 autocast.",
    how=f"{TR3} --fault noisy --bad-rank 1")
C["run32b-torchrun-healthy-debuginfo"] = dict(launcher="torchrun", category="none", rc=0,
    collateral=["TORCH_DISTRIBUTED_DEBUG=INFO / TORCH_CPP_LOG_LEVEL=INFO c10d, TCPStore, socket and reducer INFO lines",
                "'[Rank N]: DDP Initialized with:' parameter dumps on every rank"],
    root_cause="Healthy outcome: the only unusual output is the INFO-level c10d/TCPStore/reducer logging enabled by TORCH_DISTRIBUTED_DEBUG=INFO and TORCH_CPP_LOG_LEVEL=INFO; training finishes with exit 0.",
    fix="Nothing required; unset the debug variables to quiet the log.",
    how=f"TORCH_DISTRIBUTED_DEBUG=INFO TORCH_CPP_LOG_LEVEL=INFO {TR3} --fault none")
C["run32b-torchrun-healthy-join"] = dict(launcher="torchrun", category="none", rc=0,
    collateral=["rank 2 logs 'step 5/5' and 'training complete (5 steps)' while the others run 8 steps"],
    root_cause="Healthy outcome: rank 2 has 3 fewer batches, but the loop runs inside torch.distributed.algorithms.Join, which shadows its collectives, so every rank finishes with exit 0.",
    fix="Nothing required.",
    how=f"{TR4} --fault join --bad-rank 2")
C["run32b-spawn-healthy-join"] = dict(launcher="mp.spawn", category="none", rc=0,
    collateral=["rank 3 finishes after 5 steps, the others after 8"],
    root_cause="Healthy outcome: uneven inputs (rank 3 has 3 fewer batches) are handled by the Join context manager; all four spawned processes finish and the parent exits 0.",
    fix="Nothing required.",
    how="python ddp32b.py --spawn 4 --fault join --bad-rank 3 (torch.multiprocessing.spawn)")

# ---------------- DDP reducer / model consistency ----------------
C["run32b-torchrun-ckpt-twice"] = dict(launcher="torchrun", category="dist.collective_mismatch", rc=1, rank=None,
    decisive="RuntimeError: Expected to mark a variable ready only once.",
    also=["Parameter at index 3 with name block.bias has been marked as ready twice."],
    collateral=["the same error on every rank", SIGTERM],
    root_cause="The model runs the same block twice, each under torch.utils.checkpoint(use_reentrant=True); the two reentrant backward passes both fire DDP's autograd hooks for block's parameters, so the reducer sees them marked ready twice on every rank.",
    fix="Use checkpoint(..., use_reentrant=False), or checkpoint the block only once per forward (or _set_static_graph() if the graph never changes).",
    how=f"{TR3} --fault ckpt_twice: self.block applied twice, each under checkpoint(use_reentrant=True)")
C["run32b-torchrun-unused-onerank"] = dict(launcher="torchrun", category="dist.collective_mismatch", rc=1, rank=1,
    decisive="[rank1]: RuntimeError: Expected to have finished reduction in the prior iteration before starting a new one.",
    also=["Parameter indices which did not receive grad for rank 1: 6 7"],
    collateral=[CLOSED, SIGTERM],
    root_cause="At step 3 rank 1 alone skips the aux head, so with find_unused_parameters=False its reducer never finishes that iteration's reduction and its next forward raises; the other ranks lose the connection in the all-reduce.",
    fix=UNUSED_FIX,
    how=f"{TR3} --fault unused --bad-rank 1 --at 3: rank 1 calls forward(use_aux=False) at step index 3")
C["run32b-torchrun-static-graph"] = dict(launcher="torchrun", category="dist.collective_mismatch", rc=1, rank=2,
    decisive="[rank2]: RuntimeError: Expected to have finished reduction in the prior iteration before starting a new one. This error indicates that your training graph has changed in this iteration",
    also=["Parameter indices which did not receive grad for rank 2: 6 7"],
    collateral=[CLOSED, SIGTERM],
    root_cause="DDP is created with static_graph=True, but at step 4 rank 2 alone skips the aux head, so its graph changes and the reducer on that rank reports an unfinished reduction; the others fail in the all-reduce.",
    fix="Keep the graph identical on every rank and iteration when static_graph=True (or drop static_graph and use find_unused_parameters=True).",
    how=f"{TR4} --fault static_graph --bad-rank 2 --at 4")
C["run32b-torchrun-reqgrad"] = dict(launcher="torchrun", category="dist.collective_mismatch", rc=1, rank=1,
    decisive="[rank1]: RuntimeError: DDP expects same model across all ranks, but Rank 1 has 6 params, while rank 0 has inconsistent 8 params.",
    also=["[rank0]: RuntimeError: DDP expects same model across all ranks, but Rank 0 has 8 params, while rank 1 has inconsistent 6 params."],
    collateral=["ranks 0 and 2 raise the same check naming rank 1", "all three ranks exit 1"],
    root_cause="Rank 1 alone sets requires_grad=False on block before wrapping the model in DDP, so it registers 6 trainable parameters where the other ranks have 8 and DDP's construction-time consistency check fails on every rank.",
    fix="Apply the same freezing (requires_grad settings) on every rank before constructing DDP.",
    how=f"{TR3} --fault reqgrad --bad-rank 1: model.block.requires_grad_(False) on rank 1 only")
C["run32b-torchrun-extra-param"] = dict(launcher="torchrun", category="dist.collective_mismatch", rc=1, rank=3,
    decisive="RuntimeError: DDP expects same model across all ranks, but Rank 3 has 9 params",
    also=["while rank 3 has inconsistent 9 params."],
    collateral=["the other ranks raise the same check naming rank 3"],
    root_cause="Rank 3 builds its model with an extra nn.Parameter (temperature), so it has 9 parameters where the others have 8 and DDP's construction-time model check fails.",
    fix="Build the identical module on every rank (make the extra parameter unconditional or remove it).",
    how=f"{TR4} --fault extra_param --bad-rank 3")
C["run32b-torchrun-extra-buffer-detail"] = dict(launcher="torchrun", category="dist.collective_mismatch", rc=1, rank=2,
    decisive="Detected mismatch between collectives on ranks. Rank 2 is running collective: CollectiveFingerPrint(SequenceNumber=2, OpType=BROADCAST, TensorShape=[1868]",
    also=["but Rank 2 is running collective: CollectiveFingerPrint(SequenceNumber=2, OpType=BROADCAST, TensorShape=[1868]"],
    collateral=["ranks 0 and 1 raise the mirror-image fingerprint mismatch naming rank 2"],
    root_cause="Rank 2 alone registers an extra 4-element buffer, so its DDP state broadcast at construction is 1868 elements where the other ranks send 1864; TORCH_DISTRIBUTED_DEBUG=DETAIL's fingerprint check reports the BROADCAST size mismatch.",
    fix="Register the same buffers on every rank before wrapping in DDP (or keep per-rank state out of the module).",
    how=f"TORCH_DISTRIBUTED_DEBUG=DETAIL {TR3} --fault extra_buffer --bad-rank 2: register_buffer('ema_loss', zeros(4)) on rank 2 only")
C["run32b-distrun-unused-logdir"] = dict(launcher="torchrun", category="dist.collective_mismatch", rc=1, rank=3,
    decisive="RuntimeError: Expected to have finished reduction in the prior iteration before starting a new one.",
    also=["Parameter indices which did not receive grad for rank 3: 6 7"],
    file="attempt_0/3/stderr.log",
    collateral=[CLOSED, SIGTERM],
    root_cause="At step 2 rank 3 alone skips the aux head, so with find_unused_parameters=False its reducer never finishes the reduction and its next forward raises; the other ranks lose the connection in the all-reduce.",
    fix=UNUSED_FIX,
    how="python -m torch.distributed.run --nproc-per-node 4 --log-dir logs --redirects 3 --tee 3 ddp32b.py --fault unused --bad-rank 3 --at 2")
C["run32b-lightning-unused"] = dict(launcher="lightning", framework="lightning", category="dist.collective_mismatch", rc=1, rank=2,
    decisive="RuntimeError: It looks like your LightningModule has parameters that were not used in producing the loss returned by training_step.",
    collateral=["ranks 0 and 1 first fail with gloo 'Timed out waiting 20000ms' in the all-reduce"],
    root_cause="At step 3 rank 2 alone skips the aux head in training_step; Lightning's DDP strategy uses find_unused_parameters=False, so rank 2's reduction never completes, ranks 0/1 time out waiting for it, and rank 2's next forward raises the unused-parameter error.",
    fix="Use every parameter on every step on every rank, or strategy='ddp_find_unused_parameters_true'.",
    how="python lit32b.py --fault unused --bad-rank 2 --at 3 (Trainer(devices=3, strategy=DDPStrategy(timeout=20 s)))")

# ---------------- autograd misuse / job's own errors ----------------
C["run32b-torchrun-inplace"] = dict(launcher="torchrun", category="user.code_error", rc=1, rank=1,
    decisive="[rank1]: RuntimeError: one of the variables needed for gradient computation has been modified by an inplace operation: [torch.FloatTensor [8, 32]], which is output 0 of Sigmoid",
    collateral=[CLOSED, SIGTERM],
    root_cause="At step 3 rank 1 scales the sigmoid output in place (h.mul_), which autograd saved for backward, so backward on that rank fails with the in-place modification error.",
    fix="Use an out-of-place op (h = h * 0.5) on tensors needed for backward.",
    how=f"{TR3} --fault inplace --bad-rank 1 --at 3")
C["run32b-torchrun-backward-twice"] = dict(launcher="torchrun", category="user.code_error", rc=1, rank=2,
    decisive="[rank2]: RuntimeError: Trying to backward through the graph a second time",
    collateral=[CLOSED, SIGTERM],
    root_cause="At step 2 rank 2 calls loss.backward() a second time on the same graph (a debug gradient-norm probe) after its saved tensors were freed.",
    fix="Call backward once per graph, or pass retain_graph=True to the first backward if a second pass is really needed.",
    how=f"{TR4} --fault backward_twice --bad-rank 2 --at 2")
C["run32b-torchrun-commhook"] = dict(launcher="torchrun", category="user.code_error", rc=1, rank=1,
    decisive="[rank1]: RuntimeError: comm hook: bucket 0 has 1864 elements, expected a multiple of 64",
    collateral=["ranks 0 and 2: 'Got the following error when running the callback: ... Connection closed by peer'", SIGTERM],
    root_cause="The job's own DDP communication hook raises on rank 1 from step 3 (a wrong bucket-size sanity check), so rank 1's backward fails inside the reducer and the others lose the connection.",
    fix="Fix or remove the size check in the communication hook.",
    how=f"{TR3} --fault commhook --bad-rank 1 --at 3: register_comm_hook with a hook that raises on rank 1")
C["run32b-torchrun-zero-state"] = dict(launcher="torchrun", category="user.code_error", rc=1, rank=1,
    decisive="RuntimeError: Optimizer state has not been consolidated on this rank.",
    collateral=[CLOSED, SIGTERM],
    root_cause="Rank 1 saves a checkpoint with ZeroRedundancyOptimizer.state_dict() without every rank first calling consolidate_state_dict(to=1), so state_dict() raises.",
    fix="Call optimizer.consolidate_state_dict(to=<saving rank>) on all ranks before state_dict() on the saving rank.",
    how=f"{TR3} --fault zero_state --bad-rank 1 --at 3")
C["run32b-torchrun-syncbn-cpu"] = dict(launcher="torchrun", category="user.code_error", rc=1, rank=None,
    decisive="ValueError: SyncBatchNorm layers only work with GPU modules",
    collateral=["every rank raises the same ValueError at DDP construction"],
    root_cause="The model is converted with nn.SyncBatchNorm.convert_sync_batchnorm but stays on CPU; DDP refuses SyncBatchNorm on non-GPU modules on every rank.",
    fix="Keep plain BatchNorm on CPU (convert to SyncBatchNorm only for CUDA modules).",
    how=f"{TR3} --fault syncbn")
C["run32b-torchrun-nan-check"] = dict(launcher="torchrun", category="user.code_error", rc=1, rank=1,
    decisive="[rank1]: FloatingPointError: non-finite loss nan at step 4 on rank 1",
    collateral=[CLOSED, SIGTERM],
    root_cause="Rank 1's batch at step 4 contains a NaN feature, so its loss is NaN and the job's own finite-loss check raises FloatingPointError on that rank.",
    fix="Clean or filter the bad record in the data pipeline (or skip non-finite batches consistently on all ranks).",
    how=f"{TR3} --fault nan_check --bad-rank 1 --at 4")
C["run32b-torchrun-anomaly"] = dict(launcher="torchrun", category="user.code_error", rc=1, rank=2,
    decisive="[rank2]: RuntimeError: Function 'AddmmBackward0' returned nan values in its 2th output.",
    collateral=["anomaly-mode UserWarning with the forward traceback on rank 2", CLOSED, SIGTERM],
    root_cause="Rank 2's batch at step 3 has an inf feature; under torch.autograd.detect_anomaly() the NaN produced in backward of the input Linear is detected and raised on that rank.",
    fix="Clean or filter the inf record in the data pipeline.",
    how=f"{TR4} --fault anomaly --bad-rank 2 --at 3")
C["run32b-torchrun-scaler-twice"] = dict(launcher="torchrun", category="user.code_error", rc=1, rank=1,
    decisive="[rank1]: RuntimeError: unscale_() has already been called on this optimizer since the last update().",
    collateral=[CLOSED, SIGTERM],
    root_cause="At step 3 rank 1 calls GradScaler.unscale_(opt) a second time before update() (a second clipping helper), which GradScaler forbids.",
    fix="Call scaler.unscale_(optimizer) at most once per step, before clipping.",
    how=f"{TR3} --fault scaler_twice --bad-rank 1 --at 3 (torch.amp.GradScaler('cpu'))")
C["run32b-spawn-inplace"] = dict(launcher="mp.spawn", category="user.code_error", rc=1, rank=2,
    decisive="RuntimeError: one of the variables needed for gradient computation has been modified by an inplace operation: [torch.FloatTensor [8, 32]], which is output 0 of Sigmoid",
    collateral=["mp.spawn reports the process that failed first and terminates the rest"],
    root_cause="At step 2 spawned rank 2 scales the sigmoid output in place, which autograd saved for backward, so its backward fails.",
    fix="Use an out-of-place op (h = h * 0.5) on tensors needed for backward.",
    how="python ddp32b.py --spawn 3 --fault inplace --bad-rank 2 --at 2")
C["run32b-lightning-inplace"] = dict(launcher="lightning", framework="lightning", category="user.code_error", rc=1, rank=2,
    decisive="[rank2]: RuntimeError: one of the variables needed for gradient computation has been modified by an inplace operation",
    collateral=[CLOSED],
    root_cause="At step 3 rank 2's training_step scales the sigmoid output in place, which autograd saved for backward, so backward on that rank fails.",
    fix="Use an out-of-place op (h = h * 0.5) on tensors needed for backward.",
    how="python lit32b.py --fault inplace --bad-rank 2 --at 3 (Trainer(devices=3, strategy=DDPStrategy))")

# ---------------- uneven inputs ----------------
C["run32b-torchrun-uneven-exit"] = dict(launcher="torchrun", category="user.code_error", rc=1, rank=1,
    decisive="[rank1] INFO train: done: 5 steps, leaving without the final barrier",
    collateral=["ranks 0 and 2 fail in the all-reduce with gloo 'Connection closed by peer'", "rank 1 exits 0; torchrun lists ranks 0 and 2 as failed"],
    root_cause="Rank 1's data shard is 3 batches shorter; it leaves the loop after 5 steps and exits normally, so its peers lose the connection in their next all-reduce.",
    fix="Give every rank the same number of batches (DistributedSampler with drop_last / even shards) or wrap the loop in torch.distributed.algorithms.Join.",
    how=f"{TR3} --fault uneven_exit --bad-rank 1: rank 1 gets 5 batches, the others 8; rank 1 returns without barrier")
C["run32b-torchrun-uneven-eval"] = dict(launcher="torchrun", category="dist.collective_timeout", rc=1, rank=1,
    decisive="Timed out waiting 20000ms for",
    collateral=["rank 1 logs 'train shard exhausted after 5 steps, running local evaluation' and is SIGTERMed", "timeout errors on ranks 0 and 2"],
    root_cause="Rank 1's data shard is 3 batches shorter; it leaves the training loop and runs a long local evaluation without collectives, so ranks 0 and 2 wait in the next all-reduce until the 20 s gloo timeout.",
    fix="Give every rank the same number of batches (drop_last / even shards) or use torch.distributed.algorithms.Join for uneven inputs.",
    how=f"{TR3} --fault uneven_eval --bad-rank 1 (process group timeout 20 s)")
C["run32b-spawn-uneven-eval"] = dict(launcher="mp.spawn", category="dist.collective_timeout", rc=1, rank=2,
    decisive="Timed out waiting 20000ms for",
    collateral=["rank 2 logs 'train shard exhausted after 5 steps, running local evaluation'", "mp.spawn terminates the remaining processes"],
    root_cause="Rank 2's data shard is 3 batches shorter; it leaves the training loop and runs a long local evaluation without collectives, so ranks 0 and 1 time out (20 s) in the all-reduce.",
    fix="Give every rank the same number of batches (drop_last / even shards) or use torch.distributed.algorithms.Join for uneven inputs.",
    how="python ddp32b.py --spawn 3 --fault uneven_eval --bad-rank 2 (process group timeout 20 s)")
