"""Writes label.json for every round87a case in POOL (default /tmp/h87a/pool) and checks each decisive_line is an
exact substring of a line of log.txt (or of ranks/<decisive_file>). Labels come from what was induced."""
import json, os, sys

POOL = sys.argv[1] if len(sys.argv) > 1 else "/tmp/h87a/pool"
SRC = "real run: tests/corpus/generators/launchers/round87a/run_all.sh {id} ({cmd}), torch 2.13.0 CPU, gloo"
TR = "torchrun --nnodes 1 --master-addr 127.0.0.1"
GLOO_CLOSED = "survivors: gloo 'Connection closed by peer ... remote worker crashing' RuntimeError in their DDP backward allreduce"
GLOO_RESET = "survivors: gloo 'Read error ... Connection reset by peer' RuntimeError in their DDP backward allreduce"
SIGTERM = "torchrun SIGTERMs the remaining workers (exitcode -15 in the failure summary)"
FIX_KEY = "Make the data pipeline write/validate the 'target' field of every record (or skip records without it) before training."
FIX_VAL = "Repair or drop the corrupt 31-feature record in that shard (validate feature width when building the shard)."
FIX_IDX = "Fix the sampler's index window so it stays within the 16-sample batch (off-by-one past the end)."
FIX_KILL = "Find what SIGKILLed the worker (kernel OOM killer in dmesg/cgroup memory events, or a scheduler kill) and give it more host memory or reduce its usage."
FIX_HANG = "Find why that rank stalled before the collective (py-spy dump it, check its I/O); raise the process-group timeout only if the stall is legitimate."
FIX_MIS = "Make every rank issue the same collectives with the same shapes in the same order (the metric tensor / extra broadcast must not be rank-specific)."

C = {}
def add(id, cmd, cat, line, rank, coll, root, fix, launcher, how, **kw):
    C[id] = dict(id=id, source=SRC.format(id=id, cmd=cmd), category=cat, fatal=cat != "none",
                 decisive_line=line, also_acceptable=kw.pop("also", []), initiating_rank=rank, collateral=coll,
                 operator=None, root_cause=root, fix=fix, launcher=launcher, framework="plain",
                 torch_version="2.13.0", genuine=False, induced_how=how,
                 confirmed_by="induced", confidence="high", **kw)

add("run-r87a-filter-healthy", f"{TR} --nproc-per-node 4 --local-ranks-filter 0,2 train87.py", "none", None, None, [],
    "Healthy 4-rank run; only local ranks 0 and 2 are shown on the console (--local-ranks-filter 0,2).", "Nothing to fix.",
    "torchrun", "no fault (FAULT=none)")
add("run-r87a-filter-raise-hidden", f"FAULT=raise:3:3 RECORD=1 {TR} --nproc-per-node 4 --local-ranks-filter 0,2 train87.py",
    "user.code_error", "KeyError: 'target'", 3,
    ["rank 3's own traceback is not on the console (--local-ranks-filter 0,2); the KeyError appears only in torchrun's Root Cause block, read from rank 3's @record error file",
     "ranks 0 and 2 (shown): gloo 'Connection closed by peer' RuntimeError in loss.backward()", SIGTERM],
    "Rank 3's data loading hit a record without its 'target' field at step 3 and raised KeyError: 'target'.", FIX_KEY,
    "torchrun", "rank 3 deletes rec['target'] at step 3 and indexes it (KeyError); main wrapped in @record; console filtered to local ranks 0,2",
    notes="The culprit rank is hidden from the console by --local-ranks-filter; the evidence is torchrun's summary (error_file traceback) and its 'failed (exitcode: 1) local_rank: 3' line.")
add("run-r87a-filter-sigkill-hidden", f"FAULT=sigkill:1:2 {TR} --nproc-per-node 4 --local-ranks-filter 0,2 train87.py",
    "mem.host_oom", "failed (exitcode: -9) local_rank: 1", 1,
    ["rank 1 is not shown on the console (--local-ranks-filter 0,2)", GLOO_RESET + " (ranks 0 and 2)", SIGTERM],
    "Rank 1 was SIGKILLed at step 2 (no traceback), which the corpus labels as a host OOM kill; the other ranks then lost their gloo connection.",
    FIX_KILL, "torchrun", "rank 1 calls os.kill(os.getpid(), SIGKILL) at step 2; console filtered to local ranks 0,2")
