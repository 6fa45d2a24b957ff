"""Writes label.json for every round75b case in POOL (default /tmp/h75b/pool) from what was induced.
decisive_line / also_acceptable are exact strings; each is checked to be a substring of a line of log.txt
(or of ranks/<decisive_file> for the per-rank-file cases).  Usage: python make_labels.py [POOL]"""
import json, os, sys

POOL = sys.argv[1] if len(sys.argv) > 1 else "/tmp/h75b/pool"
C = {}


def case(cid, cat, rank, dec, also=(), coll=(), root="", fix="", how="", fatal=True, dfile=None):
    C[cid] = dict(category=cat, rank=rank, dec=dec, also=list(also), coll=list(coll), root=root, fix=fix,
                  how=how, fatal=fatal, dfile=dfile)


PEER = "the other ranks' gloo 'Connection closed by peer' / 'Connection reset by peer' RuntimeError (logged with logger.exception)"
TR_TEAR = "torchrun SIGTERMs the survivors (exitcode -15) and prints ChildFailedError"
SP_TEAR = "mp.spawn 'Terminating process ... via signal SIGTERM' for the survivors"
DATA_FIX = "Fix the bad shard / loader on that rank (validate the index and files before training); the other ranks' errors are collateral."
NAN_FIX = "Clean/validate that rank's input data (drop non-finite samples) or guard the loss; the other ranks' connection errors are collateral."
HANG_FIX = "Find and bound the blocking call in that rank's data path (timeout/retry) so it reaches the collective; the other ranks' gloo timeouts are collateral."
KILL_FIX = "Find what killed that rank (host OOM killer / external SIGKILL: check dmesg and memory limits) and give it enough memory; the other ranks' errors are collateral."
MM_FIX = "Make every rank call the same collectives with the same tensor sizes (here the metrics tensor / the extra broadcast on one rank)."
TO = "Timed out waiting {ms}ms for {op} operation to complete"

# ---- stdlib logging + Filter: '%(asctime)s [RANK %(rank)s] %(levelname)s ...' ----
case("run-r75b-torchrun-std-raise-r2", "user.code_error", 2, "KeyError: 'shard_02/sample_000214'", [],
     [PEER, TR_TEAR],
     "Rank 2's data loader looked up sample key 'shard_02/sample_000214', which is missing from its shard index, so it raised KeyError at step 4 (logged with logger.exception, then re-raised).",
     DATA_FIX, "train75b.py --log-style std --fault raise --exc keyerror --bad-rank 2 --step 4 (torchrun 4 ranks)")
case("run-r75b-spawn-std-sigkill-r1", "mem.host_oom", 1, "process 1 terminated with signal SIGKILL", [],
     ["ranks 0 and 2: gloo 'Read error ... Connection reset by peer' logged with logger.exception", SP_TEAR],
     "Rank 1 was SIGKILLed at step 3 (no traceback), as the host OOM killer would do; the other ranks lost their gloo peer.",
     KILL_FIX, "train75b.py --spawn 3 --log-style std --fault sigkill --bad-rank 1 --step 3 (os.kill(os.getpid(), SIGKILL))")
case("run-r75b-torchrun-std-hang-r3", "dist.collective_timeout", 3,
     "RuntimeError: [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:129] " + TO.format(ms=20000, op="send"),
     [TO.format(ms=20000, op="recv")],
     ["ranks 0-2 time out in the DDP gradient all_reduce (send/recv)", TR_TEAR + " (rank 3 SIGTERMed while still sleeping)"],
     "Rank 3 blocked in its data loading at step 3 (sleep far beyond the 20 s process-group timeout) and never reached the DDP all_reduce, so ranks 0-2 hit the gloo timeout.",
     HANG_FIX, "train75b.py --log-style std --fault hang --bad-rank 3 --step 3 --pg-timeout 20 (torchrun 4 ranks)")
case("run-r75b-spawn-std-mismatch-r2", "dist.collective_mismatch", 2,
     "Received data size doesn't match expected size. Is there a distributed collective mismatch in your code?",
     ["process 1 terminated with signal SIGABRT"],
     ["rank 1 aborts (terminate called after throwing gloo::EnforceNotMet, SIGABRT) because it received rank 2's larger chunk",
      "ranks 0 and 2: 'Read error ... Connection reset by peer' logged with logger.exception", SP_TEAR],
     "At step 3 rank 2 all_reduced a metrics tensor with 12 elements (11 classes + loss) while ranks 0 and 1 used 11, so gloo's size check failed on a receiving rank, which aborted.",
     MM_FIX, "train75b.py --spawn 3 --log-style std --fault mismatch --mismatch-kind size --bad-rank 2 --step 3")
