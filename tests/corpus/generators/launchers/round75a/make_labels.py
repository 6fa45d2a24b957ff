"""Writes label.json for every round75a case in POOL (default /tmp/h75a/pool) from what was induced.
decisive/also patterns are regexes; the label stores the exact text each matched (first matching line of log.txt;
for a --log-dir run whose console lacks it, the first matching line of the ranks/ files, named in decisive_file).
Usage: python make_labels.py [POOL]"""
import json
import os
import re
import sys

POOL = sys.argv[1] if len(sys.argv) > 1 else "/tmp/h75a/pool"
P = r"(\[default\d\]:)?"  # --tee prefix
C = {}


def case(cid, cat, rank, dec, also=(), coll=(), root="", fix="", how="", fatal=True):
    C[cid] = dict(category=cat, rank=rank, dec=dec, also=list(also), coll=list(coll), root=root, fix=fix, how=how, fatal=fatal)


TORCHRUN_SUM = "torchrun ChildFailedError summary (its 'first observed failure' can be a rank that only re-raised the gathered error)"
DCP_COPIES = "CheckpointException ranks:dict_keys([{r}]) with rank {r}'s traceback re-raised on every rank (DCP gathers the error)"
GLOO_PEER = "other ranks: gloo 'Connection closed by peer' in their next collective"

# ---- healthy ----
for cid, how in [
        ("run-r75a-torchrun-healthy-dcp-save", "torchrun 3 ranks; ckjob.py --mode none --ckpt dcp --step 3 --steps 5 --find-unused (dcp.save to ckpt/step_3)"),
        ("run-r75a-spawn-healthy-tsave", "mp.spawn 4 ranks; ckjob.py --spawn 4 --mode none --ckpt tsave --ckpt-dir ckpt_t4 --find-unused (per-rank torch.save)"),
        ("run-r75a-torchrun-tee-healthy-async-save", "torchrun 3 ranks --tee 3; ckjob.py --mode none --ckpt async --step 2 --steps 5 --find-unused (dcp.async_save on a separate gloo group)")]:
    case(cid, "none", None, None, [], (["torchrun OMP_NUM_THREADS banner"] if "torchrun" in cid else [])
         + ["DDP reducer warning on every rank: find_unused_parameters=True ... did not find any unused parameters"],
         "Healthy run: trains, checkpoints and exits 0; only the usual launcher/DDP warnings.", "Nothing to fix.", how, fatal=False)

# ---- DCP resume ----
case("run-r75a-torchrun-dcp-load-missing-key-r2", "user.code_error", 2,
     r"\[rank2\]: RuntimeError: Missing key in checkpoint state_dict: model\.adapter\.weight\.",
     [r"CheckpointException ranks:dict_keys\(\[2\]\)", r"failed \(exitcode: 1\) local_rank: 2"],
     [DCP_COPIES.format(r=2), TORCHRUN_SUM],
     "Rank 2 built its model with an extra 'adapter' layer (per-rank config), so dcp.load's planner found model.adapter.weight missing from the checkpoint on that rank.",
     "Build the same architecture on every rank as the one that was saved (or load with DefaultLoadPlanner(allow_partial_load=True) if the new layer is meant to start fresh).",
     "torchrun 3 ranks; ckjob.py --mode dcp-load-key --culprit 2 --resume-from ckpt/step_3 (rank 2's Net(extra=True))")
case("run-r75a-torchrun-tee-dcp-load-shape-r1", "user.code_error", 1,
     r"\[default1\]:\[rank1\]: ValueError: Size mismatch between saved torch\.Size\(\[32, 16\]\) and current: torch\.Size\(\[48, 16\]\) for model\.inp\.weight",
     [r"CheckpointException ranks:dict_keys\(\[1\]\)", r"failed \(exitcode: 1\) local_rank: 1"],
     [DCP_COPIES.format(r=1), TORCHRUN_SUM],
     "Rank 1 built its model with hidden size 48 instead of 32, so dcp.load's planner rejected model.inp.weight ([48,16] vs the saved [32,16]) on that rank.",
     "Use the saved model configuration (hidden=32) on every rank when resuming.",
     "torchrun 3 ranks --tee 3; ckjob.py --mode dcp-load-shape --culprit 1 --resume-from ckpt/step_3 (rank 1 hidden=48)")