add("run-r87a-filter-hang-hidden", f"FAULT=hang:3:2 PG_TIMEOUT=20 {TR} --nproc-per-node 4 --local-ranks-filter 0,2 train87.py",
    "dist.collective_timeout", "Timed out waiting 20000ms for recv operation to complete", 3,
    ["rank 3 (hidden by --local-ranks-filter) prints nothing; it is SIGTERMed by torchrun (-15 in the summary)",
     "torchrun's Root Cause names a waiting rank (the first to exit), not the silent rank 3"],
    "Rank 3 stalled (slept 90 s) before the step-2 metric all_reduce, so the other ranks' gloo collectives timed out after the 20 s process-group timeout.",
    FIX_HANG, "torchrun", "rank 3 sleeps 90 s before dist.all_reduce at step 2; init_process_group(timeout=20 s); console filtered to local ranks 0,2")
add("run-r87a-filter-raise-shown", f"FAULT=raise:2:4 FAULT_EXC=valueerror {TR} --nproc-per-node 3 --local-ranks-filter 0,2 train87.py",
    "user.code_error", "ValueError: shard 00002: record 71 has 31 features, expected 32", 2,
    ["rank 0: gloo 'Connection closed by peer' RuntimeError", "rank 1 is not shown (--local-ranks-filter 0,2)", SIGTERM],
    "Rank 2's data shard holds a corrupt record with 31 features instead of 32 and its loader raised ValueError at step 4.",
    FIX_VAL, "torchrun", "rank 2 raises ValueError in load_batch at step 4; console filtered to local ranks 0,2")
add("run-r87a-logdir-tee1-raise", f"FAULT=raise:1:3 FAULT_EXC=indexerror {TR} --nproc-per-node 3 --log-dir D --redirects 3 --tee 1 train87.py",
    "user.code_error", "IndexError: list index out of range", 1,
    ["console shows only teed stdout ([defaultN]: lines) and torchrun's summary; all stderr (tracebacks) is only in ranks/attempt_N/<rank>/stderr.log",
     "ranks 0 and 2: gloo 'Connection closed by peer' RuntimeError (in their stderr.log)", SIGTERM],
    "Rank 1's sampler indexed past the end of its 16-sample index window at step 3 (IndexError).", FIX_IDX,
    "torchrun", "rank 1 indexes idx[16 + step] at step 3; --redirects 3 --tee 1 so stderr only goes to files (tree copied to ranks/)",
    decisive_file="attempt_0/1/stderr.log")
add("run-r87a-logdir-tee1-mismatch-detail", f"FAULT=mismatch:2:2 DDP=0 TORCH_DISTRIBUTED_DEBUG=DETAIL {TR} --nproc-per-node 3 --log-dir D --redirects 3 --tee 1 train87.py",
    "dist.collective_mismatch", "RuntimeError: Detected mismatch between collectives on ranks.", 2,
    ["every rank reports the fingerprint mismatch in its own stderr.log; console shows only stdout and torchrun's summary (its Root Cause is whichever rank exited first)"],
    "At step 2 rank 2 all_reduced a 5-element metric tensor while ranks 0 and 1 all_reduced 2 elements; TORCH_DISTRIBUTED_DEBUG=DETAIL's fingerprint check reports the shape mismatch ([5] vs [2]).",
    FIX_MIS, "torchrun", "rank 2 all_reduces torch.tensor of 5 elements at step 2 instead of 2; DETAIL debug; DDP=0 (DDP+DETAIL segfaults in DDP init in torch 2.13 CPU); tree copied to ranks/",
    decisive_file="attempt_0/2/stderr.log")
add("run-r87a-launch-raise", "FAULT=raise:2:2 python -m torch.distributed.launch --nproc-per-node 3 train87.py",
    "user.code_error", "KeyError: 'target'", 2,
    ["launch.py FutureWarning (deprecated, --local-rank passed as argument)", "ranks 0 and 1: gloo 'Connection closed by peer' RuntimeError", SIGTERM],
    "Rank 2's data loading hit a record without its 'target' field at step 2 and raised KeyError: 'target'.", FIX_KEY,
    "torch.distributed.launch", "no --use-env: the script gets --local-rank=N; rank 2 deletes rec['target'] at step 2 and indexes it")
add("run-r87a-launch-sigkill", "FAULT=sigkill:1:3 python -m torch.distributed.launch --nproc-per-node 4 train87.py",
    "mem.host_oom", "failed (exitcode: -9) local_rank: 1", 1,
    ["launch.py FutureWarning (deprecated)", GLOO_RESET, SIGTERM],
    "Rank 1 was SIGKILLed at step 3 (no traceback), which the corpus labels as a host OOM kill; the other ranks lost their gloo connection.",
    FIX_KILL, "torch.distributed.launch", "no --use-env; rank 1 calls os.kill(os.getpid(), SIGKILL) at step 3")
