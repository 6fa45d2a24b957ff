"""Write label.json for every round-40a case in OUT (argv[1], default /work/helpers/stage40).  Category and initiating
rank come from what run_all.sh induced; the decisive line is the first log.txt line matching the first regex (the
whole line, or the given fixed substring), checked to be an exact substring of log.txt."""
import json, re, sys
from pathlib import Path

OUT = Path(sys.argv[1] if len(sys.argv) > 1 else "/work/helpers/stage40")
SRC = "real run: tests/corpus/generators/launchers/round40a/run_all.sh {id} (serve.py + make_shards.py), torch 2.13.0 CPU, gloo"
TR_COLL = "torchrun SIGTERMs the surviving ranks (exitcode -15); ChildFailedError summary"
GLOO_CLOSED = "gloo 'Connection closed by peer ... remote worker crashing' on the surviving ranks"
SP_COLL = "mp.spawn terminates the other ranks and re-raises the failing process's error"
TO_COLL = "gloo 'Timed out waiting 15000ms for send/recv operation' on the waiting ranks"
L = {}

def c(id, cat, rank, rx, coll, rc, fix, how, launcher, sub=None, also=()):
    L[id] = dict(cat=cat, rank=rank, rx=rx, coll=coll, rc=rc, fix=fix, how=how, launcher=launcher, sub=sub, also=also)

def h(id, launcher, how):
    L[id] = dict(cat="none", launcher=launcher, how=how)

c("run40a-torchrun-tp-shard-missing-r2", "user.code_error", 2, r"FileNotFoundError: \[Errno 2\]", [GLOO_CLOSED, TR_COLL],
  "Rank 2's weight shard shards/shard-2.pt does not exist, so its torch.load raises FileNotFoundError at startup.",
  "Copy/export the missing shard for rank 2 (and check all shards exist before launching).",
  "make_shards.py --missing --bad-rank 2 (shard-2.pt not written)", "torchrun")
c("run40a-torchrun-tp-shard-shape-r1", "user.code_error", 1, r"size mismatch for l0\.wq", [GLOO_CLOSED, TR_COLL],
  "Rank 1's shard was cut for tensor-parallel size 4, so its Wq slice is (96, 24) where tp=3 expects (96, 32) and loading it fails with a size mismatch.",
  "Re-shard the checkpoint for the tensor-parallel size actually launched (tp=3), or launch with the tp size the shards were made for.",
  "make_shards.py --shape-tp 4 --bad-rank 1", "torchrun", also=[r"Error\(s\) in loading state_dict for TPShard1"])
c("run40a-torchrun-tp-embed-oob-r2", "user.code_error", 2, r"\[rank2\]: IndexError: index out of range in self", [GLOO_CLOSED, TR_COLL],
  "Rank 2's shard carries an 88-row embedding from an older tokenizer, so request 5's token 94 indexes past it and F.embedding raises IndexError on rank 2 only.",
  "Rebuild rank 2's shard from the current checkpoint (96-token vocabulary) / validate token ids against every shard's vocab.",
  "make_shards.py --old-vocab 88 --bad-rank 2; request 5 contains token id 94", "torchrun")
c("run40a-torchrun-tp-cache-overflow-r1", "user.code_error", 1, r"\[rank1\]: RuntimeError: The expanded size of the tensor \(32\)", [GLOO_CLOSED, TR_COLL],
  "Rank 1's shard metadata caps its KV cache at 32 positions (the others 64), so request 6's 40-token prompt does not fit its cache and the cache write raises a size error.",
  "Give every rank the same max_seq (fix rank 1's shard metadata) or reject requests longer than the smallest cache.",
  "make_shards.py --max-seq-bad 32 --bad-rank 1; request 6 has a 40-token prompt (rank 0 admits it against max_seq=64)", "torchrun")
c("run40a-torchrun-tp-allgather-hang-r2", "dist.collective_timeout", 2, r"Timed out waiting 15000ms", [TO_COLL, TR_COLL + "; rank 2 (hung in sleep) is SIGTERMed"],
  "Rank 2 stalls before the logits all_gather of request 3, so the other ranks' gloo operations time out after the 15 s process-group timeout.",
  "Find why rank 2 stalls (the py-spy/stack of the hung rank), and fix the blocking call before the all_gather.",
  "serve.py --fault hang --bad-rank 2 --at-req 3 --timeout 15 (rank 2 sleeps 3600 s before all_gather)", "torchrun")
c("run40a-torchrun-tp-kvcache-oom-r1", "mem.host_oom", 1, r"failed \(exitcode: -9\) local_rank: 1", [GLOO_CLOSED, TR_COLL],
  "Rank 1 runs in a 768 MiB memory cgroup and retains a 128 MiB KV cache per request, so the kernel OOM killer SIGKILLs it at request 5.",
  "Bound the KV-cache pool (evict old entries / smaller max context) or give rank 1's host/cgroup more memory.",
  "serve.py --fault oom --bad-rank 1: rank 1 writes its pid into cgroup v1 memory w40a_kv (limit 768 MiB, memsw same) and keeps every request's 128 MiB cache", "torchrun",
  sub="failed (exitcode: -9) local_rank: 1")
