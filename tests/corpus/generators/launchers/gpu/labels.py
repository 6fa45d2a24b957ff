"""Write label.json for the GPU launcher cases that run_gpu.sh produced, and report the cases whose
induced fault did not show in the log.

    python3 labels.py OUTDIR [case-id ...]

The labels come from what each case induced (see train_gpu.py / train_lightning.py / run_gpu.sh);
the parts of a decisive line that differ from run to run (sequence numbers, byte counts, pids, GiB
free) are read back from the log itself, and every decisive_line / also_acceptable string is then
checked to lie inside ONE line of log.txt (and of ranks/<decisive_file> where one is given). A case
whose fault does not show gets no label.json (a stale one is removed) and is reported; the one
exception is the silent NCCL size mismatch, which is kept as a negative control (category none), as
tests/corpus/gpu-multi/gpu-multi-mismatch-size-silent is. Only the standard library is used.

The run-gpu1-* cases come from run_gpu.sh's one-GPU mode: the torchrun ones have both ranks on cuda:0
talking over gloo (no NCCL), the -single- and -lightning- ones are one process with no process group
(initiating_rank null, as in tests/corpus/gpu/); see setup_of().
"""
import glob
import json
import os
import re
import sys

GEN = "tests/corpus/generators/launchers/gpu"

# case id -> (launcher, framework, kind)
CASES = {
    "run-gpu-torchrun-cudaoom": ("torchrun", "plain", "cudaoom"),
    "run-gpu-lightning-cudaoom": ("lightning", "lightning", "cudaoom"),
    "run-gpu-torchrun-raise": ("torchrun", "plain", "raise"),
    "run-gpu-torchrun-sigkill": ("torchrun", "plain", "sigkill"),
    "run-gpu-torchrun-hang": ("torchrun", "plain", "hang"),
    "run-gpu-torchrun-mismatch": ("torchrun", "plain", "mismatch"),
    "run-gpu-torchrun-mismatch-detail": ("torchrun", "plain", "mismatch-detail"),
    "run-gpu-torchrun-mismatch-detail-manual": ("torchrun", "plain", "mismatch-detail"),
    "run-gpu-torchrun-compile": ("torchrun", "plain", "compile"),
    "run-gpu-torchrun-compile-fullgraph": ("torchrun", "plain", "compile-fullgraph"),
    "run-gpu-torchrun-logdir-raise": ("torchrun", "plain", "raise"),
    "run-gpu-torchrun-logdir-sigkill": ("torchrun", "plain", "sigkill"),
    "run-gpu-lightning-raise": ("lightning", "lightning", "raise"),
    # one-GPU mode (run_gpu.sh with 1 GPU): torchrun ranks share cuda:0 over gloo; single-process cases
    "run-gpu1-torchrun-cudaoom": ("torchrun", "plain", "cudaoom"),
    "run-gpu1-single-cudaoom": ("python", "plain", "cudaoom"),
    "run-gpu1-lightning-cudaoom": ("lightning", "lightning", "cudaoom"),
    "run-gpu1-torchrun-raise": ("torchrun", "plain", "raise"),
    "run-gpu1-torchrun-sigkill": ("torchrun", "plain", "sigkill"),
    "run-gpu1-torchrun-hang": ("torchrun", "plain", "hang"),
    "run-gpu1-torchrun-compile": ("torchrun", "plain", "compile"),
    "run-gpu1-torchrun-compile-fullgraph": ("torchrun", "plain", "compile-fullgraph"),
    "run-gpu1-torchrun-logdir-raise": ("torchrun", "plain", "raise"),
    "run-gpu1-torchrun-logdir-sigkill": ("torchrun", "plain", "sigkill"),
    "run-gpu1-lightning-raise": ("lightning", "lightning", "raise"),
}
FAULT_RANK = 1  # the faulty rank of every 2-rank case (setup_of(cid)["fault_rank"]; 0 in single-process cases)
MISMATCH_NUMEL = 4 * 1024 * 1024 + 1  # train_gpu.py --hist-bins default + the loss element

