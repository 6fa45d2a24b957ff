"""Writes label.json for every round89a case in POOL (default /tmp/h89a/pool) and checks each decisive_line is an
exact substring of a line of log.txt (or of ranks/<decisive_file>). Labels come from what was induced."""
import json, os, sys

POOL = sys.argv[1] if len(sys.argv) > 1 else "/tmp/h89a/pool"
SRC = "real run: tests/corpus/generators/launchers/round89a/run_all.sh {id} ({cmd}), torch 2.13.0 CPU, gloo"
MP = "mpiexec.mpich -genv MASTER_ADDR 127.0.0.1 -genv MASTER_PORT P"
OM = "mpirun.openmpi --allow-run-as-root --oversubscribe -x MASTER_ADDR=127.0.0.1 -x MASTER_PORT=P -x FAULT ..."
CLOSED = "survivors: gloo 'Connection closed by peer ... remote worker crashing' RuntimeError"
RESET = "survivors: gloo 'Read error ... Connection reset by peer' RuntimeError"
HYDRA_EXIT1 = "Hydra prints no BAD TERMINATION block for exit code 1; it waits for the other ranks, which fail on their own gloo errors"
def HYDRA_PID(who):
    return ("Hydra's BAD TERMINATION block reports 'PID <n> RUNNING AT vm' and 'EXIT CODE: 9' without a rank number; "
            f"here the PID is {who} (match it against the ranks' 'starting ... pid' lines)")
OMPI_ABORT = "Open MPI: 'Primary job terminated normally, but 1 process returned a non-zero exit code. Per user-direction, the job has been aborted.'"
OMPI_FIRST = "Open MPI's 'The first process to do so was: Process name: [[jobid,1],N] Exit code: 1' names the first rank to EXIT"
FIX_KEY = "Make the data pipeline write/validate the 'target' field of every record (or skip records without it) before training."
FIX_VAL = "Repair or drop the corrupt 31-feature record in that shard (validate feature width when building the shard)."
FIX_IDX = "Fix the sampler's index window so it stays within the 16-sample batch (off-by-one past the end)."
FIX_KILL = "Find what SIGKILLed the rank (kernel OOM killer in dmesg/cgroup memory events, or a scheduler kill) and give it more host memory or reduce its usage."
FIX_OOM = "Bound the rank's in-memory sample cache (evict or memory-map it) or raise the job's memory limit; check dmesg / the cgroup's memory.oom_control."
FIX_HANG = "Find why that rank stalled before the collective (py-spy dump it, check its I/O); raise the process-group timeout only if the stall is legitimate."
FIX_MIS = "Make every rank issue the same collectives with the same shapes in the same order (the metric tensor / extra broadcast must not be rank-specific)."
FIX_CXX = "Install a working C++ compiler on that node or fix the compiler path (CXX / torch._inductor.config.cpp.cxx) so inductor can build its CPU kernels."
FIX_FG = "Make the forward branchless (e.g. always clamp, or torch.where / torch.cond) or compile without fullgraph=True so Dynamo can graph-break."
DETAIL_NOTE = "TORCH_DISTRIBUTED_DEBUG=DETAIL; DDP=0 (grads averaged with explicit all_reduce: DDP + DETAIL segfaults in torch 2.13 CPU)"

C = {}
def add(id, cmd, cat, line, rank, coll, root, fix, launcher, how, **kw):
    C[id] = dict(id=id, source=SRC.format(id=id, cmd=cmd), category=cat, fatal=True,
                 decisive_line=line, also_acceptable=kw.pop("also", []), initiating_rank=rank, collateral=coll,
                 operator=None, root_cause=root, fix=fix, launcher=launcher, framework="plain",
                 torch_version="2.13.0", genuine=False, induced_how=how,
                 confirmed_by="induced", confidence="high", **kw)

