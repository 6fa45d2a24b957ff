# Labels for round 33b (read by mk_label.py). rc: expected launcher exit code. rank: initiating rank (None: every
# rank). decisive: exact substring of one log line. also: other acceptable decisive substrings.
TR = "torchrun --nproc-per-node 3 comp33b.py"
SP = "python comp33b.py --spawn 3"
AL = "accelerate launch --config_file acc_cpu.yaml --num_processes 3 comp33b.py --accelerate"
SIGTERM = "torchrun SIGTERMs the surviving ranks (exitcode -15) and prints ChildFailedError naming the failed rank"
ACC_SIGTERM = "accelerate's torchrun-based launcher SIGTERMs the surviving ranks and prints ChildFailedError"
CLOSED = "the other ranks fail in the DDP all-reduce with gloo 'Connection closed by peer'"
SPAWN = "mp.spawn terminates the other processes and re-raises 'ProcessRaisedException: -- Process N terminated with the following error'"

# ---------------- healthy / non-fatal ----------------
C["run33b-torchrun-healthy-logs"] = dict(launcher="torchrun", category="none", rc=0,
    collateral=["TORCH_LOGS=graph_breaks: '[__graph_breaks] Graph break in user code' lines (DDP internals, rank 1's debug print) on every rank",
                "TORCH_LOGS=recompiles: rank 1 'Recompiling function' for its smaller last batch",
                "rank 1 prints '[debug] fc1 activation mean=...' lines"],
    root_cause="Healthy outcome: graph-break and recompile messages are only the verbose logging enabled by TORCH_LOGS=recompiles,graph_breaks (DDP internals, a debug print, one recompile for a short last batch); every rank finishes with exit 0.",
    fix="Nothing required; unset TORCH_LOGS (and drop the debug print) to quiet the log.",
    how=f"TORCH_LOGS=recompiles,graph_breaks {TR} --fault noisy --bad-rank 1")
C["run33b-torchrun-recompile-limit"] = dict(launcher="torchrun", category="compile.recompile_limit", fatal=False, rc=0, rank=1,
    decisive="torch._dynamo hit config.recompile_limit (2)",
    collateral=["the warning's follow-up lines (function, last reason, 'To log all recompilation reasons')",
                "rank 1 steps get slower (eager fallback) but every rank finishes with exit 0"],
    root_cause="Rank 1 feeds a different batch size every step to a model compiled with dynamic=False and recompile_limit=2, so Dynamo stops recompiling after two graphs and runs that frame eagerly (non-fatal warning).",
    fix="Pad batches to a fixed size, drop dynamic=False (let automatic dynamic shapes kick in) or mark the batch dim dynamic; raise recompile_limit only if needed.",
    how=f"{TR} --fault recompile_limit --bad-rank 1")
C["run33b-spawn-healthy-logs"] = dict(launcher="mp.spawn", category="none", rc=0,
    collateral=["TORCH_LOGS=recompiles: rank 2 'Recompiling function' for its smaller last batch",
                "rank 2 prints '[debug] fc1 activation mean=...' lines"],
    root_cause="Healthy outcome: the recompile message is only TORCH_LOGS=recompiles logging one recompile (dynamic shape) for rank 2's short last batch; all spawned processes finish and the parent exits 0.",
    fix="Nothing required.",
    how=f"TORCH_LOGS=recompiles {SP} --fault noisy --bad-rank 2")
C["run33b-accelerate-healthy"] = dict(launcher="accelerate", framework="accelerate", category="none", rc=0,
    collateral=["TORCH_LOGS=graph_breaks: '[__graph_breaks] Graph break in user code' lines from DDP internals on every rank"],
    root_cause="Healthy outcome: the graph-break lines come from TORCH_LOGS=graph_breaks on a torch.compile'd DDP model (DDPOptimizer path); all three processes finish with exit 0.",
    fix="Nothing required; unset TORCH_LOGS.",
    how=f"TORCH_LOGS=graph_breaks {AL} --fault none")

# ---------------- every rank ----------------
C["run33b-torchrun-fullgraph-ddp"] = dict(launcher="torchrun", category="compile.dynamo_unsupported", rc=1, rank=None,
    decisive="Explanation: Dynamo does not know how to trace method `set_runtime_stats_and_log` of class `Logger`",
    also=["torch._dynamo.exc.Unsupported: Unsupported method call"],
    collateral=["the same Unsupported error on every rank", "torchrun ChildFailedError lists all ranks with exitcode 1"],
    root_cause="torch.compile(DDP(model), fullgraph=True) must trace DistributedDataParallel.forward, whose _pre_forward calls the C++ DDP logger (set_runtime_stats_and_log), which Dynamo cannot trace, so every rank fails at the first forward.",
    fix="Drop fullgraph=True for the DDP-wrapped model, or compile the inner module with fullgraph=True before wrapping it in DDP.",
    how=f"{TR} --fault fullgraph_ddp: torch.compile(DDP(model), fullgraph=True)")
