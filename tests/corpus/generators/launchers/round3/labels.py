"""Write label.json for the round-3 cases produced by run_all.sh.

Labels come from what each run induced (see job3.py / run_all.sh), not from diagnosing the log.
The parts of a decisive line that change between reruns (pids, Open MPI job ids, sequence numbers) are
read back from log.txt with a regex; then every decisive_line / also_acceptable substring is checked to
occur in a line of log.txt (and of ranks/<decisive_file> where given).

Usage: python labels.py [POOL]   (default /work/main/tests/blind/pool3)
"""
import json
import os
import re
import sys

POOL = sys.argv[1] if len(sys.argv) > 1 else "/work/main/tests/blind/pool3"
GEN = "tests/corpus/generators/launchers/round3"
TR = "torchrun --nnodes 1 --nproc-per-node {n} --master-addr 127.0.0.1 --master-port P"
MPI = "mpirun --allow-run-as-root --oversubscribe{tag} -np {n} -x MASTER_ADDR=127.0.0.1 -x MASTER_PORT=P"
TWO_NODE = ("2 x torchrun --nnodes 2 --nproc-per-node 2 --node-rank 0/1 --rdzv-backend c10d --rdzv-endpoint "
            "127.0.0.1:P --rdzv-conf is_host=1/0 --tee 3 job3.py")

GLOO_PEER = "other ranks: gloo 'Connection closed by peer' RuntimeError in their next collective"
SIGTERM = "torchrun SIGTERMs the remaining ranks (exitcode -15 in the failure summary)"
SPAWN_TERM = "mp.spawn terminates the other processes with SIGTERM"
MPI_ABORT = "mpirun aborts the job after the first non-zero exit"


def R(pattern):
    """A decisive substring read back from the log by regex (for pids / job ids / sequence numbers)."""
    return ("re", pattern)