# ---------------- MPICH Hydra -l ----------------
add("run89-mpich-l-raise", f"FAULT=raise:2:3 {MP} -l -n 3 python train89a.py", "user.code_error", "KeyError: 'target'", 2,
    [CLOSED + " (ranks 0 and 1, in loss.backward)", HYDRA_EXIT1],
    "Rank 2's data loading hit a record without its 'target' field at step 3 and raised KeyError: 'target'.", FIX_KEY,
    "mpiexec.mpich", "rank 2 deletes rec['target'] at step 3 and indexes it; Hydra -prepend-rank (-l) prefixes lines with '[N] '")
add("run89-mpich-l-sigkill", f"FAULT=sigkill:3:2 {MP} -l -n 4 python train89a.py", "mem.host_oom",
    "YOUR APPLICATION TERMINATED WITH THE EXIT STRING: Killed (signal 9)", 3,
    [RESET + " / 'Connection closed by peer' (ranks 0 and 2; rank 1 is killed by Hydra's cleanup first)", HYDRA_PID("rank 0's, not the killed rank 3's")],
    "Rank 3 (the last rank) was SIGKILLed at step 2 with no traceback, which the corpus labels as a host OOM kill; the other ranks then lost their gloo connection.",
    FIX_KILL, "mpiexec.mpich", "rank 3 calls os.kill(os.getpid(), SIGKILL) at step 2; -l prefix", also=["=   EXIT CODE: 9"])
add("run89-mpich-l-hang", f"FAULT=hang:1:2 HANG_S=90 PG_TIMEOUT=20 {MP} -l -n 3 python train89a.py", "dist.collective_timeout",
    "Timed out waiting 20000ms for recv operation to complete", 1,
    ["rank 2: 'Timed out waiting 20000ms for send operation to complete'",
     "Hydra does not kill rank 1 when ranks 0 and 2 exit with code 1: rank 1 wakes after its 90 s stall and fails with 'Connection closed by peer' in the all_reduce (its traceback is last, but it is the stalled rank, not a crash)"],
    "Rank 1 stalled (slept 90 s) before the step-2 metric all_reduce, so ranks 0 and 2 timed out after the 20 s process-group timeout.",
    FIX_HANG, "mpiexec.mpich", "rank 1 sleeps 90 s before dist.all_reduce at step 2; init_process_group(timeout=20 s); -l prefix")
add("run89-mpich-l-compile-cxx", f"FAULT=compile:2:0 COMPILE=cxx PG_TIMEOUT=120 {MP} -l -n 4 python train89a.py", "compile.cpp_toolchain_missing",
    "torch._inductor.exc.InductorError: InvalidCxxCompiler: No working C++ compiler found in torch._inductor.config.cpp.cxx: ('/nonexistent/g++',)", 2,
    [CLOSED + " (ranks 0, 1, 3, which compiled fine)", "Dynamo 'Profiler record function ... will be ignored' warnings on every rank (benign)", HYDRA_EXIT1],
    "Rank 2's inductor had no working C++ compiler (its cpp.cxx pointed at /nonexistent/g++), so torch.compile failed on that rank's first forward.",
    FIX_CXX, "mpiexec.mpich", "rank 2 alone sets torch._inductor.config.cpp.cxx = ('/nonexistent/g++',) before torch.compile(model) runs; -l prefix")
# ---------------- MPICH Hydra -prepend-pattern ----------------
add("run89-mpich-pattern-mismatch-detail", f"FAULT=mismatch:2:3 MISMATCH=size DDP=0 TORCH_DISTRIBUTED_DEBUG=DETAIL {MP} -prepend-pattern '[%r] ' -n 4 python train89a.py",
    "dist.collective_mismatch", "RuntimeError: Detected mismatch between collectives on ranks. Rank 2 is running collective: CollectiveFingerPrint(SequenceNumber=23, OpType=ALLREDUCE, TensorShape=[5]", 2,
    ["ranks 0, 1, 3 report the same mismatch from their side (their TensorShape=[2] vs rank 2's [5])", HYDRA_EXIT1],
    "At step 3 rank 2 all_reduced a 5-element metric tensor while the other ranks all_reduced 2 elements; DETAIL's fingerprint check reports the shape mismatch.",
    FIX_MIS, "mpiexec.mpich", "rank 2 all_reduces torch.tensor of 5 elements at step 3 instead of 2; " + DETAIL_NOTE + "; -prepend-pattern '[%r] '",
    also=["RuntimeError: Detected mismatch between collectives on ranks."])
