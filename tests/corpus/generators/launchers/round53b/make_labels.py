"""Writes label.json for every round53b case in POOL (labels from what was induced; every decisive_line and
also_acceptable entry is checked to be a substring of a line of log.txt, or of ranks/<decisive_file>)."""
import json, os, sys
POOL = sys.argv[1] if len(sys.argv) > 1 else "/tmp/h53b/pool"
SRC = "real run: tests/corpus/generators/launchers/round53b/run_all.sh VENV POOL {id} (pp.py), torch 2.13.0 CPU, gloo, 4 ranks"
G = "[/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/"
TO_RECV = lambda ms: G + f"unbound_buffer.cc:78] Timed out waiting {ms}ms for recv operation to complete"
TO_SEND = lambda ms: G + f"unbound_buffer.cc:129] Timed out waiting {ms}ms for send operation to complete"
SIZE = "op.preamble.length <= op.nbytes. 1024 vs 512. Received data size doesn't match expected size."
CLOSED = "other ranks' 'RuntimeError: [...gloo/transport/tcp/pair.cc:553] Connection closed by peer' / 'Read error ... Connection reset by peer'"
TR_TERM = "torchrun 'Sending process ... closing signal SIGTERM' and exitcode -15 entries for the surviving ranks"
SP_TERM = "mp.spawn 'Terminating process ... via signal SIGTERM' for the other ranks"
FIX_RAISE = "Fix the micro-batch cache lookup on that rank (populate the cache for the current micro-batch id before using it, or handle the missing key)."
FIX_MM = "Make the sending stage send exactly the shape/dtype the receiving stage pre-allocates (or send the shape/dtype first), e.g. check the tensor before dist.send."

def raise_(rank, launcher, dec, also=(), where="before its forward dist.send", how_extra="", dfile=None):
    return dict(cat="user.code_error", rank=rank, dec=dec, also=list(also), launcher=launcher, conf="high", dfile=dfile,
        coll=[CLOSED + " (the neighbours lose their gloo connection to the dead rank)"],
        rc=f"Rank {rank} raised KeyError in its own code (micro-batch cache lookup) {where}; the neighbouring ranks then failed in their send/recv with closed connections.",
        fix=FIX_RAISE, how=f"FAULT=raise: rank {rank} looks up the current micro-batch in a cache that lacks it {where}. {how_extra}".strip())