# a rank prefix at the start of a line: torchrun --tee "[default1]:", torch's excepthook "[rank1]: ",
# its C++ log prefix "[rank1]:[E1129 ...]"
RANK_RE = [re.compile(r"^\[default(\d+)\]:"), re.compile(r"^(?:\[default\d+\]:)?\[rank(\d+)\]:")]
# gloo's own timeout (transport/tcp/unbound_buffer.cc), raised in the waiting rank's collective
GLOO_TIMEOUT = r"Timed out waiting \d+ms for (?:send|recv) operation to complete"
GLOO_PEER_LOST = r"Connection (?:closed|reset) by peer(?: \[[^\]\s]*\]:\d+)?"
WATCHDOG = (r"ProcessGroupNCCL\.cpp:\d+\] \[Rank {r}\] Watchdog caught collective operation timeout: "
            r"WorkNCCL\(SeqNum=\d+, OpType=\w+, NumelIn={n}, NumelOut=\d+.*?\) ran for \d+ milliseconds "
            r"before timing out\.")


class NotShown(Exception):
    pass


def setup_of(cid):
    """How the case ran: 2 GPUs / NCCL, or the one-GPU mode (gloo on one GPU, or a single process)."""
    launcher = CASES[cid][0]
    if not cid.startswith("run-gpu1-"):
        return dict(gpu1=False, single=False, fault_rank=FAULT_RANK, label_rank=FAULT_RANK, gpu_index=1,
                    wait="its NCCL all_reduce", hw="2 x H200")
    if launcher == "torchrun":
        return dict(gpu1=True, single=False, fault_rank=FAULT_RANK, label_rank=FAULT_RANK, gpu_index=0,
                    wait="DDP's gradient all_reduce (gloo)", hw="1 x H200", backend="gloo on one GPU")
    return dict(gpu1=True, single=True, fault_rank=0, label_rank=None, gpu_index=0, wait=None,
                hw="1 x H200", backend="one process, no process group")


GPU1_NOTE = ("One-GPU run: torchrun started 2 ranks that both use cuda:0 and talk over gloo (NCCL cannot "
             "put two ranks on one GPU); the 2-GPU NCCL counterpart is {twin}.")


def peer_lost(lines, rank=0):
    """gloo's lost-peer error line of that rank (the survivor of a dead rank 1), or None."""
    ln, m = find(lines, GLOO_PEER_LOST, rank=rank)
    if not ln:
        ln, m = find(lines, GLOO_PEER_LOST)
        if ln and line_rank(ln) not in (None, rank):
            return None
    return m.group(0).strip() if ln else None


def line_rank(line):
    for r in RANK_RE:
        m = r.match(line)
        if m:
            return int(m.group(1))
    return None


def find(lines, pattern, rank=None):
    """First (line, match) where the regex matches, on a line of that rank if rank is given."""
    rx = re.compile(pattern)
    for ln in lines:
        m = rx.search(ln)
        if m and (rank is None or line_rank(ln) == rank):
            return ln, m
    return None, None


def read_versions(out):
    v = {"torch": "2.11", "nccl": "", "triton": ""}
    try:
        with open(os.path.join(out, "versions.txt"), encoding="utf-8", errors="replace") as f:
            for ln in f:
                parts = ln.split()
                if len(parts) >= 2 and parts[0] in ("torch", "nccl", "triton") and parts[1][:1].isdigit():
                    v[parts[0]] = parts[1]
    except OSError:
        pass
    return v


def read_tsv(path, ncols):
    rows = {}
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            for ln in f:
                cols = ln.rstrip("\n").split("\t")
                if len(cols) >= ncols:
                    rows[cols[0]] = cols[1:]
    except OSError:
        pass
    return rows


