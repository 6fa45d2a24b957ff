"""Writes label.json for every round89b case in POOL (default /tmp/h89b/pool) and checks each decisive line.

Usage: python make_labels.py [POOL]
Labels come from what run_all.sh induced; the collateral list is filled from what each log actually shows.
"""
import json
import os
import re
import subprocess
import sys

POOL = sys.argv[1] if len(sys.argv) > 1 else "/tmp/h89b/pool"
SRC = "real run: tests/corpus/generators/launchers/round89b/run_all.sh {id} (compile89.py SCEN={scen}), torch 2.13.0 CPU{gloo}"

# id: (scen, category, fatal, rank, decisive, also_acceptable, root_cause, fix, induced_how, confidence)
C = {}
def case(id, scen, cat, fatal, rank, dec, also, cause, fix, how, conf="high"):
    C[id] = dict(scen=scen, category=cat, fatal=fatal, initiating_rank=rank, decisive_line=dec, also_acceptable=also,
                 root_cause=cause, fix=fix, induced_how=how, confidence=conf)

# ---- single process ----
case("run89-python-flex-blockmask", "flex_blockmask", "user.code_error", True, None,
     "ValueError: block_mask was created for block_mask.shape=(4, 2, 64, 64) but got q_len=128 and kv_len=128", [],
     "A FlexAttention block mask built for 64-token sequences was reused for a packed 128-token batch.",
     "Rebuild the block mask (create_block_mask) for the actual q/kv length of each batch.",
     "compiled flex_attention with a causal block mask for S=64; at step 4 the job concatenates two documents (S=128)")
case("run89-python-flex-scoremod-item-warn", "flex_scoremod_item", "compile.graph_break_data_dependent", False, None,
     "Graph break from `Tensor.item()`, consider setting:", [],
     "The FlexAttention score_mod branches on alibi.item(), so Dynamo graph-breaks and flex_attention runs unfused; the job still finishes.",
     "Make score_mod branchless (use torch.where on the tensor) instead of a Python if on .item().",
     "score_mod with `if alibi.item() > 0:`; warning only, all 4 steps complete")
case("run89-python-export-specialize", "export_special", "compile.dynamic_shape_guard", True, None,
     "You marked batch as dynamic but your code specialized it to be a constant (4)", ["Constraints violated (batch)!"],
     "torch.export was given a dynamic batch Dim but the forward reshapes with the configured batch size, specialising batch to 4.",
     "Reshape with x.shape[0] (or -1) instead of the config batch size, or export batch as static.",
     "export(dynamic_shapes={'x': {0: Dim('batch', min=2, max=16)}}) of a head that does y.reshape(cfg_batch, -1, D)")
case("run89-python-aoti-range", "aoti_range", "compile.dynamic_shape_guard", True, None,
     "RuntimeError: input_handles[0]: dim value is too large at 0, expected to be <= 32, but got: 64",
     ["Error: input_handles[0]: dim value is too large at 0, expected to be <= 32, but got: 64"],
     "The AOTInductor package was exported with batch <= 32 and was then called with a batch of 64.",
     "Export/compile the package with a Dim range that covers the serving batch (max >= 64) or split the batch.",
     "export with Dim('batch', min=2, max=32) -> aoti_compile_and_package -> aoti_load_package; step 3 feeds 64 rows (AOTI_RUNTIME_CHECK_INPUTS=1)")
case("run89-python-customop-nofake", "customop_nofake", "compile.dynamo_unsupported", True, None,
     "There was no fake impl registered for <CustomOpDef(round89::pair_pool)>", [],
     "The torch.library.custom_op round89::pair_pool has no fake (meta) kernel, so Dynamo cannot trace it under torch.compile.",
     "Register a fake kernel with @pair_pool.register_fake returning an empty tensor of the output shape.",
     "custom_op without register_fake, called inside torch.compile from step 3 on", "medium")