add("run-r87a-launch-useenv-hang", "FAULT=hang:2:2 PG_TIMEOUT=20 python -m torch.distributed.launch --use-env --nproc-per-node 3 train87.py",
    "dist.collective_timeout", "Timed out waiting 20000ms for recv operation to complete", 2,
    ["launch.py FutureWarning (deprecated)", "rank 2 prints nothing and is SIGTERMed", "the launcher's Root Cause names a waiting rank (the first to exit), not the silent rank 2"],
    "Rank 2 stalled (slept 90 s) before the step-2 metric all_reduce, so ranks 0 and 1 timed out after the 20 s process-group timeout.",
    FIX_HANG, "torch.distributed.launch", "--use-env; rank 2 sleeps 90 s before dist.all_reduce at step 2; init_process_group(timeout=20 s)")
add("run-r87a-launch-useenv-mismatch-detail", "FAULT=mismatch:0:3 MISMATCH=extra_broadcast DDP=0 TORCH_DISTRIBUTED_DEBUG=DETAIL python -m torch.distributed.launch --use-env --nproc-per-node 3 train87.py",
    "dist.collective_mismatch", "RuntimeError: Detected mismatch between collectives on ranks.", 0,
    ["launch.py FutureWarning (deprecated)", "ranks 1 and 2 report the same mismatch (their ALLREDUCE vs rank 0's BROADCAST)", SIGTERM],
    "At step 3 rank 0 issued an extra broadcast (OpType=BROADCAST, shape [4]) that ranks 1 and 2 did not, while they ran the metric all_reduce; DETAIL's fingerprint check reports the mismatch.",
    FIX_MIS, "torch.distributed.launch", "--use-env; rank 0 calls dist.broadcast(torch.zeros(4), src=0) at step 3 before the all_reduce; DETAIL debug; DDP=0",
    notes="Without TORCH_DISTRIBUTED_DEBUG=DETAIL the same fault showed only gloo 'Timed out waiting 20000ms' on all ranks (that run was not kept).")
add("run-r87a-elastic-healthy", "FAULT=none python elastic87.py (elastic_launch, 3 workers)", "none", None, None, [],
    "Healthy 3-worker run launched with torch.distributed.launcher.api.elastic_launch from Python.", "Nothing to fix.",
    "elastic_launch", "no fault (FAULT=none)")
add("run-r87a-elastic-raise", "FAULT=raise:1:2 FAULT_EXC=valueerror python elastic87.py (elastic_launch, 3 workers)",
    "user.code_error", "ValueError: shard 00001: record 39 has 31 features, expected 32", 1,
    ["elastic_launch (spawn) terminates the other workers via SIGTERM; ChildFailedError raised in the parent"],
    "Rank 1's data shard holds a corrupt record with 31 features instead of 32 and its loader raised ValueError at step 2.",
    FIX_VAL, "elastic_launch", "elastic_launch(LaunchConfig(nproc_per_node=3, c10d rdzv), worker)(); rank 1 raises ValueError in load_batch at step 2")
add("run-r87a-elastic-record-mismatch-detail", "FAULT=mismatch:1:3 DDP=0 TORCH_DISTRIBUTED_DEBUG=DETAIL RECORD=1 python elastic87.py (elastic_launch, 3 workers)",
    "dist.collective_mismatch", "RuntimeError: Detected mismatch between collectives on ranks.", 1,
    ["elastic_launch reports the first rank to exit as Root Cause; error_*.json (@record) copied next to log.txt"],
    "At step 3 rank 1 all_reduced a 5-element metric tensor while ranks 0 and 2 all_reduced 2 elements; DETAIL's fingerprint check reports the shape mismatch.",
    FIX_MIS, "elastic_launch", "rank 1 all_reduces 5 elements at step 3 instead of 2; worker wrapped in @record; LaunchConfig logs_specs log_dir keeps error.json; DETAIL; DDP=0")
add("run-r87a-record-raise", f"FAULT=raise:2:3 RECORD=1 {TR} --nproc-per-node 4 --log-dir D train87.py",
    "user.code_error", "KeyError: 'target'", 2,
    ["ranks 1 and 3: gloo 'Connection closed by peer' RuntimeError, also captured by @record in their error files", SIGTERM,
     "error_a0_local<N>.json: the @record error files of attempt 0 (copied next to log.txt)"],
    "Rank 2's data loading hit a record without its 'target' field at step 3 and raised KeyError: 'target'.", FIX_KEY,
    "torchrun", "main wrapped in @record (TORCHELASTIC_ERROR_FILE under --log-dir); rank 2 deletes rec['target'] at step 3 and indexes it")