c("run40a-torchrun-tp-thread-raise-r1", "user.code_error", 1, r"^KeyError: 'max_new_tokens'", [TO_COLL, TR_COLL + "; rank 1 (main thread blocked on its work queue) is SIGTERMed"],
  "Rank 1's request-handler thread raises KeyError('max_new_tokens') on request 4 and dies; rank 1's main thread then waits forever for work while the other ranks time out in the next collective.",
  "Handle/validate the missing field in the handler thread and propagate handler-thread exceptions to the main thread (fail fast).",
  "serve.py --fault thread --bad-rank 1 --at-req 4 --timeout 15 (rank 1's handler thread gets a record without max_new_tokens)", "torchrun",
  also=[r"Exception in thread req-handler-1"])
c("run40a-torchrun-tp-compile-nocxx-r2", "compile.cpp_toolchain_missing", 2, r"InvalidCxxCompiler: No working C\+\+ compiler", [TR_COLL],
  "Rank 2's Inductor is configured with /nonexistent/g++, so torch.compile of the decode MLP fails with InvalidCxxCompiler on rank 2.",
  "Point torch._inductor.config.cpp.cxx / CXX at an installed g++ on rank 2 (or install the compiler).",
  "serve.py --compile --fault compile_cxx --bad-rank 2 (rank 2 sets torch._inductor.config.cpp.cxx=('/nonexistent/g++',))", "torchrun")
c("run40a-torchrun-tp-compile-branch-r1", "compile.graph_break_data_dependent", 1, r"\[rank1\]: torch\._dynamo\.exc\.Unsupported: Data-dependent branching", [TR_COLL],
  "Rank 1's shard enables an activation clip whose `if a.abs().amax() > clip` branch depends on tensor data, which torch.compile(fullgraph=True) cannot trace.",
  "Make the clip branch-free (always clamp) or compile without fullgraph=True so the branch graph-breaks.",
  "make_shards.py --act-clip 3.0 --bad-rank 1; serve.py --compile (fullgraph=True decode MLP)", "torchrun")
c("run40a-torchrun-tp-gather-size-r1", "dist.collective_mismatch", 1, r"Received data size doesn't match expected size",
  ["rank 2 (a receiver) aborts (exitcode -6, terminate called / what())", "gloo 'Read error ... Connection reset by peer' on ranks 0 and 1", "torchrun's Root Cause names rank 2 (exitcode -6), not the rank with the wrong size"],
  "Rank 1 all_gathers a [1, 33] logits slice while the other ranks gather [1, 32], so gloo receives more bytes than expected and aborts.",
  "Make every rank's LM-head shard the same width (vocab/world) so all_gather sizes match.",
  "serve.py --fault gather_size --bad-rank 1 --at-req 2 (rank 1 appends a column to its logits before all_gather)", "torchrun")
c("run40a-torchrun-tp-gather-size-detail-r2", "dist.collective_mismatch", 2, r"Rank 2 is running collective: CollectiveFingerPrint", [
  "the same fingerprint-mismatch RuntimeError on ranks 0 and 1", TR_COLL],
  "With TORCH_DISTRIBUTED_DEBUG=DETAIL the collective fingerprint check reports that rank 2 all_gathers TensorShape=[1, 33] while the others use [1, 32].",
  "Make every rank's LM-head shard the same width (vocab/world) so all_gather sizes match.",
  "TORCH_DISTRIBUTED_DEBUG=DETAIL serve.py --fault gather_size --bad-rank 2 --at-req 2", "torchrun",
  sub="Detected mismatch between collectives on ranks. Rank 2 is running collective: CollectiveFingerPrint(SequenceNumber=123, OpType=ALLGATHER, TensorShape=[1, 33]")
c("run40a-torchrun-pp-send-hang-r1", "dist.collective_timeout", 1, r"Timed out waiting 15000ms", [
  "rank 2's recv also times out", TR_COLL + "; rank 1 (hung in sleep) is SIGTERMed"],
  "Pipeline stage 1 stalls before sending request 3's activation, so rank 0's token recv and stage 2's activation recv time out after 15 s.",
  "Find why stage 1 stalls (stack of the hung rank) and fix the blocking call before its send.",
  "serve.py --mode pp --fault hang --bad-rank 1 --at-req 3 --timeout 15 (rank 1 sleeps 3600 s before dist.send)", "torchrun")
c("run40a-torchrun-pp-send-size-r1", "dist.collective_mismatch", 1, r"Received data size doesn't match expected size", [
  "rank 2 (the receiver) aborts (exitcode -6, terminate called / what())", GLOO_CLOSED, "torchrun's Root Cause names rank 2 (exitcode -6)"],
  "Pipeline stage 1 sends a [1, n, 104] activation where stage 2 posts a recv for [1, n, 96], so gloo on stage 2 aborts on the size mismatch.",
  "Send activations of the agreed hidden size (fix stage 1's output) so send/recv shapes match.",
  "serve.py --mode pp --fault send_size --bad-rank 1 --at-req 2 (rank 1 concatenates 8 extra columns before send)", "torchrun")
