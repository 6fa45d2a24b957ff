"""Writes label.json for every round79a case in POOL (default /tmp/h79a/pool) from what was induced.
decisive/also patterns are regexes; the label stores the exact text each matched (first matching line of log.txt;
for a --log-dir run whose console lacks it, the first matching line of the culprit's ranks/ files, named in
decisive_file).  Lines are split on '\n' only (tqdm's '\r' updates stay inside one line, as grep sees them).
Usage: python make_labels.py [POOL]"""
import json
import os
import re
import sys

POOL = sys.argv[1] if len(sys.argv) > 1 else "/tmp/h79a/pool"
C = {}
T = r"(\[default\d\]:)?"  # --tee prefix


def case(cid, cat, rank, dec, also=(), coll=(), root="", fix="", how="", fatal=True):
    C[cid] = dict(category=cat, rank=rank, dec=dec, also=list(also), coll=list(coll), root=root, fix=fix, how=how,
                  fatal=fatal)


NOISE = ("every rank's env dump, tqdm bar (one long carriage-return line), per-step loss lines, eval/checkpoint lines "
         "and a warning repeated every step ({w}) are ordinary output")
SUM = "torchrun ChildFailedError summary (its 'first observed failure' can be a rank that only reacted)"
PEER = "the other ranks fail in their next collective with gloo 'Connection closed by peer' / 'Connection reset by peer'"
TERM = "torchrun sends SIGTERM to the surviving ranks (exitcode -15 in the summary)"
SPAWN_TERM = "mp.spawn terminates the other processes"

# ---- healthy ----
case("run-r79a-torchrun-healthy-long", "none", None, None, [],
     ["torchrun OMP_NUM_THREADS banner", "c10d INFO lines (TORCH_CPP_LOG_LEVEL=INFO) incl. 'uv_loop_close failed' at teardown",
      NOISE.format(w="FutureWarning: torch.cpu.amp.autocast is deprecated")],
     "Healthy run: 1000 steps on 4 ranks, exits 0; only the usual launcher/c10d/deprecation noise.", "Nothing to fix.",
     "torchrun 4 ranks, TORCH_CPP_LOG_LEVEL=INFO; longjob.py --steps 1000 --warn autocast --warn-always FutureWarning",
     fatal=False)
case("run-r79a-spawn-healthy-long", "none", None, None, [],
     ["tqdm bars of 3 ranks redrawn every step (one very long carriage-return line), env dumps, loss lines every 100 steps, eval/checkpoint lines, one UserWarning per rank"],
     "Healthy run: 2000 steps on 3 ranks under mp.spawn, exits 0; only the usual warnings.", "Nothing to fix.",
     "mp.spawn 3 ranks; longjob.py --spawn 3 --steps 2000 --log-every 100 --bar-interval 0 --warn tensorcopy (tqdm redraws every step: one very long line)",
     fatal=False)
case("run-r79a-torchrun-tee-healthy-long", "none", None, None, [],
     ["torchrun OMP_NUM_THREADS banner",
      NOISE.format(w="UserWarning: To get the last learning rate computed by the scheduler, please use `get_last_lr()`") + "; DDP's 'Grad strides do not match bucket view strides' UserWarning once per rank"],
     "Healthy run: 1500 steps on 3 ranks (--tee 3), exits 0; only the usual DDP/scheduler warnings.", "Nothing to fix.",
     "torchrun 3 ranks --tee 3; longjob.py --steps 1500 --warn getlr,strides --warn-always UserWarning --log-every 3",
     fatal=False)

# ---- late exceptions in user code ----
case("run-r79a-torchrun-keyerror-r2", "user.code_error", 2, r"\[rank2\]: KeyError: 'label'",
     [r"failed \(exitcode: 1\) local_rank: 2"], [PEER, TERM, SUM, NOISE.format(w="FutureWarning: torch.cpu.amp.autocast")],
     "At step 893 rank 2's Dataset.__getitem__ read a record without a 'label' field (written by an old exporter) and raised KeyError in the DataLoader fetch.",
     "Validate / re-export the data shard so every record has 'label' (or skip records without it in __getitem__).",
     "torchrun 4 ranks; longjob.py --steps 1000 --mode keyerror --culprit 2 --at-step 893 (the sample rank 2 reads at step 893 lacks 'label')")
