# Builds corpus case folders from what run_round78.sh packed (multi4.tgz, unpacked into SRC):
#   DEST/gpu4-<case>/log.txt        torchrun's console (stdout+stderr), as run_round78.sh left it
#   DEST/gpu4-<case>/ranks/...      the torchrun --log-dir tree (attempt_0/<rank>/stdout.log ...), where present
#   DEST/gpu4-<case>/fr/...         Flight Recorder dumps (pickles, byte for byte) + fr_trace.txt/fr_entries.txt
#   DEST/gpu4-<case>/label.json     corpus label (tests/blind/RUNS.md format)
# What was induced comes from SRC/<case>/case.json (scenario, culprit rank, env, rc). The decisive line is
# searched in the real log.txt by a pattern per scenario and copied exactly (only a torchrun --tee prefix
# `[defaultN]:` is dropped, so it stays an exact substring of the line). When no line matches, the case is
# reported and SKIPPED: a line is never invented. run_round78.sh already rewrote the checkout path.
#   python3 make_cases.py SRC DEST
import json
import re
import shutil
import sys
from pathlib import Path

TAG = re.compile(r"^\[(?:default|rank)(\d+)\]:")
TEE = re.compile(r"^\[default\d+\]:")

# scenario key -> category, fatal, patterns [(regex, who)] tried in order (who: culprit = a line tagged with
# another rank is refused; waiter = a line tagged with the culprit is refused; any), gloo stand-in patterns,
# operator, root cause, fix, how it was induced. {bad} is the culprit rank.
OOM_RC = ("At step 3 rank {bad}'s batch was 128k tokens long, so the attention scores (q @ k^T, 512 GiB) did "
          "not fit on the GPU: it raised torch.OutOfMemoryError in forward and stayed alive (non-daemon metrics "
          "thread) while the other ranks waited in the step's {coll} until the 20 s NCCL watchdog timed out.")
OOM_FIX = ("Cap the sequence length of the packed batches (or lower the batch / use memory-efficient attention); "
           "let a failed rank exit (daemon threads or stop them in a finally) so the peers fail fast.")