C["run33b-torchrun-ddpopt-bucket"] = dict(launcher="torchrun", category="compile.backend_internal_error", rc=1, rank=None,
    decisive="AssertionError: First bucket should be smaller/equal to other buckets to get comms warmed up ASAP",
    collateral=["the same AssertionError on every rank", "torchrun ChildFailedError lists all ranks with exitcode 1"],
    root_cause="DDP is built with bucket_cap_mb=0.0001 and then torch.compile'd; Dynamo's DDPOptimizer, which splits the graph at DDP bucket boundaries, asserts on the resulting bucket layout on every rank.",
    fix="Use a sane bucket_cap_mb (the default 25), or disable the DDP graph splitting with torch._dynamo.config.optimize_ddp=False.",
    how=f"{TR} --fault ddpopt_bucket: DDP(model, bucket_cap_mb=0.0001) then torch.compile")

# ---------------- one rank, torchrun ----------------
C["run33b-torchrun-fullgraph-print"] = dict(launcher="torchrun", category="compile.dynamo_unsupported", rc=1, rank=1,
    decisive="Explanation: Dynamo does not know how to trace builtin operator `print` with argument types ['str'] (has_kwargs False)",
    also=["[rank1]: torch._dynamo.exc.Unsupported: Failed to trace builtin operator"],
    collateral=[SIGTERM],
    root_cause="Rank 1 alone has activation debug printing on; its model is compiled with fullgraph=True, so the print() inside forward is a graph break that fullgraph turns into an Unsupported error at the first forward.",
    fix="Remove the print from the compiled forward (or use torch._dynamo.config.reorderable_logging_functions / drop fullgraph=True).",
    how=f"{TR} --fault fullgraph_print --bad-rank 1: torch.compile(module, fullgraph=True) then DDP")
C["run33b-torchrun-fullgraph-branch"] = dict(launcher="torchrun", category="compile.graph_break_data_dependent", rc=1, rank=2,
    decisive="Explanation: Detected data-dependent branching (e.g. `if my_tensor.sum() > 0:`). Dynamo does not support tracing dynamic control flow.",
    also=["[rank2]: torch._dynamo.exc.Unsupported: Data-dependent branching"],
    collateral=[SIGTERM],
    root_cause="Rank 2's data has outliers, so only its model takes the `if x.abs().max() > 3.0` clipping branch, a data-dependent condition that fullgraph=True cannot trace.",
    fix="Replace the branch with a tensor op (x.clamp(-3, 3) unconditionally or torch.where/torch.cond), or drop fullgraph=True.",
    how=f"{TR} --fault fullgraph_branch --bad-rank 2")
C["run33b-torchrun-stance"] = dict(launcher="torchrun", category="compile.recompile_limit", rc=1, rank=1,
    decisive="[rank1]: RuntimeError: Detected recompile when torch.compile stance is 'fail_on_recompile'.",
    collateral=[CLOSED, SIGTERM],
    root_cause="After warm-up rank 1 sets torch.compiler.set_stance('fail_on_recompile'); its last batch is smaller, which needs a recompile, so the stance raises on rank 1 alone.",
    fix="Pad or drop the last partial batch (drop_last=True), mark the batch dim dynamic during warm-up, or do not use fail_on_recompile.",
    how=f"{TR} --fault stance --bad-rank 1")
C["run33b-torchrun-error-on-recompile"] = dict(launcher="torchrun", category="compile.recompile_limit", rc=1, rank=2,
    decisive="[rank2]: torch._dynamo.exc.RecompileError: Recompiling function inner in",
    also=["- 0/0: tensor 'args[0]' size mismatch at index 0. expected 8, actual 5"],
    collateral=[CLOSED, SIGTERM],
    root_cause="Rank 2 sets torch._dynamo.config.error_on_recompile=True after warm-up and its last batch has 5 rows instead of 8, so the size-guard failure raises RecompileError on rank 2 alone.",
    fix="Pad or drop the last partial batch, or mark the batch dim dynamic; keep error_on_recompile off in training.",
    how=f"{TR} --fault error_on_recompile --bad-rank 2")
