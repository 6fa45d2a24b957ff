# Builds corpus case folders from what run_round90.sh packed (round90.tgz, unpacked into SRC):
#   DEST/gpu90-<case>/log.txt      the console (stdout+stderr), as run_round90.sh left it
#   DEST/gpu90-<case>/ranks/...    the torchrun --log-dir tree (attempt_0/<rank>/stdout.log ...), where present
#   DEST/gpu90-<case>/label.json   corpus label (tests/blind/RUNS.md format)
# What was induced comes from SRC/<case>/case.json. The decisive line is searched in the real log.txt by a
# pattern per scenario and copied exactly (a torchrun --tee prefix `[defaultN]:` is dropped, so it stays an
# exact substring of the line). When no line matches, the case is printed under `skipped:` and NOT written.
# nccl-duplicate-gpu is labelled from what happened: NCCL's refusal (dist.nccl_error), or `none` when this
# NCCL accepted three ranks on one GPU and the job finished cleanly.
#   python3 make_cases.py SRC DEST
import json
import re
import shutil
import sys
from pathlib import Path

TAG = re.compile(r"^\[(?:default|rank)(\d+)\]:")
TEE = re.compile(r"^\[default\d+\]:")
GEN = "tests/corpus/generators/gpu_round90/run_round90.sh"
DUP = re.compile(r"Duplicate GPU detected : rank (\d+) and rank (\d+)")