add("run-r87a-standalone-restart-same", "FAULT=raise:1:2 FAULT_EXC=valueerror PREFIX_STORE=1 torchrun --standalone --nproc-per-node 3 --max-restarts 1 train87.py",
    "user.code_error", "ValueError: shard 00001: record 39 has 31 features, expected 32", 1,
    ["attempt 0 and attempt 1 fail identically (rank 1 ValueError at step 2); torchrun restarts once",
     "survivors: gloo 'Connection closed by peer'; in attempt 1 rank 0 aborts ('terminate called without an active exception', exitcode -6) and torchrun's Root Cause names rank 0 (SIGABRT)"],
    "Rank 1's data shard holds a corrupt record with 31 features instead of 32; its loader raised ValueError at step 2 in both the first attempt and the restart.",
    FIX_VAL, "torchrun", "--standalone --max-restarts 1; rank 1 raises ValueError at step 2 in every attempt; PREFIX_STORE=1 (per-attempt PrefixStore, else attempt 1 dies in gloo connectFullMesh)")
add("run-r87a-standalone-restart-diff", "FAULT=raise:2:2 FAULT_EXC=keyerror FAULT_A1=sigkill:1:3 PREFIX_STORE=1 torchrun --standalone --nproc-per-node 3 --max-restarts 1 train87.py",
    "mem.host_oom", "failed (exitcode: -9) local_rank: 1", 1,
    ["attempt 0: rank 2 raised KeyError: 'target' at step 2; torchrun restarted the group (--max-restarts 1)",
     "attempt 1: " + GLOO_RESET, SIGTERM],
    "The job's final failure (restart attempt 1) was rank 1 being SIGKILLed at step 3 (no traceback, labelled host OOM); attempt 0 had failed earlier on rank 2's KeyError and was restarted.",
    FIX_KILL + " Also fix the record missing its 'target' field that broke attempt 0.", "torchrun",
    "--standalone --max-restarts 1; attempt 0: rank 2 KeyError at step 2; attempt 1 (TORCHELASTIC_RESTART_COUNT=1): rank 1 SIGKILLs itself at step 3; PREFIX_STORE=1",
    notes="Two attempts fail differently; the FINAL attempt's cause (the one that exhausted the restarts) is labelled decisive, as in run3-torchrun-restart-diffrank.")
N2 = "torchrun --nnodes 2 --nproc-per-node 2 --master-addr 127.0.0.1 --node-rank {0,1} train87.py (two agents, one log)"
add("run-r87a-nnodes2-raise", "FAULT=raise:3:3 FAULT_EXC=indexerror " + N2, "user.code_error", "IndexError: list index out of range", 3,
    ["other ranks: gloo 'Connection closed by peer' RuntimeError", "each agent prints its own ChildFailedError summary; node 0's names its rank 0 as root cause"],
    "Global rank 3 (node 1, local rank 1) indexed past the end of its sampler's 16-sample window at step 3 (IndexError).", FIX_IDX,
    "torchrun", "two torchrun agents (--nnodes 2 --node-rank 0/1, static rendezvous) on one host writing to one log; global rank 3 indexes idx[16 + step] at step 3")
add("run-r87a-nnodes2-sigkill", "FAULT=sigkill:2:2 " + N2, "mem.host_oom", "failed (exitcode: -9) local_rank: 0", 2,
    [GLOO_RESET + " / 'Connection closed by peer'", "node 0's agent summary names its rank 1 as root cause; node 1's names global rank 2 (SIGKILL)"],
    "Global rank 2 (node 1, local rank 0) was SIGKILLed at step 2 (no traceback), which the corpus labels as a host OOM kill.",
    FIX_KILL, "torchrun", "two torchrun agents on one host; global rank 2 calls os.kill(os.getpid(), SIGKILL) at step 2")
add("run-r87a-nnodes2-hang", "FAULT=hang:1:2 PG_TIMEOUT=20 " + N2, "dist.collective_timeout", "Timed out waiting 20000ms for recv operation to complete", 1,
    ["some ranks report 'Timed out waiting 20000ms for send operation'", "rank 1 prints nothing and is SIGTERMed by node 0's agent"],
    "Global rank 1 (node 0, local rank 1) stalled (slept 90 s) before the step-2 metric all_reduce, so the other ranks timed out after the 20 s process-group timeout.",
    FIX_HANG, "torchrun", "two torchrun agents on one host; global rank 1 sleeps 90 s before dist.all_reduce at step 2; timeout 20 s")

bad = 0
for id, lab in C.items():
    d = os.path.join(POOL, id)
    if not os.path.isdir(d):
        print("MISSING", id); bad += 1; continue
    if lab["decisive_line"] is not None:
        f = os.path.join(d, "ranks", lab["decisive_file"]) if "decisive_file" in lab else os.path.join(d, "log.txt")
        if not any(lab["decisive_line"] in l for l in open(f, errors="replace")):
            print("NOT FOUND", id, lab["decisive_line"]); bad += 1
    with open(os.path.join(d, "label.json"), "w") as fh:
        json.dump(lab, fh, indent=2, ensure_ascii=False); fh.write("\n")
print(len(C), "labels,", bad, "problems")