C = {
 # ---------------- torchrun console
 "run-r53b-torchrun-pipe-raise": raise_(2, "torchrun", "[rank2]: KeyError: 'mb3'", how_extra="4-stage send/recv pipeline, step 4."),
 "run-r53b-torchrun-pipe-sigkill": dict(cat="mem.host_oom", rank=1, dec="failed (exitcode: -9) local_rank: 1", launcher="torchrun", conf="high",
   also=["exitcode  : -9 (pid:"], coll=[CLOSED + " on ranks 0 and 2 (the killed stage's neighbours)", TR_TERM],
   rc="Pipeline stage rank 1 was SIGKILLed (exit -9, no traceback) before its forward send; its neighbours 0 and 2 then saw their gloo connection close.",
   fix="Find what killed rank 1 (host OOM killer / external kill) and give it more memory or reduce its footprint.",
   how="FAULT=sigkill: rank 1 os.kill(getpid(), SIGKILL) at step 5 before its forward dist.send"),
 "run-r53b-torchrun-pipe-shape": dict(cat="dist.collective_mismatch", rank=1, dec=SIZE, launcher="torchrun", conf="medium",
   coll=["rank 2 (the receiver) aborts: 'terminate called after throwing an instance of gloo::EnforceNotMet' and torchrun names rank 2 (exitcode -6, SIGABRT) as root cause",
         CLOSED + " on ranks 1 and 3", TR_TERM],
   rc="Stage rank 1 sent an activation of shape (8, 32) (1024 bytes) where stage 2 had posted a recv for (8, 16) (512 bytes); gloo aborted the RECEIVER (rank 2) with the size enforce, so the log points at rank 2 while the sender is rank 1 (inferred from the pipeline order: stage 2 receives forward activations from stage 1).",
   fix=FIX_MM, how="FAULT=shape: at step 4 rank 1 sends torch.cat([out, out], 1) forward to rank 2"),
 "run-r53b-torchrun-ring-wrongpeer": dict(cat="dist.collective_timeout", rank=2, dec="[rank3]: RuntimeError: " + TO_RECV(12000), launcher="torchrun", conf="medium",
   also=["[rank2]: RuntimeError: " + TO_SEND(12000)],
   coll=["ranks 0 and 1 fail first in the gradient all_reduce with 'Connection closed by peer', and torchrun names rank 0 as root cause", "rank 2's own isend to the wrong peer times out", TR_TERM],
   rc="At step 4 rank 2 posted its ring isend to rank 0 (rank+2) instead of rank 3, so rank 3's irecv from rank 2 timed out (12 s work.wait timeout) and rank 2's unmatched isend timed out; the log only shows the timeouts, the wrong peer is inferred from rank 3 waiting on rank 2.",
   fix="Fix the ring peer computation on that rank (dst = (rank + 1) % world) so every isend matches the neighbour's irecv.",
   how="MODE=ring FAULT=wrongpeer: rank 2 uses dst=(rank+2)%4 at step 4; work.wait(timeout=12 s)"),
 "run-r53b-torchrun-async-uneven": dict(cat="dist.collective_timeout", rank=3, dec="[rank2]: RuntimeError: " + TO_RECV(18000), launcher="torchrun", conf="high",
   also=["[rank0]: RuntimeError: " + TO_SEND(18000), "[rank1]: RuntimeError: " + TO_RECV(18000)],
   coll=["ranks 0, 1 and 2 all time out in work.wait() of the async gradient all_reduce", TR_TERM],
   rc="Rank 3's data shard had only 4 batches, so it left the training loop early and ran a long final validation without issuing step 5's async all_reduce; ranks 0-2 timed out (18 s) waiting for it.",
   fix="Give every rank the same number of batches (DistributedSampler with drop_last / even sharding, or Join for uneven inputs).",
   how="MODE=async FAULT=uneven: rank 3 iterates 4 of 6 batches, then sleeps 45 s; PG timeout 18 s"),
 "run-r53b-torchrun-pplib-raise": raise_(1, "torchrun", "[rank1]: KeyError: 'mb2'", where="inside its PipelineStage forward (torch.distributed.pipelining ScheduleGPipe)",
   how_extra="Stage module forward wrapper raises on micro-batch 10 (step 3)."),
 "run-r53b-torchrun-healthy-pipe-noisy": dict(cat="none", launcher="torchrun",
   how="MODE=pipe NOISY=1 LOGLEVEL=INFO: healthy 4-stage pipeline with harmless warnings (NCCL not available, 'error checking' / 'Timeout' words)",
   rc="Healthy run: all 8 steps finished on every stage; the warnings are harmless.", fix="Nothing to fix."),
 # ---------------- torchrun --log-dir --tee 3
 "run-r53b-torchrun-logdir-pipe-hang": dict(cat="dist.collective_timeout", rank=3, dec="[rank1]: RuntimeError: " + TO_RECV(15000), launcher="torchrun", conf="medium",
   dfile="attempt_0/1/stderr.log", also=["[rank0]: RuntimeError: " + TO_RECV(15000), "[rank2]: RuntimeError: " + TO_RECV(15000)],
   coll=["ranks 0, 1 and 2 all time out in dist.recv of the backward gradients", TR_TERM],
   rc="Last stage rank 3 hung (slept 50 s) before sending its gradient back at step 3; rank 2's dist.recv of that gradient and, transitively, ranks 1 and 0 timed out after 15 s. Rank 3 prints nothing; the culprit is inferred from the pipeline order.",
   fix="Find why the last stage stalls before its backward send (py-spy dump it); the others only waited for it.",
   how="MODE=pipe FAULT=hang FAULT_PHASE=bwd: rank 3 sleeps 50 s before its backward dist.send at step 3; torchrun --log-dir D --tee 3"),
 "run-r53b-torchrun-logdir-ring-batch-skipsend": dict(cat="dist.collective_timeout", rank=2, dec="[rank3]: RuntimeError: " + TO_RECV(15000), launcher="torchrun", conf="medium",
   dfile="attempt_0/3/stderr.log", also=["[rank2]: RuntimeError: " + TO_RECV(15000), "[rank1]: RuntimeError: " + TO_RECV(15000)],
   coll=["ranks 1 and 2 time out in the gradient all_reduce (waiting for rank 3)", "rank 0 fails with 'Connection closed by peer' and torchrun names rank 0 as root cause", TR_TERM],
   rc="At step 5 rank 2 did not post its isend in the batch_isend_irecv ring exchange, so rank 3 waited on its irecv from rank 2 until the 15 s timeout; the other ranks then timed out/failed in the following all_reduce. The log shows only timeouts; rank 2 is inferred from rank 3 waiting on its irecv.",
   fix="Make every rank post its send in every ring step (remove the 'nothing to send' shortcut), so batch_isend_irecv ops match.",
   how="MODE=ring RING_API=batch FAULT=skipsend: rank 2 leaves out its P2POp isend at step 5; torchrun --log-dir D --tee 3"),
 # ---------------- mp.spawn
 "run-r53b-spawn-pipe-raise-bwd": raise_(3, "mp.spawn", "KeyError: 'mb2'", where="before sending its gradient back (backward dist.send)",
   how_extra="Last stage, step 3.").__or__(dict(coll=[SP_TERM])),
 "run-r53b-spawn-pipe-hang": dict(cat="dist.collective_timeout", rank=1, dec=TO_RECV(20000), launcher="mp.spawn", conf="medium",
   coll=[SP_TERM],
   rc="Stage rank 1 hung (slept 45 s) before its forward send at step 4; rank 0's dist.recv of the gradient from rank 1 timed out after 20 s and mp.spawn killed the rest, so only rank 0's timeout is printed and rank 1 is inferred from the pipeline order.",
   fix="Find why stage 1 stalls before its send (py-spy dump it); the other stages only waited for it.",
   how="MODE=pipe FAULT=hang: rank 1 sleeps 45 s before its forward dist.send at step 4; PG timeout 20 s"),
 "run-r53b-spawn-pipe-dtype": dict(cat="dist.collective_mismatch", rank=2, dec=SIZE, launcher="mp.spawn", conf="medium",
   coll=["mp.spawn reports 'process 3 terminated with signal SIGABRT' (the receiver)", SP_TERM],
   rc="Stage rank 2 sent its activation as float64 (1024 bytes) where stage 3 had posted a float32 recv (512 bytes); gloo aborted the RECEIVER (rank 3), so the log names process 3 while the sender is rank 2 (inferred from the pipeline order).",
   fix=FIX_MM, how="FAULT=dtype: at step 6 rank 2 sends out.double() forward to rank 3"),
 "run-r53b-spawn-ring-batch-skipsend": dict(cat="dist.collective_timeout", rank=3, dec=TO_RECV(10000), launcher="mp.spawn", conf="medium",
   coll=[SP_TERM],
   rc="At step 4 rank 3 did not post its isend in the batch_isend_irecv ring exchange, so rank 0's irecv from rank 3 timed out (10 s work.wait timeout); only rank 0's error is printed, rank 3 is inferred from the ring order.",
   fix="Make every rank post its send in every ring step so batch_isend_irecv ops match.",
   how="MODE=ring RING_API=batch FAULT=skipsend: rank 3 leaves out its isend at step 4; work.wait(timeout=10 s)"),
 "run-r53b-spawn-async-raise": raise_(1, "mp.spawn", "KeyError: 'mb4'", where="before issuing its async gradient all_reduce",
   how_extra="MODE=async, step 5.").__or__(dict(coll=[SP_TERM])),
 "run-r53b-spawn-healthy-ring-noisy": dict(cat="none", launcher="mp.spawn",
   how="MODE=ring NOISY=1: healthy isend/irecv ring exchange with harmless warnings",
   rc="Healthy run: all 8 ring steps finished on every rank; the warnings are harmless.", fix="Nothing to fix."),
 # ---------------- shell loop
 "run-r53b-shell-pipe-sigkill": dict(cat="mem.host_oom", rank=2, dec="launcher: rank 2 exited with status 137 (killed by SIGKILL)", launcher="shell", conf="high",
   also=["Killed                  RANK=$r python pp.py 2>&1"], coll=[CLOSED + " on ranks 0, 1 and 3"],
   rc="Pipeline stage rank 2 was SIGKILLed (status 137, no traceback) before its forward send; ranks 1 and 3 (its neighbours) and then rank 0 saw their gloo connections close.",
   fix="Find what killed rank 2 (host OOM killer / external kill) and give it more memory or reduce its footprint.",
   how="FAULT=sigkill: rank 2 os.kill(getpid(), SIGKILL) at step 4 before its forward dist.send"),
 "run-r53b-shell-pipe-shape-bwd": dict(cat="dist.collective_mismatch", rank=3, dec=SIZE, launcher="shell", conf="medium",
   coll=["rank 2 (the receiver) aborts with gloo::EnforceNotMet, status 134 (SIGABRT)", CLOSED + " on ranks 0, 1 and 3"],
   rc="Last stage rank 3 sent back a gradient of shape (16, 16) (1024 bytes) where stage 2 had posted a recv for (8, 16) (512 bytes); gloo aborted the RECEIVER (rank 2), so the log points at rank 2 while the sender is rank 3 (inferred: stage 2 receives gradients from stage 3).",
   fix=FIX_MM, how="FAULT=shape FAULT_PHASE=bwd: at step 5 rank 3 sends torch.cat([g, g], 0) back to rank 2"),
 "run-r53b-shell-ring-skipsend": dict(cat="dist.collective_timeout", rank=1, dec="[rank2] [rank2]: RuntimeError: " + TO_RECV(10000), launcher="shell", conf="medium",
   coll=["ranks 0, 1 and 3 fail in the gradient all_reduce with 'Connection closed by peer' (rank 1's error is printed first)"],
   rc="At step 4 rank 1 did not post its ring isend, so rank 2's irecv from rank 1 timed out (10 s work.wait timeout); the other ranks then lost rank 2 in the all_reduce. The log shows only rank 2's timeout; rank 1 is inferred from the ring order.",
   fix="Make every rank post its send in every ring step (remove the 'nothing to send' shortcut).",
   how="MODE=ring FAULT=skipsend: rank 1 skips dist.isend at step 4; work.wait(timeout=10 s)"),
 "run-r53b-shell-ring-batch-wrongpeer": dict(cat="dist.collective_timeout", rank=3, dec="[rank0] [rank0]: RuntimeError: " + TO_RECV(15000), launcher="shell", conf="medium",
   also=["[rank3] [rank3]: RuntimeError: " + TO_SEND(15000)],
   coll=["rank 1 fails first with 'Connection closed by peer'", "rank 2 times out in the gradient all_reduce", "rank 3's own isend to the wrong peer times out"],
   rc="At step 3 rank 3 posted its batch_isend_irecv isend to rank 1 (rank+2) instead of rank 0, so rank 0's irecv from rank 3 timed out (15 s) and rank 3's unmatched isend timed out; the wrong peer is inferred from rank 0 waiting on rank 3.",
   fix="Fix the ring peer computation on that rank (dst = (rank + 1) % world).",
   how="MODE=ring RING_API=batch FAULT=wrongpeer: rank 3 uses dst=(rank+2)%4 at step 3; work.wait(timeout=15 s)"),
 "run-r53b-shell-pplib-raise": raise_(2, "shell", "[rank2] [rank2]: KeyError: 'mb3'", where="inside its PipelineStage forward (torch.distributed.pipelining ScheduleGPipe)",
   how_extra="Stage module forward wrapper raises on micro-batch 14 (step 4)."),
 "run-r53b-shell-healthy-async-noisy": dict(cat="none", launcher="shell",
   how="MODE=async NOISY=1: healthy data parallel run with async all_reduce, harmless warnings, logger format without rank",
   rc="Healthy run: all 8 steps finished on every rank; the warnings are harmless.", fix="Nothing to fix."),
}

