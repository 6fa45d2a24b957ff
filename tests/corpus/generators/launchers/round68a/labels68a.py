# Label entries for round 68a (read by mk_label.py). Keys: args (ddp68a.py args), category, decisive, also, rank,
# file (decisive file under ranks/), collateral, root_cause, fix, how, notes.
TO = "torchrun SIGTERMs the surviving ranks (exitcode -15) and raises ChildFailedError"
CLOSED = "the other ranks fail in their next gloo collective with 'Connection closed by peer' / 'Connection reset by peer'"
C = {}

# ---------------- healthy ----------------
C["run-r68a-healthy-findunused"] = dict(
    args="--fault none --find-unused", category="none", rank=None, decisive=None,
    collateral=["every rank prints the reducer warning 'find_unused_parameters=True was specified in DDP constructor, but did not find any unused parameters in the forward pass'",
                "torchrun's OMP_NUM_THREADS banner"],
    root_cause="Healthy 4-rank DDP run; find_unused_parameters=True with every parameter used only costs an extra graph traversal (warning), training completes.",
    fix="Nothing to fix; optionally drop find_unused_parameters=True to silence the warning.",
    how="torchrun --standalone --nproc-per-node 4 ddp68a.py --fault none --find-unused")
C["run-r68a-healthy-compile-ddpopt"] = dict(
    args="--fault none --compile aot_eager --hidden 600 --bucket-mb 1", category="none", rank=None, decisive=None,
    collateral=["TORCH_LOGS=ddp_graphs: DDPOptimizer prints the original and the split graphs (submod_0/submod_1 per DDP bucket) on every rank at V level",
                "dynamo's 'Profiler record function ... will be ignored' warning on every rank"],
    root_cause="Healthy 3-rank run of torch.compile(aot_eager) over a DDP model whose graph DDPOptimizer splits at the 1 MB bucket boundaries; the verbose graph dumps are debugging output, training completes.",
    fix="Nothing to fix; unset TORCH_LOGS=ddp_graphs to drop the graph dumps.",
    how="TORCH_LOGS=ddp_graphs torchrun --standalone --nproc-per-node 3 --tee 3 ddp68a.py --fault none --compile aot_eager --hidden 600 --bucket-mb 1")
C["run-r68a-healthy-static-info"] = dict(
    args="--fault none --static-graph --find-unused", category="none", rank=None, decisive=None,
    collateral=["per-rank stderr.log: UserWarning 'You passed find_unused_parameters=true to DistributedDataParallel, `_set_static_graph` will detect unused parameters automatically'",
                "TORCH_DISTRIBUTED_DEBUG=INFO + TORCH_CPP_LOG_LEVEL=INFO: c10d / reducer INFO lines in the per-rank files"],
    root_cause="Healthy 3-rank DDP run with static_graph=True and the redundant find_unused_parameters=True (warning) plus distributed INFO logging; training completes.",
    fix="Nothing to fix; drop find_unused_parameters=True when static_graph=True.",
    how="TORCH_DISTRIBUTED_DEBUG=INFO TORCH_CPP_LOG_LEVEL=INFO torchrun --standalone --nproc-per-node 3 --log-dir D --redirects 3 ddp68a.py --fault none --static-graph --find-unused")

# ---------------- unused parameter on one rank ----------------
UNUSED_FIX = "Use every parameter in every iteration on every rank (or multiply the skipped branch's output by 0), or construct DDP with find_unused_parameters=True."
C["run-r68a-unused-console"] = dict(
    args="--fault unused --bad-rank 1 --at 3", category="dist.collective_mismatch", rank=1,
    decisive="[rank1]: RuntimeError: Expected to have finished reduction in the prior iteration before starting a new one.",
    also=["[rank1]: Parameter indices which did not receive grad for rank 1: 10 11"],
    collateral=["ranks 0, 2, 3: 'Connection closed by peer' in loss.backward() (the DDP all-reduce)", TO,
                "torchrun's 'failed (exitcode: -6) local_rank: 2' line and Root Cause name rank 2, a survivor that aborted ('terminate called without an active exception'), not rank 1"],
    root_cause="From step 4 rank 1 alone skips the aux head, so with find_unused_parameters=False its reducer never finishes that iteration's reduction and its next forward raises; the other ranks lose their gloo peer.",
    fix=UNUSED_FIX,
    how="torchrun --standalone --nproc-per-node 4 ddp68a.py --fault unused --bad-rank 1 --at 3: rank 1 sets model.use_aux=False from step index 3")
