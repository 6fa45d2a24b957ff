"""Writes label.json for every round-37b case folder: python labels37b.py STAGE_DIR
The decisive line is found with a regex in log.txt (first match; substring runs from the match to the end of
that line) and checked as an exact substring."""
import json, os, re, sys

STAGE = sys.argv[1]
PEER = "other ranks: gloo 'Connection closed by peer' RuntimeError in the gradient all_reduce"
TRC = "; torchrun SIGTERMs any rank still running (exitcode -15) and prints ChildFailedError, whose Root Cause may name a collateral rank"
SPC = "; mp.spawn reports 'Process {r} terminated with the following error' (ProcessRaisedException)"
F = {  # fault -> (category, regex, operator, root_cause, fix, also_acceptable regexes)
 "export-ddb": ("compile.graph_break_data_dependent", r"torch\.fx\.experimental\.symbolic_shapes\.GuardOnDataDependentSymNode: Could not guard on data-dependent expression", None,
   "torch.export.export traced a forward with `if h.sum() > 0:` (a branch on a tensor value), which cannot be captured: GuardOnDataDependentSymNode.",
   "Express the branch with torch.cond / torch.where (or export a branch-free eval model).", []),
 "export-unsup": ("compile.dynamo_unsupported", r"torch\._dynamo\.exc\.Unsupported: Attempted to call function marked as skipped", None,
   "torch.export.export(strict=True) traced a forward that calls sys._getframe(), a builtin dynamo cannot trace, so it raised Unsupported.",
   "Remove the frame introspection from forward (or export with strict=False).", [r"UserWarning: Dynamo does not know how to trace the builtin `sys\._getframe\.`"]),
 "export-dynshape": ("compile.dynamic_shape_guard", r"torch\._dynamo\.exc\.UserError: Constraints violated \(batch\)!", None,
   "The batch dim was exported as dynamic (Dim('batch', min=2, max=64)) but forward reshapes to 8 rows, specializing batch to the constant 8: Constraints violated.",
   "Drop the fixed reshape(8, -1) (use reshape(x.shape[0], -1)) or mark the batch dim static.",
   [r"ConstraintViolationError: Constraints violated \(batch\)!", r"You marked batch as dynamic but your code specialized it to be a constant \(8\)"]),
 "aoti-cxx": ("compile.cpp_toolchain_missing", r"torch\._inductor\.exc\.InductorError: InvalidCxxCompiler: No working C\+\+ compiler found", None,
   "The process ran with CXX=/bin/false, so torch._inductor.aoti_compile_and_package found no working C++ compiler (InvalidCxxCompiler).",
   "Point CXX / torch._inductor.config.cpp.cxx at a working g++ (or install one).", []),
 "onnx-unsup": ("compile.lowering_error", r"torch\.onnx\._internal\.exporter\._errors\.DispatchError: No ONNX function found for <OpOverload\(op='aten\.linalg_eig'", "aten.linalg_eig",
   "torch.onnx.export(dynamo=True) of a forward calling torch.linalg.eig failed: the exporter has no ONNX function for aten.linalg_eig (ConversionError at step 3/3).",
   "Remove torch.linalg.eig from the exported forward (compute it outside the model) or register a custom ONNX translation for it.",
   [r"ConversionError: Error when translating node %linalg_eig"]),
 "jit-script": ("compile.dynamo_unsupported", r"torch\.jit\.frontend\.UnsupportedNodeError: try blocks aren't supported:", None,
   "torch.jit.script of a module whose forward contains a try/except block failed: TorchScript does not support try blocks.",
   "Remove the try/except from forward (or use torch.export / torch.compile instead of TorchScript).", []),
 "ckpt-mismatch": ("user.code_error", r"torch\.utils\.checkpoint\.CheckpointError: torch\.utils\.checkpoint: A different number of tensors was saved", None,
   "A checkpointed block (use_reentrant=False) chose its path from a Python call counter, so recomputation in backward took a different path and saved a different number of tensors: CheckpointError.",
   "Make the checkpointed forward deterministic (no Python-side state deciding the path), or do not checkpoint that block.", []),
 "inplace": ("user.code_error", r"RuntimeError: one of the variables needed for gradient computation has been modified by an inplace operation", "aten.sigmoid",
   "The sigmoid output, saved for backward, was modified in place (h += 0.1) before loss.backward(), so autograd's version check failed.",
   "Use an out-of-place op (h = h + 0.1).", []),
 "backward-twice": ("user.code_error", r"RuntimeError: Trying to backward through the graph a second time", None,
   "An auxiliary loss sharing the fc1 graph was backwarded after loss.backward() had freed the saved tensors.",
   "Sum the losses and call backward once (or pass retain_graph=True to the first backward).", []),
 "no-grad-fn": ("user.code_error", r"RuntimeError: element 0 of tensors does not require grad and does not have a grad_fn", None,
   "The training loss was computed from a forward run under torch.no_grad(), so it had no grad_fn and backward() failed.",
   "Run the training forward outside torch.no_grad().", []),
 "vmap-ddb": ("user.code_error", r"RuntimeError: vmap: It looks like you're either \(1\) calling \.item\(\) on a Tensor or \(2\) attempting to use a Tensor in some data-dependent control flow", None,
   "Per-sample gradients with torch.func.vmap(torch.func.grad(...)) over a loss with `if loss > 1.0:` (data-dependent control flow) are not supported by vmap.",
   "Replace the Python branch with torch.where (or compute the clipping outside vmap).", []),
 "autocast-dtype": ("user.code_error", r"RuntimeError: index_add_\(\): self \(Float\) and source \(BFloat16\) must have the same scalar type", "aten.index_add_",
   "Under torch.autocast(cpu, bfloat16) the Linear output was bf16, and the custom op job37b::segment_sum index_add_'ed it into a float32 buffer: dtype mismatch.",
   "Create the buffer in the input's dtype (x.dtype) or cast the input to float32 inside the custom op.", []),
 "scaler-twice": ("user.code_error", r"RuntimeError: unscale_\(\) has already been called on this optimizer since the last update\(\)\.", None,
   "GradScaler.unscale_(opt) was called twice (before and after gradient clipping) before scaler.step()/update().",
   "Call scaler.unscale_(opt) once per step, before clipping.", []),
 "quant-nostub": ("user.code_error", r"NotImplementedError: Could not run 'quantized::linear' with arguments from the 'CPU' backend", "quantized::linear",
   "Eager-mode post-training quantization (prepare/convert) of a model without QuantStub/DeQuantStub, then fed a float tensor to the quantized Linear, which has no kernel for float CPU input.",
   "Wrap the model with QuantStub/DeQuantStub (or use torch.ao.quantization.QuantWrapper) before prepare/convert.", []),
}
HEALTHY = {
 "healthy-aoti": "Healthy run: torch.export + aoti_compile_and_package + aoti_load_package on step 3, the package matched eager; training done. Only a FutureWarning (LeafSpec) was printed.",
 "healthy-jit": "Healthy run: jit.script and jit.trace (TracerWarning: converting a tensor to a Python boolean) plus vmap per-sample grads on the fault rank; every rank printed 'training done'.",
 "healthy-export": "Healthy run: checkpoint without use_reentrant (UserWarning), torch.export and torch.onnx.export(dynamo=True) (training-mode UserWarning) on one rank; every rank printed 'training done'.",
}