bad = 0
for cid, c in C.items():
    d = os.path.join(POOL, cid)
    if not os.path.isdir(d):
        print("missing", cid); continue
    healthy = c["cat"] == "none"
    lab = {"id": cid, "source": SRC.format(id=cid), "category": c["cat"], "fatal": not healthy,
           "decisive_line": None if healthy else c["dec"], "also_acceptable": c.get("also", []),
           "initiating_rank": None if healthy else c["rank"], "collateral": c.get("coll", []), "operator": None,
           "root_cause": c["rc"], "fix": c["fix"], "launcher": c["launcher"], "framework": "plain",
           "torch_version": "2.13.0", "genuine": False, "induced_how": c["how"], "confirmed_by": "induced",
           "confidence": c.get("conf", "high")}
    if c.get("dfile"):
        lab["decisive_file"] = c["dfile"]
    # check every line claimed
    log = open(os.path.join(d, "log.txt"), errors="replace").read().splitlines()
    for s in ([] if healthy else [c["dec"]]) + lab["also_acceptable"]:
        n = sum(s in l for l in log)
        if n == 0:
            print("NOT IN LOG", cid, s); bad += 1
    if c.get("dfile"):
        fl = open(os.path.join(d, "ranks", c["dfile"]), errors="replace").read().splitlines()
        if not any(c["dec"] in l for l in fl):
            print("NOT IN RANK FILE", cid, c["dfile"]); bad += 1
    json.dump(lab, open(os.path.join(d, "label.json"), "w"), indent=2, ensure_ascii=False)
    print("ok", cid, lab["category"], lab["initiating_rank"], lab["confidence"])
sys.exit(1 if bad else 0)