C["run-r68a-unused-debuginfo-tee"] = dict(
    args="--fault unused --bad-rank 2 --at 2", category="dist.collective_mismatch", rank=2,
    decisive="[default2]:[rank2]: RuntimeError: Expected to have finished reduction in the prior iteration before starting a new one.",
    also=["[default2]:[rank2]: Parameters which did not receive grad for rank 2: aux.bias, aux.weight",
          "[default2]:[rank2]: Parameter indices which did not receive grad for rank 2: 10 11"],
    collateral=["ranks 0, 1, 3: 'Connection closed by peer' in loss.backward()", TO],
    root_cause="From step 3 rank 2 alone skips the aux head (find_unused_parameters=False); its reducer reports the unfinished reduction and TORCH_DISTRIBUTED_DEBUG=INFO names aux.weight/aux.bias; the others lose their gloo peer.",
    fix=UNUSED_FIX,
    how="TORCH_DISTRIBUTED_DEBUG=INFO torchrun --standalone --nproc-per-node 4 --tee 3 ddp68a.py --fault unused --bad-rank 2 --at 2")
C["run-r68a-unused-info-logdir"] = dict(
    args="--fault unused --bad-rank 1 --at 4", category="dist.collective_mismatch", rank=1,
    decisive="[rank1]: RuntimeError: Expected to have finished reduction in the prior iteration before starting a new one.",
    file="attempt_0/1/stderr.log",
    also=["failed (exitcode: 1) local_rank: 1"],
    collateral=["ranks 0 and 2 (attempt_0/0, attempt_0/2 stderr.log): 'Connection closed by peer' in loss.backward()", TO,
                "attempt_0/1/stderr.log also names the parameters: 'Parameters which did not receive grad for rank 1: aux.bias, aux.weight'"],
    root_cause="From step 5 rank 1 alone skips the aux head (find_unused_parameters=False); its reducer raises the unfinished-reduction error (parameters named via TORCH_DISTRIBUTED_DEBUG=INFO) and the others lose their gloo peer.",
    fix=UNUSED_FIX,
    how="TORCH_DISTRIBUTED_DEBUG=INFO torchrun --standalone --nproc-per-node 3 --log-dir D --redirects 3 ddp68a.py --fault unused --bad-rank 1 --at 4 (console shows only launcher lines; rank output in ranks/)")
C["run-r68a-ckpt-reentrant-tee"] = dict(
    args="--fault ckpt_reentrant --bad-rank 2 --at 3", category="dist.collective_mismatch", rank=2,
    decisive="[default2]:[rank2]: RuntimeError: Expected to mark a variable ready only once.",
    also=["[default2]:[rank2]: Parameter at index 7 with name norm2.0.bias has been marked as ready twice."],
    collateral=["ranks 0 and 1: 'Connection closed by peer' in loss.backward()", TO,
                "every rank's reducer warning 'find_unused_parameters=True was specified ... did not find any unused parameters' at step 1"],
    root_cause="With find_unused_parameters=True, rank 2 alone starts running its norm2 block under reentrant activation checkpointing at step 4; the reducer marks the hidden parameters unused in forward and the checkpoint's backward then marks them ready again, so DDP raises 'marked as ready twice'.",
    fix="Use torch.utils.checkpoint with use_reentrant=False (or static_graph=True), and apply checkpointing identically on every rank.",
    how="torchrun --standalone --nproc-per-node 3 --tee 3 ddp68a.py --fault ckpt_reentrant --bad-rank 2 --at 3")

