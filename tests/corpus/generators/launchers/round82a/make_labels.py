"""Writes label.json for every round82a case in POOL (default /tmp/h82a/pool) from what was induced.
decisive/also patterns are regexes; the label stores the exact text each matched (first matching line of log.txt;
for a --log-dir run whose console lacks it, the first matching line of ranks/attempt_0/<dec_rank>/*, named in
decisive_file).  initiating_rank is always the culprit's global rank (the rank whose code/config was wrong), even
where the visible crash is on a receiving rank.
Usage: python make_labels.py [POOL]"""
import json
import os
import re
import sys

POOL = sys.argv[1] if len(sys.argv) > 1 else "/tmp/h82a/pool"
C = {}
T = r"(\[default\d\]:)?"  # --tee prefix
SRC = "tests/corpus/generators/launchers/round82a/run_all.sh"


def case(cid, cat, rank, dec, also=(), coll=(), root="", fix="", how="", fatal=True, dec_rank=None):
    C[cid] = dict(category=cat, rank=rank, dec=dec, also=list(also), coll=list(coll), root=root, fix=fix, how=how,
                  fatal=fatal, dec_rank=rank if dec_rank is None else dec_rank)


WARNS = "ordinary warnings on every rank (FutureWarning torch.cpu.amp.autocast / reduce_scatter_tensor deprecation, lr_scheduler order UserWarning, tensor copy-construct UserWarning); occasional router load-imbalance WARNING lines are ordinary output"
PEER = "the other ranks fail in their next collective with gloo 'Connection closed by peer' / 'Connection reset by peer'"
TERM = "torchrun sends SIGTERM to the surviving ranks (exitcode -15 in the summary)"
SUM = "torchrun ChildFailedError summary ('Root Cause (first observed failure)' may name a rank that only reacted)"
SPAWN = "mp.spawn terminates the other processes and re-raises the failing process's error"
ENF = (r"\[enforce fail at \S+pair\.cc:\d+\] op\.preamble\.length <= op\.nbytes\. \d+ vs \d+\. Received data size "
       r"doesn't match expected size\. Is there a distributed collective mismatch in your code\?")
ABORT = ("the RECEIVING rank's gloo thread aborts ('terminate called after throwing an instance of gloo::EnforceNotMet', "
         "exitcode -6 / SIGABRT): the visible crash is not on the culprit")
MOE = "toy expert-parallel MoE (one expert per rank, tokens exchanged with dist.all_to_all_single)"

# ---- healthy ----
case("run-r82a-torchrun-healthy", "none", None, None, [],
     ["torchrun OMP_NUM_THREADS banner", WARNS],
     f"Healthy run: {MOE}, 30 steps on 4 ranks, exits 0; only the usual launcher/deprecation warnings.",
     "Nothing to fix.", "torchrun 4 ranks; moe_job.py --steps 30 --warn autocast,sched", fatal=False)
case("run-r82a-torchrun-tee-healthy-zero", "none", None, None, [],
     ["torchrun OMP_NUM_THREADS banner", WARNS],
     "Healthy run: fixed-capacity MoE dispatch with ZeRO-style reduce_scatter_tensor / all_gather_into_tensor gradient sync, 3 ranks (--tee 3), exits 0.",
     "Nothing to fix.", "torchrun 3 ranks --tee 3; moe_job.py --dispatch fixed --zero --warn tensorcopy", fatal=False)
case("run-r82a-spawn-healthy-list", "none", None, None, [], [WARNS],
     "Healthy run: MoE dispatch with dist.all_to_all (list of equal chunks) under mp.spawn, 3 ranks, exits 0.",
     "Nothing to fix.", "mp.spawn 3 ranks; moe_job.py --spawn 3 --dispatch list --warn autocast,tensorcopy", fatal=False)