case("run-r79a-torchrun-tee-ragged-r1", "user.code_error", 1,
     T + r"\[rank1\]: ValueError: expected sequence of length 64 at dim 1 \(got 63\)",
     [r"failed \(exitcode: 1\) local_rank: 1"], [PEER, TERM, SUM, NOISE.format(w="UserWarning: To copy construct from a tensor")],
     "At step 1337 rank 1's collate_fn met a truncated 63-token record and torch.tensor() of the ragged token lists raised ValueError.",
     "Pad/truncate records to 64 tokens in the dataset (or a padding collate_fn), or drop the truncated record.",
     "torchrun 3 ranks --tee 3; longjob.py --steps 1500 --mode ragged --culprit 1 --at-step 1337 (one record of rank 1's step-1337 batch has 63 tokens)")
case("run-r79a-spawn-index-r3", "user.code_error", 3, r"IndexError: index \d+ is out of bounds for dimension 0 with size 4096",
     [r"-- Process 3 terminated with the following error:"], [PEER, SPAWN_TERM, NOISE.format(w="UserWarning: get_last_lr()")],
     "At step 911 rank 3 read a record whose feature id (from a newer feature table) is past the end of the 4096-row feature table, so indexing it raised IndexError in forward.",
     "Use the feature table that matches the data (or remap / validate feature ids when loading).",
     "mp.spawn 4 ranks, tqdm position=rank; longjob.py --spawn 4 --steps 1000 --mode index --culprit 3 --at-step 911")
case("run-r79a-torchrun-logdir-ckptdir-r0", "user.code_error", 0,
     r"RuntimeError: Parent directory ckpt/run-\d/latest does not exist\.",
     [r"failed \(exitcode: 1\) local_rank: 0"], [PEER + " (in their barrier after the checkpoint)", TERM, SUM,
                                                 "per-rank output only in ranks/ (--redirects 3); @record puts rank 0's traceback into the console summary"],
     "Rank 0 saved the step-750 checkpoint into ckpt/run-N/latest/, a directory that was never created, and torch.save raised RuntimeError.",
     "Create the checkpoint directory (os.makedirs(..., exist_ok=True)) before torch.save, or fix the configured checkpoint path.",
     "torchrun 4 ranks --log-dir --redirects 3, @record; longjob.py --steps 1000 --mode ckpt-dir --culprit 0 --at-step 750")

# ---- NaN check ----
for cid, r, k, how in [
        ("run-r79a-torchrun-nan-r2", 2, 874, "torchrun 4 ranks, TORCH_CPP_LOG_LEVEL=INFO TORCH_DISTRIBUTED_DEBUG=INFO; longjob.py --steps 1000 --mode nan --culprit 2 --at-step 874"),
        ("run-r79a-spawn-nan-r1", 1, 1420, "mp.spawn 3 ranks; longjob.py --spawn 3 --steps 1500 --mode nan --culprit 1 --at-step 1420"),
        ("run-r79a-torchrun-tee-nan-r0", 0, 1111, "torchrun 3 ranks --tee 3; longjob.py --steps 1200 --mode nan --culprit 0 --at-step 1111 --warn strides --warn-always UserWarning")]:
    case(cid, "user.code_error", r,
         (T if "tee" in cid else "") + rf"(\[rank{r}\]: )?FloatingPointError: non-finite loss \(nan\) at step {k} on rank {r}; aborting before backward",
         [rf"failed \(exitcode: 1\) local_rank: {r}", rf"-- Process {r} terminated with the following error:"],
         [PEER, SPAWN_TERM if "spawn" in cid else TERM] + ([] if "spawn" in cid else [SUM]),
         f"At step {k} rank {r}'s batch read a corrupted (NaN) row of its feature table, its loss became NaN and the job's finite-loss check raised FloatingPointError.",
         "Find and repair the corrupted feature row / input data (validate inputs for non-finite values); the other ranks' errors are collateral.",
         how)

