"""Write label.json for every round-66a case in POOL (usage: python make_labels.py POOL).

Decisive lines that carry run-dependent numbers (gloo's "N vs M" byte counts) are read back from the log with a
regex; every decisive line is checked to be an exact substring of one line of the named file."""
import json, os, re, sys

POOL = sys.argv[1]
SRC = "real run: tests/corpus/generators/launchers/round66a/run_all.sh (par66.py {args}), torch 2.13.0 CPU, gloo"
TMO = r"Timed out waiting \d+ms for (send|recv) operation to complete"
ENF = r"op\.preamble\.length <= op\.nbytes\. \d+ vs \d+\. Received data size doesn't match expected size"
FIX_MM = ("Make every rank build the same model/tensor shapes (same config, same split), so the sizes exchanged "
          "by the collective or pipeline send/recv agree.")
FIX_RAISE = "Fix the data/code path that raises on that rank (validate the batch before it enters the stage)."
FIX_KILL = "Find why the rank was SIGKILLed (host OOM killer, memory limit, external kill) and give it the memory it needs."
FIX_HANG = "Find what blocks the silent rank before its communication (slow I/O, stuck reload) or raise the timeout."

C = {}
def case(id_, **kw):
    C[id_] = kw

# ---------------- console
case("run-r66a-pp-gpipe-raise", args="MODE=pp SCHED=gpipe FAULT=raise FAULT_RANK=2 FAULT_STEP=2 FAULT_MB=1",
     cat="user.code_error", rank=2, dec="ValueError: micro-batch 1 of step 2 has 0 tokens after filtering (min_len=4)",
     coll=["[Stage 2] failed to run forward", "Connection closed by peer", "failed (exitcode: 1) local_rank: 2"],
     rc="The forward of pipeline stage 2 (rank 2) raised a ValueError on micro-batch 1 of step 3; the schedule wrapped it in 'failed to run forward' and the neighbouring stages lost their gloo peer.",
     fix=FIX_RAISE, how="FAULT=raise: rank 2's PipelineStage submodule raises ValueError in forward (ScheduleGPipe, step index 2, micro-batch 1)")
case("run-r66a-pp-gpipe-shape", args="MODE=pp SCHED=gpipe FAULT=shape FAULT_RANK=1 FAULT_STEP=2 FAULT_MB=1",
     cat="dist.collective_mismatch", rank=1, dec=ENF, conf="medium",
     coll=["terminate called after throwing an instance of 'gloo::EnforceNotMet'", "Connection reset by peer",
           "failed (exitcode: -6) local_rank: 2"],
     rc="Pipeline stage 1 (rank 1) returned an activation of shape (2, 32) instead of (2, 16) after the static shapes had been fixed in step 1; gloo aborted the RECEIVING stage (rank 2, SIGABRT) with the size enforce, so the log points at rank 2 while the sender is rank 1 (inferred from the pipeline order and rank 1's 'variant wide' log line).",
     fix=FIX_MM, how="FAULT=shape: at step index 2, micro-batch 1, rank 1's stage forward returns torch.cat([out, x], -1)")
case("run-r66a-pp-1f1b-sigkill", args="MODE=pp SCHED=1f1b FAULT=sigkill FAULT_RANK=3 FAULT_STEP=2 FAULT_MB=2",
     cat="mem.host_oom", rank=3, dec="failed (exitcode: -9) local_rank: 3",
     coll=["Connection reset by peer", "Signal 9 (SIGKILL) received by PID"],
     rc="The last pipeline stage (rank 3) was SIGKILLed in its forward (no traceback); its neighbour stage's gloo p2p failed with a connection reset.",
     fix=FIX_KILL, how="FAULT=sigkill: rank 3 os.kill(getpid(), SIGKILL) in its stage forward, Schedule1F1B step index 2, micro-batch 2")
case("run-r66a-tp-shape", args="MODE=tp FAULT=shape FAULT_RANK=2",
     cat="dist.collective_mismatch", rank=2, dec=ENF,
     coll=["terminate called after throwing an instance of 'gloo::EnforceNotMet'", "failed (exitcode: -6) local_rank: 2"],
     rc="Rank 2 built its MLP with ffn_hidden=48 while the others used 64, so during parallelize_module (ColwiseParallel weight scatter from rank 0) it received a larger shard than its buffer and gloo aborted it.",
     fix=FIX_MM, how="FAULT=shape: rank 2 builds MLP(hidden=48) instead of 64 before parallelize_module on a 1-D mesh")