CASES = [
    dict(id="run3-torchrun-twofail-timed", launcher="torchrun",
         cmd=TR.format(n=4) + " --tee 3 job3.py --scenario twofail --accum 8 --step-seconds 0.5",
         category="user.code_error", fatal=True, rank=2,
         decisive="ValueError: tokenized sample 1841 of shard 12 has length 0 (min_len=1)",
         collateral=["rank 1 fails independently about 1 s later (timestamps): KeyError: 'attention_mask' at its "
                     "micro-step 6, while rank 2 is still writing its crash dump",
                     "ranks 0 and 3: gloo 'Connection closed by peer' in the first gradient all_reduce after rank 2 "
                     "exits", SIGTERM + "; the summary's root cause is rank 2"],
         root_cause="Rank 2 raised ValueError (a zero-length tokenized sample in shard 12) at its 4th micro-step, "
                    "the first failure by the timestamps; rank 1's KeyError 'attention_mask' came later and "
                    "independently, and the other ranks lost their peers.",
         fix="Filter zero-length samples out of shard 12 (min_len check in the tokenizer/dataset) and fix rank 1's "
             "sample schema (add 'attention_mask' or stop reading it).",
         induced_how="gradient accumulation over 8 micro-steps (no collective before step 8), 0.5 s per step; rank 2 "
                     "raises ValueError at step index 3, rank 1 KeyError at step index 5; each logs the exception "
                     "(logger.exception, timestamped format) and writes a crash dump for 3 s before re-raising"),
    dict(id="run3-torchrun-2node-raise", launcher="torchrun",
         cmd=TWO_NODE + " --scenario target-oob --fault-rank 3 --fault-step 3 (both agents append to log.txt, "
                        "each also to ranks/node<N>.log)",
         category="user.code_error", fatal=True, rank=3, decisive_file="node1.log",
         decisive="IndexError: Target 7 is out of bounds.",
         collateral=["ranks 0, 1 (node 0) and 2 (node 1): gloo 'Connection closed by peer' in the gradient all_reduce",
                     "node 1's agent SIGTERMs rank 2 and reports rank 3 (local_rank 1) as root cause; node 0's agent "
                     "then reports one of its own ranks (exit 1) as its 'first observed failure'",
                     "the --tee prefixes are local ([default0]/[default1] on both nodes); only [rankN]: is global"],
         root_cause="On node 1, global rank 3's batch at step 3 carried label 7 for a 4-class model, so cross_entropy "
                    "raised IndexError: Target 7 is out of bounds; every other rank on both nodes then lost its peer.",
         fix="Fix rank 3's data/label map so labels stay in [0, 4) (or size the classifier for the new label map); "
             "validate label ranges when loading.",
         induced_how="two torchrun agents on one machine (--nnodes 2, c10d rendezvous on 127.0.0.1); global rank 3 "
                     "(node 1, local rank 1) sets label 7 in its batch at step 3"),
    dict(id="run3-torchrun-2node-sigkill", launcher="torchrun",
         cmd=TWO_NODE + " --scenario sigkill --fault-rank 2 --fault-step 3 (both agents append to log.txt, "
                        "each also to ranks/node<N>.log)",
         category="mem.host_oom", fatal=True, rank=2, decisive_file="node1.log",
         decisive="failed (exitcode: -9) local_rank: 0",
         also=[R(r"exitcode  : -9 \(pid: \d+\)  \(SIGKILL\)")],
         collateral=["ranks 0, 1 (node 0) and 3 (node 1): gloo 'Connection closed by peer' in the gradient all_reduce",
                     "node 1's agent SIGTERMs rank 3 and reports rank 2 (local_rank 0, SIGKILL) as root cause; node 0's "
                     "agent reports one of its own ranks (exit 1) as its 'first observed failure'"],
         root_cause="Global rank 2 (node 1, local rank 0) was SIGKILLed at step 3 (exit -9, no traceback, as the "
                    "kernel OOM killer does), and the ranks on both nodes lost their peer.",
         fix="Check node 1's kernel log (dmesg) / memory limits for the OOM kill and reduce that rank's host memory "
             "use (or raise the limit).",
         induced_how="two torchrun agents on one machine (--nnodes 2, c10d rendezvous on 127.0.0.1); global rank 2 "
                     "(node 1, local rank 0) does os.kill(os.getpid(), SIGKILL) at step 3"),
    dict(id="run3-torchrun-rankfield-raise", launcher="torchrun",
         cmd=TR.format(n=4) + " job3.py --scenario rankfield-raise --fault-rank 1 (no --tee)",
         category="user.code_error", fatal=True, rank=1,
         decisive="KeyError: 'input_ids'",
         also=["| rank=1 | ERROR | train | rank 1: step 3 failed"],
         collateral=[GLOO_PEER, SIGTERM],
         root_cause="Rank 1's collate function read 'input_ids' from a record written with the old schema ('inputs'), "
                    "raising KeyError at step 3.",
         fix="Convert the old-schema records (rename 'inputs' to 'input_ids') or make the collate function accept both.",
         induced_how="logging format 'asctime | rank=N | LEVEL | name | message' (rank from a logging.Filter); rank 1's "
                     "batch at step 3 has one record keyed 'inputs'; logged with logger.exception, then re-raised"),
    dict(id="run3-mpirun-jsonlog-raise", launcher="mpirun",
         cmd=MPI.format(tag="", n=3) + " python job3.py --scenario jsonlog-raise --fault-rank 2",
         category="user.code_error", fatal=True, rank=2,
         decisive="UnicodeDecodeError: 'utf-8' codec can't decode byte 0xff in position 0: invalid start byte",
         also=[R(r"Process name: \[\[\d+,1\],2\]")],
         collateral=[GLOO_PEER + " (as JSON lines with \"rank\": 0 / 1)", MPI_ABORT],
         root_cause="Rank 2 decoded a caption record that is UTF-16 (starts with the bytes ff fe) as UTF-8 at step 3 "
                    "and raised UnicodeDecodeError; the JSON logger's excepthook logged it as one line.",
         fix="Re-encode the caption file as UTF-8 (or detect the BOM / decode with the right codec).",
         induced_how="JSON-lines logging with a \"rank\" field and an excepthook that logs uncaught exceptions; rank 2 "
                     "decodes b'\\xff\\xfe...' as UTF-8 at step 3; mpirun without --tag-output"),
    dict(id="run3-torchrun-ranksfilter-raise", launcher="torchrun",
         cmd="JOB3_RECORD=1 " + TR.format(n=3) + " --tee 3 --local-ranks-filter 0 job3.py --scenario zerodiv "
                                                 "--fault-rank 2",
         category="user.code_error", fatal=True, rank=2,
         decisive="ZeroDivisionError: division by zero",
         also=["failed (exitcode: 1) local_rank: 2"],
         collateral=["only rank 0's output is on the console (--local-ranks-filter 0): its gloo 'Connection closed by "
                     "peer'", SIGTERM, "the failing rank's traceback is visible only in torchrun's summary (@record "
                     "error file), under Root Cause"],
         root_cause="Rank 2 computed tokens-per-sample of a batch whose samples had all been filtered out "
                    "(len 0) and raised ZeroDivisionError at step 3.",
         fix="Skip (or refill) empty batches after filtering, and guard the average against zero samples.",
         induced_how="torchrun --local-ranks-filter 0 hides ranks 1-2 from the console; main() wrapped with "
                     "torch.distributed.elastic's @record; rank 2 divides by len([]) at step 3"),
    dict(id="run3-torchrun-tee2-raise", launcher="torchrun",
         cmd=TR.format(n=4) + " --tee 2 job3.py --scenario cat-none --fault-rank 1",
         category="user.code_error", fatal=True, rank=1,
         decisive="TypeError: expected Tensor as element 1 in argument 0, but got NoneType",
         collateral=[GLOO_PEER, SIGTERM, "--tee 2: the ranks' stdout (the step log) is printed without a prefix, "
                                         "their stderr with [defaultN]:"],
         root_cause="Rank 1's feature cache returned None for one block at step 3, so torch.cat of the blocks raised "
                    "TypeError.",
         fix="Handle cache misses in rank 1's feature cache (recompute the block) instead of passing None to torch.cat.",
         induced_how="torchrun --tee 2; rank 1 calls torch.cat([x[:4], None]) at step 3"),
    dict(id="run3-mpspawn-logerror-exit", launcher="mp.spawn",
         cmd="MASTER_ADDR=127.0.0.1 MASTER_PORT=P python job3.py --spawn 3 --scenario logerror-exit --fault-rank 2",
         category="user.code_error", fatal=True, rank=2,
         decisive="rank 2: checkpoint shard /data/ckpt/step_01000/shard-00002.safetensors failed checksum "
                  "(expected 9f3c2a71, got 00000000); aborting",
         also=["process 2 terminated with exit code 1"],
         collateral=[SPAWN_TERM],
         root_cause="Rank 2's own code found its checkpoint shard's checksum wrong (got 00000000: a zeroed/incomplete "
                    "file), logged an ERROR and called sys.exit(1), without a traceback.",
         fix="Re-copy or regenerate checkpoint shard-00002 of step 1000 (it is zeroed/incomplete) and verify the "
             "checkpoint before resuming.",
         induced_how="rank 2 logs logger.error(...) then sys.exit(1) at step 3; mp.spawn"),
    dict(id="run3-mpirun-nanloss", launcher="mpirun",
         cmd=MPI.format(tag=" --tag-output", n=4) + " python job3.py --scenario nanloss --fault-rank 1 --fault-step 4",
         category="user.code_error", fatal=True, rank=1,
         decisive="ValueError: Loss is nan at step 4, stopping training",
         also=[R(r"Process name: \[\[\d+,1\],1\]")],
         collateral=[GLOO_PEER, MPI_ABORT],
         root_cause="Rank 1's batch at step 4 contained an inf feature, so its loss was NaN and the training loop's "
                    "finiteness check raised ValueError.",
         fix="Find and clean the non-finite value in rank 1's input data (validate inputs with torch.isfinite when "
             "loading).",
         induced_how="rank 1 sets x[2, 7] = inf at step 4; the loop raises ValueError on a non-finite loss"),
    dict(id="run3-torchrun-skip-barrier", launcher="torchrun",
         cmd=TR.format(n=3) + " --tee 3 job3.py --scenario skip-barrier --fault-rank 1 --pg-timeout 20",
         category="dist.collective_mismatch", fatal=True, rank=1,
         decisive="[rank1]: RuntimeError: [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:78] "
                  "Timed out waiting 20000ms for recv operation to complete",
         collateral=["ranks 0 and 2 wait in dist.barrier() ('eval checkpoint at step 4, waiting at barrier') and time "
                     "out after 20 s too (send / recv timeouts); rank 1's traceback is in dist.all_reduce(p.grad)",
                     "no message states the mismatch (gloo, no TORCH_DISTRIBUTED_DEBUG): it shows in the stacks"],
         root_cause="Rank 1 skipped the end-of-step-4 dist.barrier() that ranks 0 and 2 entered (its eval-schedule "
                    "check disagreed) and went on to the next gradient all_reduce, so the collectives were "
                    "misaligned and all ranks timed out after 20 s.",
         fix="Make the barrier unconditional (or the eval decision identical on every rank, e.g. broadcast it from "
             "rank 0); TORCH_DISTRIBUTED_DEBUG=DETAIL reports such mismatches directly.",
         induced_how="after step index 3, every rank but rank 1 calls dist.barrier(); gloo, pg timeout 20 s"),
    dict(id="run3-mpirun-skip-barrier-detail", launcher="mpirun",
         cmd="TORCH_DISTRIBUTED_DEBUG=DETAIL (mpirun -x) " + MPI.format(tag=" --tag-output", n=3) +
             " python job3.py --scenario skip-barrier --fault-rank 2 --pg-timeout 20",
         category="dist.collective_mismatch", fatal=True, rank=2,
         decisive=R(r"Detected mismatch between collectives on ranks\. Rank 2 is running collective: "
                    r"CollectiveFingerPrint\(SequenceNumber=\d+, OpType=ALLREDUCE"),
         also=[R(r"Process name: \[\[\d+,1\],\d\]")],
         collateral=["ranks 0 and 1 (in dist.barrier): 'Detected mismatch between collectives on ranks' naming "
                     "OpType BARRIER on their side", MPI_ABORT],
         root_cause="Rank 2 skipped the end-of-step-4 dist.barrier() and called the next gradient all_reduce while "
                    "ranks 0 and 1 were in the barrier; TORCH_DISTRIBUTED_DEBUG=DETAIL's fingerprint check "
                    "reported the mismatch.",
         fix="Make the barrier unconditional (or the eval decision identical on every rank).",
         induced_how="after step index 3, every rank but rank 2 calls dist.barrier(); TORCH_DISTRIBUTED_DEBUG=DETAIL "
                     "passed with mpirun -x"),
    dict(id="run3-mpirun-bcast-src", launcher="mpirun",
         cmd=MPI.format(tag=" --tag-output", n=3) + " python job3.py --scenario bcast-src --fault-rank 2 --pg-timeout 20",
         category="dist.collective_mismatch", fatal=True, rank=2,
         decisive="[rank2]: RuntimeError: [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:129] "
                  "Timed out waiting 20000ms for send operation to complete",
         also=["rank 2: re-syncing parameters from rank 2"],
         collateral=["ranks 0 (send) and 1 (recv) time out in the same dist.broadcast after 20 s",
                     "the log line 'rank 2: re-syncing parameters from rank 2' (the others: 'from rank 0') is the "
                     "only sign of the different src", MPI_ABORT],
         root_cause="At step 4 rank 2 called dist.broadcast with src=2 while ranks 0 and 1 used src=0, so two ranks "
                    "acted as root of the same broadcast and it never completed; every rank timed out after 20 s.",
         fix="Pass the same src (0) on every rank (compute it from a shared value, not the local rank).",
         induced_how="at step index 3 the ranks re-broadcast the parameters; rank 2 uses src=2, the others src=0"),
    dict(id="run3-torchrun-detail-dtype", launcher="torchrun",
         cmd="TORCH_DISTRIBUTED_DEBUG=DETAIL " + TR.format(n=4) + " --tee 3 job3.py --scenario dtype-mismatch "
                                                                 "--fault-rank 3 --pg-timeout 20",
         category="dist.collective_mismatch", fatal=True, rank=3,
         decisive=R(r"Detected mismatch between collectives on ranks\. Rank 3 is running collective: "
                    r"CollectiveFingerPrint\(SequenceNumber=\d+, OpType=ALLREDUCE, TensorShape=\[1\], "
                    r"TensorDtypes=Double"),
         collateral=["ranks 0-2: the same fingerprint mismatch from their side ('but Rank 3 is running collective: "
                     "... TensorDtypes=Double')", "torchrun reports the failures (exit 1 on all ranks)"],
         root_cause="At step 3 rank 3 all-reduced its loss metric as float64 while the other ranks used float32; "
                    "TORCH_DISTRIBUTED_DEBUG=DETAIL's collective fingerprint check reported the dtype mismatch.",
         fix="Keep the metric tensor's dtype the same on every rank (drop the .double() on rank 3 or cast before "
             "the all_reduce).",
         induced_how="rank 3 calls dist.all_reduce(metric.double()) at step index 3; TORCH_DISTRIBUTED_DEBUG=DETAIL"),
    dict(id="run3-mpirun-store-rank0-killed", launcher="mpirun",
         cmd=MPI.format(tag=" --tag-output", n=3) + " python job3.py --scenario store-rank0 --fault-rank 2 --pg-timeout 20",
         category="mem.host_oom", fatal=True, rank=0,
         decisive=R(r"mpirun noticed that process rank 0 with PID \d+ on node \S+ exited on signal 9 \(Killed\)\."),
         collateral=["rank 1, waiting in init_process_group (gloo connectFullMesh on the store): c10d TCPStore "
                     "'recvValueWithTimeout failed ... Failed to recv, got 0 bytes. Connection was likely closed. Did "
                     "the remote server shutdown or crash?' and torch.distributed.DistNetworkError",
                     "rank 2 was still loading its data index (before init) when mpirun aborted the job"],
         root_cause="Rank 0, which hosts the env:// TCPStore, was SIGKILLed (as by the OOM killer) while it waited in "
                    "init_process_group; rank 1 lost its store connection and mpirun aborted the job.",
         fix="Find why rank 0 was killed (dmesg / memory limit of its node) and reduce its host memory use during "
             "start-up; the store errors on the other ranks are a consequence.",
         induced_how="rank 0 starts a thread that SIGKILLs its own process 4 s after start (it is then inside "
                     "init_process_group, hosting the TCPStore); rank 2 sleeps 10 s before init"),
    dict(id="run3-mpspawn-dataloader-raise", launcher="mp.spawn",
         cmd="MASTER_ADDR=127.0.0.1 MASTER_PORT=P python job3.py --spawn 3 --scenario dl-raise --fault-rank 1",
         category="user.code_error", fatal=True, rank=1,
         decisive="ValueError: record 29 of shard-00001.bin is truncated: expected 16 features, got 9",
         also=[R(r"ValueError: Caught ValueError in DataLoader worker process \d\.")],
         collateral=[SPAWN_TERM, "mp.spawn prints only the failing process's traceback ('-- Process 1 terminated "
                                 "with the following error:')"],
         root_cause="Record 29 of rank 1's data shard is truncated (9 of 16 features), so the dataset's __getitem__ "
                    "raised ValueError in a DataLoader worker and the main process re-raised it.",
         fix="Repair or regenerate shard-00001.bin (or skip truncated records when loading).",
         induced_how="DataLoader(num_workers=2); rank 1's dataset returns a 9-feature record for index 29 and raises"),
    dict(id="run3-accelerate-compile-backend", launcher="accelerate", framework="accelerate",
         cmd="accelerate launch --multi_gpu --num_processes 3 --num_machines 1 --mixed_precision no --dynamo_backend no "
             "--num_cpu_threads_per_process 1 --main_process_port P acc_compile.py",
         category="compile.backend_internal_error", fatal=True, rank=2,
         decisive="OSError: libfusedkernels_avx512.so.2: cannot open shared object file: No such file or directory",
         also=["torch._dynamo.exc.BackendCompilerFailed: backend='compile_fn' raised:"],
         collateral=["ranks 0 and 1: gloo 'Connection closed by peer' in the DDP backward all_reduce", SIGTERM],
         root_cause="On rank 2 the custom torch.compile backend 'fused_cpu' tried to load its vendor kernel library "
                    "libfusedkernels_avx512.so.2, which is not installed, so Dynamo raised BackendCompilerFailed at the "
                    "first forward.",
         fix="Install the vendor kernel library on that host (or unset FUSED_KERNELS_LIB there / make the backend fall "
             "back when the library is missing).",
         induced_how="all ranks torch.compile(model, backend=fused_cpu); only rank 2 sets FUSED_KERNELS_LIB to a "
                     "library that does not exist (ctypes.CDLL raises OSError inside the backend)"),
    dict(id="run3-lightning-healthy-warnings", launcher="python", framework="lightning",
         cmd="PYTHONWARNINGS=always python pl_warnings.py (Trainer devices=3, strategy ddp, gloo)",
         category="none", fatal=False, rank=None, decisive=None,
         collateral=["every step on every rank: UserWarnings 'Implicit dimension choice for softmax has been "
                     "deprecated' and 'Using a target size ... different to the input size'",
                     "every 3rd step on rank 1: 'could not push metrics to 127.0.0.1:9, continuing' with a "
                     "ConnectionRefusedError traceback (handled, training continues)"],
         root_cause="Healthy run: 2 epochs on 3 ranks finish ('max_epochs=2 reached', 'training finished'); the "
                    "warnings and the logged metrics-push ConnectionRefusedError are benign.",
         fix="None needed (optionally pass dim= to softmax, match the mse_loss shapes, and fix the metrics sink).",
         induced_how="nothing fatal induced: benign warnings every step (PYTHONWARNINGS=always) and a handled, logged "
                     "exception every 3rd step on rank 1"),
    dict(id="run3-torchrun-restart-diffrank", launcher="torchrun",
         cmd=TR.format(n=4) + " --max-restarts 1 --log-dir D --redirects 3 --tee 3 job3.py --scenario restart-diff",
         category="user.code_error", fatal=True, rank=3, decisive_file="attempt_1/3/stderr.log",
         decisive="IndexError: index 8 is out of bounds for dimension 0 with size 8",
         collateral=["attempt 0: rank 1 raised RuntimeError 'expected all shards of epoch 0 to be staged, shard 3 is "
                     "missing on this host' at step 2; torchrun restarted the group (--max-restarts 1)",
                     "attempt 1: " + GLOO_PEER + " after rank 3's IndexError; " + SIGTERM,
                     "torchrun's final summary names rank 3 (attempt 1) as root cause"],
         root_cause="The job's final failure (restart attempt 1) began on rank 3, which indexed one row past its "
                    "8-row batch at step 4 (IndexError); attempt 0 had failed earlier on rank 1 (a missing shard) "
                    "and was restarted.",
         fix="Fix rank 3's off-by-one pad index (use x.shape[0] - 1); also stage shard 3 on rank 1's host so "
             "attempt 0's failure does not recur.",
         induced_how="torchrun --max-restarts 1 --log-dir (tree copied to ranks/); attempt 0: rank 1 raises "
                     "RuntimeError at step 2; attempt 1 (TORCHELASTIC_RESTART_COUNT=1): rank 3 writes x[8] of an "
                     "8-row batch at step 4; each attempt joins its own PrefixStore namespace"),
]