case("run-r75a-spawn-dcp-load-missing-dir-r1", "user.code_error", 1,
     r"AssertionError: metadata is None; global metadata read failed: \[Errno 2\] No such file or directory: 'ckpt/step-3/\.metadata'",
     [r"FileNotFoundError: \[Errno 2\] No such file or directory: 'ckpt/step-3/\.metadata'", r"CheckpointException ranks:dict_keys\(\[1\]\)",
      r"process 1 terminated with exit code 1"],
     ["rank 1's 'Global metadata is not found' / 'Rank local metadata is not found' warnings", DCP_COPIES.format(r=1), "mp.spawn terminates the other processes"],
     "Rank 1 resolved the checkpoint path with an old naming scheme (ckpt/step-3 instead of ckpt/step_3), which does not exist, so dcp.load found no .metadata on that rank.",
     "Give every rank the same, existing checkpoint path (ckpt/step_3).",
     "mp.spawn 3 ranks; ckjob.py --spawn 3 --mode dcp-load-missing --culprit 1 --resume-from ckpt/step_3")
case("run-r75a-torchrun-dcp-truncated-distcp-r2", "user.code_error", 2,
     r"\[rank2\]: RuntimeError: PytorchStreamReader failed reading zip archive: failed finding central directory",
     [r"CheckpointException ranks:dict_keys\(\[2\]\)"],
     [DCP_COPIES.format(r=2), "all ranks exit 1 at once, so torchrun's 'first observed failure' may name another rank"],
     "The checkpoint file __2_0.distcp was cut short (40000 of 88760 bytes) by an earlier interrupted write; its tail holds rank 2's own data-loader state, so rank 2 failed to deserialize it in dcp.load.",
     "Resume from the last complete checkpoint (or re-save it); write checkpoints atomically so a partial .distcp is never left behind.",
     "torchrun 3 ranks; ckjob.py --mode dcp-resume --resume-from ckpt_trunc, where ckpt_trunc is ckpt/step_3 with __2_0.distcp truncated to 40000 bytes (mangle.py)")

# ---- DCP save ----
case("run-r75a-torchrun-logdir-dcp-planner-raise-r3", "user.code_error", 3, r"\[rank3\]: KeyError: 'ema'",
     [r"CheckpointException ranks:dict_keys\(\[3\]\)", r"failed \(exitcode: 1\) local_rank: 3"],
     [DCP_COPIES.format(r=3), TORCHRUN_SUM, "console has only the torchrun summary (per-rank output is in ranks/, @record did not write error.json because CheckpointException is a BaseException)"],
     "Rank 3 alone added an 'ema' section to its state_dict; the job's custom SavePlanner renames top-level sections through a table that has no 'ema' entry and raised KeyError in create_local_plan on that rank.",
     "Keep the state_dict layout the same on all ranks or add the 'ema' section to the planner's rename table.",
     "torchrun 4 ranks --log-dir --redirects 3; ckjob.py --mode dcp-planner-raise --culprit 3 --record (RenamingPlanner; rank 3 adds sd['ema'])")
case("run-r75a-spawn-dcp-writer-enospc-r1", "user.code_error", 1,
     r"OSError: \[Errno 28\] No space left on device: 'ckpt_s/step_3/__1_0\.distcp'",
     [r"CheckpointException ranks:dict_keys\(\[1\]\)"],
     [DCP_COPIES.format(r=1), "mp.spawn terminates the other processes"],
     "Rank 1's storage writer failed with ENOSPC writing its shard __1_0.distcp during dcp.save (its quota was exhausted), failing the collective save on every rank.",
     "Free space / raise the quota on rank 1's checkpoint storage (or prune old checkpoints) before saving.",
     "mp.spawn 3 ranks; ckjob.py --spawn 3 --mode dcp-writer-raise --culprit 1 (QuotaWriter.write_data raises OSError(28) on rank 1)")