# ---- a rank sends more tokens than its peers expect ----
case("run-r82a-torchrun-capfixed-r2", "dist.collective_mismatch", 2, ENF,
     [r"\[rank2\] INFO moe: step 8: capacity factor -> 1\.50 \(capacity 16 tokens per expert per source rank\)",
      r"failed \(exitcode: -6\) local_rank: \d"],
     [ABORT + " (here ranks 0 and 1 both abort: 2048 vs 1792 bytes = 16 vs 14 tokens x 32 floats)", PEER, TERM, SUM, WARNS],
     "Rank 2 read its capacity-factor schedule from another config and switched to 1.5 at step 8 (capacity 16 slots per expert) while its peers used 1.25 (14 slots); in the fixed-capacity all_to_all_single it sent 16-token chunks that its peers expected as 14, so gloo on the receivers aborted.",
     "Load the same MoE config (capacity_factor schedule) on every rank, or exchange the split sizes before the token all_to_all.",
     "torchrun 3 ranks; moe_job.py --dispatch fixed --mode cap-fixed --culprit 2 --at-step 8")
case("run-r82a-spawn-capfixed-r3", "dist.collective_mismatch", 3, ENF,
     [r"\[rank3\] INFO moe: step 12: capacity factor -> 1\.50 \(capacity 12 tokens per expert per source rank\)",
      r"process \d terminated with signal SIGABRT"],
     [ABORT, PEER, SPAWN, WARNS],
     "Rank 3 read its capacity-factor schedule from another config and switched to 1.5 at step 12 (capacity 12 slots per expert) while its peers used 1.25 (10 slots); its oversized fixed-capacity all_to_all_single chunks made gloo on a receiving rank abort.",
     "Load the same MoE config (capacity_factor schedule) on every rank, or exchange the split sizes before the token all_to_all.",
     "mp.spawn 4 ranks; moe_job.py --spawn 4 --dispatch fixed --mode cap-fixed --culprit 3 --at-step 12")
case("run-r82a-torchrun-tee-caplist-r1", "dist.collective_mismatch", 1,
     T + r"\[rank1\]: RuntimeError: ProcessGroupGloo::alltoall: input and output tensors must have the same size",
     [r"\[rank1\] INFO moe: step 8: capacity factor -> 1\.50 \(capacity 16 tokens per expert per source rank\)",
      r"failed \(exitcode: 1\) local_rank: 1"],
     [PEER, TERM, SUM, WARNS],
     "From step 8 rank 1 packed its dist.all_to_all send chunks with a capacity factor of 1.5 from another config (16 rows) but sized its receive chunks from the shared config (14 rows), so gloo's alltoall rejected the unequal input/output chunks.",
     "Derive send and receive chunk sizes from the same (shared) capacity factor on every rank.",
     "torchrun 3 ranks --tee 3; moe_job.py --dispatch list --mode cap-list --culprit 1 --at-step 8")
case("run-r82a-torchrun-routepeer-r1", "dist.collective_mismatch", 1, ENF,
     [r"\[rank1\] WARNING moe: step 14: router load imbalance: .*", r"failed \(exitcode: -6\) local_rank: 2"],
     [ABORT + " (rank 2, the overflowed expert's rank: 4096 vs 1280 bytes = 32 vs 10 tokens)", PEER, TERM, SUM, WARNS],
     "Routing bug on rank 1: it announced the capacity-clamped token counts in the count exchange but packed every routed token, so when its step-14 batch overflowed expert 2 it sent 32 tokens to rank 2, which expected 10, and gloo on rank 2 aborted.",
     "Apply the capacity mask to the packed tokens (and input_split_sizes) exactly as to the announced counts.",
     "torchrun 4 ranks; moe_job.py --mode route-peer --culprit 1 --at-step 14 (rank 1's step-14 batch routes all tokens to expert 2)")