# ---- stdlib LoggerAdapter: 'rank=1/3' ----
case("run-r75b-torchrun-adapter-nan-r1", "user.code_error", 1,
     "FloatingPointError: non-finite loss (nan) at step 5 on rank 1; aborting before backward", [],
     ["ranks 0 and 2: 'Connection closed by peer' logged with logger.exception", TR_TEAR],
     "A NaN in rank 1's batch at step 5 made its loss NaN and the job's finite-loss check raised FloatingPointError on that rank.",
     NAN_FIX, "train75b.py --log-style adapter --fault nan --bad-rank 1 --step 5 (torchrun 3 ranks; x[5,7]=nan)")
# ---- python-json-logger ----
case("run-r75b-torchrun-jsonlog-raise-r1", "user.code_error", 1,
     "ValueError: record 1187 in shard_01.bin has 31 features, expected 32", [],
     [PEER + " (JSON exc_info)", TR_TEAR],
     "Rank 1's data loader found a record with 31 instead of 32 features in shard_01.bin at step 3 and raised ValueError (logged as JSON with exc_info, then re-raised).",
     DATA_FIX, "train75b.py --log-style jsonlog --fault raise --exc valueerror --bad-rank 1 --step 3 (torchrun 4 ranks)")
case("run-r75b-torchrun-jsonlog-nan-r3", "user.code_error", 3,
     "FloatingPointError: non-finite loss (nan) at step 4 on rank 3; aborting before backward", [],
     [PEER + " (JSON exc_info)", TR_TEAR, "GradScaler 'CUDA is not available' UserWarnings (benign)"],
     "A NaN in rank 3's batch at step 4 made its loss NaN and the job's finite-loss check raised FloatingPointError on that rank.",
     NAN_FIX, "train75b.py --log-style jsonlog --fault nan --bad-rank 3 --step 4 --amp (torchrun 4 ranks)")
# ---- json.dumps formatter ----
case("run-r75b-spawn-jsondumps-hang-r0", "dist.collective_timeout", 0, TO.format(ms=20000, op="send"),
     [TO.format(ms=20000, op="recv")],
     ["ranks 1 and 2 time out in the DDP gradient all_reduce (JSON 'exc' field)", SP_TEAR + " (rank 0 terminated while still sleeping)"],
     "Rank 0 blocked in its data loading at step 3 (sleep far beyond the 20 s process-group timeout) and never reached the DDP all_reduce, so ranks 1 and 2 hit the gloo timeout.",
     HANG_FIX, "train75b.py --spawn 3 --log-style jsondumps --fault hang --bad-rank 0 --step 3 --pg-timeout 20")
# ---- loguru ----
case("run-r75b-torchrun-loguru-sigkill-r3", "mem.host_oom", 3, "failed (exitcode: -9) local_rank: 3", [],
     ["ranks 0 and 2: 'Read error ... Connection reset by peer' logged by loguru", TR_TEAR],
     "Rank 3 was SIGKILLed at step 4 (no traceback), as the host OOM killer would do; torchrun reports its exit code -9 as the root cause.",
     KILL_FIX, "train75b.py --log-style loguru --fault sigkill --bad-rank 3 --step 4 (torchrun 4 ranks)")
case("run-r75b-spawn-loguru-raise-r0", "user.code_error", 0, "IndexError: list index out of range", [],
     ["ranks 1 and 2: 'Connection closed by peer' logged by loguru", SP_TEAR],
     "Rank 0's data loader indexed past the end of its batch-offset list at step 3 and raised IndexError (logged by loguru, then re-raised).",
     DATA_FIX, "train75b.py --spawn 3 --log-style loguru --fault raise --exc indexerror --bad-rank 0 --step 3")