add("run89-mpich-pattern-sigkill", f"FAULT=sigkill:1:4 {MP} -prepend-pattern '[%r] ' -n 3 python train89a.py", "mem.host_oom",
    "YOUR APPLICATION TERMINATED WITH THE EXIT STRING: Killed (signal 9)", 1,
    [RESET + " (ranks 0 and 2)", HYDRA_PID("the killed rank 1's")],
    "Rank 1 was SIGKILLed at step 4 with no traceback, which the corpus labels as a host OOM kill; ranks 0 and 2 then lost their gloo connection.",
    FIX_KILL, "mpiexec.mpich", "rank 1 calls os.kill(os.getpid(), SIGKILL) at step 4; -prepend-pattern '[%r] '", also=["=   EXIT CODE: 9"])
add("run89-mpich-pattern-hostoom", f"FAULT=hostoom:2:1 OOM_CGROUP=/sys/fs/cgroup/memory/h89a_oom {MP} -prepend-pattern '%h:%r| ' -n 3 python train89a.py",
    "mem.host_oom", "YOUR APPLICATION TERMINATED WITH THE EXIT STRING: Killed (signal 9)", 2,
    ["rank 2's own last lines: 'sample cache holds 768 MiB' (growing), then nothing", CLOSED + " (rank 0; rank 1 is killed by Hydra's cleanup)", HYDRA_PID("rank 0's, not the OOM-killed rank 2's")],
    "Rank 2 kept growing an in-memory sample cache from step 1 inside a 1 GiB memory cgroup until the kernel OOM killer SIGKILLed it.",
    FIX_OOM, "mpiexec.mpich",
    "rank 2 writes its pid into a cgroup-v1 memory cgroup (memory.limit_in_bytes = memsw = 1 GiB) at startup, then appends touched 256 MiB tensors from step 1; -prepend-pattern '%h:%r| '",
    also=["=   EXIT CODE: 9"],
    notes="Kernel OOM kill confirmed after the run: the cgroup's memory.oom_control showed oom_kill 1 and dmesg 'Memory cgroup out of memory: Killed process <pid> (python)' (not part of log.txt).")
add("run89-mpich-pattern-compile-cxx", f"FAULT=compile:1:0 COMPILE=cxx PG_TIMEOUT=120 {MP} -prepend-pattern 'rank %r@%h: ' -n 3 python train89a.py",
    "compile.cpp_toolchain_missing",
    "torch._inductor.exc.InductorError: InvalidCxxCompiler: No working C++ compiler found in torch._inductor.config.cpp.cxx: ('/nonexistent/g++',)", 1,
    [CLOSED + " (ranks 0 and 2, which compiled fine)", HYDRA_EXIT1],
    "Rank 1's inductor had no working C++ compiler (its cpp.cxx pointed at /nonexistent/g++), so torch.compile failed on that rank's first forward.",
    FIX_CXX, "mpiexec.mpich", "rank 1 alone sets torch._inductor.config.cpp.cxx = ('/nonexistent/g++',) before torch.compile(model) runs; -prepend-pattern 'rank %r@%h: '")