case("run89-python-customop-mutation", "customop_mutation", "user.code_error", True, None,
     "RuntimeError: Argument x is not defined as mutable but was mutated",
     ["test_schema failed with Argument x is not defined as mutable but was mutated"],
     "The custom op round89::norm_rows divides its input in place but was declared with mutates_args=(); opcheck caught the undeclared mutation.",
     "Declare the mutation (mutates_args={'x'}) or stop mutating the input (compute on a copy).",
     "custom_op that does x.div_() with mutates_args=(); torch.library.opcheck runs before training")
case("run89-python-while-mismatch", "while_mismatch", "user.code_error", True, None,
     "Expected body_fn_output and carried_inputs to have same metadata but found:",
     ["pair[1] differ in 'shape: torch.Size([8, 32]) vs torch.Size([4, 32])'"],
     "The torch.while_loop body returns a carried tensor of a different shape (it concatenates), which while_loop forbids.",
     "Keep the carried tensors' shapes fixed in body_fn (preallocate and write into a buffer).",
     "fullgraph-compiled while_loop whose body does torch.cat([y, y.tanh()]), enabled from step 5")
case("run89-python-check-closure", "check_closure", "compile.dynamo_unsupported", True, None,
     "Can't convert torch._check*() message closure",
     ["Explanation: The message argument of torch._check*() must be a function whose closure variables are Python constants."],
     "A torch._check message lambda formats a tensor, which Dynamo cannot convert under fullgraph=True.",
     "Use a constant message (no tensor in the lambda's closure) or drop fullgraph.",
     "torch._check(lo.numel() == 1, lambda: f'... {lo}') inside torch.compile(fullgraph=True), from step 2")
case("run89-python-check-item", "check_item", "user.code_error", True, None,
     "got RuntimeError('Expected cond to be True, but got False.", [],
     "The job's own torch._check(k <= batch) failed at trace time: the keep count (6) from .item() exceeds the 4-row batch.",
     "Fix the keep count so it never exceeds the batch size (clamp it) before calling the compiled function.",
     "compiled fn with capture_scalar_outputs: k = n.item(); torch._check(k <= x.shape[0]); step 4 passes n=6 for 4 rows", "medium")
case("run89-python-fullgraph-cext", "fullgraph_cext", "compile.dynamo_unsupported", True, None,
     "Explanation: Dynamo does not know how to trace the builtin `zlib.crc32.`",
     ["torch._dynamo.exc.Unsupported: Attempted to call function marked as skipped"],
     "A C-extension call (zlib.crc32) sits inside a torch.compile(fullgraph=True) region, which Dynamo cannot trace.",
     "Compute the value outside the compiled function and pass it in, or drop fullgraph=True.",
     "zlib.crc32(str(step).encode()) inside a fullgraph-compiled function, from step 3")
case("run89-python-optim-fullgraph", "optim_fullgraph", "compile.dynamo_unsupported", True, None,
     "torch._dynamo.exc.Unsupported: Call to `torch._dynamo.graph_break()`",
     ["Explanation: User-inserted graph break. Message: None"],
     "optimizer.step() was compiled with fullgraph=True, but torch.optim's step wrapper calls torch._dynamo.graph_break() by design.",
     "Compile the optimizer step without fullgraph=True (torch.compile(opt.step)) or compile only the model.",
     "clip_grad_norm_ + AdamW.step() inside torch.compile(fullgraph=True), switched on at step 4")
case("run89-python-recompile-warn", "recompile_warn", "compile.recompile_limit", False, None,
     "torch._dynamo hit config.recompile_limit (8)", ["last reason: 0/7: tensor 'args[0]' size mismatch at index 1. expected 43, actual 40"],
     "A dynamic=False compiled encoder saw a new sequence length every step and hit the recompile limit; Dynamo falls back to eager and the job finishes.",
     "Pad batches to fixed lengths or compile with dynamic shapes (mark_dynamic / dynamic=None).",
     "torch.compile(encoder, dynamic=False) fed S-3*step tokens per step for 11 steps; warning only")
case("run89-python-compiled-autograd-warn", "autograd_hookwarn", "compile.graph_break_data_dependent", False, None,
     "Graph break from `Tensor.item()`, consider setting:", [],
     "Under compiled autograd a grad hook branches on g.norm().item(), so the compiled backward graph-breaks; the job still finishes.",
     "Make the hook branchless (torch.where / clamp) so compiled autograd captures it in one graph.",
     "torch._dynamo.config.compiled_autograd=True, grad hook `if g.norm().item() > 1.0`; warning only")
