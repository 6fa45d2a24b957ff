# Label entries for round 27a (read by mk_label.py). Written after reading each log; decisive lines are exact
# substrings of one log line (pids/ports are those of the kept runs).
GLOO_CLOSED = "gloo 'Connection closed by peer' RuntimeError on the other ranks"
CFE = "torchrun ChildFailedError summary (other ranks exitcode -15 SIGTERM)"
C = {}
_healthy = dict(category="none", rank=None, decisive=None, collateral=[],
                fix="Nothing to fix: the job completed on all ranks and the launcher exited 0.")
C["run27a-torchrun-healthy-noisy"] = dict(_healthy,
    root_cause="Healthy run: Trainer warnings (attention_mask, find_unused_parameters), a UserWarning every 3 steps and a handled ConnectionRefusedError logged with a traceback by a metrics-push callback on rank 1; training completes.",
    how="torchrun --nproc-per-node 3, --what healthy-noisy: rank 1's callback connects to 127.0.0.1:9 at step 4, catches the error and calls logger.exception; dataloader_num_workers=1")
C["run27a-accelerate-healthy-evalwarn"] = dict(_healthy,
    root_cause="Healthy run: eval every 3 steps; compute_metrics averages an empty selection, so numpy prints RuntimeWarnings (Mean of empty slice, invalid value in scalar divide) and two eval metrics are nan; training completes.",
    how="accelerate launch (acc_cpu.yaml, 3 processes), --what healthy-evalwarn: rare_acc/rare_recall computed over an empty mask")
C["run27a-torchrun-healthy-resume"] = dict(_healthy,
    root_cause="Healthy run: resumes from checkpoint-4 written by a previous run (fast-forwards 4 batches), trains to step 8 and saves checkpoint-8.",
    how="torchrun --nproc-per-node 3, --what healthy-resume --resume out_resume/checkpoint-4 (checkpoint made by an earlier unlogged 4-step run)")
C["run27a-accelerate-healthy-ckpt"] = dict(_healthy,
    root_cause="Healthy run: checkpoints at steps 3, 6 and 8 with save_total_limit=1 (older ones rotated away silently), and a handled ConnectionRefusedError logged with logger.exception on rank 0 at step 5; training completes.",
    how="accelerate launch (acc_cpu.yaml, 3 processes), --what healthy-ckpt --k 5")

C["run27a-torchrun-collator-raise"] = dict(category="user.code_error", rank=1,
    decisive="[rank1]: KeyError: 'labels'",
    also=["failed (exitcode: 1) local_rank: 1 (pid: 25730)"],
    collateral=[GLOO_CLOSED + " (ranks 0 and 2, in accelerator.gather of num_items_in_batch)", CFE],
    root_cause="Rank 1's data collator got a record without a 'labels' key at its 4th batch and raised KeyError: 'labels'; ranks 0 and 2 then lost their gloo peer.",
    fix="Validate/clean the dataset records (every sample needs 'labels') or make the collator derive labels from input_ids when missing.",
    how="torchrun --nproc-per-node 3, --what collator-raise --bad-rank 1 --k 4: the collator deletes 'labels' from one feature on its 4th call on rank 1")
C["run27a-torchrun-collator-raise-logdir"] = dict(category="user.code_error", rank=2,
    decisive="[default2]:[rank2]: KeyError: 'labels'",
    also=["failed (exitcode: 1) local_rank: 2 (pid: 25811)"],
    collateral=[GLOO_CLOSED + " (ranks 0 and 1)", CFE, "per-rank files in ranks/none_*/attempt_0/<rank>/stderr.log (decisive there: attempt_0/2/stderr.log)"],
    root_cause="Rank 2's data collator got a record without a 'labels' key at its 5th batch and raised KeyError: 'labels'; ranks 0 and 1 then lost their gloo peer.",
    fix="Validate/clean the dataset records (every sample needs 'labels') or make the collator derive labels from input_ids when missing.",
    how="torchrun --nproc-per-node 3 --log-dir ... --redirects 3 --tee 3, --what collator-raise --bad-rank 2 --k 5")