# ---------------- MPICH Hydra, no prefix ----------------
add("run89-mpich-plain-raise-rank0", f"FAULT=raise:0:2 FAULT_EXC=valueerror {MP} -n 3 python train89a.py", "user.code_error",
    "ValueError: shard 00000: record 39 has 31 features, expected 32", 0,
    [CLOSED + " (ranks 1 and 2)", HYDRA_EXIT1, "no launcher prefix: ranks are told apart only by the '[rankN]:' prefix torch puts on tracebacks"],
    "Rank 0's data shard holds a corrupt record with 31 features instead of 32 and its loader raised ValueError at step 2.", FIX_VAL,
    "mpiexec.mpich", "rank 0 raises ValueError in load_batch at step 2; no output prefix")
add("run89-mpich-plain-hang", f"FAULT=hang:3:3 HANG_S=90 PG_TIMEOUT=20 {MP} -n 4 python train89a.py", "dist.collective_timeout",
    "Timed out waiting 20000ms for recv operation to complete", 3,
    ["ranks 1 and 2 time out (recv) after 20 s; rank 0 fails with gloo 'Connection closed by peer' once a peer exits",
     "Hydra does not kill rank 3 when the others exit with code 1: rank 3 wakes after its 90 s stall and fails with 'Connection closed by peer' (last traceback, but it is the stalled rank)"],
    "Rank 3 (the last rank) stalled (slept 90 s) before the step-3 metric all_reduce, so ranks 0-2 timed out after the 20 s process-group timeout.",
    FIX_HANG, "mpiexec.mpich", "rank 3 sleeps 90 s before dist.all_reduce at step 3; init_process_group(timeout=20 s); no output prefix")
add("run89-mpich-plain-mismatch", f"FAULT=mismatch:1:2 MISMATCH=hist {MP} -n 3 python train89a.py", "dist.collective_mismatch",
    "op.preamble.length <= op.nbytes. 44 vs 4. Received data size doesn't match expected size. Is there a distributed collective mismatch in your code?", 1,
    ["a neighbouring rank in gloo's ring (not rank 1) aborts with 'terminate called after throwing an instance of 'gloo::EnforceNotMet''; Hydra reports EXIT CODE: 6 and 'Terminated (signal 15)' for the rest",
     "no [rankN] prefix on the enforce message (it is printed by std::terminate, not Python), so the log does not say which rank aborted nor which sent the larger tensor",
     RESET + " (rank 2)"],
    "At step 2 rank 1 all_reduced a 64-element metric tensor (extra 62-bin histogram) while ranks 0 and 2 all_reduced 2 elements; gloo's receive-size check on a peer aborted the job.",
    FIX_MIS, "mpiexec.mpich", "rank 1 all_reduces torch.cat([metric, histc(y, 62)]) (64 elements) at step 2 instead of 2; no DETAIL; no output prefix",
    notes="With a 5-vs-2 element mismatch (MISMATCH=size) gloo completed the all_reduce silently with a wrong value and the job only failed later with 'Timed out waiting 20000ms for send operation'; that run was replaced by this one.")
add("run89-mpich-plain-compile-fullgraph", f"FAULT=compile:3:0 COMPILE=fullgraph DDP=0 PG_TIMEOUT=120 {MP} -n 4 python train89a.py",
    "compile.graph_break_data_dependent", "torch._dynamo.exc.Unsupported: Data-dependent branching", 3,
    [CLOSED + " (ranks 0-2, in their gradient all_reduce)", HYDRA_EXIT1],
    "Only rank 3's model has its 'skip_outliers' branch enabled (if x.abs().max() > 3.0), a data-dependent Python branch that Dynamo cannot trace under torch.compile(fullgraph=True).",
    FIX_FG, "mpiexec.mpich", "all ranks torch.compile(model, fullgraph=True); only rank 3's Net has skip_outliers=True; DDP=0 (compiling a DDP-wrapped module with fullgraph=True fails on every rank); no output prefix")