def label_raise(lines, launcher, d, ctx):
    ln, m = find(lines, r"KeyError: 'label'")
    if not ln:
        raise NotShown("no \"KeyError: 'label'\" in the log")
    r = line_rank(ln)
    if r not in (None, ctx["fault_rank"]):
        raise NotShown(f"the KeyError is on rank {r}, not rank {ctx['fault_rank']}")
    lab = dict(category="user.code_error", decisive_line="KeyError: 'label'",
               root_cause="Rank 1's data loading hit a record without a 'label' key (a corrupt record written "
                          f"with 'lable') and raised KeyError in collate(); rank 0 was left waiting in {ctx['wait']} "
                          "and was stopped by the launcher.",
               fix="Fix or filter the corrupt record in the data (validate the keys of each record when "
                   "loading), then rerun.")
    if ctx["single"]:
        lab["root_cause"] = ("The data loading hit a record without a 'label' key (a corrupt record written with "
                             "'lable') and raised KeyError in collate(); the single-process run stopped there.")
        lab["induced_how"] = ("the Records dataset writes one record with the key 'lable': record 26, the third "
                              "of batch 3 (Trainer(accelerator='gpu', devices=1), default single-device strategy, "
                              "DataLoader shuffle=False)")
        lab["collateral"] = []
        return lab
    if launcher == "lightning":
        lab["induced_how"] = ("the Records dataset writes one record with the key 'lable': the one that "
                              "Lightning's DistributedSampler (shuffle, seed 0) hands rank 1 in its 4th batch")
        obs, _ = find(lines, r"Child process with PID \d+ terminated with code")
        lab["collateral"] = ["Lightning's child-process observer on rank 0: '" + obs.strip() + "', then it "
                             "SIGKILLs everything" if obs else
                             "rank 0 (the launcher process) is left in its NCCL all_reduce"]
    else:
        lab["induced_how"] = "train_gpu.load_records renames 'label' to 'lable' in one record of rank 1 at step 3"
        lab["collateral"] = ["torchrun: 'Sending process ... closing signal SIGTERM' to rank 0, which was "
                             "waiting in its step-3 NCCL all_reduce",
                             "ChildFailedError summary: rank 1 exitcode 1"]
        if ctx["gpu1"]:
            lost = peer_lost(lines)
            lab["induced_how"] += " (both ranks on cuda:0, gloo)"
            lab["collateral"] = (["rank 0, waiting in DDP's gradient all_reduce (gloo): '" + lost + "'"] if lost
                                 else []) + ["torchrun SIGTERMs rank 0 if it is still running",
                                             "ChildFailedError summary: rank 1 exitcode 1"]
    return lab


def label_sigkill(lines, launcher, d, ctx):
    ln, m = find(lines, r"failed \(exitcode: -9\) local_rank: 1 \(pid: \d+\)")
    if not ln and ctx["gpu1"]:
        # with gloo rank 0 notices the lost peer at once and may exit in the same torchrun poll as rank 1;
        # torchrun's 'failed (...)' line then names rank 0, and rank 1's SIGKILL is in the failure summary
        sig, m2 = find(lines, r"Signal 9 \(SIGKILL\) received by PID \d+")
        if sig:
            return _sigkill_label(lines, ctx, m2.group(0), [], "medium",
                                  "torchrun's 'failed (exitcode: ...)' line names rank 0 (it died in the same "
                                  "poll, of the lost gloo peer); rank 1's SIGKILL is in the failure summary.")
    if not ln:
        raise NotShown("no torchrun line 'failed (exitcode: -9) local_rank: 1'")
    sig, m2 = find(lines, r"Signal 9 \(SIGKILL\) received by PID \d+")
    return _sigkill_label(lines, ctx, "failed (exitcode: -9) local_rank: 1", [m2.group(0)] if sig else [],
                          "high", None)


def _sigkill_label(lines, ctx, decisive, also, confidence, extra_note):
    lab = dict(category="mem.host_oom", decisive_line=decisive, confidence=confidence,
               root_cause="Rank 1 was SIGKILLed at the start of step 3 (as the host OOM killer would): no "
                          "traceback, only exit code -9 in torchrun's lines; rank 0 was waiting in DDP's "
                          "gradient all_reduce and was SIGTERMed by torchrun.",
               fix="Find what killed the rank (dmesg 'Killed process', the job's memory limit) and reduce "
                   "host memory per worker or raise the limit.",
               induced_how="rank 1 calls os.kill(os.getpid(), signal.SIGKILL) at the start of step 3")
    lab["also_acceptable"] = also
    lab["collateral"] = ["torchrun: 'Sending process ... closing signal SIGTERM' to rank 0 (exitcode -15)",
                         "ChildFailedError Root Cause: rank 1, exitcode -9"]
    lab["notes"] = "INDUCED; the log cannot tell the OOM killer from any other SIGKILL (labelled as gpu-multi-sigkill is)."
    if extra_note:
        lab["notes"] += " " + extra_note
        lab["collateral"] = ["rank 0 exits of its lost gloo peer in the same torchrun poll",
                             "ChildFailedError: Root Cause rank 0, rank 1 (exitcode -9) among the other failures"]
    if ctx["gpu1"]:
        lost = peer_lost(lines)
        lab["root_cause"] = ("Rank 1 was SIGKILLed at the start of step 3 (as the host OOM killer would): no "
                             "traceback, only exit code -9 in torchrun's lines; rank 0 was waiting in DDP's "
                             "gradient all_reduce (gloo) and " + ("lost its peer, then " if lost else "") +
                             "was stopped by torchrun.")
        lab["induced_how"] += " (both ranks on cuda:0, gloo)"
        if lost:
            lab["collateral"].insert(0, "rank 0: gloo '" + lost + "' RuntimeError in DDP backward")
    return lab