case("run-r82a-torchrun-logdir-routepeer-r0", "dist.collective_mismatch", 0, ENF,
     [r"failed \(exitcode: -6\) local_rank: 1"],
     [ABORT + " (rank 1; only in ranks/attempt_0/1/stderr.log, the console shows the torchrun summary)", PEER, TERM, SUM,
      "per-rank output only in ranks/ (--redirects 3); rank 0's load-imbalance warning is in ranks/attempt_0/0/stdout.log"],
     "Routing bug on rank 0: it announced the capacity-clamped token counts but packed every routed token, so when its step-11 batch overflowed expert 1 it sent 32 tokens to rank 1, which expected fewer, and gloo on rank 1 aborted.",
     "Apply the capacity mask to the packed tokens (and input_split_sizes) exactly as to the announced counts.",
     "torchrun 3 ranks --log-dir --redirects 3; moe_job.py --mode route-peer --culprit 0 --at-step 11", dec_rank=1)
case("run-r82a-torchrun-routeself-r2", "dist.collective_mismatch", 2,
     r"\[rank2\]: RuntimeError: \[enforce fail at \S+alltoallv\.cc:\d+\] inLengthPerRank\[myRank\] == outLengthPerRank\[myRank\]\.",
     [r"\[rank2\] WARNING moe: step 9: router load imbalance: .*", r"failed \(exitcode: 1\) local_rank: 2"],
     [PEER, TERM, SUM, WARNS],
     "Routing bug on rank 2: it announced capacity-clamped counts but packed every routed token; its step-9 batch overflowed its own expert, so the length it sent to itself differed from the length it expected from itself and gloo's alltoallv enforce failed on rank 2.",
     "Apply the capacity mask to the packed tokens (and input_split_sizes) exactly as to the announced counts.",
     "torchrun 3 ranks; moe_job.py --mode route-self --culprit 2 --at-step 9")
case("run-r82a-spawn-splitsum-r1", "dist.collective_mismatch", 1, r"RuntimeError: Split sizes doesn't match total dim 0 size",
     [r"-- Process 1 terminated with the following error:"],
     [PEER, SPAWN, WARNS],
     "Rank 1 dropped the over-capacity tokens from its dispatch buffer but passed the un-clamped per-expert counts as input_split_sizes to all_to_all_single, so the splits no longer summed to the tensor's dim 0.",
     "Pass the clamped counts (the ones used to pack the buffer) as input_split_sizes.",
     "mp.spawn 3 ranks; moe_job.py --spawn 3 --mode split-sum --culprit 1 --at-step 3 (first step >= 3 where rank 1 drops tokens)")

# ---- a rank skips the exchange ----
case("run-r82a-torchrun-skip-r3", "dist.collective_mismatch", 3,
     r"\[rank3\]: RuntimeError: \[\S+unbound_buffer\.cc:\d+\] Timed out waiting 20000ms for (send|recv) operation to complete",
     [r"\[rank3\] WARNING moe: step 13: batch has 0 non-padding tokens after filtering, skipping step"],
     ["rank 3 silently runs one step ahead of its peers for 6 steps (its step numbers lead) until the eval at step 19",
      "all ranks time out after 20 s ('Timed out waiting 20000ms for send operation'): ranks 0-2 in all_to_all_single, rank 3 in dist.all_gather (eval)",
      "no message states the mismatch (gloo, no TORCH_DISTRIBUTED_DEBUG): it shows in the stacks", TERM, SUM, WARNS],
     "At step 13 rank 3's batch was all padding and it `continue`d, skipping that step's token exchanges and gradient all_reduce, so its collectives ran one step ahead; at the step-19 eval it entered all_gather while its peers were in the MoE all_to_all_single and all ranks timed out.",
     "Never skip a step on one rank in expert-parallel training: run the exchange with zero-size splits (or agree on skipping via an all_reduce).",
     "torchrun 4 ranks, pg timeout 20 s; moe_job.py --mode skip --culprit 3 --at-step 13")