C["run33b-torchrun-mark-dynamic"] = dict(launcher="torchrun", category="compile.dynamic_shape_guard", rc=1, rank=2,
    decisive="You marked L['x'].size()[0] as dynamic but your code specialized it to be a constant (8).",
    also=["[rank2]: torch.fx.experimental.symbolic_shapes.ConstraintViolationError: Constraints violated (L['x'].size()[0])!"],
    collateral=[SIGTERM],
    root_cause="Rank 2 marks the batch dimension dynamic with torch._dynamo.mark_dynamic, but forward reshapes to a fixed batch of 8, which specializes that dimension and raises ConstraintViolationError on rank 2 alone.",
    fix="Use maybe_mark_dynamic or drop mark_dynamic, or make forward shape-agnostic (x.reshape(-1, 8)).",
    how=f"{TR} --fault mark_dynamic --bad-rank 2")
C["run33b-torchrun-custom-op"] = dict(launcher="torchrun", category="compile.dynamo_unsupported", rc=1, rank=2,
    decisive="There was no fake impl registered for <CustomOpDef(fastact::gelu_approx)>",
    also=["[rank2]: torch._dynamo.exc.TorchRuntimeError: RuntimeError when making fake tensor call"],
    collateral=[SIGTERM],
    root_cause="Only rank 2 swaps in the torch.library custom op fastact::gelu_approx, which has no fake (meta) kernel, so Dynamo cannot run it on fake tensors while tracing and rank 2 fails at the first forward.",
    fix="Register a fake kernel with @gelu_approx.register_fake (returning torch.empty_like(x)).",
    how=f"{TR} --fault custom_op --bad-rank 2")
C["run33b-torchrun-user-raise"] = dict(launcher="torchrun", category="user.code_error", rc=1, rank=1,
    decisive="[rank1]: ValueError: expected 8 input features per sample, got 9 (corrupt shard?)",
    collateral=[CLOSED, SIGTERM],
    root_cause="At step 3 rank 1 receives a 9-feature batch and the model's own input validation inside the compiled forward raises ValueError, exactly as it would eagerly.",
    fix="Fix or skip the corrupt shard feeding rank 1 (validate data before training).",
    how=f"{TR} --fault user_raise --bad-rank 1 --at 3")
C["run33b-torchrun-no-cxx"] = dict(launcher="torchrun", category="compile.cpp_toolchain_missing", rc=1, rank=1,
    decisive="InvalidCxxCompiler: No working C++ compiler found in torch._inductor.config.cpp.cxx: (None, '/nonexistent/g++')",
    collateral=[SIGTERM],
    root_cause="Rank 1's environment sets CXX=/nonexistent/g++, so Inductor's CPU backend finds no working C++ compiler when it compiles that rank's graph.",
    fix="Point CXX at an installed compiler (or unset it) on every rank's host.",
    how=f"{TR} --fault no_cxx --bad-rank 1: rank 1 sets CXX=/nonexistent/g++ (own inductor cache dir)")
C["run33b-torchrun-cache-ro"] = dict(launcher="torchrun", category="compile.cache_corruption", rc=1, rank=2,
    decisive="[rank2]: OSError: [Errno 30] Read-only file system: '/tmp/ro33b/inductor'",
    collateral=[CLOSED, SIGTERM],
    root_cause="Rank 2's TORCHINDUCTOR_CACHE_DIR points into a read-only mount, so creating the compile cache directory (at torch._dynamo import) fails on rank 2 alone.",
    fix="Point TORCHINDUCTOR_CACHE_DIR at a writable directory on every rank.",
    how=f"{TR} --fault cache_ro --bad-rank 2: TORCHINDUCTOR_CACHE_DIR=/tmp/ro33b/inductor on a read-only tmpfs")
C["run33b-torchrun-export-rank0"] = dict(launcher="torchrun", category="compile.graph_break_data_dependent", rc=1, rank=0,
    decisive="Could not guard on data-dependent expression Eq(u0, 1) (unhinted: Eq(u0, 1)).",
    collateral=["ranks 1 and 2 lose their peer (gloo 'Connection closed by peer') while waiting at DDP construction", SIGTERM],
    root_cause="Before training rank 0 alone runs torch.export.export on the model, whose forward branches on `x.abs().max() > 3.0`; export cannot guard on that data-dependent value and rank 0 dies.",
    fix="Rewrite the branch with torch.cond/torch.where (or export a branch-free serving model), and export after training or on all ranks consistently.",
    how=f"{TR} --fault export_rank0")
C["run33b-torchrun-item-guard"] = dict(launcher="torchrun", category="compile.graph_break_data_dependent", rc=1, rank=1,
    decisive="Could not guard on data-dependent expression u0 < 8 (unhinted: u0 < s77).",
    collateral=[SIGTERM],
    root_cause="Rank 1 filters padding rows with a count from .item() (capture_scalar_outputs=True, dynamic=True, fullgraph=True) and then branches on it, which Dynamo cannot guard on.",
    fix="Avoid branching on the data-dependent count (always slice, use torch._check, or mask instead of slicing), or drop fullgraph=True.",
    how=f"{TR} --fault item_guard --bad-rank 1")