# ---------------- model mismatch at DDP construction ----------------
C["run-r68a-extra-param"] = dict(
    args="--fault extra_param --bad-rank 3", category="dist.collective_mismatch", rank=3,
    decisive="[rank3]: RuntimeError: DDP expects same model across all ranks, but Rank 3 has 13 params, while rank 0 has inconsistent 12 params.",
    also=["while rank 3 has inconsistent 13 params."],
    collateral=["ranks 0, 1, 2 raise the same check naming rank 3 ('... while rank 3 has inconsistent 13 params.')",
                "torchrun's 'failed (exitcode: 1) local_rank: 0' line and Root Cause name rank 0 (every rank raised)"],
    root_cause="Rank 3 builds its model with an extra nn.Parameter (temperature), 13 parameters against 12 on the others, so DDP's construction-time model check fails on every rank.",
    fix="Build the identical module on every rank (make the temperature parameter unconditional or remove it) before wrapping in DDP.",
    how="torchrun --standalone --nproc-per-node 4 ddp68a.py --fault extra_param --bad-rank 3")
C["run-r68a-shape-logdir"] = dict(
    args="--fault shape --bad-rank 2", category="dist.collective_mismatch", rank=2,
    decisive="[rank2]: RuntimeError: [2]: params[0] in this process with sizes [48, 16] appears not to match sizes of the same param in process 0.",
    file="attempt_0/2/stderr.log", also=["failed (exitcode: 1) local_rank: 2"],
    collateral=["ranks 0, 1, 3 pass the check and die in DDP's module-state broadcast with 'Connection closed by peer' (per-rank stderr.log)", TO],
    root_cause="Rank 2 builds its encoder 48 wide instead of 32, so DDP's construction-time shape check (against process 0) fails on rank 2 and the others lose their peer in the state broadcast.",
    fix="Give every rank the same model config (hidden width) before wrapping the model in DDP.",
    how="torchrun --standalone --nproc-per-node 4 --log-dir D --redirects 3 ddp68a.py --fault shape --bad-rank 2")
C["run-r68a-shape-rank0-tee"] = dict(
    args="--fault shape --bad-rank 0", category="dist.collective_mismatch", rank=0,
    decisive="[default1]:[rank1]: RuntimeError: [1]: params[0] in this process with sizes [32, 16] appears not to match sizes of the same param in process 0.",
    also=["[default2]:[rank2]: RuntimeError: [2]: params[0] in this process with sizes [32, 16] appears not to match sizes of the same param in process 0."],
    collateral=["rank 0 itself (the odd one) only shows 'Connection closed by peer' in DDP's module-state broadcast", TO,
                "torchrun's 'failed (exitcode: 1) local_rank: 1' line and Root Cause name rank 1, not rank 0"],
    root_cause="Rank 0 builds its encoder 48 wide while ranks 1 and 2 use 32; DDP compares every rank's shapes with process 0, so ranks 1 and 2 report the mismatch and rank 0, the real odd one, dies of the lost connection.",
    fix="Give every rank the same model config (hidden width) before wrapping the model in DDP.",
    how="torchrun --standalone --nproc-per-node 3 --tee 3 ddp68a.py --fault shape --bad-rank 0",
    notes="The decisive line is printed by rank 1 but the model that differs is rank 0's (the check compares against process 0); initiating_rank is 0.")