case("run-r75b-torchrun-loguru-mismatch-detail-r1", "dist.collective_mismatch", 1,
     "RuntimeError: Detected mismatch between collectives on ranks. Rank 1 is running collective: CollectiveFingerPrint(SequenceNumber=18, OpType=ALLREDUCE, TensorShape=[12]",
     ["RuntimeError: Detected mismatch between collectives on ranks. Rank 0 is running collective: CollectiveFingerPrint(SequenceNumber=18, OpType=ALLREDUCE, TensorShape=[11]",
      "RuntimeError: Detected mismatch between collectives on ranks. Rank 2 is running collective: CollectiveFingerPrint(SequenceNumber=18, OpType=ALLREDUCE, TensorShape=[11]"],
     ["every rank reports the fingerprint mismatch (TORCH_DISTRIBUTED_DEBUG=DETAIL)", TR_TEAR],
     "With TORCH_DISTRIBUTED_DEBUG=DETAIL, the collective fingerprint check found rank 1 all_reducing a 12-element metrics tensor at step 3 while ranks 0 and 2 used 11 elements.",
     MM_FIX, "TORCH_DISTRIBUTED_DEBUG=DETAIL; train75b.py --log-style loguru --manual-grads --fault mismatch --mismatch-kind size --bad-rank 1 --step 3 (torchrun 3 ranks; no DDP because DDP + DETAIL segfaults on this build)")
# ---- structlog ----
case("run-r75b-torchrun-structlog-hang-r1", "dist.collective_timeout", 1, TO.format(ms=25000, op="recv"),
     [TO.format(ms=25000, op="send")],
     ["ranks 0 and 2 time out in the DDP gradient all_reduce (structlog exception='...')", TR_TEAR + " (rank 1 SIGTERMed while still sleeping)"],
     "Rank 1 blocked in its data loading at step 4 (sleep far beyond the 25 s process-group timeout) and never reached the DDP all_reduce, so ranks 0 and 2 hit the gloo timeout.",
     HANG_FIX, "train75b.py --log-style structlog --fault hang --bad-rank 1 --step 4 --pg-timeout 25 (torchrun 3 ranks)")
case("run-r75b-spawn-structlog-nan-r2", "user.code_error", 2,
     "FloatingPointError: non-finite loss (nan) at step 3 on rank 2; aborting before backward", [],
     ["ranks 0 and 1: 'Connection closed by peer' in structlog exception='...'", SP_TEAR],
     "A NaN in rank 2's batch at step 3 made its loss NaN and the job's finite-loss check raised FloatingPointError on that rank.",
     NAN_FIX, "train75b.py --spawn 3 --log-style structlog --fault nan --bad-rank 2 --step 3")
case("run-r75b-torchrun-structlog-raise-r3", "user.code_error", 3,
     "FileNotFoundError: [Errno 2] No such file or directory: '/home/user/job/data/shard_03/part-00002.npy'", [],
     [PEER + " (structlog exception='...')", TR_TEAR],
     "Rank 3's data loader tried to open a shard file that does not exist (data/shard_03/part-00002.npy) at step 2 and raised FileNotFoundError.",
     "Provide the missing shard file (or fix the data path / shard list for rank 3); the other ranks' errors are collateral.",
     "train75b.py --log-style structlog --fault raise --exc filenotfound --bad-rank 3 --step 2 (torchrun 4 ranks)")
# ---- Rich ----
case("run-r75b-spawn-rich-mismatch-bcast-r0", "dist.collective_mismatch", 0,
     "RuntimeError: Detected mismatch between collectives on ranks. Rank 2 is running collective: CollectiveFingerPrint(SequenceNumber=18, OpType=ALLREDUCE, TensorShape=[11]",
     ["following aspects:   Op type: BROADCASTvs ALLREDUCE  Tensor Tensor shapes: 1vs 11",
      "following aspects:   Op type: ALLREDUCEvs BROADCAST  Tensor Tensor shapes: 11vs 1",
      "collective: CollectiveFingerPrint(SequenceNumber=18, OpType=BROADCAST,"],
     ["every rank reports the fingerprint mismatch in a Rich traceback (message wrapped at 120 columns)", SP_TEAR],
     "With TORCH_DISTRIBUTED_DEBUG=DETAIL, the fingerprint check found rank 0 calling an extra BROADCAST at step 3 while ranks 1 and 2 called the metrics ALLREDUCE.",
     MM_FIX, "TORCH_DISTRIBUTED_DEBUG=DETAIL; train75b.py --spawn 3 --log-style rich --manual-grads --fault mismatch --mismatch-kind extra-bcast --bad-rank 0 --step 3")
case("run-r75b-torchrun-rich-sigkill-r2", "mem.host_oom", 2, "failed (exitcode: -9) local_rank: 2", [],
     [TR_TEAR + " (the survivors were SIGTERMed before they logged anything)"],
     "Rank 2 was SIGKILLed at step 3 right after logging 'loading batch' (no traceback), as the host OOM killer would do; torchrun reports its exit code -9.",
     KILL_FIX, "train75b.py --log-style rich --fault sigkill --bad-rank 2 --step 3 (torchrun 3 ranks)")