# ---- SIGKILL ----
case("run-r79a-torchrun-sigkill-r3", "mem.host_oom", 3, r"failed \(exitcode: -9\) local_rank: 3 \(pid: \d+\)",
     [r"Signal 9 \(SIGKILL\) received by PID \d+"], [PEER, TERM, SUM, "c10d INFO lines (TORCH_CPP_LOG_LEVEL=INFO)"],
     "Rank 3 was SIGKILLed at step 931 (no traceback; typically the host OOM killer), and the other ranks lost their gloo peer.",
     "Find what killed rank 3 (dmesg / the scheduler's OOM report) and reduce its host memory use or raise the memory limit.",
     "torchrun 4 ranks, TORCH_CPP_LOG_LEVEL=INFO; longjob.py --steps 1000 --mode sigkill --culprit 3 --at-step 931 (os.kill(os.getpid(), SIGKILL))")
case("run-r79a-torchrun-logdir-sigkill-r1", "mem.host_oom", 1, r"failed \(exitcode: -9\) local_rank: 1 \(pid: \d+\)",
     [r"Signal 9 \(SIGKILL\) received by PID \d+"], [PEER + " (in ranks/)", TERM, SUM],
     "Rank 1 was SIGKILLed at step 1788 (no traceback; typically the host OOM killer), and the other ranks lost their gloo peer.",
     "Find what killed rank 1 (dmesg / the scheduler's OOM report) and reduce its host memory use or raise the memory limit.",
     "torchrun 3 ranks --log-dir --redirects 3; longjob.py --steps 2000 --mode sigkill --culprit 1 --at-step 1788")
case("run-r79a-spawn-sigkill-r2", "mem.host_oom", 2, r"process 2 terminated with signal SIGKILL", [],
     [PEER, SPAWN_TERM],
     "Rank 2 was SIGKILLed at step 1105 (no traceback; typically the host OOM killer), and the other ranks lost their gloo peer.",
     "Find what killed rank 2 (dmesg / the scheduler's OOM report) and reduce its host memory use or raise the memory limit.",
     "mp.spawn 3 ranks; longjob.py --spawn 3 --steps 1200 --log-every 100 --bar-interval 0 --mode sigkill --culprit 2 --at-step 1105 (tqdm redraws every step)")

# ---- hang past the process-group timeout ----
TO = r"Timed out waiting \d+ms for (recv|send) operation to complete"
for cid, r, k, t, how in [
        ("run-r79a-torchrun-hang-r1", 1, 902, 20, "torchrun 3 ranks; longjob.py --steps 1000 --log-every 50 --bar-interval 0 --mode hang --culprit 1 --at-step 902 --pg-timeout 20 (tqdm redraws every step)"),
        ("run-r79a-torchrun-tee-hang-r3", 3, 733, 25, "torchrun 4 ranks --tee 3, TORCH_CPP_LOG_LEVEL=INFO; longjob.py --steps 800 --mode hang --culprit 3 --at-step 733 --pg-timeout 25"),
        ("run-r79a-spawn-hang-r0", 0, 950, 20, "mp.spawn 3 ranks; longjob.py --spawn 3 --steps 1000 --mode hang --culprit 0 --at-step 950 --pg-timeout 20")]:
    case(cid, "dist.collective_timeout", r, TO, [],
         [f"the other ranks' DDP gradient all_reduce times out after {t} s (gloo 'Timed out waiting {t*1000}ms'); rank {r} itself prints nothing",
          (SPAWN_TERM + " (the silent rank included)") if "spawn" in cid else TERM + " incl. the silent rank"],
         f"Rank {r} stalled at step {k} (a blocking call that never returned) before its forward/backward, so the other ranks' gradient all_reduce timed out after the {t} s process-group timeout.",
         f"Find what rank {r} was blocked on (py-spy dump of that rank at the time of the timeout) and fix it; raising the timeout only hides it.",
         how + " (rank sleeps 600 s)")

# ---- collective size mismatch ----
case("run-r79a-torchrun-mismatch-r2", "dist.collective_mismatch", 2,
     r"op\.preamble\.length <= op\.nbytes\. \d+ vs \d+\. Received data size doesn't match expected size\. Is there a distributed collective mismatch in your code\?",
     [r"Received data size doesn't match expected size"], [PEER, TERM, SUM, "the receiving rank aborts (terminate called after throwing gloo::EnforceNotMet, exitcode -6)"],
     "From the eval at step 850 on, rank 2 all_reduced a prediction histogram of 16 bins (a stale 16-class label map) where the other ranks used 10, so the all_reduce sizes differed (18 vs 12 floats) and gloo aborted on the size check.",
     "Make every rank use the same label map / number of classes so the eval all_reduce has the same shape everywhere.",
     "torchrun 4 ranks; longjob.py --steps 1000 --eval-every 50 --mode mismatch --culprit 2 --at-step 850")