c("run40a-torchrun-pp-shard-shape-r2", "user.code_error", 2, r"size mismatch for l2\.wq", [GLOO_CLOSED, TR_COLL],
  "Pipeline stage 2's shard was exported from a tp=2 checkpoint, so its Wq is (96, 48) where the stage expects (96, 96) and loading fails with a size mismatch.",
  "Re-export stage 2's shard from the unsharded checkpoint.",
  "make_shards.py --mode pp --shape-tp 2 --bad-rank 2", "torchrun", also=[r"Error\(s\) in loading state_dict for TPShard2"])
c("run40a-spawn4-tp-embed-oob-r1", "user.code_error", 1, r"^IndexError: index out of range in self", [SP_COLL],
  "Rank 1's shard carries a 90-row embedding from an older tokenizer, so request 5's token 94 indexes past it and F.embedding raises IndexError on rank 1 only.",
  "Rebuild rank 1's shard from the current checkpoint (96-token vocabulary) / validate token ids against every shard's vocab.",
  "make_shards.py --world 4 --old-vocab 90 --bad-rank 1; request 5 contains token id 94", "mp.spawn", also=[r"-- Process 1 terminated with the following error"])
c("run40a-spawn-tp-kvcache-oom-r2", "mem.host_oom", 2, r"process 2 terminated with signal SIGKILL", [SP_COLL],
  "Rank 2 runs in a 768 MiB memory cgroup and retains a 128 MiB KV cache per request, so the kernel OOM killer SIGKILLs it.",
  "Bound the KV-cache pool (evict old entries / smaller max context) or give rank 2 more memory.",
  "serve.py --spawn 3 --fault oom --bad-rank 2: rank 2 writes its pid into cgroup v1 memory w40a_kv (768 MiB) and keeps every request's 128 MiB cache", "mp.spawn",
  sub="process 2 terminated with signal SIGKILL")
c("run40a-spawn-tp-allgather-hang-r1", "dist.collective_timeout", 1, r"Timed out waiting 15000ms", [SP_COLL + "; only process 0's timeout is reported"],
  "Rank 1 stalls before the logits all_gather of request 2, so rank 0's gloo send times out after 15 s and mp.spawn tears the job down.",
  "Find why rank 1 stalls (stack of the hung rank) and fix the blocking call before the all_gather.",
  "serve.py --spawn 3 --fault hang --bad-rank 1 --at-req 2 --timeout 15", "mp.spawn")
c("run40a-spawn-pp-thread-raise-r2", "user.code_error", 2, r"^KeyError: 'max_new_tokens'", [TO_COLL, SP_COLL],
  "Stage 2's request-handler thread raises KeyError('max_new_tokens') on request 3 and dies; its main thread waits forever for work while rank 0's recv times out.",
  "Handle/validate the missing field in the handler thread and propagate handler-thread exceptions to the main thread (fail fast).",
  "serve.py --spawn 3 --mode pp --fault thread --bad-rank 2 --at-req 3 --timeout 15", "mp.spawn", also=[r"Exception in thread req-handler-2"])
h("run40a-torchrun-tp-healthy-reject", "torchrun", "every shard caps the KV cache at 32: rank 0 rejects request 6 (40-token prompt) with a WARNING (HTTP 413), the other 7 are served, exit 0")
h("run40a-torchrun4-tp-healthy-timeout", "torchrun", "4 ranks; request 4 exceeds a simulated 50 ms client deadline: WARNING 'client disconnected; retrying (attempt 2/3)', retried and served, exit 0")
h("run40a-torchrun-tp-healthy-evict", "torchrun", "KV-cache pool capacity 3: every rank logs WARNING LRU evictions for each new request, all 8 served, exit 0")
h("run40a-spawn-pp-healthy-reject", "mp.spawn", "pipeline parallel, max_seq 32: rank 0 rejects request 6 with a WARNING, the other 7 are served, exit 0")

bad = 0
for id, d in L.items():
    log = (OUT / id / "log.txt").read_text(errors="replace")
    lab = {"id": id, "source": SRC.format(id=id), "category": d["cat"]}
    if d["cat"] == "none":
        lab.update(fatal=False, decisive_line=None, also_acceptable=[], initiating_rank=None, collateral=[], operator=None,
                   root_cause=None, fix=None)
    else:
        def first(rx):
            for line in log.splitlines():
                if re.search(rx, line):
                    return line.rstrip()
            return None
        dl = d["sub"] or first(d["rx"])
        if not dl or dl not in log or not first(d["rx"]):
            print("NO DECISIVE", id); bad += 1
        also = [first(r) for r in d["also"]]
        lab.update(fatal=True, decisive_line=dl, also_acceptable=[a for a in also if a], initiating_rank=d["rank"],
                   collateral=d["coll"], operator=None, root_cause=d["rc"], fix=d["fix"])
    lab.update(launcher=d["launcher"], framework="plain", genuine=False, induced_how=d["how"], confirmed_by="induced",
               confidence="high")
    (OUT / id / "label.json").write_text(json.dumps(lab, indent=2, ensure_ascii=False) + "\n")
print(len(L), "labels,", bad, "problems")