# scenario -> category, fatal, patterns [(regex, who)] (who: culprit = a line tagged with another rank is
# refused; others = a line tagged with the culprit is refused; any), also-acceptable regex (also_any: from
# any rank), operator, root cause, fix, induced_how. {bad} = culprit rank.
SPEC = {
    "nccl-duplicate-gpu": dict(
        category="dist.nccl_error", operator=None, also_any=True,
        patterns=[(r"Duplicate GPU detected : rank \d+ and rank \d+ both on CUDA device", "any")],
        also=r"ncclInvalidUsage|DistBackendError: NCCL error",
        root_cause="Every rank bound cuda:0 (the device index ignores LOCAL_RANK), so when NCCL built its "
                   "communicator at the first all_reduce it found several ranks on the same GPU and refused "
                   "with ncclInvalidUsage (Duplicate GPU detected) on every rank.",
        fix="Bind each rank to its own GPU (torch.cuda.set_device(int(os.environ['LOCAL_RANK']))) and launch at "
            "most one rank per GPU (or use gloo when ranks must share a GPU).",
        induced_how="torchrun --nproc-per-node 3 on a one-GPU machine, every rank torch.cuda.set_device(0), "
                    "NCCL process group, gradients averaged with dist.all_reduce"),
    "ddp-invalid-ordinal": dict(
        category="env.cuda_driver_or_arch", operator=None,
        patterns=[(r"CUDA error: invalid device ordinal", "culprit"),
                  (r"invalid device ordinal|device=\d+, num_gpus=\d+", "culprit")],
        also=r"GPU device may be out of range, do you have enough GPUs\?",
        root_cause="Rank {bad}'s entry in a per-rank GPU map copied from a 4-GPU node was 3, but this machine has "
                   "one GPU, so its torch.cuda.set_device(3) at start-up failed with invalid device ordinal; the "
                   "other ranks lost their gloo peer while DDP synchronised the model.",
        fix="Derive the device from LOCAL_RANK and the visible device count (or fix the GPU map) so every rank "
            "names a GPU that exists.",
        induced_how="rank {bad} calls torch.cuda.set_device(3) after init_process_group on a one-GPU machine; "
                    "gloo, DDP on cuda:0 for the others"),
    "ddp-no-gpu-rank": dict(
        category="env.cuda_driver_or_arch", operator=None,
        patterns=[(r"RuntimeError: No CUDA GPUs are available", "culprit"),
                  (r"No CUDA GPUs are available|no CUDA-capable device is detected", "culprit")],
        root_cause="Rank {bad} alone was started with CUDA_VISIBLE_DEVICES set to the empty string, so it saw no "
                   "GPU and moving its model to cuda failed (No CUDA GPUs are available); the other ranks lost "
                   "their gloo peer.",
        fix="Do not clear CUDA_VISIBLE_DEVICES for one rank (check the launcher/scheduler environment); every "
            "rank must see the GPU it is meant to use.",
        induced_how="CUDA_VISIBLE_DEVICES='' set in rank {bad}'s environment before torch is imported; gloo, "
                    "DDP on cuda:0"),
    "ddp-device-assert": dict(
        category="cuda.device_side_assert", operator="aten.embedding",
        patterns=[(r"Assertion `srcIndex < srcSelectDimSize` failed", "culprit"),
                  (r"Assertion .* failed", "culprit"),
                  (r"CUDA error: device-side assert triggered", "culprit")],
        also=r"CUDA error: device-side assert triggered",
        root_cause="Rank {bad}'s step-3 batch held token id 8192 (a pad id added to the tokenizer after the "
                   "8192-row embedding was sized); the embedding's index kernel asserted on the device "
                   "(srcIndex < srcSelectDimSize), the CUDA context was lost (device-side assert triggered), and "
                   "the other ranks lost their gloo peer in DDP's all_reduce.",
        fix="Size the embedding to len(tokenizer) (resize it after adding special tokens) or map the pad id "
            "into range; validate token ids < num_embeddings in the collator.",
        induced_how="tokens[3, -1] = 8192 (num_embeddings) in rank {bad}'s step-3 batch; CUDA_LAUNCH_BLOCKING "
                    "not set; gloo, DDP on cuda:0"),
    "ddp-gpu-hang": dict(
        category="dist.collective_timeout", operator=None, also_any=True,
        patterns=[(r"Timed out waiting \d+ms for", "others"),
                  (r"(?i)timed out|timeout caused", "others")],
        also=r"Timed out waiting \d+ms for",
        root_cause="At step 3 rank {bad} launched a GPU kernel that never finished and synchronised on it, so it "
                   "never reached DDP's gradient all_reduce; the other ranks timed out in gloo after the 20 s "
                   "process-group timeout.",
        fix="Find the hanging kernel on rank {bad} (py-spy dump / cuda-gdb on the stuck rank); a stuck rank shows "
            "no error of its own.",
        induced_how="torch.cuda._sleep(2**40) + torch.cuda.synchronize() on rank {bad} at step 3; gloo with "
                    "timeout=20 s, DDP on cuda:0"),
    "triton-illegal-access": dict(
        category="cuda.illegal_memory_access", operator=None,
        patterns=[(r"CUDA error: an illegal memory access was encountered", "any"),
                  (r"illegal memory access", "any")],
        root_cause="A user Triton gather kernel loads without a mask at an element offset from a shard table; "
                   "at step 3 the stale offset (2**34 elements, 64 GiB) pointed far past the tensor, so the load "
                   "faulted and the next synchronisation reported an illegal memory access.",
        fix="Validate the shard table offsets against the tensor size (and mask the load); rerun with "
            "CUDA_LAUNCH_BLOCKING=1 or compute-sanitizer to locate the kernel.",
        induced_how="gather_rows_kernel launched with base=2**34 at step 3 (unmasked tl.load)"),
    "triton-shared-memory": dict(
        category="compile.triton_error", operator=None,
        patterns=[(r"out of resource: shared memory, Required: \d+, Hardware limit: \d+", "any"),
                  (r"out of resource: shared memory", "any"),
                  (r"OutOfResources", "any")],
        root_cause="A user Triton fp16 matmul was launched with 256x256x256 tiles and num_stages=3; the "
                   "pipelined kernel needs far more shared memory per block than the GPU has (OutOfResources).",
        fix="Use smaller BLOCK_M/BLOCK_N/BLOCK_K or fewer num_stages (or triton.autotune over configs that fit).",
        induced_how="matmul_kernel with BLOCK_M=BLOCK_N=BLOCK_K=256 num_warps=8 num_stages=3, fp16 2048^3"),
    "triton-compile-error": dict(
        category="compile.triton_error", operator=None,
        patterns=[(r"ValueError: arange's arguments must be of type tl\.constexpr", "any"),
                  (r"arange's arguments must be of type tl\.constexpr", "any"),
                  (r"CompilationError: at \d+:\d+", "any")],
        also=r"CompilationError: at \d+:\d+",
        root_cause="The user Triton softmax kernel calls tl.arange(0, n_cols) with the runtime argument n_cols; "
                   "tl.arange needs compile-time (tl.constexpr) bounds, so Triton's code generator raised a "
                   "CompilationError at the first launch.",
        fix="Pass a BLOCK: tl.constexpr (triton.next_power_of_2(n_cols)) and mask the loads/stores with "
            "cols < n_cols.",
        induced_how="bad_softmax_kernel with `cols = tl.arange(0, n_cols)`, n_cols a plain kernel argument"),
    "compiled-oom": dict(
        category="mem.cuda_oom", operator="aten.bmm",
        patterns=[(r"torch\.OutOfMemoryError: CUDA out of memory", "any"),
                  (r"OutOfMemoryError|CUDA error: out of memory", "any")],
        root_cause="The torch.compile'd attention pooling, trained at T=512, was evaluated on one T=200000 "
                   "document; the recompiled graph's explicit (1, T, T) fp32 score matrix (149 GiB) could not be "
                   "allocated on the 80 GB GPU (raised from the Inductor-generated code).",
        fix="Chunk long documents or use a memory-efficient attention (scaled_dot_product_attention with the "
            "soft-cap folded differently / flex_attention) instead of materialising T x T scores.",
        induced_how="cmodel(torch.randn(1, 200000, 64)) under torch.no_grad after three T=512 training steps"),
}
STANDIN = {"ddp-invalid-ordinal", "ddp-no-gpu-rank", "ddp-device-assert", "triton-illegal-access",
           "triton-shared-memory", "triton-compile-error", "compiled-oom"}