# ---- torchrun, 3 ranks ----
case("run89-torchrun-healthy", "healthy", "none", False, None, None, [],
     "Healthy run: compiled FlexAttention with a correct causal block mask on all 3 ranks.", "Nothing to fix.",
     "no fault injected")
case("run89-torchrun-flex-maskfloat", "flex_maskfloat", "user.code_error", True, 2,
     "AssertionError: mask.dtype must be torch.bool, got torch.float32", [],
     "Rank 2 rebuilt its FlexAttention block mask with a mask_mod that returns a float (arithmetic) mask instead of a bool.",
     "Return a boolean expression from mask_mod (e.g. (kv_idx < 48) & (q_idx >= kv_idx)).",
     "rank 2 calls create_block_mask with a float-valued mask_mod at step 3")
case("run89-torchrun-export-range", "export_range", "compile.dynamic_shape_guard", True, 2,
     "AssertionError: Guard failed: x.size()[0] <= 16", [],
     "Rank 2 called the torch.export'ed module (batch Dim max=16) with a 24-row batch, violating the exported range.",
     "Export with a Dim max that covers the largest batch, or chunk the eval batch to <= 16 rows.",
     "rank 2 feeds 24 rows to ep.module() at step 4")
case("run89-torchrun-customop-wrongfake", "customop_wrongfake", "user.code_error", True, 1,
     "AssertionError: expected size 4==3, stride 32==32 at dim=0",
     ["This error most often comes from a incorrect fake (aka meta) kernel for a custom op."],
     "The custom op's fake kernel returns n//2 rows while the real op returns (n+1)//2, so Inductor's size assert fails on rank 1's odd (7-row) batch.",
     "Fix the register_fake kernel to return (n+1)//2 rows (check with torch.library.opcheck).",
     "rank 1 gets a 7-row ragged batch at step 4; fake kernel x.new_empty(x.shape[0] // 2, ...)")
case("run89-torchrun-cond-dtype", "cond_dtype", "user.code_error", True, 1,
     "expected same dtype but got torch.float32 and torch.bool", [],
     "On rank 1 a torch.cond's branches return different dtypes (sigmoid float vs a bool mask), which cond rejects at trace time.",
     "Make both branches return the same dtype (cast the mask with .float()).",
     "rank 1 takes the use_mask path of a fullgraph-compiled torch.cond at step 2")
case("run89-torchrun-markdyn-specialize", "markdyn", "compile.dynamic_shape_guard", True, 1,
     "ConstraintViolationError: Constraints violated (L['x'].size()[0])!", [],
     "Rank 1 marked its ragged batch dim dynamic (mark_dynamic, 2..64) but the model's pairwise view needs an even batch, so Dynamo's guards violate the constraint.",
     "Use maybe_mark_dynamic (or drop mark_dynamic) or pad batches to an even size.",
     "rank 1 concatenates a 6-row ragged batch, torch._dynamo.mark_dynamic(rows, 0, min=2, max=64) at step 3; model does x.view(-1, 2, D)")
case("run89-torchrun-dynitem", "dynitem", "compile.graph_break_data_dependent", True, 2,
     "Could not guard on data-dependent expression zuf0 > 10.0", [],
     "A torch.compile(dynamic=True, fullgraph=True) function branches in Python on x.abs().max().item(); rank 2 first calls it at step 5.",
     "Replace the Python branch with torch.where / torch.cond, or drop fullgraph=True.",
     "rank 2 calls the loss-scale check on a spiky batch at step 5")
case("run89-torchrun-fullgraph-disable", "fullgraph_disable", "compile.dynamo_unsupported", True, 0,
     "Unsupported: Skip calling `torch.compiler.disable()`d function", [],
     "Rank 0 calls a torch.compiler.disable'd logging helper inside a fullgraph=True compiled function.",
     "Call the logging helper outside the compiled function, or drop fullgraph=True.",
     "rank 0 logs stats through the disabled function at step 3")
