"""Write label.json for the round-8 cases (tests/blind/test8/<id>/) and check each decisive / also_acceptable
substring against log.txt (grep -F semantics: a substring of one line).

Labels come from what each run induced (job8.py / run_all.sh) and what its log shows; nothing else read the
logs before. Usage: labels8.py [POOL] [case-id ...]
"""
import json
import os
import sys

POOL = sys.argv[1] if len(sys.argv) > 1 else "/work/main/tests/blind/test8"
RUN = "real run: tests/corpus/generators/launchers/round8/run_all.sh %s (%s), torch %s CPU, gloo"
TV = {"t22": "2.2.2", "t25": "2.5.1", "t28": "2.8.0"}

L = {}


def case(id, cmd, category, decisive, rank, root_cause, fix, induced_how, collateral, launcher,
         also=(), fatal=True, operator=None):
    tv = TV[id.split("-")[1]]
    L[id] = {
        "id": id, "source": RUN % (id, cmd, tv), "category": category, "fatal": fatal, "decisive_line": decisive,
        "also_acceptable": list(also), "initiating_rank": rank, "collateral": list(collateral),
        "operator": operator, "root_cause": root_cause, "fix": fix, "launcher": launcher, "framework": "plain",
        "torch_version": tv, "genuine": False, "induced_how": induced_how, "confirmed_by": "induced",
        "confidence": "high"}


TRN = "torchrun --nnodes 1 --nproc-per-node %d --master-addr 127.0.0.1 --master-port P"
MPI = "mpirun --allow-run-as-root --oversubscribe --tag-output -np %d -x MASTER_ADDR=127.0.0.1 -x MASTER_PORT=P"
SPAWN = "MASTER_ADDR=127.0.0.1 MASTER_PORT=P python job8.py --spawn %d"

# ---------------------------------------------------------------------------------------------- cases
# (filled in case by case after each run; see below)

case("run8-t22-torchrun-tee-raise-last",
     TRN % 4 + " --tee 3 job8.py --scenario raise-key --fault-rank 3 --fault-step 3",
     "user.code_error", "KeyError: 'attention_mask'", 3,
     "Rank 3's collate read sample['attention_mask'] from samples that have no such key (KeyError) at step 4; the "
     "other ranks then lost their peer in the gradient all_reduce.",
     "Give rank 3's shard attention masks (or make the collate build a default mask when the key is missing).",
     "rank 3 stacks s['attention_mask'] over sample dicts without that key at 0-based step 3",
     ["ranks 0, 1, 2: gloo 'Connection closed by peer' RuntimeError in dist.all_reduce(p.grad) of step 4",
      "torchrun's failure summary puts rank 0 under 'Root Cause (first observed failure)' (all four exit with "
      "code 1 within the same second); the real first failure is rank 3"],
     "torchrun")

case("run8-t28-torchrun-raise-rank0",
     TRN % 5 + " job8.py --scenario raise-value --fault-rank 0 --fault-step 2 --log-style asctime",
     "user.code_error", "ValueError: record 4093 of shard train-00007: expected 16 features, got 15", 0,
     "Rank 0's record validator rejected record 4093 of shard train-00007 (15 features, the model wants 16) at "
     "step 3 and raised ValueError; the other ranks then lost rank 0 in the gradient all_reduce.",
     "Fix or drop the malformed record 4093 in shard train-00007 (re-run the preprocessing for that shard).",
     "rank 0 validates a 15-feature record at 0-based step 2 and raises ValueError (torchrun without --tee)",
     ["ranks 1 and 4: gloo 'Connection closed by peer' RuntimeError in dist.all_reduce(p.grad) of step 3",
      "torchrun SIGTERMs ranks 1-4; its summary names rank 0 (exitcode 1) as the root cause"],
     "torchrun")

case("run8-t25-mpspawn-raise-last",
     SPAWN % 3 + " --scenario raise-zero --fault-rank 2 --fault-step 4",
     "user.code_error", "ZeroDivisionError: float division by zero", 2,
     "Rank 2 divided its loss by the number of valid tokens of its step-5 batch, which was 0 (every label masked), "
     "and raised ZeroDivisionError.",
     "Guard the per-token normalization against batches with no valid tokens (clamp the count to >= 1 or skip the batch).",
     "rank 2 computes loss.item() / n_valid with n_valid = 0 at 0-based step 4",
     ["mp.spawn SIGTERMs ranks 0 and 1 at once (they print nothing)",
      "the spawn traceback says 'Process 2 terminated with the following error'"],
     "mp.spawn", also=["-- Process 2 terminated with the following error:"])