def label_hang_gloo(lines, launcher, d, ctx):
    ln, m = find(lines, GLOO_TIMEOUT, rank=0)
    if not ln:
        ln, m = find(lines, GLOO_TIMEOUT)
        if ln and line_rank(ln) not in (None, 0):
            raise NotShown(f"the gloo timeout is on rank {line_rank(ln)}, not on the waiting rank 0")
    if not ln:
        raise NotShown("no gloo 'Timed out waiting ...ms for recv/send operation to complete' line")
    return dict(category="dist.collective_timeout", decisive_line=m.group(0),
                root_cause="Rank 1 stalled (slept 600 s, silent, no error of its own) before step 3; rank 0 "
                           "waited in DDP's gradient all_reduce (gloo) until the 20 s process-group timeout, "
                           "and gloo raised its timeout error there.",
                fix="Find and remove rank 1's stall (slow I/O or data loading, extra work on one rank; a "
                    "py-spy dump of it while hung); raising the process-group timeout only masks it.",
                induced_how="time.sleep(600) on rank 1 at the start of step 3, init_process_group('gloo', "
                            "timeout=20 s), both ranks on cuda:0",
                collateral=["rank 0's RuntimeError traceback (DDP backward) and exit 1",
                            "rank 1 SIGTERMed by torchrun (exitcode -15), no traceback",
                            "ChildFailedError Root Cause names rank 0 (the timed-out rank), not rank 1"],
                notes="The initiating rank is the one WITHOUT an error: rank 1 never issued the collective rank "
                      "0 timed out on.")


def label_hang(lines, launcher, d, ctx):
    if ctx["gpu1"]:
        return label_hang_gloo(lines, launcher, d, ctx)
    ln, m = find(lines, WATCHDOG.format(r=0, n=r"\d+"))
    if not ln:
        raise NotShown("no '[Rank 0] Watchdog caught collective operation timeout' line")
    lab = dict(category="dist.collective_timeout", decisive_line=m.group(0),
               root_cause="Rank 1 stalled (slept 600 s, silent, no error of its own) before step 3; rank 0 "
                          "waited in DDP's gradient all_reduce until the 20 s NCCL watchdog timeout and was "
                          "taken down (SIGABRT).",
               fix="Find and remove rank 1's stall (slow I/O or data loading, extra work on one rank; a "
                   "py-spy dump of it while hung); raising the process-group timeout only masks it.",
               induced_how="time.sleep(600) on rank 1 at the start of step 3, init_process_group(timeout=20 s), "
                           "TORCH_NCCL_* left at the 2.11 defaults (async error handling 3, dump on timeout)")
    lab["collateral"] = ["rank 1 'Received a dump signal due to a collective timeout from  rank 0' (flight "
                         "recorder) lines, if it got there", "rank 0 ~60 s later: 'Process group watchdog "
                         "thread terminated with exception', terminate/DistBackendError, SIGABRT",
                         "rank 1 SIGTERMed by torchrun (exitcode -15), no traceback",
                         "ChildFailedError Root Cause names rank 0 (the timed-out rank), not rank 1"]
    lab["notes"] = "The initiating rank is the one WITHOUT an error: rank 1 never issued the collective rank 0 timed out on."
    return lab