C["run-r68a-extra-buffer"] = dict(
    args="--fault extra_buffer --bad-rank 1", category="dist.collective_mismatch", rank=1,
    decisive="Received data size doesn't match expected size. Is there a distributed collective mismatch in your code?",
    also=["terminate called after throwing an instance of 'gloo::EnforceNotMet'"],
    collateral=["the gloo enforce line has no rank prefix; the process that aborts is rank 3 (torchrun: 'failed (exitcode: -6) local_rank: 3', Root Cause rank 3), the receiver of the larger message, not rank 1",
                "rank 1 and others fail in DDP.__init__ -> _sync_module_states -> _broadcast_coalesced with 'Connection reset by peer'", TO],
    root_cause="Rank 1 registers one extra buffer (ema_count), so its flattened parameter+buffer broadcast in DDP's constructor is 4 bytes larger than the others' and gloo aborts a rank on the size mismatch.",
    fix="Register the same buffers on every rank (make ema_count unconditional) before wrapping the model in DDP.",
    how="torchrun --standalone --nproc-per-node 4 ddp68a.py --fault extra_buffer --bad-rank 1",
    notes="DDP's parameter check passes (buffers are not counted); the mismatch only shows as gloo's size enforce in the construction-time broadcast, raised in the background thread of whichever rank received the bigger message.")
C["run-r68a-buffer-dtype-logdir"] = dict(
    args="--fault buffer_dtype --bad-rank 2", category="dist.collective_mismatch", rank=2,
    decisive="Received data size doesn't match expected size. Is there a distributed collective mismatch in your code?",
    file="attempt_0/2/stderr.log", also=["failed (exitcode: -6) local_rank: 2"],
    collateral=["rank 0 (attempt_0/0/stderr.log): 'Connection reset by peer' in DDP.__init__ -> _broadcast_coalesced", TO],
    root_cause="Rank 2's feature_mean buffer is float64 while the others' is float32, so DDP's construction-time coalesced broadcast of parameters and buffers is laid out differently on rank 2 and gloo aborts it on the size mismatch.",
    fix="Create the buffer with the same dtype on every rank (or cast the model consistently) before wrapping it in DDP.",
    how="torchrun --standalone --nproc-per-node 3 --log-dir D --redirects 3 ddp68a.py --fault buffer_dtype --bad-rank 2")

# ---------------- static_graph / no_sync / backward twice ----------------
SG_FIX = "Keep the graph identical on every rank and iteration when static_graph=True (or drop static_graph and use find_unused_parameters=True)."
C["run-r68a-static-graph-tee"] = dict(
    args="--fault static_graph --bad-rank 3 --at 3", category="dist.collective_mismatch", rank=3,
    decisive="[default3]:[rank3]: RuntimeError: Expected to have finished reduction in the prior iteration before starting a new one. This error indicates that your training graph has changed in this iteration",
    also=["[default3]:[rank3]: Parameter indices which did not receive grad for rank 3: 10 11"],
    collateral=["ranks 0, 1, 2: 'Connection closed by peer' in loss.backward()", TO],
    root_cause="DDP is built with static_graph=True, but at step 4 rank 3 alone skips the aux head, so its graph changes and its reducer reports the unfinished reduction at the next forward; the others lose their gloo peer.",
    fix=SG_FIX, how="torchrun --standalone --nproc-per-node 4 --tee 3 ddp68a.py --fault static_graph --bad-rank 3 --at 3")
C["run-r68a-static-graph-rank0"] = dict(
    args="--fault static_graph --bad-rank 0 --at 2", category="dist.collective_mismatch", rank=0,
    decisive="[rank0]: RuntimeError: Expected to have finished reduction in the prior iteration before starting a new one. This error indicates that your training graph has changed in this iteration",
    also=["[rank0]: Parameters which did not receive grad for rank 0: aux.bias, aux.weight"],
    collateral=["ranks 1 and 2: 'Connection closed by peer' in loss.backward()", TO,
                "torchrun's 'failed (exitcode: 1) local_rank: 0' line and Root Cause name rank 0"],
    root_cause="DDP is built with static_graph=True, but at step 3 rank 0 alone skips the aux head; its reducer reports the changed graph (parameters named via TORCH_DISTRIBUTED_DEBUG=INFO) and the others lose their gloo peer.",
    fix=SG_FIX, how="TORCH_DISTRIBUTED_DEBUG=INFO torchrun --standalone --nproc-per-node 3 ddp68a.py --fault static_graph --bad-rank 0 --at 2")