case("run89-torchrun-fullgraph-genarg", "fullgraph_genarg", "compile.dynamo_unsupported", True, 1,
     "Explanation: Dynamo does not support next() on generator.", ["torch._dynamo.exc.Unsupported: Missing tp_iternext"],
     "Rank 1 passes a generator object into a fullgraph=True compiled function that calls next() on it, which Dynamo cannot trace.",
     "Materialise the value before the call (pass a tensor), or drop fullgraph=True.",
     "rank 1 passes (torch.full(...) for i in range(3)) into the compiled fn at step 4")
case("run89-torchrun-compiled-autograd-hook", "autograd_hookfg", "compile.graph_break_data_dependent", True, 2,
     "Could not guard on data-dependent expression zuf0 > 1.0", [],
     "With compiled autograd (fullgraph override), rank 2 registered a grad hook that branches on g.norm().item(), which cannot be captured in one graph.",
     "Make the hook branchless (torch.where / clamp) or do not force fullgraph for compiled autograd.",
     "compiled_autograd=True, compiled_autograd_kwargs_override={'fullgraph': True}; rank 2 registers the hook at step 2")
case("run89-torchrun-recompile-fail", "recompile_fail", "compile.recompile_limit", True, 1,
     "torch._dynamo.exc.Unsupported: Dynamo recompile limit exceeded", ["torch._dynamo hit config.recompile_limit (8)"],
     "Rank 1's unpadded batches give a new sequence length each step to a dynamic=False compiled encoder; the 9th recompile hits the limit and fail_on_recompile_limit_hit makes it fatal.",
     "Pad to fixed lengths or allow dynamic shapes; raise recompile_limit only if recompiles are expected.",
     "rank 1 feeds S-3*step tokens; torch._dynamo.config.fail_on_recompile_limit_hit=True")

bad = 0
for cid, m in C.items():
    d = os.path.join(POOL, cid)
    if not os.path.isdir(d):
        print("MISSING", cid); bad += 1; continue
    log = open(os.path.join(d, "log.txt"), errors="replace").read()
    tr = cid.startswith("run89-torchrun")
    coll = []
    if tr and m["fatal"]:
        peers = sorted(set(re.findall(r"\[rank(\d)\]: RuntimeError: \[[^\]]*\] Connection closed by peer", log)))
        if peers:
            coll.append("gloo all_reduce 'Connection closed by peer' on rank(s) " + ", ".join(peers))
        sig = sorted(set(re.findall(r"rank      : (\d) \(local_rank: \d\)\n  exitcode  : -15", log)))
        if sig:
            coll.append("torchrun SIGTERMs rank(s) " + ", ".join(sig) + " (exitcode -15)")
        coll.append("torchrun ChildFailedError summary")
    lab = {"id": cid, "source": SRC.format(id=cid, scen=m["scen"], gloo=", gloo" if tr else ""),
           "category": m["category"], "fatal": m["fatal"], "decisive_line": m["decisive_line"],
           "also_acceptable": m["also_acceptable"], "initiating_rank": m["initiating_rank"], "collateral": coll,
           "operator": None, "root_cause": m["root_cause"], "fix": m["fix"],
           "launcher": "torchrun" if tr else "python", "framework": "plain", "genuine": False,
           "induced_how": m["induced_how"], "confirmed_by": "induced", "confidence": m["confidence"]}
    with open(os.path.join(d, "label.json"), "w") as f:
        json.dump(lab, f, indent=1); f.write("\n")
    for s in ([m["decisive_line"]] if m["decisive_line"] else []) + m["also_acceptable"]:
        n = int(subprocess.run(["grep", "-cF", "--", s, os.path.join(d, "log.txt")], capture_output=True, text=True).stdout or 0)
        if n < 1:
            print("NOT FOUND", cid, repr(s)); bad += 1
    if m["category"] == "none" and ("Traceback" in log or "training finished" not in log):
        print("HEALTHY NOT CLEAN", cid); bad += 1
print(len(C), "cases,", bad, "problems")