case("run-r82a-torchrun-tee-skip-detail-r2", "dist.collective_mismatch", 2,
     T + r"\[rank2\]: RuntimeError: Detected mismatch between collectives on ranks\. Rank 2 is running collective: CollectiveFingerPrint\(SequenceNumber=\d+, OpType=ALLGATHER",
     [T + r"\[rank\d\]: RuntimeError: Detected mismatch between collectives on ranks\. Rank [01] is running collective: CollectiveFingerPrint\(SequenceNumber=\d+OpType=ALLTOALL_BASE\), but Rank 2 is running collective",
      r"\[rank2\] WARNING moe: step 7: batch has 0 non-padding tokens after filtering, skipping step"],
     ["TORCH_DISTRIBUTED_DEBUG=DETAIL: every rank reports the fingerprint mismatch (the peers' view shows the wrapper's internal GATHER)",
      TERM, SUM, WARNS],
     "At step 7 rank 2's batch was all padding and it `continue`d, skipping that step's exchanges; at the step-9 eval it called all_gather while ranks 0 and 1 were in all_to_all_single, and DETAIL's fingerprint check reported the mismatch.",
     "Never skip a step on one rank in expert-parallel training: run the exchange with zero-size splits (or agree on skipping via an all_reduce).",
     "torchrun 3 ranks --tee 3, TORCH_DISTRIBUTED_DEBUG=DETAIL, pg timeout 20 s; moe_job.py --mode skip --culprit 2 --at-step 7")

# ---- a rank's expert stalls ----
case("run-r82a-torchrun-hang-r2", "dist.collective_timeout", 2,
     r"\[rank\d\]: RuntimeError: \[\S+unbound_buffer\.cc:\d+\] Timed out waiting 20000ms for (send|recv) operation to complete",
     [r"\[rank0\]: RuntimeError: \[\S+unbound_buffer\.cc:\d+\] Timed out waiting 20000ms for (send|recv) operation to complete"],
     ["ranks 0 and 1 time out in the combine all_to_all_single; rank 2 (silent, sleeping in its expert) is SIGTERMed by torchrun",
      TERM, SUM, WARNS],
     "Rank 2's expert stalled (60 s) at step 10 before the combine all_to_all_single, so ranks 0 and 1 waiting in that exchange hit the 20 s gloo timeout.",
     "Find what blocks rank 2's expert (py-spy dump the silent rank); raise the process-group timeout only if the stall is legitimate.",
     "torchrun 3 ranks, pg timeout 20 s; moe_job.py --mode hang --culprit 2 --at-step 10 (time.sleep(60) inside rank 2's expert)")
case("run-r82a-spawn-hang-r0", "dist.collective_timeout", 0,
     r"Timed out waiting 25000ms for (send|recv) operation to complete",
     [r"\[rank\d\]: RuntimeError: \[\S+unbound_buffer\.cc:\d+\] Timed out waiting 25000ms"],
     ["the first rank to time out (rank 2 here) in the combine all_to_all_single is reported by mp.spawn, which then SIGTERMs the others, the silent rank 0 included (its last line: 'expert 0: N tokens at step 16')",
      SPAWN, WARNS],
     "Rank 0's expert stalled (60 s) at step 16 before the combine all_to_all_single, so the other ranks waiting in that exchange hit the 25 s gloo timeout.",
     "Find what blocks rank 0's expert (py-spy dump the silent rank); raise the process-group timeout only if the stall is legitimate.",
     "mp.spawn 4 ranks, pg timeout 25 s; moe_job.py --spawn 4 --mode hang --culprit 0 --at-step 16 (time.sleep(60) inside rank 0's expert)")

# ---- a rank raises inside its expert ----
case("run-r82a-torchrun-raisedtype-r1", "user.code_error", 1,
     r"\[rank1\]: RuntimeError: mat1 and mat2 must have the same dtype, but got BFloat16 and Float",
     [r"failed \(exitcode: 1\) local_rank: 1"], [PEER, TERM, SUM, WARNS],
     "After warm-up (step 9) rank 1's expert switched its compute dtype to bfloat16 (an option only its config set) while its weights stayed float32, so F.linear raised a dtype mismatch inside the expert.",
     "Cast the expert weights with the inputs (or use autocast) or drop the per-rank bf16 option so all experts compute in the same dtype.",
     "torchrun 3 ranks; moe_job.py --mode raise-dtype --culprit 1 --at-step 9")