C["run-r68a-nosync-console"] = dict(
    args="--fault no_sync --bad-rank 2 --at 3 --timeout 20", category="dist.collective_mismatch", rank=2,
    decisive="[rank2]: RuntimeError: [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:78] Timed out waiting 20000ms for recv operation to complete",
    also=["[rank2] INFO train: accumulating gradients locally for this step"],
    collateral=["ranks 0, 1, 3 time out after 20 s too (send/recv timeouts) in forward's buffer broadcast or loss.backward()'s all-reduce; rank 2's traceback is in the final dist.barrier()",
                "no message states the mismatch (gloo, no TORCH_DISTRIBUTED_DEBUG): it shows in the stacks", TO,
                "torchrun's 'failed (exitcode: 1) local_rank: 0' line and Root Cause name rank 0"],
    root_cause="Rank 2 alone runs step 4 inside ddp.no_sync(), so it skips that step's gradient all-reduce while ranks 0, 1, 3 perform it; the collective sequences drift apart and every rank times out after 20 s.",
    fix="Use no_sync() on every rank for the same micro-steps (gradient accumulation must be identical across ranks).",
    how="torchrun --standalone --nproc-per-node 4 ddp68a.py --fault no_sync --bad-rank 2 --at 3 --timeout 20 (process-group timeout 20 s)")
C["run-r68a-nosync-losssync-logdir"] = dict(
    args="--fault no_sync --bad-rank 1 --at 2 --loss-sync 1", category="dist.collective_mismatch", rank=1,
    decisive="Received data size doesn't match expected size. Is there a distributed collective mismatch in your code?",
    file="attempt_0/1/stderr.log", also=["failed (exitcode: -6) local_rank: 1"],
    collateral=["ranks 0 and 2: 'Connection closed by peer' / 'Connection reset by peer' (per-rank stderr.log)", TO,
                "attempt_0/1/stdout.log: 'accumulating gradients locally for this step' just before"],
    root_cause="Rank 1 alone runs step 3 inside ddp.no_sync(), so its next collective (the 4-byte loss all_reduce) meets the others' gradient-bucket all-reduce and gloo aborts rank 1 on the size mismatch.",
    fix="Use no_sync() on every rank for the same micro-steps (gradient accumulation must be identical across ranks).",
    how="torchrun --standalone --nproc-per-node 3 --log-dir D --redirects 3 ddp68a.py --fault no_sync --bad-rank 1 --at 2 --loss-sync 1")
C["run-r68a-backward-twice-tee"] = dict(
    args="--fault backward_twice --bad-rank 1 --at 3", category="user.code_error", rank=1,
    decisive="[default1]:[rank1]: RuntimeError: Trying to backward through the graph a second time",
    collateral=["ranks 0, 2, 3: 'Connection closed by peer' in their next DDP all-reduce", TO],
    root_cause="At step 4 rank 1 calls loss.backward() a second time on the same graph (without retain_graph), so autograd raises because the saved tensors were already freed.",
    fix="Call backward() once per loss (remove the leftover second call) or build a new graph for the second backward.",
    how="torchrun --standalone --nproc-per-node 4 --tee 3 ddp68a.py --fault backward_twice --bad-rank 1 --at 3")