C["run27a-accelerate-metrics-raise"] = dict(category="user.code_error", rank=2,
    decisive="[rank2]: KeyError: 1",
    also=["failed (exitcode: 1) local_rank: 2 (pid: 25956)"],
    collateral=[GLOO_CLOSED + " (ranks 0 and 1, already back in training at the next step's gather)", CFE],
    root_cause="During the first evaluation (step 3) rank 2's compute_metrics decoded predicted token ids with an id->word map that lacks the special tokens, and raised KeyError: 1 ([PAD]'s id); the other ranks lost their gloo peer.",
    fix="Decode predictions with the tokenizer (tok.decode / convert_ids_to_tokens) or use dict.get with a fallback, and skip special/ignored ids.",
    how="accelerate launch (acc_cpu.yaml, 3 processes), --what metrics-raise --bad-rank 2: only rank 2 builds the sample string in compute_metrics (eval_steps=3)")
C["run27a-accelerate-callback-raise"] = dict(category="user.code_error", rank=2,
    decisive="[rank2]: KeyError: 'eval_loss'",
    also=["failed (exitcode: 1) local_rank: 2 (pid: 26063)"],
    collateral=[GLOO_CLOSED + " (ranks 0 and 1, in the loss all_gather)", CFE],
    root_cause="Rank 2's early-stop TrainerCallback.on_step_end read state.log_history[-1]['eval_loss'] at step 3, but no evaluation had run, so it raised KeyError: 'eval_loss'; the other ranks lost their gloo peer.",
    fix="In the callback, use on_evaluate (metrics argument) or log_history[-1].get('eval_loss') and skip when there is no eval entry.",
    how="accelerate launch (acc_cpu.yaml, 3 processes), --what callback-raise --bad-rank 2 --k 3")
C["run27a-torchrun-sigkill"] = dict(category="mem.host_oom", rank=1,
    decisive="failed (exitcode: -9) local_rank: 1 (pid: 26206)",
    also=["traceback : Signal 9 (SIGKILL) received by PID 26206"],
    collateral=["gloo 'Read error ... Connection reset by peer' RuntimeError on ranks 0 and 2", CFE],
    root_cause="Rank 1 was SIGKILLed at step 4 (no Python traceback), the signature of the kernel OOM killer; ranks 0 and 2 then lost their gloo peer.",
    fix="Find what killed rank 1 (dmesg / cgroup OOM events) and reduce its host memory use or raise the memory limit.",
    how="torchrun --nproc-per-node 3, --what sigkill --bad-rank 1 --k 4: a callback does os.kill(os.getpid(), SIGKILL) in on_step_end")
C["run27a-accelerate-sigkill"] = dict(category="mem.host_oom", rank=2,
    decisive="failed (exitcode: -9) local_rank: 2 (pid: 26345)",
    also=["traceback : Signal 9 (SIGKILL) received by PID 26345"],
    collateral=[GLOO_CLOSED + " (ranks 0 and 1)", CFE + " raised from accelerate launch"],
    root_cause="Rank 2 was SIGKILLed at step 3 (no Python traceback), the signature of the kernel OOM killer; ranks 0 and 1 then lost their gloo peer.",
    fix="Find what killed rank 2 (dmesg / cgroup OOM events) and reduce its host memory use or raise the memory limit.",
    how="accelerate launch (acc_cpu.yaml, 3 processes), --what sigkill --bad-rank 2 --k 3: a callback does os.kill(os.getpid(), SIGKILL) in on_step_end")
C["run27a-torchrun-mismatch"] = dict(category="dist.collective_mismatch", rank=1,
    decisive="[rank0]: RuntimeError: DDP expects same model across all ranks, but Rank 0 has 28 params, while rank 1 has inconsistent 30 params.",
    also=["[rank1]: RuntimeError: DDP expects same model across all ranks, but Rank 1 has 30 params, while rank 0 has inconsistent 28 params.",
          "[rank2]: RuntimeError: DDP expects same model across all ranks, but Rank 2 has 28 params, while rank 1 has inconsistent 30 params."],
    collateral=["the same RuntimeError on every rank (each names the odd rank 1)", "torchrun ChildFailedError summary"],
    root_cause="Rank 1's model has an extra module (v_head: 2 more parameter tensors, 30 vs 28), so DDP's parameter verification failed on every rank when the Trainer wrapped the model.",
    fix="Build the identical model on every rank (no rank-dependent modules) before Trainer/DDP wraps it.",
    how="torchrun --nproc-per-node 3, --what mismatch --bad-rank 1: only rank 1 adds model.v_head = nn.Linear(32, 1)")