case("run-r66a-funcol-shape", args="MODE=funcol FAULT=shape FAULT_RANK=3 FAULT_STEP=2",
     cat="dist.collective_mismatch", rank=3, dec=ENF,
     coll=["terminate called after throwing an instance of 'gloo::EnforceNotMet'", "Connection reset by peer",
           "failed (exitcode: -6) local_rank: 3"],
     rc="Rank 3 passed a half-width feature tensor (8 instead of 16 features) to the functional all_reduce / all_gather_tensor; the sizes disagreed and gloo aborted rank 3 itself with the size enforce.",
     fix=FIX_MM, how="FAULT=shape: at step index 2 rank 3 slices feats[:, :8] before funcol.all_reduce / all_gather_tensor")
case("run-r66a-dtensor-shape", args="MODE=dtensor FAULT=shape FAULT_RANK=1 FAULT_STEP=3",
     cat="dist.collective_mismatch", rank=1, dec=ENF,
     coll=["terminate called after throwing an instance of 'gloo::EnforceNotMet'", "Connection reset by peer",
           "failed (exitcode: -6) local_rank: 1"],
     rc="Rank 1's local shard had 5 rows instead of 8 when DTensor.from_local(Shard(0), run_check=False).redistribute(Replicate()) all-gathered it; the uneven sizes made gloo abort rank 1.",
     fix=FIX_MM + " For uneven shards pass shape=/stride= to DTensor.from_local.",
     how="FAULT=shape: at step index 3 rank 1 creates a (5, 16) local tensor instead of (8, 16) before redistribute")
case("run-r66a-tp-raise-rank0", args="MODE=tp FAULT=raise FAULT_RANK=0 FAULT_STEP=2",
     cat="user.code_error", rank=0, dec="KeyError: '<unk>'",
     coll=["Connection closed by peer", "failed (exitcode: 1) local_rank: 0"],
     rc="Rank 0 raised KeyError('<unk>') in its own code before the tensor-parallel forward of step 3; the other TP ranks lost their gloo peer.",
     fix=FIX_RAISE, how="FAULT=raise: rank 0 looks up a missing vocab key before the TP forward at step index 2")
case("run-r66a-healthy-funcol", args="MODE=funcol", healthy=True,
     rc="Healthy run: functional-collective training finished; only a FutureWarning for all_gather_tensor and the 'unwaited collective calls' warning at process exit.")
# ---------------- --tee 3
case("run-r66a-tee-pp-interleaved-raise", args="MODE=pp SCHED=interleaved FAULT=raise FAULT_RANK=1 FAULT_STAGE=5 FAULT_STEP=1 FAULT_MB=2, torchrun --tee 3",
     cat="user.code_error", rank=1, dec="ValueError: micro-batch 2 of step 1 has 0 tokens after filtering (min_len=4)",
     coll=["_PipelineScheduleRuntime caught exception at step 21 when running action 5F2", "[Stage 5] failed to run forward",
           "Connection closed by peer", "failed (exitcode: 1) local_rank: 1"],
     rc="Virtual stage 5 (rank 1) of a ScheduleInterleaved1F1B pipeline raised a ValueError in its forward on micro-batch 2; the runtime printed the schedule table and the other ranks lost their gloo peer.",
     fix=FIX_RAISE, how="FAULT=raise FAULT_STAGE=5: rank 1's second virtual stage raises in forward at step index 1, micro-batch 2")
case("run-r66a-tee-pp-1f1b-hang", args="MODE=pp SCHED=1f1b FAULT=hang FAULT_RANK=2 FAULT_STEP=2 FAULT_MB=1 HANG_S=45, torchrun --tee 3",
     cat="dist.collective_timeout", rank=2, dec=TMO,
     coll=["failed (exitcode: 1) local_rank:"],
     rc="Pipeline stage 2 (rank 2) stalled 45 s in its forward (silent); the batched p2p of stages 1, 3 and 0 timed out after the 20 s process-group timeout.",
     fix=FIX_HANG, how="FAULT=hang: rank 2 sleeps 45 s in its stage forward (Schedule1F1B, step index 2, micro-batch 1), PG timeout 20 s")
case("run-r66a-tee-tp2d-sigkill", args="MODE=tp2d FAULT=sigkill FAULT_RANK=1 FAULT_STEP=3, torchrun --tee 3",
     cat="mem.host_oom", rank=1, dec="failed (exitcode: -9) local_rank: 1",
     coll=["Connection reset by peer", "Signal 9 (SIGKILL) received by PID"],
     rc="Rank 1 of a 2-D (dp=2, tp=2) tensor-parallel job was SIGKILLed (no traceback); its TP and DP peers failed with connection resets.",
     fix=FIX_KILL, how="FAULT=sigkill: rank 1 SIGKILLs itself before the TP forward at step index 3")