case("run-r75a-torchrun-tee-dcp-async-writer-raise-r2", "user.code_error", 2,
     r"\[default2\]:\[rank2\]: OSError: \[Errno 28\] No space left on device: 'ckpt_s/step_2/__2_0\.distcp'",
     [r"CheckpointException ranks:dict_keys\(\[2\]\)"],
     [DCP_COPIES.format(r=2) + " at future.result()", "all ranks exit 1 at once, so torchrun's 'first observed failure' may name another rank"],
     "During dcp.async_save rank 2's storage writer failed with ENOSPC writing __2_0.distcp; the error surfaced on every rank when the job waited on the save future.",
     "Free space / raise the quota on rank 2's checkpoint storage before saving.",
     "torchrun 3 ranks --tee 3; ckjob.py --mode dcp-async-raise --culprit 2 --step 2 (async_save with QuotaWriter raising OSError(28) on rank 2)")
case("run-r75a-torchrun-dcp-readonly-dir-r0", "user.code_error", 0,
     r"\[rank0\]: OSError: \[Errno 30\] Read-only file system: 'ckpt_ro/step_3'",
     [r"CheckpointException ranks:dict_keys\(\[0\]\)", r"failed \(exitcode: 1\) local_rank: 0"],
     [DCP_COPIES.format(r=0), "ranks 1,2 exit 1"],
     "Rank 0's checkpoint directory (ckpt_ro) is a read-only mount, so creating ckpt_ro/step_3 failed with EROFS in dcp.save.",
     "Point rank 0's checkpoint directory at a writable filesystem (or remount it read-write).",
     "torchrun 3 ranks; ckjob.py --mode dcp-ro --culprit 0 (rank 0 saves under a tmpfs mounted ro)")
case("run-r75a-torchrun-logdir-tee-dcp-sigkill-r1", "mem.host_oom", 1, r"failed \(exitcode: -9\) local_rank: 1 \(pid: \d+\)",
     [r"exitcode  : -9 \(pid: \d+\)  \(SIGKILL\)"],
     ["ranks 0,2: gloo Connection reset/closed by peer inside dcp.save", TORCHRUN_SUM],
     "Rank 1 was SIGKILLed while writing its checkpoint shard in dcp.save (no traceback, exit -9), the pattern of the kernel OOM killer; the other ranks lost their gloo peer.",
     "Find what killed rank 1 (dmesg / cgroup memory limit) and reduce its host memory use during checkpointing or raise the limit.",
     "torchrun 3 ranks --log-dir --redirects 3 --tee 3; ckjob.py --mode dcp-sigkill --culprit 1 (os.kill(self, SIGKILL) in write_data)")
case("run-r75a-spawn-dcp-sigkill-r2", "mem.host_oom", 2, r"process 2 terminated with signal SIGKILL", [],
     ["mp.spawn terminates the other processes"],
     "Rank 2 was SIGKILLed while writing its checkpoint shard in dcp.save (no traceback), the pattern of the kernel OOM killer.",
     "Find what killed rank 2 (dmesg / cgroup memory limit) and reduce its host memory use during checkpointing or raise the limit.",
     "mp.spawn 3 ranks; ckjob.py --spawn 3 --mode dcp-sigkill --culprit 2 (os.kill(self, SIGKILL) in write_data)")

# ---- torch.save / torch.load per-rank files ----
case("run-r75a-torchrun-tee-tload-truncated-r1", "user.code_error", 1,
     r"\[default1\]:\[rank1\]: RuntimeError: PytorchStreamReader failed reading zip archive: failed finding central directory",
     [r"failed \(exitcode: 1\) local_rank: 1"],
     [GLOO_PEER, TORCHRUN_SUM],
     "Rank 1's resume file ckpt_rank1.pt is truncated (3000 bytes left of an earlier write), so torch.load failed on that rank.",
     "Re-create rank 1's checkpoint (or resume from the previous complete one); save via a temp file + os.replace.",
     "torchrun 4 ranks --tee 3; ckjob.py --mode tsave-resume --resume-from ckpt_tc (ckpt_rank1.pt truncated to 3000 bytes by mangle.py)")
