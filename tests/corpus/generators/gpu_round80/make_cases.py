# Builds corpus case folders from what run_round80.sh packed (round80.tgz, unpacked into SRC):
#   DEST/gpu80-<case>/log.txt      the console (stdout+stderr), as run_round80.sh left it
#   DEST/gpu80-<case>/ranks/...    the torchrun --log-dir tree (attempt_0/<rank>/stdout.log ...), where present
#   DEST/gpu80-<case>/label.json   corpus label (tests/blind/RUNS.md format)
# What was induced comes from SRC/<case>/case.json. The decisive line is searched in the real log.txt by a
# pattern per scenario and copied exactly (a torchrun --tee prefix `[defaultN]:` is dropped, so it stays an
# exact substring of the line). When no line matches, the case is printed under `skipped:` and NOT written.
#   python3 make_cases.py SRC DEST
import json
import re
import shutil
import sys
from pathlib import Path

TAG = re.compile(r"^\[(?:default|rank)(\d+)\]:")
TEE = re.compile(r"^\[default\d+\]:")
GEN = "tests/corpus/generators/gpu_round80/run_round80.sh"

# scenario -> category, fatal, patterns [(regex, who)] (who: culprit = a line tagged with another rank is
# refused; any), also-acceptable regex, operator, root cause, fix, induced_how. {bad} = culprit rank.
SPEC = {
    "ddp-expandable-oom": dict(
        category="mem.cuda_oom", operator="aten.bmm",
        patterns=[(r"torch\.OutOfMemoryError: CUDA out of memory", "culprit"),
                  (r"OutOfMemoryError|CUDA error: out of memory", "culprit")],
        root_cause="At step 3 rank {bad}'s batch was a 131072-sample recording, so the temporal self-similarity "
                   "h @ h^T (8 x 131072 x 131072 fp32, 512 GiB) could not be allocated on the GPU (expandable "
                   "segments on); the other ranks lost their gloo peer in DDP's gradient all_reduce.",
        fix="Cap or chunk the recording length before the self-similarity pooling (or use a memory-efficient "
            "attention); expandable_segments does not help a single allocation larger than the GPU.",
        induced_how="rank {bad} gets a 131072-sample batch at step 3; PYTORCH_CUDA_ALLOC_CONF="
                    "expandable_segments:True on every rank; 3 ranks on one GPU, gloo, DDP"),
    "ddp-compile-inductor": dict(
        category="compile.lowering_error", operator="aten.addmm",
        patterns=[(r"InductorError: LoweringException: NoValidChoicesError", "culprit"),
                  (r"LoweringException: NoValidChoicesError", "culprit"),
                  (r"NoValidChoicesError: No choices to select", "culprit")],
        also=r"NoValidChoicesError: No choices to select",
        root_cause="Every rank switches to torch.compile at step 3; rank {bad} alone runs with "
                   "TORCHINDUCTOR_MAX_AUTOTUNE_GEMM=1 and the misspelt TORCHINDUCTOR_MAX_AUTOTUNE_GEMM_BACKENDS="
                   "TRITION, so Inductor has no GEMM implementation to choose from and its lowering of the "
                   "Linear's addmm fails with NoValidChoicesError; the others wait in DDP's all_reduce and lose "
                   "their gloo peer.",
        fix="Fix the backend list (TRITON, or include ATEN) in rank {bad}'s environment; keep the Inductor "
            "environment identical on all ranks.",
        induced_how="rank {bad} sets TORCHINDUCTOR_MAX_AUTOTUNE_GEMM=1 TORCHINDUCTOR_MAX_AUTOTUNE_GEMM_BACKENDS="
                    "TRITION before importing torch; torch.compile(DDP model) on every rank from step 3"),
    "ddp-nan-anomaly": dict(
        category="user.code_error", operator="aten.pow",
        patterns=[(r"RuntimeError: Function '\w+' returned nan values in its \d+th output", "culprit"),
                  (r"Function '\w+' returned nan values", "culprit")],
        also=r"Error detected in \w+Backward\d*\.",
        root_cause="Under anomaly detection, rank {bad}'s step-3 batch held an all-zero (padded) recording; its "
                   "norm (** 0.5) is 0 and, with eps added outside the square root, the backward of the power "
                   "is inf * 0 = NaN, so PowBackward0 returned nan and anomaly mode raised on that rank.",
        fix="Put eps inside the square root (or use F.normalize / torch.linalg.vector_norm) and drop padded "
            "all-zero samples from the batches.",
        induced_how="torch.autograd.set_detect_anomaly(True) on every rank; x[5] = 0 in rank {bad}'s step-3 batch"),
    "ddp-unused-param": dict(
        category="dist.collective_mismatch", operator=None,
        patterns=[(r"RuntimeError: Expected to have finished reduction in the prior iteration", "culprit")],
        also=r"Parameter indices which did not receive grad for rank {bad}|Parameters which did not receive "
             r"grad for rank {bad}",
        root_cause="Rank {bad} skipped the aux branch at step 3 under DDP without find_unused_parameters, so its "
                   "reducer never finished that iteration's gradient reduction and its step-4 forward raised; "
                   "the other ranks, waiting in the step-3 all_reduce, lost their gloo peer.",
        fix="Use the same modules on every rank every step (multiply the aux loss by 0 instead of skipping it) "
            "or pass find_unused_parameters=True to DDP.",
        induced_how="use_aux=False in rank {bad}'s step-3 forward (DDP, find_unused_parameters=False)"),
    "flex-attention-compile": dict(
        category="compile.triton_error", operator=None,
        patterns=[(r"OutOfResources: out of resource: shared memory", "any"),
                  (r"out of resource: shared memory", "any"),
                  (r"No valid triton configs", "any")],
        also=r"No valid triton configs|out of resource: shared memory",
        root_cause="The compiled flex_attention was forced to 128x128 tiles with 4 pipeline stages on fp32 "
                   "head_dim-256 inputs; the generated Triton kernel needs more shared memory than the GPU has "
                   "(OutOfResources).",
        fix="Drop the kernel_options overrides (or use smaller BLOCK_M/BLOCK_N, num_stages=1-2, bf16 inputs).",
        induced_how="flex_attention compiled with kernel_options BLOCK_M=BLOCK_N=128, num_stages=4 on fp32, "
                    "B=2 H=4 S=1024 D=256, causal block mask"),
    "cudagraph-dynamic": dict(
        category="compile.cudagraph_incompatible", operator=None, fatal=False,
        patterns=[(r"We have observed \d+ distinct sizes", "any")],
        root_cause="torch.compile(mode='reduce-overhead') saw a new sequence length every step; the dynamic graph "
                   "makes CUDA graph trees record one CUDA graph per distinct size, and Inductor warned about the "
                   "number of recorded graphs (the job finished).",
        fix="Pad inputs to a few fixed lengths (bucketing) or set "
            "torch._inductor.config.triton.cudagraph_skip_dynamic_graphs=True.",
        induced_how="60 eval steps with lengths 32, 40, ..., 504 through a reduce-overhead compiled model; "
                    "TORCH_LOGS=cudagraphs"),
    "cudagraph-or-error": dict(
        category="compile.cudagraph_incompatible", operator=None,
        patterns=[(r"RuntimeError: skipping cudagraphs due to", "any"),
                  (r"Error.*skipping cudagraphs due to", "any")],
        nonfatal=[(r"skipping cudagraphs due to", "any")],
        root_cause="The reduce-overhead compiled model became dynamic at the second sequence length; with "
                   "cudagraph_skip_dynamic_graphs=True Inductor skipped CUDA graphs for it, and "
                   "TORCHINDUCTOR_CUDAGRAPH_OR_ERROR=1 turned that skip into an error.",
        fix="Pad inputs to fixed lengths (so the graph stays static) or drop TORCHINDUCTOR_CUDAGRAPH_OR_ERROR.",
        induced_how="cudagraph_skip_dynamic_graphs=True, TORCHINDUCTOR_CUDAGRAPH_OR_ERROR=1, a new sequence "
                    "length each step; TORCH_LOGS=cudagraphs"),
    "aoti-load": dict(
        category="user.code_error", operator=None,
        patterns=[(r"RuntimeError: .*failed finding central directory", "any"),
                  (r"failed finding central directory|zip archive", "any")],
        root_cause="The AOTInductor package (.pt2) copied to the serving directory was truncated to half its "
                   "size, so aoti_load_package could not read it as a zip archive.",
        fix="Re-copy the package completely (verify size/checksum) before loading.",
        induced_how="aoti_compile_and_package of a small MLP, then only the first half of the .pt2 written to "
                    "deploy/model.pt2 and loaded with aoti_load_package"),
    "graph-capture-sync": dict(
        category="compile.cudagraph_incompatible", operator=None,
        patterns=[(r"CUDA error: operation not permitted when stream is capturing", "any"),
                  (r"operation not permitted when stream is capturing", "any")],
        also=r"operation failed due to a previous error during capture",
        root_cause="The train step captured into torch.cuda.graph checks the loss with .item() (a host sync), "
                   "which is not permitted while the stream is capturing.",
        fix="Remove host syncs (.item(), printing, CPU checks) from the captured region; check the loss after "
            "replay.",
        induced_how="torch.cuda.graph capture of a train step whose finiteness guard calls .item()"),
}
STANDIN = {"ddp-expandable-oom", "flex-attention-compile", "cudagraph-dynamic", "cudagraph-or-error",
           "graph-capture-sync"}