case("run-r66a-tee-funcol-shape-detail", args="TORCH_DISTRIBUTED_DEBUG=DETAIL MODE=funcol FAULT=shape FAULT_RANK=2 FAULT_STEP=1, torchrun --tee 3",
     cat="dist.collective_mismatch", rank=2, dec="Detected mismatch between collectives on ranks",
     coll=["unwaited collective calls", "failed (exitcode: 1) local_rank:"],
     rc="Rank 2 called the functional all_reduce with a tensor of shape [8] while the others used [16]; with TORCH_DISTRIBUTED_DEBUG=DETAIL the wrapper process group reported the fingerprint mismatch on every rank.",
     fix=FIX_MM, how="FAULT=shape: at step index 1 rank 2 slices feats[:, :8] before funcol.all_reduce; TORCH_DISTRIBUTED_DEBUG=DETAIL")
case("run-r66a-tee-pptrace-raise-rank0", args="MODE=pptrace FAULT=raise FAULT_RANK=0 FAULT_STEP=3, torchrun --tee 3",
     cat="user.code_error", rank=0, dec="ValueError: micro-batch 1 of step 3 has 0 tokens after filtering (min_len=4)",
     coll=["[Stage 0] failed to run forward", "Connection closed by peer", "failed (exitcode: 1) local_rank: 0"],
     rc="Stage 0 (rank 0) of a pipeline() / SplitPoint traced pipeline raised a ValueError in its forward on micro-batch 1; the downstream stages lost their gloo peer.",
     fix=FIX_RAISE, how="FAULT=raise: rank 0's traced stage forward raises ValueError at step index 3, micro-batch 1 (ScheduleGPipe)")
case("run-r66a-tee-tp-hang", args="MODE=tp FAULT=hang FAULT_RANK=3 FAULT_STEP=2 HANG_S=45, torchrun --tee 3",
     cat="dist.collective_timeout", rank=3, dec=TMO,
     coll=["failed (exitcode: 1) local_rank:"],
     rc="Rank 3 stalled 45 s before the tensor-parallel forward of step 3 (silent); the RowwiseParallel all-reduce on ranks 0-2 timed out after the 20 s process-group timeout.",
     fix=FIX_HANG, how="FAULT=hang: rank 3 sleeps 45 s before the TP forward at step index 2, PG timeout 20 s")
case("run-r66a-tee-healthy-pp-interleaved-noisy", args="MODE=pp SCHED=interleaved NOISY=1, torchrun --tee 3", healthy=True,
     rc="Healthy run: interleaved 1F1B pipeline finished; a UserWarning and a logger WARNING about running on CPU only.")
# ---------------- --log-dir D --redirects 3
case("run-r66a-logdir-pp-interleaved-shape", args="MODE=pp SCHED=interleaved FAULT=shape FAULT_RANK=2 FAULT_STAGE=6 FAULT_STEP=1 FAULT_MB=0, torchrun --log-dir D --redirects 3",
     cat="dist.collective_mismatch", rank=2, dec=ENF, file="attempt_0/3/stderr.log", conf="medium",
     coll=["Connection reset by peer", "failed (exitcode: -6) local_rank: 3"],
     rc="Virtual stage 6 (rank 2) of an interleaved pipeline returned a (2, 32) activation instead of (2, 16); gloo aborted the RECEIVING stage 7 (rank 3) with the size enforce, so the failing file is rank 3's while the sender is rank 2 (inferred from the stage order and rank 2's 'variant wide' log line).",
     fix=FIX_MM, how="FAULT=shape FAULT_STAGE=6: at step index 1, micro-batch 0, rank 2's stage 6 returns torch.cat([out, x], -1)")
case("run-r66a-logdir-tp2d-raise", args="MODE=tp2d FAULT=raise FAULT_RANK=3 FAULT_STEP=2, torchrun --log-dir D --redirects 3",
     cat="user.code_error", rank=3, dec="KeyError: '<unk>'", file="attempt_0/3/stderr.log",
     coll=["Connection closed by peer", "failed (exitcode: 1) local_rank: 3"],
     rc="Rank 3 of a 2-D (dp=2, tp=2) tensor-parallel job raised KeyError('<unk>') before its forward at step 3; its TP/DP peers lost their gloo connection.",
     fix=FIX_RAISE, how="FAULT=raise: rank 3 looks up a missing vocab key before the TP forward at step index 2")
case("run-r66a-logdir-tp2d-hang-rank0", args="MODE=tp2d FAULT=hang FAULT_RANK=0 FAULT_STEP=2 HANG_S=45, torchrun --log-dir D --redirects 3",
     cat="dist.collective_timeout", rank=0, dec=TMO, file="FIRST_TIMEOUT",
     coll=["failed (exitcode: 1) local_rank: 1"],
     rc="Rank 0 of a 2-D (dp=2, tp=2) tensor-parallel job stalled 45 s before its forward (silent); its TP peer and the DP all-reduces on the other ranks timed out after 20 s.",
     fix=FIX_HANG, how="FAULT=hang: rank 0 sleeps 45 s before the TP forward at step index 2; mesh sub-groups get a 20 s gloo timeout via backend_override")