case("run-r75a-spawn-tload-missing-file-r2", "user.code_error", 2,
     r"FileNotFoundError: \[Errno 2\] No such file or directory: 'ckpt_tm/ckpt_rank2\.pt'",
     [r"Process 2 terminated with the following error"],
     ["mp.spawn terminates the other processes"],
     "Rank 2's resume file ckpt_tm/ckpt_rank2.pt does not exist (its save never happened), so torch.load raised FileNotFoundError on that rank.",
     "Restore rank 2's checkpoint file or resume from a checkpoint that is complete for all ranks.",
     "mp.spawn 4 ranks; ckjob.py --spawn 4 --mode tsave-resume --resume-from ckpt_tm (ckpt_rank2.pt removed)")
case("run-r75a-torchrun-logdir-tload-weightsonly-r3", "user.code_error", 3,
     r"_pickle\.UnpicklingError: Weights only load failed\.",
     [r"WeightsUnpickler error: Unsupported global: GLOBAL ckjob\.TrainState was not an allowed global by default",
      r"failed \(exitcode: 1\) local_rank: 3"],
     ["ranks 0-2: gloo Connection closed by peer (their @record tracebacks in the summary)", TORCHRUN_SUM],
     "Rank 3's resume file stores 'step' as a custom ckjob.TrainState object, which torch.load(weights_only=True) refuses to unpickle.",
     "Store plain types (int) in the checkpoint, or allowlist the class with torch.serialization.add_safe_globals([TrainState]).",
     "torchrun 4 ranks --log-dir --redirects 3; ckjob.py --mode tsave-resume --resume-from ckpt_tw --record (ckpt_rank3.pt re-saved with a TrainState object)")

# ---- object collectives ----
case("run-r75a-torchrun-allgather-object-lock-r2", "user.code_error", 2, r"\[rank2\]: TypeError: cannot pickle '_thread\.lock' object",
     [r"failed \(exitcode: 1\) local_rank: 2"],
     [GLOO_PEER + " inside all_gather_object", "UserWarning: Converting a tensor with requires_grad=True to a scalar (all ranks)", TORCHRUN_SUM],
     "Rank 2's stats dict passed to all_gather_object contained a threading.Lock, which cannot be pickled.",
     "Only put plain, picklable values in objects sent through object collectives (drop the lock).",
     "torchrun 4 ranks; ckjob.py --mode obj-allgather-lock --culprit 2")
case("run-r75a-spawn-bcast-object-reduce-r1", "user.code_error", 1,
     r"TypeError: RunConfig cannot be pickled while it holds an open handle",
     [r"Process 1 terminated with the following error"],
     ["mp.spawn terminates the other processes"],
     "Rank 1, the source of broadcast_object_list, broadcast a RunConfig holding an open file handle; its __reduce__ raised TypeError while pickling.",
     "Close/drop the file handle before broadcasting the config (send only plain fields).",
     "mp.spawn 3 ranks; ckjob.py --spawn 3 --mode obj-bcast-reduce --culprit 1 (broadcast_object_list src=1)")
case("run-r75a-torchrun-tee-gather-object-reduce-r3", "user.code_error", 3,
     r"\[default3\]:\[rank3\]: RuntimeError: EvalStats for rank 3 is not serializable: loss tensor still requires grad",
     [r"failed \(exitcode: 1\) local_rank: 3"],
     [GLOO_PEER + " inside gather_object", "UserWarning: Converting a tensor with requires_grad=True to a scalar (all ranks)", TORCHRUN_SUM],
     "Rank 3's EvalStats object passed to gather_object raised in __reduce__ while being pickled.",
     "Make the gathered object picklable on every rank (detach / convert the loss to a float before gathering).",
     "torchrun 4 ranks --tee 3; ckjob.py --mode obj-gather-reduce --culprit 3")