for cid in sorted(os.listdir(STAGE)):
    if not cid.startswith("run37b-") or cid.endswith(".cmd"):
        continue
    d = os.path.join(STAGE, cid)
    text = open(os.path.join(d, "log.txt"), errors="replace").read()
    lines = text.splitlines()
    launcher = cid.split("-")[1]
    fault = cid.split("-", 2)[2]
    cmd = open(os.path.join(STAGE, cid + ".cmd")).read().strip()
    m = re.search(r"--fault-rank (\d+)", cmd); frank = int(m.group(1))
    multi = launcher != "python"
    lab = {"id": cid, "source": f"real run: tests/corpus/generators/launchers/round37b/run_all.sh {cid} ({cmd}), torch 2.13.0 CPU, gloo"}
    if fault.startswith("healthy"):
        lab.update(category="none", fatal=False, decisive_line=None, also_acceptable=[], initiating_rank=None, collateral=[],
                   operator=None, root_cause=HEALTHY[fault], fix="Nothing to fix.")
        assert text.count("training done") == (3 if multi else 1), cid
    else:
        cat, rx, op, rc, fix, alts = F[fault]
        def find(r):
            for ln in lines:
                mm = re.search(r, ln)
                if mm:
                    return ln[mm.start():].rstrip("\n")
            raise SystemExit(f"{cid}: no match for {r}")
        dec = find(rx)
        coll = []
        if multi:
            coll = [PEER + (TRC if launcher == "torchrun" else SPC.format(r=frank))]
        lab.update(category=cat, fatal=True, decisive_line=dec, also_acceptable=[find(a) for a in alts],
                   initiating_rank=frank if multi else None, collateral=coll, operator=op,
                   root_cause=(f"Rank {frank}: " if multi else "") + rc, fix=fix)
    lab.update(launcher=launcher if launcher != "spawn" else "mp.spawn", framework="plain", genuine=False,
               induced_how=f"sub37b.py --fault {fault} on rank {frank} at the step given by --fault-step" if multi else f"sub37b.py --fault {fault} (single process)",
               confirmed_by="induced", confidence="high")
    for s in [lab["decisive_line"]] + lab["also_acceptable"]:
        if s is not None:
            assert any(s in ln for ln in lines), (cid, s)
    json.dump(lab, open(os.path.join(d, "label.json"), "w"), indent=1)
    print(cid, lab["category"], lab["initiating_rank"], (lab["decisive_line"] or "")[:90])