case("run-r66a-logdir-pptrace-sigkill", args="MODE=pptrace FAULT=sigkill FAULT_RANK=2 FAULT_STEP=2, torchrun --log-dir D --redirects 3",
     cat="mem.host_oom", rank=2, dec="failed (exitcode: -9) local_rank: 2",
     coll=["Connection closed by peer", "Connection reset by peer", "Signal 9 (SIGKILL) received by PID"],
     rc="Stage 2 (rank 2) of a pipeline() traced pipeline was SIGKILLed in its forward (no traceback); stages 1 and 3 failed with connection errors.",
     fix=FIX_KILL, how="FAULT=sigkill: rank 2 SIGKILLs itself in its traced stage forward at step index 2, micro-batch 1")
case("run-r66a-logdir-tp2d-shape", args="MODE=tp2d FAULT=shape FAULT_RANK=2, torchrun --log-dir D --redirects 3",
     cat="dist.collective_mismatch", rank=2, dec=ENF, file="attempt_0/2/stderr.log",
     coll=["Connection reset by peer", "failed (exitcode: -6) local_rank: 2"],
     rc="Rank 2 built its MLP with ffn_hidden=48 while the others used 64, so parallelize_module's ColwiseParallel shard scatter on its tp sub-mesh delivered more bytes than its buffer and gloo aborted it.",
     fix=FIX_MM, how="FAULT=shape: rank 2 builds MLP(hidden=48) instead of 64 before parallelize_module on the tp dim of a (2, 2) mesh")
case("run-r66a-logdir-healthy-tp2d-noisy", args="MODE=tp2d NOISY=1, torchrun --log-dir D --redirects 3", healthy=True,
     rc="Healthy run: 2-D (dp x tp) tensor-parallel training finished; UserWarning and logger WARNING about running on CPU only.")


def lines_of(path):
    with open(path, errors="replace") as f:
        return f.read().splitlines()


for cid, k in C.items():
    d = os.path.join(POOL, cid)
    if not os.path.isdir(d):
        print("missing", cid); continue
    lab = {"id": cid, "source": SRC.format(args=k["args"]), "launcher": "torchrun", "framework": "plain",
           "genuine": False, "confirmed_by": "induced"}
    if k.get("healthy"):
        lab.update(category="none", fatal=False, decisive_line=None, also_acceptable=[], initiating_rank=None,
                   collateral=[], operator=None, root_cause=k["rc"], fix="Nothing to fix.",
                   induced_how="no fault injected", confidence="high")
    else:
        f = k.get("file")
        if f == "FIRST_TIMEOUT":          # the waiting rank torchrun saw fail first
            m = re.search(r"failed \(exitcode: 1\) local_rank: (\d+)", open(os.path.join(d, "log.txt")).read())
            f = f"attempt_0/{m.group(1)}/stderr.log"
            k["coll"] = [f"failed (exitcode: 1) local_rank: {m.group(1)}"]
        path = os.path.join(d, "ranks", f) if f else os.path.join(d, "log.txt")
        ls = lines_of(path)
        dec = k["dec"]
        if dec in (ENF, TMO):            # first matching line of the file; for timeouts the other op is also fine
            dec = next(re.search(dec, l).group(0) for l in ls if re.search(dec, l))
            if k["dec"] == TMO:
                other = dec.replace("send", "recv") if "send" in dec else dec.replace("recv", "send")
                k["also"] = [other]
        assert any(dec in l for l in ls), (cid, dec)
        for a in k.get("also", []):
            if not any(a in l for l in ls):
                k["also"].remove(a)
        alltext = open(os.path.join(d, "log.txt"), errors="replace").read()
        if os.path.isdir(os.path.join(d, "ranks")):
            for root, _, fs in os.walk(os.path.join(d, "ranks")):
                for x in fs:
                    alltext += open(os.path.join(root, x), errors="replace").read()
        coll = [c for c in k["coll"] if c in alltext]
        lab.update(category=k["cat"], fatal=True, decisive_line=dec, also_acceptable=k.get("also", []),
                   initiating_rank=k["rank"], collateral=coll, operator=None, root_cause=k["rc"], fix=k["fix"],
                   induced_how=k["how"], confidence=k.get("conf", "high"))
        if f:
            lab["decisive_file"] = f
    with open(os.path.join(d, "label.json"), "w") as fh:
        json.dump(lab, fh, indent=1)
    print(cid, lab["category"], lab["initiating_rank"], lab.get("decisive_file", "log.txt"), repr(lab["decisive_line"]))