def label_mismatch(lines, launcher, d, ctx):
    ln1, m1 = find(lines, WATCHDOG.format(r=1, n=MISMATCH_NUMEL))
    ln0, m0 = find(lines, WATCHDOG.format(r=0, n=r"\d+"))
    base = dict(category="dist.collective_mismatch",
                root_cause="At step 3 rank 1 all_reduced its 1-element loss metric with a 4194304-bin token "
                           "histogram packed in (4194305 elements) where rank 0 all_reduced 1 element; NCCL "
                           "checks no sizes, ",
                fix="Make every rank call the same collectives with the same shapes (keep the histogram out of "
                    "the loss all_reduce); TORCH_DISTRIBUTED_DEBUG=DETAIL reports such a mismatch by name.",
                induced_how="rank 1 concatenates torch.bincount(y, minlength=4194304) to its loss metric before "
                            "dist.all_reduce at step 3 (DDP training, no TORCH_DISTRIBUTED_DEBUG)")
    if ln1:
        base["root_cause"] += "so both ranks hung in it until the 20 s NCCL watchdog took them down."
        base.update(decisive_line=m1.group(0), also_acceptable=[m0.group(0)] if ln0 else [],
                    confidence="medium",
                    notes="The log states no mismatch as such: rank 1's watchdog line names an ALLREDUCE of "
                          "NumelIn=4194305 while rank 0's names NumelIn=1; the label follows what was induced.")
        base["collateral"] = ["both ranks' flight-recorder dump lines", "SIGABRT after the watchdog's wait",
                              "ChildFailedError summary"]
        return base
    if ln0:
        base["root_cause"] += "so rank 0 hung in it until the 20 s NCCL watchdog took it down."
        base.update(decisive_line=m0.group(0), confidence="low",
                    notes="Only rank 0's watchdog timeout is in the log (its NumelIn is rank 0's own size); "
                          "nothing in the log names rank 1's larger tensor. The label follows what was induced.")
        base["collateral"] = ["SIGABRT after the watchdog's wait", "ChildFailedError summary"]
        return base
    ln, m = find(lines, r"(?:ncclInvalidUsage|ncclInternalError|ncclSystemError|ncclUnhandledCudaError)[^\n]*")
    if ln:
        base["root_cause"] += "and NCCL failed in it."
        base.update(decisive_line=m.group(0).strip(), confidence="medium",
                    notes="NCCL's own error line; the label follows what was induced.")
        base["collateral"] = []
        return base
    if any("training finished" in ln for ln in lines):
        return dict(category="none", fatal=False, decisive_line=None, initiating_rank=None,
                    root_cause="Not a healthy job but a healthy-looking log: at step 3 rank 1 all_reduced 4194305 "
                               "elements where rank 0 all_reduced 1, and NCCL completed it without any error, so "
                               "the job finished with a wrong loss metric.",
                    fix="Nothing in the log to act on; TORCH_DISTRIBUTED_DEBUG=DETAIL "
                        "(run-gpu-torchrun-mismatch-detail) turns this into an error.",
                    induced_how=base["induced_how"], collateral=[],
                    notes="Meant as the no-DETAIL mismatch case; it did not fail, so it is kept as a negative "
                          "control (a tool must not invent an error here).",
                    _not_shown="NCCL completed the mismatched all_reduce silently: kept as a negative control")
    raise NotShown("no watchdog timeout, NCCL error or 'training finished' in the log")


def label_mismatch_detail(lines, launcher, d, manual):
    pat = (r"RuntimeError: Detected mismatch between collectives on ranks\. Rank {r} is running collective: "
           r"CollectiveFingerPrint\(SequenceNumber=\d+, OpType=ALLREDUCE, TensorShape=\[{n}\]")
    ln1, m1 = find(lines, pat.format(r=1, n=MISMATCH_NUMEL))
    ln0, m0 = find(lines, pat.format(r=0, n=1))
    if not (ln1 or ln0):
        why = "no 'Detected mismatch between collectives' line"
        if any("SIGSEGV" in ln for ln in lines):
            why += " (a rank died of SIGSEGV: TORCH_DISTRIBUTED_DEBUG=DETAIL with DDP crashes in this build?)"
        raise NotShown(why)
    first, other = (m1, m0) if ln1 else (m0, None)
    how = ("gradients averaged by hand (dist.all_reduce per parameter) instead of DDP"
           if manual else "DDP training")
    return dict(category="dist.collective_mismatch", decisive_line=first.group(0),
                also_acceptable=[other.group(0)] if other else [],
                root_cause="At step 3 rank 1 all_reduced its loss metric with a 4194304-bin histogram packed in "
                           "(shape [4194305]) where rank 0 all_reduced shape [1]; TORCH_DISTRIBUTED_DEBUG=DETAIL's "
                           "fingerprint check reports the mismatch before NCCL runs.",
                fix="Make every rank call the same collectives with the same shapes (keep the histogram out of "
                    "the loss all_reduce).",
                induced_how="rank 1 concatenates torch.bincount(y, minlength=4194304) to its loss metric before "
                            f"dist.all_reduce at step 3; {how}; TORCH_DISTRIBUTED_DEBUG=DETAIL",
                collateral=["the other rank raises the same mismatch RuntimeError, naming itself first",
                            "torchrun SIGTERM / ChildFailedError summary"],
                notes="With two ranks the two mismatch lines are symmetric; rank 1 is the odd one because its "
                      "shape [4194305] is not the 1-element loss metric every step before used.")