case("run-r82a-torchrun-logdir-raisecap-r3", "user.code_error", 3,
     r"\[rank3\]: ValueError: expert 3 received \d+ tokens at step \d+, over its token budget of \d+ \(capacity \d+ x \d+ ranks - 8 reserved\)",
     [r"failed \(exitcode: 1\) local_rank: 3"],
     [PEER, TERM, SUM, "per-rank output only in ranks/ (--redirects 3)", WARNS],
     "Rank 3's expert checks the received tokens against a budget from a stale config (capacity x ranks - 8), and when it received more than that it raised ValueError inside its expert.",
     "Size the expert's token budget from the real capacity (capacity x ranks) or drop the stale check.",
     "torchrun 4 ranks --log-dir --redirects 3; moe_job.py --mode raise-cap --culprit 3 --at-step 6 (first step >= 6 where expert 3 receives > 32 tokens)")

# ---- a rank is SIGKILLed ----
case("run-r82a-torchrun-sigkill-r2", "mem.host_oom", 2, r"failed \(exitcode: -9\) local_rank: 2",
     [r"exitcode  : -9 \(pid: \d+\)  \(SIGKILL\)"], [PEER, TERM, SUM, WARNS],
     "Rank 2 was SIGKILLed inside its expert at step 12 (no traceback; the corpus labels a silent SIGKILL as host OOM).",
     "Check the host's kernel log / memory cgroup for the OOM kill of rank 2 and reduce its memory use.",
     "torchrun 4 ranks; moe_job.py --mode sigkill --culprit 2 --at-step 12 (os.kill(os.getpid(), SIGKILL) in rank 2's expert)")
case("run-r82a-spawn-sigkill-r1", "mem.host_oom", 1, r"process 1 terminated with signal SIGKILL", [],
     [PEER, SPAWN, WARNS],
     "Rank 1 was SIGKILLed inside its expert at step 7 (no traceback; the corpus labels a silent SIGKILL as host OOM).",
     "Check the host's kernel log / memory cgroup for the OOM kill of rank 1 and reduce its memory use.",
     "mp.spawn 3 ranks; moe_job.py --spawn 3 --dispatch fixed --mode sigkill --culprit 1 --at-step 7")

# ---- ZeRO-style reduce_scatter / all_gather with a wrong size ----
case("run-r82a-torchrun-rswrong-r1", "dist.collective_mismatch", 1,
     r"\[rank1\]:\[F\d+ [\d:.]+ ProcessGroupGloo\.cpp:\d+\] Check failed: outputShape\[0\] \* worldSize == inputShape\[0\] \(\d+ vs\. \d+\)\.",
     [r"\[rank1\]: RuntimeError: .*Check failed: outputShape\[0\] \* worldSize == inputShape\[0\] \(\d+ vs\. \d+\)\.",
      r"failed \(exitcode: 1\) local_rank: 1"],
     [PEER, TERM, SUM, WARNS],
     "From step 10 rank 1 sized its reduce_scatter_tensor output shard with a 64-element bucket alignment from another config (5632) instead of the shared 8 (5584), so the output x world size no longer matched the 16752-element padded gradient.",
     "Compute the shard size from the same padded flat-buffer size (and alignment) on every rank.",
     "torchrun 3 ranks; moe_job.py --zero --dispatch fixed --mode rs-wrong --culprit 1 --at-step 10")