# ---------------- Open MPI --timestamp-output ----------------
add("run89-ompi-timestamp-raise", f"FAULT=raise:1:3 FAULT_EXC=indexerror {OM} -np 4 --timestamp-output python train89a.py", "user.code_error",
    "IndexError: list index out of range", 1,
    [CLOSED + " (ranks 0 and 2; rank 3 is killed by mpirun before it reports)", OMPI_ABORT, OMPI_FIRST + " (here rank 1, the culprit)"],
    "Rank 1's sampler indexed past the end of its 16-sample index window at step 3 (IndexError).", FIX_IDX,
    "mpirun.openmpi", "rank 1 indexes idx[16 + step] at step 3; --timestamp-output prefixes every line with the date and <stdout>/<stderr>")
add("run89-ompi-timestamp-hang", f"FAULT=hang:2:2 HANG_S=90 PG_TIMEOUT=20 {OM} -np 3 --timestamp-output python train89a.py", "dist.collective_timeout",
    "Timed out waiting 20000ms for recv operation to complete", 2,
    ["ranks 0 and 1 time out (recv) after 20 s", "rank 2 prints nothing and is killed by mpirun", OMPI_FIRST + " (rank 0, a waiting rank, not the stalled rank 2)"],
    "Rank 2 (the last rank) stalled (slept 90 s) before the step-2 metric all_reduce, so ranks 0 and 1 timed out after the 20 s process-group timeout.",
    FIX_HANG, "mpirun.openmpi", "rank 2 sleeps 90 s before dist.all_reduce at step 2; init_process_group(timeout=20 s); --timestamp-output")
add("run89-ompi-timestamp-hostoom", f"FAULT=hostoom:3:2 OOM_CGROUP=/sys/fs/cgroup/memory/h89a_oom {OM} -np 4 --timestamp-output python train89a.py",
    "mem.host_oom", "mpirun.openmpi noticed that process rank 3 with PID 0 on node vm exited on signal 9 (Killed).", 3,
    ["rank 3's own last lines: 'sample cache holds 768 MiB' (growing), then nothing", CLOSED + " (ranks 0, 1, 2)", OMPI_ABORT],
    "Rank 3 kept growing an in-memory sample cache from step 2 inside a 1 GiB memory cgroup until the kernel OOM killer SIGKILLed it.",
    FIX_OOM, "mpirun.openmpi",
    "rank 3 writes its pid into a cgroup-v1 memory cgroup (memory.limit_in_bytes = memsw = 1 GiB) at startup, then appends touched 256 MiB tensors from step 2; --timestamp-output",
    notes="Kernel OOM kill confirmed after the run: the cgroup's memory.oom_control showed oom_kill 1 (dmesg 'Memory cgroup out of memory'), not part of log.txt.")
# ---------------- Open MPI --merge-stderr-to-stdout --tag-output ----------------
add("run89-ompi-tag-sigkill", f"FAULT=sigkill:2:3 {OM} -np 3 --merge-stderr-to-stdout --tag-output python train89a.py", "mem.host_oom",
    "mpirun.openmpi noticed that process rank 2 with PID 0 on node vm exited on signal 9 (Killed).", 2,
    [RESET + " (ranks 0 and 1)", OMPI_ABORT],
    "Rank 2 (the last rank) was SIGKILLed at step 3 with no traceback, which the corpus labels as a host OOM kill; ranks 0 and 1 then lost their gloo connection.",
    FIX_KILL, "mpirun.openmpi", "rank 2 calls os.kill(os.getpid(), SIGKILL) at step 3; --tag-output prefixes '[1,N]<stdout>:' / '<stderr>:'")