C["run27a-accelerate-mismatch-detail"] = dict(category="dist.collective_mismatch", rank=2,
    decisive="[rank0]: RuntimeError: DDP expects same model across all ranks, but Rank 0 has 28 params, while rank 2 has inconsistent 30 params.",
    also=["[rank1]: RuntimeError: DDP expects same model across all ranks, but Rank 1 has 28 params, while rank 2 has inconsistent 30 params.",
          "[rank2]: RuntimeError: DDP expects same model across all ranks, but Rank 2 has 30 params, while rank 0 has inconsistent 28 params."],
    collateral=["the same RuntimeError on every rank (each names the odd rank 2)", "ChildFailedError summary from accelerate launch"],
    root_cause="Rank 2's model has an extra module (v_head: 30 vs 28 parameter tensors), so DDP's parameter verification failed on every rank when the Trainer wrapped the model (TORCH_DISTRIBUTED_DEBUG=DETAIL adds nothing to this message).",
    fix="Build the identical model on every rank (no rank-dependent modules) before Trainer/DDP wraps it.",
    how="TORCH_DISTRIBUTED_DEBUG=DETAIL accelerate launch (acc_cpu.yaml, 3 processes), --what mismatch --bad-rank 2")
C["run27a-torchrun-ckpt-notdir"] = dict(category="user.code_error", rank=0,
    decisive="[rank0]: FileExistsError: [Errno 17] File exists: 'out_notdir'",
    also=["failed (exitcode: 1) local_rank: 0 (pid: 28207)"],
    collateral=[GLOO_CLOSED + " (ranks 1 and 2, in DDP's parameter verification)", CFE],
    root_cause="output_dir 'out_notdir' is a regular file, so rank 0 (the process that creates the output folder) failed in Trainer.__init__'s os.makedirs with FileExistsError before training; the other ranks lost their gloo peer while wrapping the model. Category user.code_error (job configuration error; no fs-specific category).",
    fix="Point output_dir at a directory (remove or rename the file 'out_notdir').",
    how="torchrun --nproc-per-node 3, --what ckpt-notdir --out out_notdir where out_notdir is a regular file made by run_all.sh")
C["run27a-torchrun-hostoom"] = dict(category="mem.host_oom", rank=1,
    decisive="failed (exitcode: -9) local_rank: 1 (pid: 28326)",
    also=["traceback : Signal 9 (SIGKILL) received by PID 28326"],
    collateral=["rank 1 logs 'sample cache: 256/512/768 MiB' just before", GLOO_CLOSED + " (ranks 0 and 2)", CFE],
    root_cause="Rank 1 built an in-memory cache inside a 1 GiB memory cgroup at step 3 and was SIGKILLed by the kernel OOM killer (dmesg: 'Memory cgroup out of memory: Killed process 28326'); ranks 0 and 2 lost their gloo peer.",
    fix="Bound the in-memory cache (stream or memory-map the data) or give the job a larger memory limit.",
    how="torchrun --nproc-per-node 3, --what hostoom --bad-rank 1 --k 3: rank 1 writes its pid to /sys/fs/cgroup/memory/r27a_oom/cgroup.procs (memory.limit_in_bytes = memsw = 1 GiB) and allocates/touches 256 MiB chunks")