# ---------------- one rank, mp.spawn ----------------
C["run33b-spawn-fullgraph-branch"] = dict(launcher="mp.spawn", category="compile.graph_break_data_dependent", rc=1, rank=1,
    decisive="Explanation: Detected data-dependent branching (e.g. `if my_tensor.sum() > 0:`). Dynamo does not support tracing dynamic control flow.",
    also=["torch._dynamo.exc.Unsupported: Data-dependent branching"],
    collateral=[SPAWN],
    root_cause="Rank 1's data has outliers, so only its model takes a data-dependent clipping branch that fullgraph=True cannot trace.",
    fix="Replace the branch with a tensor op (unconditional clamp, torch.where or torch.cond), or drop fullgraph=True.",
    how=f"{SP} --fault fullgraph_branch --bad-rank 1")
C["run33b-spawn-error-on-recompile"] = dict(launcher="mp.spawn", category="compile.recompile_limit", rc=1, rank=1,
    decisive="torch._dynamo.exc.RecompileError: Recompiling function inner in",
    also=["- 0/0: tensor 'args[0]' size mismatch at index 0. expected 8, actual 5"],
    collateral=[SPAWN],
    root_cause="Rank 1 sets torch._dynamo.config.error_on_recompile=True after warm-up and its last batch is smaller, so the size-guard failure raises RecompileError on rank 1.",
    fix="Pad or drop the last partial batch, or mark the batch dim dynamic; keep error_on_recompile off in training.",
    how=f"{SP} --fault error_on_recompile --bad-rank 1")
C["run33b-spawn-custom-op"] = dict(launcher="mp.spawn", category="compile.dynamo_unsupported", rc=1, rank=2,
    decisive="There was no fake impl registered for <CustomOpDef(fastact::gelu_approx)>",
    also=["torch._dynamo.exc.TorchRuntimeError: RuntimeError when making fake tensor call"],
    collateral=[SPAWN],
    root_cause="Only rank 2 uses the torch.library custom op fastact::gelu_approx, which has no fake kernel, so Dynamo fails to trace it on fake tensors.",
    fix="Register a fake kernel with @gelu_approx.register_fake.",
    how=f"{SP} --fault custom_op --bad-rank 2")

# ---------------- one rank, accelerate launch ----------------
C["run33b-accelerate-mark-dynamic"] = dict(launcher="accelerate", framework="accelerate", category="compile.dynamic_shape_guard", rc=1, rank=1,
    decisive="You marked L['x'].size()[0] as dynamic but your code specialized it to be a constant (8).",
    also=["[rank1]: torch.fx.experimental.symbolic_shapes.ConstraintViolationError: Constraints violated (L['x'].size()[0])!"],
    collateral=[ACC_SIGTERM],
    root_cause="Rank 1 marks the batch dimension dynamic, but forward reshapes to a fixed batch of 8, so Dynamo raises ConstraintViolationError on rank 1.",
    fix="Use maybe_mark_dynamic or drop mark_dynamic, or reshape with -1.",
    how=f"{AL} --fault mark_dynamic --bad-rank 1")
C["run33b-accelerate-no-cxx"] = dict(launcher="accelerate", framework="accelerate", category="compile.cpp_toolchain_missing", rc=1, rank=2,
    decisive="InvalidCxxCompiler: No working C++ compiler found in torch._inductor.config.cpp.cxx: (None, '/nonexistent/g++')",
    collateral=[ACC_SIGTERM],
    root_cause="Rank 2 sets CXX=/nonexistent/g++, so Inductor finds no working C++ compiler for that rank's graph.",
    fix="Point CXX at an installed compiler (or unset it) on every rank.",
    how=f"{AL} --fault no_cxx --bad-rank 2")
C["run33b-accelerate-stance"] = dict(launcher="accelerate", framework="accelerate", category="compile.recompile_limit", rc=1, rank=2,
    decisive="[rank2]: RuntimeError: Detected recompile when torch.compile stance is 'fail_on_recompile'.",
    collateral=[CLOSED, ACC_SIGTERM],
    root_cause="Rank 2 switches to set_stance('fail_on_recompile') after warm-up and its smaller last batch needs a recompile, so it raises on rank 2 alone.",
    fix="Pad or drop the last partial batch, or mark the batch dim dynamic during warm-up.",
    how=f"{AL} --fault stance --bad-rank 2")