HEALTHY = {"ok-ddp": "the 3-rank DDP job on one GPU (gloo) with no fault: six steps and a clean exit.",
           "ok-single": "a one-process torch.compile'd MLP trains six steps and exits cleanly."}


def tag(line: str):
    m = TAG.match(line)
    if not m:
        return None
    rest = TEE.sub("", line)
    m2 = re.match(r"^\[rank(\d+)\]:", rest)
    return int(m2.group(1)) if m2 else int(m.group(1))


def find(lines, patterns, bad):
    for rx, who in patterns:
        r = re.compile(rx.replace("{bad}", str(bad)))
        for line in lines:
            if not r.search(line):
                continue
            t = tag(line)
            if who == "culprit" and bad is not None and t is not None and t != bad:
                continue
            return TEE.sub("", line)
    return None


def collateral(lines, decisive, multi):
    out, sigterm = [], 0
    if multi:
        peer = find(lines, [(r"Connection closed by peer|Connection reset by peer", "any")], None)
        if peer and peer != decisive:
            out.append(f"peer ranks' gloo error: '{peer.strip()[:200]}'")
    for i, line in enumerate(lines):
        if "closing signal SIGTERM" in line:
            sigterm += 1
        if "Root Cause (first observed failure)" in line:
            blk = "".join(lines[i:i + 10])
            r, e = re.search(r"rank\s*:\s*(\d+)", blk), re.search(r"exitcode\s*:\s*(-?\d+)", blk)
            if r and e:
                out.append(f"torchrun ChildFailedError Root Cause (first observed failure): rank {r.group(1)}, "
                           f"exitcode {e.group(1)}")
    if sigterm:
        out.append(f"torchrun: {sigterm} 'closing signal SIGTERM' line(s) for the remaining workers")
    return out