add("run89-ompi-tag-mismatch", f"FAULT=mismatch:3:4 MISMATCH=hist {OM} -np 4 --merge-stderr-to-stdout --tag-output python train89a.py",
    "dist.collective_mismatch",
    "op.preamble.length <= op.nbytes. 32 vs 4. Received data size doesn't match expected size. Is there a distributed collective mismatch in your code?", 3,
    ["rank 2 (gloo ring neighbour receiving rank 3's larger chunk) aborts: 'terminate called after throwing an instance of 'gloo::EnforceNotMet''; mpirun: 'process rank 2 ... exited on signal 6 (Aborted)'",
     CLOSED + " (ranks 0 and 1)", OMPI_ABORT],
    "At step 4 rank 3 all_reduced a 64-element metric tensor (extra 62-bin histogram) while ranks 0-2 all_reduced 2 elements; gloo's receive-size check on rank 2 aborted it.",
    FIX_MIS, "mpirun.openmpi", "rank 3 all_reduces torch.cat([metric, histc(y, 62)]) (64 elements) at step 4 instead of 2; no DETAIL; --merge-stderr-to-stdout --tag-output",
    notes="The rank that reports the mismatch (rank 2, aborted by SIGABRT) is not the rank that issued the wrong size (rank 3). With a 5-vs-2 mismatch gloo completed silently and the job only timed out later; that run was replaced.")
add("run89-ompi-tag-compile-cxx", f"FAULT=compile:3:0 COMPILE=cxx PG_TIMEOUT=120 {OM} -np 4 --merge-stderr-to-stdout --tag-output python train89a.py",
    "compile.cpp_toolchain_missing",
    "torch._inductor.exc.InductorError: InvalidCxxCompiler: No working C++ compiler found in torch._inductor.config.cpp.cxx: ('/nonexistent/g++',)", 3,
    [CLOSED + " (ranks 0 and 2, which compiled fine; rank 1 is killed by mpirun before it reports)", OMPI_ABORT, OMPI_FIRST + " (rank 3, the culprit)"],
    "Rank 3's inductor had no working C++ compiler (its cpp.cxx pointed at /nonexistent/g++), so torch.compile failed on that rank's first forward.",
    FIX_CXX, "mpirun.openmpi", "rank 3 alone sets torch._inductor.config.cpp.cxx = ('/nonexistent/g++',) before torch.compile(model) runs; --tag-output")
# ---------------- Open MPI --output-filename DIR ----------------
add("run89-ompi-outfile-raise", f"FAULT=raise:3:2 FAULT_EXC=valueerror {OM} -np 4 --output-filename DIR python train89a.py", "user.code_error",
    "ValueError: shard 00003: record 39 has 31 features, expected 32", 3,
    [CLOSED + " (ranks 0-2)", OMPI_ABORT, OMPI_FIRST + " (rank 3)",
     "ranks/1/rank.N/{stdout,stderr}: Open MPI's per-rank files (the console also shows the same output, untagged)"],
    "Rank 3's data shard holds a corrupt record with 31 features instead of 32 and its loader raised ValueError at step 2.", FIX_VAL,
    "mpirun.openmpi", "rank 3 raises ValueError in load_batch at step 2; --output-filename tree copied to ranks/",
    decisive_file="1/rank.3/stderr")
add("run89-ompi-outfile-hostoom", f"FAULT=hostoom:1:3 OOM_CGROUP=/sys/fs/cgroup/memory/h89a_oom {OM} -np 3 --output-filename DIR python train89a.py",
    "mem.host_oom", "mpirun.openmpi noticed that process rank 1 with PID 0 on node vm exited on signal 9 (Killed).", 1,
    ["ranks/1/rank.1/stderr is empty; its stdout ends with 'sample cache holds 768 MiB'", CLOSED + " (ranks 0 and 2)", OMPI_ABORT,
     "the kill is only stated on the console (log.txt), not in the per-rank files"],
    "Rank 1 kept growing an in-memory sample cache from step 3 inside a 1 GiB memory cgroup until the kernel OOM killer SIGKILLed it.",
    FIX_OOM, "mpirun.openmpi",
    "rank 1 writes its pid into a cgroup-v1 memory cgroup (memory.limit_in_bytes = memsw = 1 GiB) at startup, then appends touched 256 MiB tensors from step 3; --output-filename tree copied to ranks/",
    notes="Kernel OOM kill confirmed after the run: the cgroup's memory.oom_control showed oom_kill 1, not part of log.txt. decisive_line is in log.txt (no decisive_file).")