SPEC = {
    "ddp-oom": dict(
        category="mem.cuda_oom", operator="aten.matmul",
        patterns=[(r"torch\.OutOfMemoryError: CUDA out of memory\. .*GPU {bad} ", "culprit"),
                  (r"torch\.OutOfMemoryError: CUDA out of memory", "culprit")],
        root_cause=OOM_RC.replace("{coll}", "DDP gradient all_reduce"), fix=OOM_FIX,
        induced_how="rank {bad} gets a 131072-token batch at step 3 (one 512 GiB allocation) under DDP; a "
                    "non-daemon metrics thread keeps it alive after the traceback"),
    "fsdp2-oom": dict(
        category="mem.cuda_oom", operator="aten.matmul",
        patterns=[(r"torch\.OutOfMemoryError: CUDA out of memory\. .*GPU {bad} ", "culprit"),
                  (r"torch\.OutOfMemoryError: CUDA out of memory", "culprit")],
        root_cause=OOM_RC.replace("{coll}", "FSDP2 all-gather / reduce-scatter"), fix=OOM_FIX,
        induced_how="rank {bad} gets a 131072-token batch at step 3 (one 512 GiB allocation) with an FSDP2 "
                    "(fully_shard) model; a non-daemon metrics thread keeps it alive after the traceback"),
    "ddp-hang": dict(
        category="dist.collective_timeout", operator=None,
        patterns=[(r"Watchdog caught collective operation timeout", "waiter")],
        gloo=[(r"Timed out waiting \d+ms", "waiter")],
        root_cause="Rank {bad} stalled (slept 300 s) after the step-3 forward, before backward; the other ranks "
                   "waited in DDP's gradient all_reduce until the 20 s NCCL watchdog timed them out.",
        fix="Find and remove rank {bad}'s stall; the Flight Recorder dumps (torchfrtrace) name the rank that never "
            "joined the collective.",
        induced_how="time.sleep(300) on rank {bad} before loss.backward() at step 3; TORCH_NCCL_TRACE_BUFFER_SIZE="
                    "2000 TORCH_NCCL_DUMP_ON_TIMEOUT=1 TORCH_FR_DUMP_TEMP_FILE=<case>/fr/nccl_trace_rank_"),
    "ddp-sigkill": dict(
        category="mem.host_oom", operator=None,
        patterns=[(r"failed \(exitcode: -9\) local_rank: {bad} ", "any")],
        root_cause="Rank {bad} was SIGKILLed mid-step (as the host OOM killer would) while the others waited in "
                   "DDP's gradient all_reduce: no traceback, only exitcode -9 in torchrun's lines.",
        fix="Reduce host memory per worker or raise the job's memory limit; confirm with dmesg ('Killed process').",
        induced_how="os.kill(os.getpid(), SIGKILL) on rank {bad} at step 3, 3 s after its forward"),
    "mismatch-size": dict(
        category="dist.collective_mismatch", operator=None,
        patterns=[(r"Watchdog caught collective operation timeout", "any")],
        gloo=[(r"Timed out waiting \d+ms|[Ss]ize mismatch|doesn't match expected size", "any")],
        root_cause="From step 3 on rank {bad} all_reduces a flat gradient without the embedding (a freeze only it "
                   "applies), so its all_reduce has another numel than the other ranks'; NCCL does not check "
                   "sizes, the collectives went out of step and the watchdog timed them out.",
        fix="Make every rank build the same gradient bucket (same trainable parameters on all ranks); "
            "TORCH_DISTRIBUTED_DEBUG=DETAIL reports such mismatches.",
        induced_how="rank {bad} drops the embedding weight from its flat gradient from step 3 on (no "
                    "TORCH_DISTRIBUTED_DEBUG)"),
    "mismatch-size-detail": dict(
        category="dist.collective_mismatch", operator=None,
        patterns=[(r"Detected mismatch between collectives on ranks\. Rank {bad} is running collective", "any"),
                  (r"Detected mismatch between collectives on ranks", "any")],
        also=r"Detected mismatch between collectives on ranks\. Rank \d+ is running collective",
        root_cause="From step 3 on rank {bad} all_reduces a flat gradient without the embedding (a freeze only it "
                   "applies); TORCH_DISTRIBUTED_DEBUG=DETAIL's fingerprint check reports the size mismatch.",
        fix="Make every rank build the same gradient bucket (same trainable parameters on all ranks).",
        induced_how="rank {bad} drops the embedding weight from its flat gradient from step 3 on; "
                    "TORCH_DISTRIBUTED_DEBUG=DETAIL"),
    "device-assert": dict(
        category="cuda.device_side_assert", operator="aten.embedding",
        patterns=[(r"Error: CUDA error: device-side assert triggered", "culprit"),
                  (r"device-side assert triggered", "culprit")],
        also=r"Assertion `.*` failed|index out of bounds",
        root_cause="At step 3 rank {bad}'s batch holds a token id equal to the vocabulary size; the embedding "
                   "kernel's bounds assertion fires and rank {bad} fails with 'device-side assert triggered' while "
                   "the others wait in DDP's gradient all_reduce.",
        fix="Keep token ids below num_embeddings (fix the tokenizer / vocab size); CUDA_LAUNCH_BLOCKING=1 pins "
            "the op.",
        induced_how="tokens[3, 17] = VOCAB on rank {bad} at step 3 (DDP)"),
    "compile-fail": dict(
        category="compile.graph_break_data_dependent", operator=None,
        patterns=[(r"torch\._dynamo\.exc\.\w+: ", "culprit")],
        root_cause="torch.compile(fullgraph=True) on every rank; at step 3 only rank {bad} turns on outlier "
                   "clipping, whose data-dependent `if x.abs().amax() > 3` cannot be traced with fullgraph=True, "
                   "so its recompilation fails while the other ranks wait in the gradient all_reduce.",
        fix="Replace the data-dependent python branch with tensor ops (torch.clamp / torch.where or torch.cond), "
            "or drop fullgraph=True; keep per-rank config identical.",
        induced_how="forward(clip=True) only on rank {bad} at step 3 of a torch.compile(fullgraph=True) model; a "
                    "non-daemon metrics thread keeps it alive after the traceback"),
    "nan-check": dict(
        category="user.code_error", operator=None,
        patterns=[(r"RuntimeError: non-finite loss at step 3", "culprit")],
        root_cause="Rank {bad}'s step-3 embeddings were scaled by inf, its loss became NaN and the job's own check "
                   "raised RuntimeError('non-finite loss at step 3'); torchrun then stopped the other ranks.",
        fix="Find where rank {bad}'s inputs become non-finite (here an inf scale factor) and guard the input "
            "pipeline; torch.autograd.detect_anomaly / a finiteness check on the inputs pins it.",
        induced_how="rank {bad} multiplies its embeddings by float('inf') at step 3 (DDP)"),
}
STANDIN = {"ddp-oom", "fsdp2-oom", "device-assert"}
HEALTHY = {"ok": "the 4-rank DDP job with no fault: six steps and a clean exit.",
           "ok-compiled": "the 4-rank job with torch.compile(fullgraph=True) and a hand-written gradient "
                          "all_reduce, no fault: six steps and a clean exit (compile warnings allowed)."}


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
            if who == "culprit" and t is not None and t != bad:
                continue
            if who == "waiter" and t is not None and t == bad:
                continue
            return TEE.sub("", line)
    return None


def collateral(lines, decisive):
    out, sigterm = [], 0
    wd = find(lines, [(r"Watchdog caught collective operation timeout|Timed out waiting \d+ms", "any")], -1)
    if wd and wd != decisive:
        out.append(f"first timeout report: '{wd.strip()[:220]}'")
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
        return torch_v, f"{len(gpus)}x {name.group(1) if name else gpus[0]}, NCCL"
    return torch_v, None