# ---------------- DDP + torch.compile ----------------
C["run-r68a-compile-cxx"] = dict(
    args="--fault compile_cxx --bad-rank 1", category="compile.cpp_toolchain_missing", rank=1,
    decisive="InvalidCxxCompiler: No working C++ compiler found in torch._inductor.config.cpp.cxx: (None, '/nonexistent/g++')",
    also=["failed (exitcode: 1) local_rank: 1"],
    collateral=["ranks 0 and 2 compile fine and then lose their gloo peer or are SIGTERMed", TO],
    root_cause="Rank 1 alone has CXX=/nonexistent/g++, so inductor cannot build its C++ kernels when torch.compile of the DDP model runs at the first forward.",
    fix="Point CXX (or torch._inductor.config.cpp.cxx) at an installed C++ compiler on every rank / node.",
    how="torchrun --standalone --nproc-per-node 3 ddp68a.py --fault compile_cxx --bad-rank 1: rank 1 sets os.environ['CXX']='/nonexistent/g++' before compiling")
C["run-r68a-compile-recompile-tee"] = dict(
    args="--fault compile_recompile --bad-rank 2 --at 4", category="compile.recompile_limit", rank=2,
    decisive="[default2]:[rank2]: torch._dynamo.exc.FailOnRecompileLimitHit: Hard failure due to fail_on_recompile_limit_hit",
    also=["torch._dynamo hit config.recompile_limit (1)"],
    collateral=["rank 2's warning names the guard: \"last reason: 0/0: tensor 'args[0]' size mismatch at index 0. expected 16, actual 11\"",
                "ranks 0 and 1: 'Connection closed by peer' in the DDP all-reduce", TO],
    root_cause="The job compiles the DDP model with recompile_limit=1 and fail_on_recompile_limit_hit=True; at step 5 rank 2 alone gets a ragged 11-sample batch, its shape guard fails and the needed recompile hits the limit.",
    fix="Give every rank equal-sized batches (drop_last=True / pad) or allow dynamic shapes / a higher recompile_limit.",
    how="torchrun --standalone --nproc-per-node 3 --tee 3 ddp68a.py --fault compile_recompile --bad-rank 2 --at 4 (automatic_dynamic_shapes=False)")
C["run-r68a-compile-fullgraph-logdir"] = dict(
    args="--fault compile_fullgraph --bad-rank 0", category="compile.graph_break_data_dependent", rank=0,
    decisive="[rank0]: torch._dynamo.exc.Unsupported: Data-dependent branching",
    file="attempt_0/0/stderr.log", also=["failed (exitcode: 1) local_rank: 0"],
    collateral=["ranks 1 and 2 (attempt_0/1, attempt_0/2 stderr.log): 'Connection closed by peer' in the DDP all-reduce", TO],
    root_cause="The model is compiled with fullgraph=True before DDP wrapping, and rank 0 alone enables a data-dependent finiteness check (`if not torch.isfinite(h).all()`) in forward, which dynamo cannot trace without a graph break.",
    fix="Remove the data-dependent Python branch from the compiled forward (use torch._check / torch.cond or do the check outside) or compile without fullgraph=True.",
    how="torchrun --standalone --nproc-per-node 3 --log-dir D --redirects 3 ddp68a.py --fault compile_fullgraph --bad-rank 0")
C["run-r68a-compile-unused"] = dict(
    args="--fault compile_unused --bad-rank 3 --at 2", category="dist.collective_mismatch", rank=3,
    decisive="[rank3]: RuntimeError: Expected to have finished reduction in the prior iteration before starting a new one.",
    also=["[rank3]: Parameter indices which did not receive grad for rank 3: 10 11"],
    collateral=["ranks 0, 1, 2: 'Connection closed by peer' in loss.backward()", TO,
                "rank 3's traceback runs through torch._dynamo's compiled wrapper into DDP._pre_forward"],
    root_cause="The DDP model runs under torch.compile(aot_eager); from step 3 rank 3 alone skips the aux head, so its reducer never finishes that iteration's reduction and raises at the next (compiled) forward; the others lose their gloo peer.",
    fix=UNUSED_FIX,
    how="torchrun --standalone --nproc-per-node 4 ddp68a.py --fault compile_unused --bad-rank 3 --at 2")