def label_compile(lines, launcher, d, ctx):
    ln, m = find(lines, r"FileNotFoundError: \[Errno 2\] No such file or directory: '/nonexistent/gcc'")
    if not ln:
        why = "no \"No such file or directory: '/nonexistent/gcc'\" line"
        if any("Failed to find C compiler" in x for x in lines):
            why += " ('Failed to find C compiler' instead: is there no gcc on this machine at all?)"
        raise NotShown(why)
    r = line_rank(ln)
    if r not in (None, ctx["fault_rank"]):
        raise NotShown(f"the compiler error is on rank {r}")
    lab = dict(category="compile.cpp_toolchain_missing", decisive_line=m.group(0),
               root_cause="On rank 1 CC points at a compiler that does not exist (/nonexistent/gcc), so Triton "
                          "cannot build its CUDA launcher helper and torch.compile fails on the first forward; "
                          "rank 0, compiling fine, is stopped by torchrun.",
               fix="Unset CC or point it at an installed gcc/clang in that rank's environment.",
               induced_how="rank 1 alone sets CC=/nonexistent/gcc (and unsets CXX) before importing torch; every "
                           "rank does DDP(torch.compile(model)) with fresh per-rank Triton/Inductor caches, "
                           "TORCHINDUCTOR_COMPILE_THREADS=1",
               collateral=["torch._inductor.exc.InductorError wrapper", "torchrun SIGTERMs rank 0 mid-compile"])
    if ctx["gpu1"]:
        lab["induced_how"] += "; both ranks on cuda:0, gloo"
    if any(line_rank(x) == 0 and "InductorError" in x for x in lines):
        lab["notes"] = "rank 0 also shows an InductorError: check the log."
        lab["confidence"] = "medium"
    return lab


def label_fullgraph(lines, launcher, d, ctx):
    fr = ctx["fault_rank"]
    ln, m = find(lines, r"torch\._dynamo\.exc\.Unsupported: .*", rank=fr)
    if not ln:
        ln, m = find(lines, r"torch\._dynamo\.exc\.Unsupported: .*")
        if not ln:
            raise NotShown("no 'torch._dynamo.exc.Unsupported' line")
        if line_rank(ln) not in (None, fr):
            raise NotShown(f"the Unsupported error is on rank {line_rank(ln)}")
    msg = m.group(0).rstrip()
    dd = "ata-dependent" in msg or "ata dependent" in msg
    also = []
    ex, mx = find(lines, r"Explanation: Detected data-dependent branching.*")
    if ex:
        also.append(mx.group(0).rstrip())
    return dict(category="compile.graph_break_data_dependent" if dd else "compile.dynamo_unsupported",
                decisive_line=msg, also_acceptable=also,
                root_cause="Only rank 1's model branches on a tensor value in forward (if h.sum() > 0) and it is "
                           "compiled with fullgraph=True, so Dynamo raises Unsupported on rank 1; rank 0 is "
                           "stopped by torchrun.",
                fix="Make the forward branchless (torch.where) or use torch.cond, or drop fullgraph=True to "
                    "allow the graph break.",
                induced_how="rank 1 alone builds the model with a data-dependent `if h.sum() > 0` branch; every "
                            "rank does DDP(torch.compile(model, fullgraph=True))"
                            + ("; both ranks on cuda:0, gloo" if ctx["gpu1"] else ""),
                collateral=["torchrun SIGTERMs rank 0"])