HEALTHY = {"ok-nccl-single": "a world-size-1 NCCL job (DDP plus an all_reduce of the loss) trains six steps "
                             "and exits cleanly.",
           "ok-triton": "a torch.compile'd MLP trains six steps while a user Triton softmax kernel checks its "
                        "outputs (TORCH_LOGS=recompiles, no recompilation); clean exit."}
PG = {"nccl-duplicate-gpu": "NCCL process group (timeout 30 s), gradients all_reduced by hand",
      "ok-nccl-single": "NCCL process group (timeout 30 s), DDP",
      "ddp-gpu-hang": "gloo process group (timeout 20 s), real DDP"}


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
            if who == "others" and t == bad:
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


def dup_rank(lines, nproc):
    """nccl-duplicate-gpu: null when every rank reports the duplicate, else the first reporting rank."""
    reporters = []
    for x in lines:
        m = DUP.search(x)
        if m:
            t = tag(x)
            reporters.append(t if t is not None else int(m.group(1)))
    return None if set(reporters) >= set(range(nproc)) else reporters[0]


def hw(src: Path):
    v = (src / "versions.txt").read_text(errors="replace") if (src / "versions.txt").exists() else ""
    tv = re.search(r"^torch (\S+)", v, re.M)
    gpus = re.findall(r"^\d+, (NVIDIA [^,]+),", v, re.M)
    torch_v = tv.group(1) if tv else "2.11.0+cu130"
    if gpus:
        name = re.search(r"(H100|H200|A100|B200|L40S)", gpus[0])
        return torch_v, f"one {name.group(1) if name else gpus[0]}"
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
        nproc = meta.get("nproc") or 1
        lines = (s / "log.txt").read_text(errors="replace").splitlines(keepends=False)
        desc = "CPU (dry run)" if cpu else (hwdesc or "one H100")
        label = {"id": f"gpu90-{case}", "source": f"real run: {GEN}, torch {torch_v} on {desc}"}
        if multi:
            pg = PG.get(scen, "gloo process group (timeout 30 s), real DDP")
            notes = [f"torchrun --nproc-per-node {nproc}, every rank on the one GPU (cuda:0), {pg}; "
                     + (f"culprit rank {bad}; " if nproc > 1 and scen != "nccl-duplicate-gpu" else "")
                     + f"run under `timeout -k 10 {meta['timeout_s']}`; torchrun exit status {meta['rc']} after "
                     f"{meta['seconds']} s."]
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
        done = sum("INFO train: done" in x for x in lines)
        sp = SPEC.get(scen)
        dup_ok = (scen == "nccl-duplicate-gpu" and find(lines, sp["patterns"], bad) is None
                  and meta["rc"] == 0 and done == nproc)
        if scen in HEALTHY or dup_ok:
            if meta["rc"] != 0 or done != (nproc if multi else 1):
                skipped.append(f"{case}: healthy run did not finish cleanly (rc {meta['rc']})")
                continue
            recomp = find(lines, [(r"Recompiling function|recompile_limit|cache_size_limit", "any")], None)
            if recomp:
                skipped.append(f"{case}: healthy run recompiled ({recomp.strip()[:100]!r}): label by hand")
                continue
            if dup_ok and cpu:
                why = "CPU dry run: gloo instead of NCCL, so no duplicate-GPU check; six steps and a clean exit."
            elif dup_ok:
                why = ("NCCL accepted three ranks on one GPU: the first all_reduce created the communicator, "
                       "no Duplicate GPU error, six steps and a clean exit (the refusal did not happen).")
                notes.append("Meant to show NCCL's Duplicate GPU refusal; labelled as what happened (no fault).")
            else:
                why = "Negative control: " + HEALTHY[scen]
            label.update(category="none", fatal=False, decisive_line=None, also_acceptable=[],
                         initiating_rank=None, collateral=[], operator=None, root_cause=why, fix="Nothing to fix.")
            induced = SPEC[scen]["induced_how"] if dup_ok else "no fault"
        else:
            fatal = True
            pats = sp["patterns"]
            standin = cpu and scen in STANDIN
            if standin:
                pats = [(rf"RuntimeError: dry-run stand-in for the {scen} fault", "culprit")]
            dl = find(lines, pats, bad)
            if dl is None:
                skipped.append(f"{case}: no line matches {[p for p, _ in pats]} (rc {meta['rc']})")
                continue
            if meta["rc"] == 0:
                skipped.append(f"{case}: decisive line found but the job exited 0 (rc 0): check by hand")
                continue
            assert any(dl in x for x in lines)
            also = []
            if sp.get("also") and not standin:
                r = re.compile(sp["also"].replace("{bad}", str(bad)))
                for x in lines:
                    x = TEE.sub("", x)
                    t = tag(x)
                    if multi and not sp.get("also_any") and t is not None and t != bad:
                        continue
                    if r.search(x) and x != dl and x not in also and len(also) < 3:
                        also.append(x)
            rank = None
            if multi:
                rank = dup_rank(lines, nproc) if scen == "nccl-duplicate-gpu" else bad
            label.update(category=sp["category"], fatal=True, decisive_line=dl, also_acceptable=also,
                         initiating_rank=rank, collateral=collateral(lines, dl, multi),
                         operator=sp["operator"], root_cause=sp["root_cause"].replace("{bad}", str(bad)),
                         fix=sp["fix"].replace("{bad}", str(bad)))
            induced = sp["induced_how"].replace("{bad}", str(bad))
            if standin:
                induced += " (CPU dry run: a stand-in instead of the GPU-only fault)"
            elif cpu and scen == "ddp-gpu-hang":
                induced += " (CPU dry run: time.sleep instead of the spinning GPU kernel)"
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