case("run8-t28-mpirun-raise",
     MPI % 6 + " python job8.py --scenario raise-type --fault-rank 1 --fault-step 2",
     "user.code_error", "TypeError: unsupported operand type(s) for +: 'Tensor' and 'str'", 1,
     "Rank 1's augmentation added the AUG_JITTER value, read from the environment as a str and never converted, "
     "to its input tensor at step 3 (TypeError); the other ranks then lost rank 1 in the gradient all_reduce.",
     "Convert the environment value to a number (float(os.environ.get('AUG_JITTER', '0.05'))) before using it.",
     "rank 1 does x = x + os.environ.get('AUG_JITTER', '0.05') at 0-based step 2",
     ["ranks 0, 2, 3, 5: gloo 'Connection closed by peer' RuntimeError in dist.all_reduce(p.grad) of step 3",
      "mpirun names [[job,1],1] (rank 1) as the first process to exit non-zero"],
     "mpirun")

case("run8-t25-torchrun-ws8-sigkill-last",
     TRN % 8 + " --tee 3 job8.py --scenario sigkill --fault-rank 7 --fault-step 3",
     "mem.host_oom", "failed (exitcode: -9) local_rank: 7", 7,
     "Rank 7 was SIGKILLed after its step-4 backward (exit -9, no traceback, as the kernel OOM killer does); the "
     "other ranks then lost it in the gradient all_reduce.",
     "Check the host's kernel log (dmesg) for the OOM kill of rank 7 and reduce per-process host memory (or raise "
     "the limit / run fewer processes per host).",
     "rank 7 does os.kill(os.getpid(), SIGKILL) after its backward at 0-based step 3 (8 ranks)",
     ["ranks 0 and 6: gloo 'Read error ... Connection reset by peer' RuntimeError in dist.all_reduce(p.grad), "
      "printed after torchrun started SIGTERMing the survivors",
      "torchrun SIGTERMs ranks 0-6; its summary names rank 7 (exitcode -9) as the root cause"],
     "torchrun", also=["traceback : Signal 9 (SIGKILL) received by PID"])

case("run8-t25-mpspawn-sigkill-rank0",
     SPAWN % 4 + " --scenario sigkill --fault-rank 0 --fault-step 2 --log-style asctime",
     "mem.host_oom", "process 0 terminated with signal SIGKILL", 0,
     "Rank 0 was SIGKILLed after its step-3 backward (no traceback, as the kernel OOM killer does); mp.spawn then "
     "terminated the other ranks.",
     "Check the host's kernel log (dmesg) for the OOM kill of rank 0 and reduce its host memory use (or raise the "
     "limit).",
     "rank 0 does os.kill(os.getpid(), SIGKILL) after its backward at 0-based step 2",
     ["mp.spawn SIGTERMs ranks 1-3 at once (they print nothing)"],
     "mp.spawn")

case("run8-t28-torchrun-exit3-rank0",
     TRN % 3 + " --tee 3 job8.py --scenario exit3 --fault-rank 0 --fault-step 3",
     "user.code_error", "failed (exitcode: 3) local_rank: 0", 0,
     "Rank 0's own code called os._exit(3) after its step-4 backward (no traceback, no exception); the other ranks "
     "then lost rank 0 in the gradient all_reduce.",
     "Find the code path in the training script that exits with status 3 on rank 0 and handle its condition.",
     "rank 0 calls os._exit(3) after its backward at 0-based step 3",
     ["ranks 1 and 2: gloo 'Read error ... Connection reset by peer' RuntimeError in dist.all_reduce(p.grad) of "
      "step 4; under --tee rank 1's traceback is printed before rank 0's 'step 2/8' / 'step 3/8' lines",
      "torchrun SIGTERMs ranks 1, 2; its summary names rank 0 (exitcode 3)"],
     "torchrun", also=["exitcode  : 3 (pid:"])