case("run-r82a-torchrun-tee-rswrong-detail-r0", "dist.collective_mismatch", 0,
     T + r"\[rank0\]: RuntimeError: Detected mismatch between collectives on ranks\. Rank 0 is running collective: CollectiveFingerPrint\(SequenceNumber=\d+, OpType=_REDUCE_SCATTER_BASE, TensorShape=\[16768\]",
     [T + r"\[rank[123]\]: RuntimeError: Detected mismatch between collectives on ranks\. .*"],
     ["TORCH_DISTRIBUTED_DEBUG=DETAIL: every rank reports the fingerprint mismatch, but the printed fingerprints look identical (only the input shape [16768] is printed, not the differing output shard): ranks 1-3 each name Rank 0 as the other side, rank 0 names Rank 1",
      "no gloo 'Check failed' line: the DETAIL wrapper's check fires before the collective runs", TERM, SUM, WARNS],
     "From step 5 rank 0 sized its reduce_scatter_tensor output shard with a 64-element alignment from another config, so its collective's tensor shapes differed from the other ranks' and DETAIL's fingerprint check reported the mismatch.",
     "Compute the shard size from the same padded flat-buffer size (and alignment) on every rank.",
     "torchrun 4 ranks --tee 3, TORCH_DISTRIBUTED_DEBUG=DETAIL; moe_job.py --zero --mode rs-wrong --culprit 0 --at-step 5")
case("run-r82a-torchrun-agwrong-r2", "dist.collective_mismatch", 2,
     r"\[rank2\]: RuntimeError: ProcessGroupGloo::allgather: invalid tensor size at index 0 \(expected \(\d+\), got \(\d+\)\)",
     [r"failed \(exitcode: 1\) local_rank: 2"], [PEER, TERM, SUM, WARNS],
     "From step 6 rank 2 allocated its all_gather_into_tensor output (the gathered parameter shards) with a 64-element alignment from another config, so it was 4 x 4224 instead of 4 x 4192 and gloo's allgather rejected it.",
     "Allocate the gathered buffer as world_size x shard size from the same padded size on every rank.",
     "torchrun 4 ranks; moe_job.py --zero --mode ag-wrong --culprit 2 --at-step 6")

# ---- all_gather of uneven tensors ----
case("run-r82a-spawn-aguneven-r2", "dist.collective_mismatch", 2,
     r"RuntimeError: ProcessGroupGloo::allgather: invalid tensor size at index 0 \(expected \(61\), got \(64\)\)",
     [r"-- Process 2 terminated with the following error:"], [PEER, SPAWN, WARNS],
     "At the step-14 eval rank 2's eval shard had only 61 rows left and it all_gathered its 61 per-row losses into the 64-row buffers every rank uses; gloo's all_gather requires equal sizes and rejected it.",
     "Pad every rank's eval results to the same length (and gather the true counts) before dist.all_gather, or use a sampler that yields equal shards.",
     "mp.spawn 3 ranks; moe_job.py --spawn 3 --mode ag-uneven --culprit 2 --at-step 10 --eval-every 5")


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
                if hit and (f"/{c['dec_rank']}/" in p):
                    dec, dfile = hit, os.path.relpath(p, os.path.join(d, "ranks")); break
            if dfile:
                break
    if c["dec"] and not dec:
        print("NO DECISIVE", cid, c["dec"]); continue
    also = []
    for pat in c["also"]:
        x = find_in(log, pat)
        if x and x != dec and x not in also:
            also.append(x)
    lab = {"id": cid, "source": f"real run: {SRC} {cid}, torch 2.13.0 CPU, gloo",
           "category": c["category"], "fatal": c["fatal"], "decisive_line": dec, "also_acceptable": also,
           "initiating_rank": c["rank"], "collateral": c["coll"], "operator": None, "root_cause": c["root"], "fix": c["fix"],
           "launcher": "torchrun" if "torchrun" in cid else "mp.spawn", "framework": "plain", "genuine": False,
           "induced_how": c["how"], "confirmed_by": "induced", "confidence": "high"}
    if dfile:
        lab["decisive_file"] = dfile
    json.dump(lab, open(os.path.join(d, "label.json"), "w"), indent=1, ensure_ascii=False)
    print("ok", cid, c["category"], c["rank"], repr(dec)[:150], dfile or "")