case("run-r75a-torchrun-scatter-object-short-list-r0", "user.code_error", 0,
     r"\[rank0\]: RuntimeError: ProcessGroupGloo::scatter: Incorrect input list size 2\. Input list size should be 3, same as size of the process group\.",
     [r"failed \(exitcode: 1\) local_rank: 0"],
     [GLOO_PEER + " inside scatter_object_list", TORCHRUN_SUM],
     "Rank 0, the source of scatter_object_list, passed a list of 2 shard lists for a world of 3 ranks (one data shard short), which gloo's scatter rejected.",
     "Give scatter_object_list exactly world_size input objects on the source rank.",
     "torchrun 3 ranks; ckjob.py --mode obj-scatter-len --culprit 0 (scatter_object_list src=0 with ws-1 objects)")
case("run-r75a-torchrun-detail-bcast-object-len-r2", "dist.collective_mismatch", 2,
     r"\[rank2\]: RuntimeError: Detected mismatch between collectives on ranks\. Rank 2 is running collective: CollectiveFingerPrint\(SequenceNumber=\d+, OpType=BROADCAST, TensorShape=\[2\]",
     [r"Rank [01] is running collective: CollectiveFingerPrint\(SequenceNumber=\d+, OpType=BROADCAST, TensorShape=\[3\]"],
     ["the same fingerprint mismatch reported on ranks 0 and 1", TORCHRUN_SUM],
     "Rank 2 called broadcast_object_list with a 2-element list while ranks 0 and 1 used 3 elements, so the object-size broadcast had shape [2] vs [3]; TORCH_DISTRIBUTED_DEBUG=DETAIL reported the fingerprint mismatch.",
     "Use the same object list length on every rank for broadcast_object_list.",
     "TORCH_DISTRIBUTED_DEBUG=DETAIL torchrun 3 ranks; ckjob.py --mode obj-bcast-len --culprit 2 --no-ddp (DDP segfaults under DETAIL on 2.13 CPU)")
case("run-r75a-spawn-bcast-object-len-r1", "dist.collective_mismatch", 1,
     r"op\.preamble\.length <= op\.nbytes\. 24 vs 16\. Received data size doesn't match expected size\. Is there a distributed collective mismatch in your code\?",
     [r"process 1 terminated with signal SIGABRT"],
     ["terminate called after throwing an instance of 'gloo::EnforceNotMet' (rank 1 aborts)", "mp.spawn terminates the other processes"],
     "Rank 1 called broadcast_object_list with a 2-element list while the source used 3, so gloo received 24 bytes into rank 1's 16-byte size buffer and aborted the process.",
     "Use the same object list length on every rank for broadcast_object_list.",
     "mp.spawn 4 ranks; ckjob.py --spawn 4 --mode obj-bcast-len --culprit 1")


def find_in(text, pat):
    for line in text.splitlines():
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
    also = [x for x in (find_in(log, p) for p in c["also"]) if x]
    lab = {"id": cid, "source": f"real run: tests/corpus/generators/launchers/round75a/run_all.sh {cid}, torch 2.13.0 CPU, gloo",
           "category": c["category"], "fatal": c["fatal"], "decisive_line": dec, "also_acceptable": also,
           "initiating_rank": c["rank"], "collateral": c["coll"], "operator": None, "root_cause": c["root"], "fix": c["fix"],
           "launcher": "torchrun" if "torchrun" in cid else "mp.spawn", "framework": "plain", "genuine": False,
           "induced_how": c["how"], "confirmed_by": "induced", "confidence": "high"}
    if dfile:
        lab["decisive_file"] = dfile
    json.dump(lab, open(os.path.join(d, "label.json"), "w"), indent=1, ensure_ascii=False)
    print("ok", cid, c["category"], c["rank"], repr(dec), dfile or "")