case("run8-t22-mpirun-segv-last",
     MPI % 4 + " python job8.py --scenario segv --fault-rank 3 --fault-step 2",
     "user.code_error", "mpirun noticed that process rank 3 with PID 0 on node vm exited on signal 11 (Segmentation fault).", 3,
     "Rank 3 segfaulted (SIGSEGV, no traceback) in its own ctypes call reading address 0 after its step-3 "
     "backward; the other ranks then lost it in the gradient all_reduce.",
     "Fix the native/ctypes code on that path (a NULL pointer dereference); run with PYTHONFAULTHANDLER=1 to get "
     "the Python stack of the crash.",
     "rank 3 calls ctypes.string_at(0) after its backward at 0-based step 2",
     ["ranks 0 and 2: gloo 'Connection reset by peer' / 'Connection closed by peer' RuntimeError in "
      "dist.all_reduce(p.grad), printed after mpirun's 'Primary job terminated normally, but 1 process returned a "
      "non-zero exit code' banner"],
     "mpirun")

case("run8-t22-torchrun-hang-rank0-timed",
     TRN % 4 + " --tee 3 job8.py --scenario hang --fault-rank 0 --fault-step 3 --hang-seconds 60 --pg-timeout 15 "
     "--log-style asctime",
     "dist.collective_timeout", "Timed out waiting 15000ms for recv operation to complete", 0,
     "Rank 0 stalled (silently) after its step-4 backward and never joined the gradient all_reduce; ranks 1-3 "
     "timed out in gloo after the 15 s process-group timeout.",
     "Find what rank 0 blocks on before the all_reduce of step 4 (py-spy dump its stack while it hangs) and fix it; "
     "raise the timeout only if that work is legitimately slow.",
     "rank 0 sleeps 60 s (prints nothing) after its backward at 0-based step 3; init_process_group(timeout=15 s)",
     ["ranks 1, 2, 3: gloo 'Timed out waiting 15000ms for recv/send operation to complete' RuntimeError in "
      "dist.all_reduce(p.grad); the last logger line is rank 0's 'step 3/8'",
      "torchrun SIGTERMs rank 0 (which never printed an error) and names rank 1 as 'Root Cause (first observed "
      "failure)'; rank 0 is not in its failure list"],
     "torchrun", also=["Timed out waiting 15000ms for send operation to complete"])

case("run8-t25-torchrun-mbarrier-last",
     TRN % 5 + " job8.py --scenario hang-mbarrier --fault-rank 4 --fault-step 2 --hang-seconds 60 --pg-timeout 15",
     "dist.collective_timeout", "[Rank 0]: Rank 4 failed to pass monitoredBarrier in 15000 ms", 4,
     "Rank 4 stalled (silently) before the monitored_barrier after step 3 ('sync before eval'); rank 0's "
     "monitored_barrier timed out after 15 s and named rank 4 as the rank that failed to respond.",
     "Find what rank 4 blocks on before the pre-eval barrier (py-spy dump its stack while it hangs) and fix it; "
     "raise the barrier timeout only if that work is legitimately slow.",
     "after step 3 every rank calls dist.monitored_barrier(timeout=15 s); rank 4 first sleeps 60 s (prints nothing)",
     ["ranks 1-3: 'Rank N successfully reached monitoredBarrier, but received errors while waiting for send/recv "
      "from rank 0. Please check rank 0 logs for faulty rank.' (they point at rank 0)",
      "torchrun SIGTERMs ranks 0, 1, 2, 4 and names rank 3 as 'Root Cause (first observed failure)'"],
     "torchrun", also=["RuntimeError: [Rank 0]: Rank 4 failed to pass monitoredBarrier in 15000 ms"])

case("run8-t28-mpirun-hang",
     MPI % 3 + " python job8.py --scenario hang --fault-rank 1 --fault-step 2 --hang-seconds 60 --pg-timeout 20",
     "dist.collective_timeout", "Timed out waiting 20000ms for send operation to complete", 1,
     "Rank 1 stalled (silently) after its step-3 backward and never joined the gradient all_reduce; ranks 0 and 2 "
     "timed out in gloo after the 20 s process-group timeout.",
     "Find what rank 1 blocks on before the all_reduce of step 3 (py-spy dump its stack while it hangs) and fix it; "
     "raise the timeout only if that work is legitimately slow.",
     "rank 1 sleeps 60 s (prints nothing) after its backward at 0-based step 2; init_process_group(timeout=20 s)",
     ["rank 2: 'Timed out waiting 20000ms for send operation to complete', rank 0: '... for recv operation to "
      "complete' (RuntimeError in dist.all_reduce(p.grad))",
      "mpirun names [[job,1],0] (rank 0, a waiting rank) as the first process to exit non-zero; rank 1 prints nothing"],
     "mpirun", also=["Timed out waiting 20000ms for recv operation to complete"])