def label_cudaoom(lines, launcher, d, ctx):
    gi = ctx["gpu_index"]
    pat = (r"torch\.OutOfMemoryError: CUDA out of memory\. Tried to allocate [\d.]+ [KMGT]iB\. GPU %d has a "
           r"total capacity of [\d.]+ [KMGT]iB" % gi)
    ln, m = find(lines, pat)
    if not ln:
        raise NotShown(f"no 'torch.OutOfMemoryError: CUDA out of memory ... GPU {gi}' line")
    if line_rank(ln) not in (None, ctx["fault_rank"]):
        raise NotShown(f"the OOM is on rank {line_rank(ln)}")
    lab = dict(category="mem.cuda_oom", decisive_line=m.group(0), operator="aten::mm",
               root_cause="Rank 1's sampler handed it its whole shard (262144 samples) as one batch, and the "
                          "InfoNCE batch x batch similarity matrix asked for 256 GiB on a 140 GiB H200; rank 0 "
                          "was left waiting in its NCCL all_reduce.",
               fix="Fix the sampler/shard index so the batch has its normal size (or chunk the similarity "
                   "matrix); a bigger GPU would not help.")
    if launcher == "lightning":
        lab["induced_how"] = ("in training_step at batch 3, rank 1 replaces its batch by 262144 random samples "
                              "(Lightning DDP, 2 GPUs)")
        obs, _ = find(lines, r"Child process with PID \d+ terminated with code")
        lab["collateral"] = ["Lightning's child-process observer on rank 0: '" + obs.strip() + "', then it "
                             "SIGKILLs everything" if obs else
                             "rank 0 (the launcher process) is left in its NCCL all_reduce"]
    else:
        lab["induced_how"] = "at step 3 rank 1 builds a 262144-sample batch on the GPU instead of its 32 records"
        lab["collateral"] = ["torchrun SIGTERMs rank 0", "ChildFailedError summary: rank 1 exitcode 1"]
    if ctx["single"]:
        lab["root_cause"] = ("The sampler handed the job its whole shard (262144 samples) as one batch, and the "
                             "InfoNCE batch x batch similarity matrix asked for 256 GiB on a 140 GiB H200.")
        lab["collateral"] = []
        if launcher == "lightning":
            lab["induced_how"] = ("in training_step at batch 3, the (only) rank replaces its batch by 262144 random "
                                  "samples (Trainer(accelerator='gpu', devices=1), default single-device strategy)")
        else:
            lab["induced_how"] = ("plain `python3 train_gpu.py --scenario cudaoom` (one process, no process group): "
                                  "at step 3 it builds a 262144-sample batch on the GPU instead of its 32 records")
    elif ctx["gpu1"]:
        lost = peer_lost(lines)
        lab["root_cause"] = ("Rank 1's sampler handed it its whole shard (262144 samples) as one batch, and the "
                             "InfoNCE batch x batch similarity matrix asked for 256 GiB on the 140 GiB H200 both "
                             "ranks share; rank 0 was left waiting in DDP's gradient all_reduce (gloo)"
                             + (" and lost its peer." if lost else "."))
        lab["induced_how"] += " (both ranks on cuda:0, gloo)"
        lab["collateral"] = ((["rank 0: gloo '" + lost + "' RuntimeError in DDP backward"] if lost else [])
                             + ["torchrun SIGTERMs rank 0 if it is still running",
                                "ChildFailedError summary: rank 1 exitcode 1"])
    return lab


LABELERS = {
    "raise": label_raise, "sigkill": label_sigkill, "hang": label_hang, "mismatch": label_mismatch,
    "mismatch-detail": None, "compile": label_compile, "compile-fullgraph": label_fullgraph,
    "cudaoom": label_cudaoom,
}
ORDER = ["id", "source", "category", "fatal", "decisive_line", "decisive_file", "also_acceptable",
         "initiating_rank", "collateral", "operator", "root_cause", "fix", "launcher", "framework",
         "torch_version", "genuine", "induced_how", "confirmed_by", "confidence", "notes"]


def hint(lines, fault_rank=FAULT_RANK):
    """What the log shows instead: the last error-looking line of the faulty rank (or of anyone)."""
    rx = re.compile(r"(Error|error:|Exception|exitcode|Signal \d+|Watchdog|timed out|Timed out)")
    own = [ln for ln in lines if rx.search(ln) and line_rank(ln) == fault_rank]
    anyl = [ln for ln in lines if rx.search(ln)]
    pick = (own or anyl or ["(no error line at all)"])[-1].strip()
    return "last error line" + (f" of rank {fault_rank}" if own else "") + ": " + pick[:200]


def in_one_line(s, text):
    """s lies inside one line, however the lines are split (\\n only, or also \\r and the like)."""
    return any(s in ln for ln in text.split("\n")) and any(s in ln for ln in text.splitlines())