# ---- per-rank files logs/train_rank<r>.log (ranks/) ----
case("run-r75b-torchrun-files-raise-r2", "user.code_error", 2, "KeyError: 'shard_02/sample_000198'", [],
     ["ranks 1 and 3: 'Connection closed by peer' (their train_rank*.log and [rankN]: tracebacks on the console)", TR_TEAR],
     "Rank 2's data loader looked up sample key 'shard_02/sample_000198', missing from its shard index, and raised KeyError at step 3; each rank logs to its own train_rank<r>.log, the console only has the uncaught tracebacks and torchrun's summary.",
     DATA_FIX, "train75b.py --log-style files --fault raise --exc keyerror --bad-rank 2 --step 3 (torchrun 4 ranks; logs/ copied as ranks/)",
     dfile="train_rank2.log")
case("run-r75b-spawn-files-hang-r3", "dist.collective_timeout", 3, TO.format(ms=20000, op="send"),
     [TO.format(ms=20000, op="recv")],
     ["ranks 0-2 time out in the DDP gradient all_reduce (their train_rank*.log)", SP_TEAR + " (rank 3 terminated while still sleeping; its log stops after step 1)"],
     "Rank 3 blocked in its data loading at step 2 (sleep far beyond the 20 s process-group timeout) and never reached the DDP all_reduce, so ranks 0-2 hit the gloo timeout; train_rank3.log stops after step 1.",
     HANG_FIX, "train75b.py --spawn 4 --log-style files --fault hang --bad-rank 3 --step 2 --pg-timeout 20 (logs/ copied as ranks/)",
     dfile="train_rank0.log")
# ---- healthy ----
H_ROOT = "Healthy run: all ranks finish; only ordinary warnings (torchrun OMP_NUM_THREADS notice where torchrun is used, GradScaler 'CUDA is not available. Disabling.', dropped-samples warning)."
case("run-r75b-torchrun-std-healthy", "none", None, None, fatal=False, root=H_ROOT, fix="Nothing to fix.",
     how="train75b.py --log-style std --amp --steps 10 (torchrun 4 ranks)")
case("run-r75b-spawn-loguru-healthy", "none", None, None, fatal=False, root=H_ROOT, fix="Nothing to fix.",
     how="train75b.py --spawn 3 --log-style loguru --amp --steps 8")
case("run-r75b-torchrun-files-healthy", "none", None, None, fatal=False, root=H_ROOT, fix="Nothing to fix.",
     how="train75b.py --log-style files --amp --steps 8 (torchrun 3 ranks; logs/ copied as ranks/)")


def lines_of(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read().splitlines()


bad = 0
for cid, c in C.items():
    d = os.path.join(POOL, cid)
    if not os.path.isdir(d):
        print("missing case", cid); bad += 1; continue
    log = lines_of(os.path.join(d, "log.txt"))
    dec_src = lines_of(os.path.join(d, "ranks", c["dfile"])) if c["dfile"] else log
    every = list(log)
    if os.path.isdir(os.path.join(d, "ranks")):
        for fn in sorted(os.listdir(os.path.join(d, "ranks"))):
            every += lines_of(os.path.join(d, "ranks", fn))
    for s, src, what in [(c["dec"], dec_src, "decisive")] + [(a, every, "also") for a in c["also"]]:
        if s is not None and not any(s in ln for ln in src):
            print(f"{cid}: {what} not found: {s!r}"); bad += 1
    launcher = "mp.spawn" if "-spawn-" in cid else "torchrun"
    lab = {"id": cid,
           "source": f"real run: tests/corpus/generators/launchers/round75b/run_all.sh {cid}, torch 2.13.0 CPU, gloo",
           "category": c["category"], "fatal": c["fatal"], "decisive_line": c["dec"], "also_acceptable": c["also"],
           "initiating_rank": c["rank"], "collateral": c["coll"], "operator": None,
           "root_cause": c["root"], "fix": c["fix"], "launcher": launcher, "framework": "plain",
           "torch_version": "2.13.0", "genuine": False, "induced_how": c["how"],
           "confirmed_by": "induced", "confidence": "high"}
    if c["dfile"]:
        lab["decisive_file"] = c["dfile"]
    with open(os.path.join(d, "label.json"), "w") as f:
        json.dump(lab, f, indent=2, ensure_ascii=False); f.write("\n")
print(f"{len(C)} labels written, {bad} problems")
sys.exit(1 if bad else 0)