def resolve(spec, text):
    if isinstance(spec, tuple):
        m = re.search(spec[1], text)
        if not m:
            raise SystemExit(f"pattern {spec[1]!r} not found")
        return m.group(0)
    return spec


def check(sub, text, where):
    if not any(sub in line for line in text.splitlines()):
        raise SystemExit(f"{where}: {sub!r} is not a substring of any line")


def main():
    n = 0
    for c in CASES:
        d = os.path.join(POOL, c["id"])
        log_path = os.path.join(d, "log.txt")
        if not os.path.exists(log_path):
            print("skip (no log):", c["id"])
            continue
        text = open(log_path, encoding="utf-8", errors="replace").read()
        decisive = resolve(c["decisive"], text) if c["decisive"] is not None else None
        also = [resolve(a, text) for a in c.get("also", [])]
        for s in ([decisive] if decisive else []) + also:
            check(s, text, c["id"] + "/log.txt")
        label = {
            "id": c["id"],
            "source": f"real run: {GEN}/run_all.sh {c['id']} ({c['cmd']}), torch 2.13.0 CPU, gloo",
            "category": c["category"], "fatal": c["fatal"], "decisive_line": decisive,
            "also_acceptable": also, "initiating_rank": c["rank"], "collateral": c["collateral"],
            "operator": None, "root_cause": c["root_cause"], "fix": c["fix"], "launcher": c["launcher"],
            "framework": c.get("framework", "plain"), "torch_version": "2.13.0", "genuine": False,
            "induced_how": c["induced_how"], "confirmed_by": "induced", "confidence": c.get("confidence", "high"),
        }
        if c.get("decisive_file"):
            rp = os.path.join(d, "ranks", c["decisive_file"])
            check(decisive, open(rp, encoding="utf-8", errors="replace").read(), rp)
            label["decisive_file"] = c["decisive_file"]
        with open(os.path.join(d, "label.json"), "w", encoding="utf-8") as f:
            json.dump(label, f, indent=2, ensure_ascii=False)
            f.write("\n")
        n += 1
    print(f"wrote {n} labels")


if __name__ == "__main__":
    main()