add("run89-ompi-outfile-mismatch-detail", f"FAULT=mismatch:2:1 MISMATCH=extra_broadcast DDP=0 TORCH_DISTRIBUTED_DEBUG=DETAIL {OM} -np 4 --output-filename DIR python train89a.py",
    "dist.collective_mismatch", "RuntimeError: Detected mismatch between collectives on ranks. Rank 2 is running collective: CollectiveFingerPrint(SequenceNumber=13, OpType=BROADCAST, TensorShape=[4]", 2,
    ["ranks 0, 1, 3 report the mismatch from their side (their ALLREDUCE vs rank 2's BROADCAST)", OMPI_ABORT, OMPI_FIRST + " (rank 3, not the culprit)"],
    "At step 1 rank 2 issued an extra broadcast (OpType=BROADCAST, shape [4]) that the other ranks did not, while they ran the metric all_reduce; DETAIL's fingerprint check reports the mismatch.",
    FIX_MIS, "mpirun.openmpi", "rank 2 calls dist.broadcast(torch.zeros(4), src=2) at step 1 before the all_reduce; " + DETAIL_NOTE + "; --output-filename tree copied to ranks/",
    decisive_file="1/rank.2/stderr", also=["RuntimeError: Detected mismatch between collectives on ranks."])
# ---------------- Open MPI --xml ----------------
add("run89-ompi-xml-sigkill", f"FAULT=sigkill:3:1 {OM} -np 4 --xml python train89a.py", "mem.host_oom",
    "mpirun.openmpi noticed that process rank 3 with PID 0 on node vm exited on signal 9 (Killed).", 3,
    [RESET + " (ranks 1 and 2; rank 0 is killed by mpirun first)", OMPI_ABORT, "every line is wrapped in <stdout rank=\"N\">/<stderr> XML elements with &#010; newlines"],
    "Rank 3 (the last rank) was SIGKILLed at step 1 with no traceback, which the corpus labels as a host OOM kill; the other ranks then lost their gloo connection.",
    FIX_KILL, "mpirun.openmpi", "rank 3 calls os.kill(os.getpid(), SIGKILL) at step 1; --xml output")
add("run89-ompi-xml-hang", f"FAULT=hang:1:4 HANG_S=90 PG_TIMEOUT=20 {OM} -np 3 --xml python train89a.py", "dist.collective_timeout",
    "Timed out waiting 20000ms for recv operation to complete", 1,
    ["rank 2: 'Timed out waiting 20000ms for send operation to complete'", "rank 1 prints nothing and is killed by mpirun",
     OMPI_FIRST + " (rank 2, a waiting rank, not the stalled rank 1)", "--xml: every line wrapped in <stdout rank=\"N\">/<stderr rank=\"N\"> elements"],
    "Rank 1 stalled (slept 90 s) before the step-4 metric all_reduce, so ranks 0 and 2 timed out after the 20 s process-group timeout.",
    FIX_HANG, "mpirun.openmpi", "rank 1 sleeps 90 s before dist.all_reduce at step 4; init_process_group(timeout=20 s); --xml output",
    also=["Timed out waiting 20000ms for send operation to complete"])

bad = 0
for id, lab in C.items():
    d = os.path.join(POOL, id)
    if not os.path.isdir(d):
        print("MISSING", id); bad += 1; continue
    f = os.path.join(d, "ranks", lab["decisive_file"]) if "decisive_file" in lab else os.path.join(d, "log.txt")
    if not any(lab["decisive_line"] in l for l in open(f, errors="replace")):
        print("NOT FOUND", id, lab["decisive_line"]); bad += 1
    with open(os.path.join(d, "label.json"), "w") as fh:
        json.dump(lab, fh, indent=2, ensure_ascii=False); fh.write("\n")
print(len(C), "labels,", bad, "problems")