C["run27a-torchrun-hang"] = dict(category="dist.collective_timeout", rank=2,
    decisive="[rank0]: RuntimeError: [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:78] Timed out waiting 20000ms for recv operation to complete",
    also=["[rank1]: RuntimeError: [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:129] Timed out waiting 20000ms for send operation to complete"],
    collateral=["rank 2 (the one that hung) prints nothing after 'step 3: refreshing shard index' and is SIGTERMed by torchrun",
                "torchrun ChildFailedError summary (rank 0 exitcode 1, ranks 1 and 2 SIGTERM)"],
    root_cause="Rank 2 stalled for 120 s at the start of step 3 (inside a callback), so ranks 0 and 1 waited in DDP's gradient allreduce until gloo's 20 s timeout (ddp_timeout=20) fired.",
    fix="Find why rank 2 stalls (here a blocking callback before its step); keep per-step work out of the training loop or raise ddp_timeout if the stall is expected.",
    how="torchrun --nproc-per-node 3, --what hang --bad-rank 2 --k 3: rank 2's on_step_begin sleeps 120 s; TrainingArguments(ddp_timeout=20, use_cpu=False on this CPU-only host, because with use_cpu=True transformers 5.25 ignores ddp_timeout)")
C["run27a-accelerate-ckpt-stale"] = dict(category="user.code_error", rank=None,
    decisive="[rank2]: FileExistsError: [Errno 17] File exists: 'out_stale/checkpoint-3'",
    also=["[rank0]: FileExistsError: [Errno 17] File exists: 'out_stale/checkpoint-3'",
          "[rank1]: FileExistsError: [Errno 17] File exists: 'out_stale/checkpoint-3'"],
    collateral=["the same FileExistsError on all three ranks (each saves its own rng_state file)", "ChildFailedError summary from accelerate launch (first failure local_rank 2)"],
    root_cause="A stale regular file 'out_stale/checkpoint-3' stood where the step-3 checkpoint folder goes, so at the first save every rank failed in os.makedirs (Trainer._save_rng_state) with FileExistsError; not a single-rank fault (all ranks share the path), hence no initiating rank.",
    fix="Remove the stale file (or use a fresh output_dir / overwrite_output_dir) so checkpoint-N can be created as a folder.",
    how="accelerate launch (acc_cpu.yaml, 3 processes), --what ckpt-stale --out out_stale: run_all.sh writes a regular file out_stale/checkpoint-3 first; save_steps=3")
_td = dict(category="dist.teardown_abort", rank=1, decisive="terminate called without an active exception",
    fix="Treat as a shutdown race: training finished; call torch.distributed.destroy_process_group() (after a barrier) at the end of the script so no rank aborts at exit.",
    extra=dict(genuine=True, confirmed_by="observed (not induced): intermittent, seen in 3 of 7 completed runs without destroy_process_group", confidence="medium"))
C["run27a-accelerate-teardown-abort"] = dict(_td,
    also=["failed (exitcode: -6) local_rank: 1 (pid: 25266)"],
    collateral=["all three ranks log 'training complete' before the abort", "accelerate launch SIGTERMs ranks 0 and 2", "ChildFailedError summary: rank 1 exitcode -6 (SIGABRT)"],
    root_cause="No injected fault: the healthy eval-warning run completed on all ranks, but rank 1 aborted at interpreter exit (std::terminate, 'terminate called without an active exception', SIGABRT) because the script never destroyed the gloo process group, so the launcher reported failure.",
    how="accelerate launch (acc_cpu.yaml, 3 processes), --what healthy-evalwarn with R27A_NO_DESTROY=1 (the first pass had no destroy_process_group at all); intermittent")
C["run27a-torchrun-teardown-abort-resume"] = dict(_td,
    also=["failed (exitcode: -6) local_rank: 1 (pid: 25437)"],
    collateral=["all three ranks log 'training complete' and checkpoint-8 is saved before the abort", "torchrun SIGTERMs ranks 0 and 2", "ChildFailedError summary: rank 1 exitcode -6 (SIGABRT)"],
    root_cause="No injected fault: the resumed run completed on all ranks and saved checkpoint-8, but rank 1 aborted at interpreter exit (std::terminate, 'terminate called without an active exception', SIGABRT) because the script never destroyed the gloo process group, so torchrun reported failure.",
    how="torchrun --nproc-per-node 3, --what healthy-resume --resume out_resume/checkpoint-4 with R27A_NO_DESTROY=1 (the first pass had no destroy_process_group at all); intermittent")