case("run8-t28-torchrun-mismatch-size-detail",
     "TORCH_DISTRIBUTED_DEBUG=DETAIL " + TRN % 4 + " --tee 3 job8.py --scenario mismatch-size --fault-rank 3 "
     "--fault-step 2 --pg-timeout 20",
     "dist.collective_mismatch",
     "Rank 3 is running collective: CollectiveFingerPrint(SequenceNumber=18, OpType=ALLREDUCE, TensorShape=[2]", 3,
     "At step 3 rank 3 all-reduced its loss metric as a 2-element tensor (loss, n_samples) while ranks 0-2 "
     "all-reduced a 1-element tensor; the DETAIL collective fingerprint check caught the shape mismatch (1 vs 2).",
     "Make every rank all-reduce a metric tensor of the same shape (build (loss, n_samples) on all ranks or on none).",
     "rank 3 builds torch.cat([metric, n_samples]) at 0-based step 2; TORCH_DISTRIBUTED_DEBUG=DETAIL",
     ["ranks 0, 1, 2 print the same mismatch from their side ('Rank N is running collective: ... TensorShape=[1] "
      "..., but Rank 3 is running collective: ... TensorShape=[2]')",
      "torchrun names rank 1 as 'Root Cause (first observed failure)'"],
     "torchrun", also=["Collectives differ in the following aspects:   Tensor Tensor shapes: 2vs 1"])

case("run8-t22-mpirun-mismatch-op-detail-rank0",
     MPI % 4 + " -x TORCH_DISTRIBUTED_DEBUG=DETAIL python job8.py --scenario mismatch-op --fault-rank 0 "
     "--fault-step 3 --pg-timeout 20",
     "dist.collective_mismatch",
     "Rank 0 is running collective: CollectiveFingerPrint(SequenceNumber=23, OpType=BROADCAST", 0,
     "At step 4 rank 0 broadcast its loss metric where ranks 1-3 all-reduced it; the DETAIL collective fingerprint "
     "check caught the op mismatch (BROADCAST vs ALLREDUCE).",
     "Make every rank call the same collective for the metric (all_reduce on all ranks, or broadcast from rank 0 "
     "on all ranks).",
     "rank 0 calls dist.broadcast(metric, src=0) at 0-based step 3 where the others call dist.all_reduce(metric); "
     "TORCH_DISTRIBUTED_DEBUG=DETAIL",
     ["ranks 1, 2, 3 print the same mismatch from their side ('... OpType=ALLREDUCE ..., but Rank 0 is running "
      "collective: ... OpType=BROADCAST')",
      "mpirun names [[job,1],0] (rank 0) as the first process to exit non-zero"],
     "mpirun", also=["Op type: BROADCASTvs ALLREDUCE", "Op type: ALLREDUCEvs BROADCAST"])

case("run8-t25-label-store-wrong-port-rank0",
     "launch_label.sh 4 29813 0 29814 python job8.py --pg-timeout 20 (4 processes started by a bash loop, "
     "output prefixed 'N: ' as srun --label does; rank 0 gets MASTER_PORT=29814, ranks 1-3 29813)",
     "dist.peer_or_store_failure",
     "torch.distributed.DistStoreError: Timed out after 21 seconds waiting for clients. 1/4 clients joined.", 0,
     "Rank 0 was started with MASTER_PORT=29814 while ranks 1-3 got 29813, so rank 0 hosted the TCPStore on the "
     "wrong port: nobody listened on 29813 (ranks 1-3 timed out connecting) and rank 0 timed out waiting for its "
     "clients (1/4 joined).",
     "Give every rank the same MASTER_ADDR/MASTER_PORT (fix the stale port in rank 0's launch environment).",
     "the bash launcher gives rank 0 (the TCPStore host under env://) MASTER_PORT=29814, the others 29813; "
     "init_process_group(timeout=20 s)",
     ["ranks 1, 2, 3: '[c10d] The client socket has timed out after 20000ms while trying to connect to "
      "(127.0.0.1, 29813)' (retry warnings, then DistNetworkError); they print first and most",
      "the launcher itself exits 0 (its `wait` returns the last job's status)"],
     "python", also=["host=vm master=127.0.0.1:29814"])