def main() -> None:
    src, dest = Path(sys.argv[1]), Path(sys.argv[2])
    torch_v, hwdesc = hw(src)
    made, skipped = [], []
    for meta_f in sorted(src.glob("*/case.json")):
        meta = json.loads(meta_f.read_text())
        s, case, bad, scen = meta_f.parent, meta["case"], meta["bad_rank"], meta["scenario"]
        gloo = meta["backend"] == "gloo"
        detail = any(e == "TORCH_DISTRIBUTED_DEBUG=DETAIL" for e in meta["env"])
        key = scen + ("-detail" if detail else "")
        lines = (s / "log.txt").read_text(errors="replace").splitlines(keepends=False)
        desc = hwdesc if hwdesc and not gloo else ("CPU, gloo (dry run)" if gloo else "4x H100, NCCL")
        label = {"id": f"gpu4-{case}",
                 "source": f"real run: tests/corpus/generators/gpu_multi4/run_round78.sh {case}, torch {torch_v}, "
                           f"{desc}"}
        notes = [f"torchrun --nproc-per-node 4, culprit rank {bad}, process-group timeout 20 s, run under "
                 f"`timeout -k 10 {meta['timeout_s']}`; torchrun exit status {meta['rc']} after {meta['seconds']} s."]
        if meta["env"]:
            notes.append("extra env: " + " ".join(meta["env"]) + ".")
        if meta["tee"]:
            notes.append("Run with --log-dir/--tee 3: console lines are prefixed [defaultN]:, ranks/ is the "
                         "--log-dir tree (attempt_0/<rank>/std{out,err}.log).")
        notes.append("All cases of the round shared the same 4 GPUs, PAR at a time. Only the checkout path of "
                     "the generator was rewritten (-> /home/user/jobs/) in the text files.")
        if scen in HEALTHY:
            if meta["rc"] != 0 or sum("INFO train: done" in x for x in lines) != 4:
                skipped.append(f"{case}: healthy run did not finish cleanly (rc {meta['rc']})")
                continue
            label.update(category="none", fatal=False, decisive_line=None, also_acceptable=[],
                         initiating_rank=None, collateral=[], operator=None,
                         root_cause="Negative control: " + HEALTHY[scen], fix="Nothing to fix.")
            induced = "no fault"
        else:
            sp = SPEC[key]
            pats = sp.get("gloo", sp["patterns"]) if gloo else sp["patterns"]
            if gloo and scen in STANDIN:
                pats = [(rf"RuntimeError: dry-run stand-in for the {scen} fault on rank {{bad}}", "culprit")]
            dl = find(lines, pats, bad)
            if dl is None:
                skipped.append(f"{case}: no line matches {[p for p, _ in pats]} (rc {meta['rc']})")
                continue
            assert any(dl in x for x in lines)
            also = []
            if sp.get("also"):
                r = re.compile(sp["also"])
                for x in lines:
                    x = TEE.sub("", x)
                    if r.search(x) and x != dl and x not in also and len(also) < 3:
                        also.append(x)
            if scen == "ddp-sigkill":
                for i, x in enumerate(lines):
                    m = re.search(r"Signal 9 \(SIGKILL\) received by PID \d+", x)
                    if m and any(re.search(rf"rank\s*:\s*{bad} \(local_rank", y) for y in lines[max(0, i - 6):i]):
                        also.append(m.group(0))
                        break
            label.update(category=sp["category"], fatal=True, decisive_line=dl, also_acceptable=also,
                         initiating_rank=bad, collateral=collateral(lines, dl), operator=sp["operator"],
                         root_cause=sp["root_cause"].replace("{bad}", str(bad)),
                         fix=sp["fix"].replace("{bad}", str(bad)))
            induced = sp["induced_how"].replace("{bad}", str(bad))
            if gloo and scen in STANDIN:
                induced += " (gloo dry run: a RuntimeError stand-in instead of the GPU fault)"
        label.update(launcher="torchrun", framework="plain", genuine=False, induced_how=induced,
                     confirmed_by="induced", confidence="high", notes=" ".join(notes))

        d = dest / label["id"]
        if d.exists():
            shutil.rmtree(d)
        d.mkdir(parents=True)
        shutil.copyfile(s / "log.txt", d / "log.txt")
        for attempt in sorted((s / "ranks_raw").glob("*/attempt_0")):
            shutil.copytree(attempt, d / "ranks" / "attempt_0")
        dumps = sorted((s / "fr").glob("nccl_trace_rank_*"))
        for dump in dumps:
            (d / "fr").mkdir(exist_ok=True)
            shutil.copyfile(dump, d / "fr" / dump.name)
        for name in ("fr_trace.txt", "fr_entries.txt"):
            if dumps and (s / name).exists():
                shutil.copyfile(s / name, d / "fr" / name)
        (d / "label.json").write_text(json.dumps(label, indent=2) + "\n")
        made.append(f"{label['id']}: {label['category']} rank {label['initiating_rank']} "
                    f"decisive={label['decisive_line'] and label['decisive_line'][:110]!r}")
    print("\n".join(["made:"] + made + ["skipped:"] + (skipped or ["(none)"])))


if __name__ == "__main__":
    main()