def hw(src: Path):
    v = (src / "versions.txt").read_text(errors="replace") if (src / "versions.txt").exists() else ""
    tv = re.search(r"^torch (\S+)", v, re.M)
    gpus = re.findall(r"^\d+, (NVIDIA [^,]+),", v, re.M)
    torch_v = tv.group(1) if tv else "2.11.0+cu130"
    if gpus:
        name = re.search(r"(H100|H200|A100|B200|L40S)", gpus[0])
        return torch_v, f"1x {name.group(1) if name else gpus[0]}"
    return torch_v, None


def main() -> None:
    src, dest = Path(sys.argv[1]), Path(sys.argv[2])
    torch_v, hwdesc = hw(src)
    made, skipped = [], []
    for meta_f in sorted(src.glob("*/case.json")):
        meta = json.loads(meta_f.read_text())
        s, case, bad, scen = meta_f.parent, meta["case"], meta["bad_rank"], meta["scenario"]
        cpu = meta["device"] == "cpu"
        multi = meta["launch"] != "single"
        lines = (s / "log.txt").read_text(errors="replace").splitlines(keepends=False)
        desc = "CPU (dry run)" if cpu else (hwdesc or "1x H100")
        label = {"id": f"gpu80-{case}", "source": f"real run: {GEN} {case}, torch {torch_v}, {desc}"}
        if multi:
            notes = [f"torchrun --nproc-per-node 3, every rank on the one GPU (cuda:0), gloo process group "
                     f"(timeout 30 s), real DDP; culprit rank {bad}; run under `timeout -k 10 {meta['timeout_s']}`;"
                     f" torchrun exit status {meta['rc']} after {meta['seconds']} s."]
        else:
            notes = [f"one plain `python3 single.py {scen}` process (no launcher) under "
                     f"`timeout -k 10 {meta['timeout_s']}`; exit status {meta['rc']} after {meta['seconds']} s."]
        if meta["env"]:
            notes.append("extra env: " + " ".join(meta["env"]) + ".")
        if meta["launch"] == "logdir":
            notes.append("Run with --log-dir/--tee 3: console lines are prefixed [defaultN]:, ranks/ is the "
                         "--log-dir tree (attempt_0/<rank>/std{out,err}.log).")
        notes.append("The round's cases ran 6 at a time on the same GPU. Only the checkout path of the generator "
                     "(-> /home/user/jobs/) and its per-case work dir (-> /home/user/jobs/work/) were rewritten.")
        if scen in HEALTHY:
            want = 3 if multi else 1
            if meta["rc"] != 0 or sum("INFO train: done" in x for x in lines) != want:
                skipped.append(f"{case}: healthy run did not finish cleanly (rc {meta['rc']})")
                continue
            label.update(category="none", fatal=False, decisive_line=None, also_acceptable=[],
                         initiating_rank=None, collateral=[], operator=None,
                         root_cause="Negative control: " + HEALTHY[scen], fix="Nothing to fix.")
            induced = "no fault"
        else:
            sp = SPEC[scen]
            fatal = sp.get("fatal", True)
            pats = sp["patterns"]
            standin = cpu and scen in STANDIN
            if standin:
                pats = [(rf"(RuntimeError: |WARNING ).*dry-run stand-in for the {scen} (fault|warning)", "culprit")]
            dl = find(lines, pats, bad)
            extra_note = None
            if dl is None and sp.get("nonfatal") and not standin and meta["rc"] == 0:
                dl = find(lines, sp["nonfatal"], bad)
                if dl is not None:
                    fatal = False
                    extra_note = ("TORCHINDUCTOR_CUDAGRAPH_OR_ERROR did not turn the skip into an error in this "
                                  "torch: the skip was only logged and the job finished (labelled as what "
                                  "happened: non-fatal).")
            if dl is None:
                skipped.append(f"{case}: no line matches {[p for p, _ in pats]} (rc {meta['rc']})")
                continue
            if fatal and meta["rc"] == 0:
                skipped.append(f"{case}: decisive line found but the job exited 0 (rc 0): check by hand")
                continue
            if not fatal and meta["rc"] != 0:
                skipped.append(f"{case}: non-fatal scenario but exit status {meta['rc']}: check by hand")
                continue
            assert any(dl in x for x in lines)
            also = []
            if sp.get("also") and not standin:
                r = re.compile(sp["also"].replace("{bad}", str(bad)))
                for x in lines:
                    x = TEE.sub("", x)
                    t = tag(x)
                    if multi and t is not None and t != bad:
                        continue
                    if r.search(x) and x != dl and x not in also and len(also) < 3:
                        also.append(x)
            label.update(category=sp["category"], fatal=fatal, decisive_line=dl, also_acceptable=also,
                         initiating_rank=bad if multi else None,
                         collateral=collateral(lines, dl, multi) if fatal else [],
                         operator=sp["operator"], root_cause=sp["root_cause"].replace("{bad}", str(bad)),
                         fix=sp["fix"].replace("{bad}", str(bad)))
            induced = sp["induced_how"].replace("{bad}", str(bad))
            if standin:
                induced += " (CPU dry run: a stand-in instead of the GPU-only fault)"
            if extra_note:
                notes.append(extra_note)
        label.update(launcher="torchrun" if multi else "python", framework="plain", genuine=False,
                     induced_how=induced, confirmed_by="induced", confidence="high", notes=" ".join(notes))

        d = dest / label["id"]
        if d.exists():
            shutil.rmtree(d)
        d.mkdir(parents=True)
        shutil.copyfile(s / "log.txt", d / "log.txt")
        for attempt in sorted((s / "ranks_raw").glob("*/attempt_0")):
            shutil.copytree(attempt, d / "ranks" / "attempt_0")
        (d / "label.json").write_text(json.dumps(label, indent=2) + "\n")
        made.append(f"{label['id']}: {label['category']} fatal={label['fatal']} rank {label['initiating_rank']} "
                    f"decisive={label['decisive_line'] and label['decisive_line'][:110]!r}")
    print("\n".join(["made:"] + made + ["skipped:"] + (skipped or ["(none)"])))


if __name__ == "__main__":
    main()