case("run8-t22-label-store-wrong-port-last",
     "launch_label.sh 3 29815 2 29816 python job8.py --pg-timeout 20 (3 processes started by a bash loop, "
     "output prefixed 'N: ' as srun --label does; rank 2 gets MASTER_PORT=29816, ranks 0-1 29815)",
     "dist.peer_or_store_failure",
     "torch.distributed.DistNetworkError: The client socket has timed out after 20s while trying to connect to (127.0.0.1, 29816).", 2,
     "Rank 2 was started with MASTER_PORT=29816 while the TCPStore (rank 0) listened on 29815, so rank 2 could not "
     "connect and the others timed out waiting for the third client.",
     "Give every rank the same MASTER_ADDR/MASTER_PORT (fix the stale port in rank 2's launch environment).",
     "the bash launcher gives rank 2 MASTER_PORT=29816, ranks 0 and 1 29815; init_process_group(timeout=20 s)",
     ["rank 0: 'DistStoreError: Timed out after 21 seconds waiting for clients. 2/3 clients joined.'",
      "rank 1: 'DistStoreError: Socket Timeout' in ProcessGroupGloo construction",
      "the launcher itself exits 0 (its `wait` returns the last job's status)"],
     "python", also=["[c10d] The client socket has timed out after 20s while trying to connect to (127.0.0.1, 29816)."])

case("run8-t25-mpirun-twofail-timed",
     MPI % 4 + " python job8.py --scenario twofail --fault-rank 2 --fault-step 1 --fault-rank2 0 --fault-step2 3 "
     "--accum 8 --step-seconds 0.5 --linger-seconds 3 --log-style asctime",
     "user.code_error", "ValueError: record 4093 of shard train-00007: expected 16 features, got 15", 2,
     "Rank 2 failed first (06:27:25,781 by the timestamps): its record validator rejected record 4093 of shard "
     "train-00007 (15 features) at micro-step 2 and raised ValueError; rank 0's FileNotFoundError for "
     "data/shard-00041.bin came ~1 s later and independently, and rank 0 exited first only because rank 2 was "
     "still writing its emergency checkpoint.",
     "Fix or drop the malformed record 4093 in shard train-00007 (and restore rank 0's missing shard-00041.bin).",
     "gradient accumulation over 8 micro-steps (no collective before micro-step 8), 0.5 s each; rank 2 raises "
     "ValueError at micro-step 2, logs it (logger.exception) and sleeps 3 s writing an emergency checkpoint before "
     "re-raising; rank 0 opens a missing shard at micro-step 4 and re-raises at once",
     ["rank 0 fails independently ~1 s later by the timestamps: FileNotFoundError for data/shard-00041.bin at "
      "micro-step 4 (logged, then the uncaught [rank0]: traceback)",
      "rank 0 exits first, so mpirun names rank 0 ([[job,1],0]) as the first process to exit non-zero; rank 2 is "
      "killed by mpirun before it re-raises (no uncaught traceback from rank 2)",
      "ranks 1 and 3 keep logging micro-steps until mpirun kills them"],
     "mpirun")

case("run8-t22-torchrun-twofail-untimed",
     TRN % 5 + " --tee 3 job8.py --scenario twofail --fault-rank 4 --fault-step 0 --fault-rank2 1 --fault-step2 2 "
     "--accum 8 --step-seconds 0.5 --linger-seconds 3",
     "user.code_error", "ValueError: record 4093 of shard train-00007: expected 16 features, got 15", 4,
     "Rank 4 failed first (its error is printed at micro-step 1, before any other failure): its record validator "
     "rejected record 4093 of shard train-00007 (15 features) and raised ValueError; rank 1's FileNotFoundError "
     "for data/shard-00041.bin came two micro-steps later and independently, and rank 1 exited first only because "
     "rank 4 was still writing its emergency checkpoint.",
     "Fix or drop the malformed record 4093 in shard train-00007 (and restore rank 1's missing shard-00041.bin).",
     "gradient accumulation over 8 micro-steps (no collective before micro-step 8), 0.5 s each; rank 4 raises "
     "ValueError at micro-step 1, prints it with its traceback and sleeps 3 s writing an emergency checkpoint before "
     "re-raising; rank 1 opens a missing shard at micro-step 3 and re-raises at once. print() lines, no timestamps",
     ["rank 1 fails independently two micro-steps later: FileNotFoundError for data/shard-00041.bin (printed, then "
      "the uncaught traceback)",
      "rank 1 exits first: torchrun SIGTERMs ranks 0, 2, 3, 4 (rank 4 before it re-raises) and names rank 1 as "
      "'Root Cause (first observed failure)'",
      "ranks 0, 2, 3 keep printing micro-steps until torchrun stops them"],
     "torchrun")