def label_case(out, cid, versions, commands, status):
    launcher, framework, kind = CASES[cid]
    ctx = setup_of(cid)
    d = os.path.join(out, cid)
    path = os.path.join(d, "log.txt")
    if not os.path.isfile(path):
        return "NO LOG", "no log.txt (case skipped or not run)" + (f": {status[-1]}" if status else "")
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    lines = text.split("\n")
    try:
        if kind == "mismatch-detail":
            lab = label_mismatch_detail(lines, launcher, d, manual=cid.endswith("-manual"))
        else:
            lab = LABELERS[kind](lines, launcher, d, ctx)
    except NotShown as e:
        if os.path.exists(os.path.join(d, "label.json")):
            os.remove(os.path.join(d, "label.json"))
        return "NOT SHOWN", f"{e}; {hint(lines, ctx['fault_rank'])}"
    not_shown = lab.pop("_not_shown", None)

    cmd = commands.get(cid)
    how = f"{cmd[0]} {cmd[1]}".strip() if cmd else ""
    src = f"real run: {GEN}/run_gpu.sh {cid}" + (f" ({how})" if how else "")
    if ctx["gpu1"]:
        src += f", torch {versions['torch']} + {ctx['hw']}, {ctx['backend']}"
        if not ctx["single"]:
            twin = cid.replace("run-gpu1-", "run-gpu-")
            lab["notes"] = (GPU1_NOTE.format(twin=twin) + " " + lab.get("notes", "")).strip()
    else:
        nccl = f"NCCL {versions['nccl']}" if versions["nccl"] else "NCCL"
        src += f", torch {versions['torch']} + 2 x H200, {nccl}"
    lab.setdefault("fatal", True)
    lab.setdefault("also_acceptable", [])
    lab.setdefault("initiating_rank", ctx["label_rank"])
    lab.setdefault("collateral", [])
    lab.setdefault("operator", None)
    lab.setdefault("confidence", "high")
    lab.update(id=cid, source=src, launcher=launcher, framework=framework, torch_version=versions["torch"],
               genuine=False, confirmed_by="induced")
    rc = status[0] if status else None
    if lab["fatal"] and rc == "0":
        lab["notes"] = (lab.get("notes", "") + " The launcher exited 0.").strip()

    # checks: every string is inside one line of log.txt
    for s in ([lab["decisive_line"]] if lab["decisive_line"] else []) + lab["also_acceptable"]:
        if not in_one_line(s, text):  # cannot happen for strings read back from a line; checked anyway
            return "CHECK FAILED", f"{s!r} is not inside one line of log.txt (no label.json written)"
    # ranks/ tree (torchrun --log-dir): name the file that holds the decisive line
    ranks = os.path.join(d, "ranks")
    if os.path.isdir(ranks) and lab["decisive_line"]:
        hits = []
        for fpath in sorted(glob.glob(os.path.join(ranks, "**", "*.log"), recursive=True)):
            with open(fpath, encoding="utf-8", errors="replace") as f:
                if in_one_line(lab["decisive_line"], f.read()):
                    hits.append(os.path.relpath(fpath, ranks))
        own = [h for h in hits if f"/{ctx['fault_rank']}/" in f"/{h}" and h.endswith("stderr.log")]
        if own or hits:
            lab["decisive_file"] = (own or hits)[0]
    labout = {k: lab[k] for k in ORDER if k in lab}
    with open(os.path.join(d, "label.json"), "w", encoding="utf-8") as f:
        json.dump(labout, f, indent=2, ensure_ascii=False)
        f.write("\n")
    if not_shown:
        return "NOT SHOWN", not_shown + f" (label.json: category {labout['category']})"
    dl = labout["decisive_line"]
    return "OK", f"{labout['category']:32s} rank={labout['initiating_rank']} " \
                 f"{(labout.get('decisive_file') or 'log.txt')}: {dl[:90] if dl else None}"


def main():
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    out = sys.argv[1]
    versions = read_versions(out)
    commands = read_tsv(os.path.join(out, "commands.tsv"), 3)
    status = read_tsv(os.path.join(out, "status.tsv"), 2)
    # default: the cases run_gpu.sh ran into OUTDIR (status.tsv), else every known case
    sel = sys.argv[2:] or [c for c in CASES if c in status] or list(CASES)
    bad = 0
    for cid in sel:
        if cid not in CASES:
            print(f"{cid}: unknown case id")
            bad += 1
            continue
        verdict, msg = label_case(out, cid, versions, commands, status.get(cid))
        bad += verdict != "OK"
        print(f"{verdict:9s} {cid:42s} {msg}")
    print(f"labels.py: {len(sel) - bad} of {len(sel)} cases labelled with their induced fault"
          + (f"; {bad} to look at (NOT SHOWN / NO LOG above)" if bad else ""))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