case("run-r79a-torchrun-logdir-mismatch-detail-r1", "dist.collective_mismatch", 1,
     r"Detected mismatch between collectives on ranks\. Rank 1 is running collective: CollectiveFingerPrint\(SequenceNumber=\d+, OpType=ALLREDUCE, TensorShape=\[18\]",
     [r"Detected mismatch between collectives on ranks\."], [
         "ranks 0 and 2 report the same mismatch from their side (TensorShape=[12] vs rank 1's [18])", TERM, SUM,
         "per-rank output only in ranks/ (--redirects 3)"],
     "From the eval at step 700 on, rank 1 all_reduced a prediction histogram of 16 bins (a stale 16-class label map) where the other ranks used 10; TORCH_DISTRIBUTED_DEBUG=DETAIL's fingerprint check reported TensorShape=[18] vs [12].",
     "Make every rank use the same label map / number of classes so the eval all_reduce has the same shape everywhere.",
     "torchrun 3 ranks --log-dir --redirects 3, TORCH_DISTRIBUTED_DEBUG=DETAIL; longjob.py --no-ddp --steps 800 --eval-every 50 --mode mismatch --culprit 1 --at-step 700")

# ---- host OOM in a memory cgroup ----
case("run-r79a-torchrun-hostoom-r2", "mem.host_oom", 2, r"failed \(exitcode: -9\) local_rank: 2 \(pid: \d+\)",
     [r"Signal 9 \(SIGKILL\) received by PID \d+"], [PEER, TERM, SUM, "rank 2's 'debug cache: N entries' lines show the growth"],
     "From step 900 on rank 2 kept 32 MiB of debug activations per step; its 1.5 GiB memory cgroup filled and the kernel OOM killer SIGKILLed it.",
     "Stop retaining per-step tensors (clear / bound the debug cache) or give the job more host memory.",
     "torchrun 4 ranks; rank 2 alone in a cgroup v1 with memory(.memsw).limit_in_bytes=1.5 GiB; longjob.py --steps 1000 --mode hostoom --culprit 2 --at-step 900")


def find_in(text, pat):
    for line in text.split("\n"):
        m = re.search(pat, line)
        if m:
            return m.group(0)
    return None


for cid, c in C.items():
    d = os.path.join(POOL, cid)
    if not os.path.isfile(os.path.join(d, "log.txt")):
        print("MISSING", cid); continue
    log = open(os.path.join(d, "log.txt"), errors="replace").read()
    dfile = None
    dec = find_in(log, c["dec"]) if c["dec"] else None
    if c["dec"] and not dec and os.path.isdir(os.path.join(d, "ranks")):
        for root, _, files in sorted(os.walk(os.path.join(d, "ranks"))):
            for f in sorted(files):
                p = os.path.join(root, f)
                hit = find_in(open(p, errors="replace").read(), c["dec"])
                if hit and (f"/{c['rank']}/" in p):
                    dec, dfile = hit, os.path.relpath(p, os.path.join(d, "ranks")); break
            if dfile:
                break
    if c["dec"] and not dec:
        print("NO DECISIVE", cid, c["dec"]); continue
    also = [x for x in (find_in(log, p) for p in c["also"]) if x and x != dec]
    lab = {"id": cid, "source": f"real run: tests/corpus/generators/launchers/round79a/run_all.sh {cid}, torch 2.13.0 CPU, gloo",
           "category": c["category"], "fatal": c["fatal"], "decisive_line": dec, "also_acceptable": also,
           "initiating_rank": c["rank"], "collateral": c["coll"], "operator": None, "root_cause": c["root"], "fix": c["fix"],
           "launcher": "torchrun" if "torchrun" in cid else "mp.spawn", "framework": "plain", "genuine": False,
           "induced_how": c["how"], "confirmed_by": "induced", "confidence": "high"}
    if dfile:
        lab["decisive_file"] = dfile
    json.dump(lab, open(os.path.join(d, "label.json"), "w"), indent=1, ensure_ascii=False)
    print("ok", cid, c["category"], c["rank"], repr(dec)[:150], dfile or "")