case("run8-t28-torchrun-hostoom",
     "R8_OOM_CGROUP=/sys/fs/cgroup/memory/r8-oom " + TRN % 3 + " --tee 3 job8.py --scenario hostoom --fault-rank 1 "
     "--fault-step 3 (cgroup v1 memory.limit_in_bytes = memory.memsw.limit_in_bytes = 1 GiB)",
     "mem.host_oom", "failed (exitcode: -9) local_rank: 1", 1,
     "Rank 1 ran out of host memory in its 1 GiB memory cgroup while building an in-memory sample cache at step 4 "
     "and was SIGKILLed by the kernel OOM killer (exit -9, no traceback); the other ranks then lost it in the "
     "gradient all_reduce.",
     "Do not cache the whole dataset in host memory on one rank (stream or memory-map it), or raise the memory "
     "limit of the job's cgroup/container.",
     "rank 1 writes its pid into a cgroup-v1 memory cgroup (limit 1 GiB incl. swap) at startup; at 0-based step 3 it "
     "allocates and touches 256 MiB tensors until the kernel kills it (after 768 MiB of cache; the cgroup's "
     "memory.oom_control showed oom_kill 1, dmesg 'Memory cgroup out of memory: Killed process ... (python3)')",
     ["ranks 0 and 2: gloo 'Connection closed by peer' RuntimeError in dist.all_reduce(p.grad) of step 4",
      "torchrun SIGTERMs ranks 0, 2; its summary names rank 1 (exitcode -9, 'Signal 9 (SIGKILL) received by PID')"],
     "torchrun", also=["traceback : Signal 9 (SIGKILL) received by PID"])

case("run8-t25-mpirun-hostoom-rank0",
     MPI % 4 + " -x R8_OOM_CGROUP=/sys/fs/cgroup/memory/r8-oom python job8.py --scenario hostoom --fault-rank 0 "
     "--fault-step 2 --log-style asctime (cgroup v1 memory.limit_in_bytes = memory.memsw.limit_in_bytes = 1 GiB)",
     "mem.host_oom", "mpirun noticed that process rank 0 with PID 0 on node vm exited on signal 9 (Killed).", 0,
     "Rank 0 ran out of host memory in its 1 GiB memory cgroup while building an in-memory sample cache at step 3 "
     "and was SIGKILLed by the kernel OOM killer (signal 9, no traceback); the other ranks then lost it in the "
     "gradient all_reduce.",
     "Do not cache the whole dataset in host memory on rank 0 (stream or memory-map it), or raise the memory "
     "limit of the job's cgroup/container.",
     "rank 0 writes its pid into a cgroup-v1 memory cgroup (limit 1 GiB incl. swap) at startup; at 0-based step 2 it "
     "allocates and touches 256 MiB tensors until the kernel kills it (after 768 MiB of cache; the cgroup's "
     "memory.oom_control showed oom_kill 1, dmesg 'Memory cgroup out of memory: Killed process ... (python)')",
     ["ranks 1 and 3: gloo 'Connection closed by peer' RuntimeError in dist.all_reduce(p.grad) of step 3, printed "
      "after mpirun's 'Primary job terminated normally, but 1 process returned a non-zero exit code' banner"],
     "mpirun")

# ---- main
def main():
    sel = sys.argv[2:]
    bad = 0
    for id, lab in L.items():
        if sel and id not in sel:
            continue
        d = os.path.join(POOL, id)
        if not os.path.isfile(os.path.join(d, "log.txt")):
            print("MISSING", id)
            bad += 1
            continue
        lines = open(os.path.join(d, "log.txt"), errors="replace").read().splitlines()
        for s in [lab["decisive_line"]] + lab["also_acceptable"]:
            n = sum(s in ln for ln in lines)
            if n < 1:
                print("NOT FOUND", id, repr(s))
                bad += 1
        with open(os.path.join(d, "label.json"), "w") as f:
            json.dump(lab, f, indent=2)
            f.write("\n")
        print("ok", id, lab["category"], "rank", lab["initiating_rank"], lab["torch_version"])
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
