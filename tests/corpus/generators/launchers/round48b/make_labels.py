"""Write label.json for each round48b case (labels from what was induced + what the log shows).
Checks that decisive_line is a substring of a line of log.txt (or of ranks/<decisive_file>)."""
import glob, json, os, re, sys
OUT = sys.argv[1] if len(sys.argv) > 1 else "/work/helpers/stage48"
SRC = "real run: tests/corpus/generators/launchers/round48b/run_all.sh {id}, torch 2.13.0 CPU, gloo"
K9 = "failed (exitcode: -9) local_rank: 0"
C = {  # id: (category, initiating_rank, decisive, decisive_file, launcher, induced, root, fix)
 "run48b-torchrun2n-raise": ("user.code_error", 3, "[rank3]: KeyError: 'features'", None, "torchrun",
   "rank 3 (node-b, local_rank 1) indexes a missing key 'features' at step 3; 2 torchrun agents, static rdzv",
   "Rank 3 on node-b raised KeyError 'features' in its data loading code; the other ranks lost their peer.",
   "Fix the data record/loader so the 'features' key exists (or handle its absence)."),
 "run48b-torchrun2n-sigkill-files": ("mem.host_oom", 2, K9, "node-b.log", "torchrun",
   "rank 2 (node-b, local_rank 0) SIGKILLs itself at step 3; node-b's console is in its own file",
   "Rank 2 on node-b was SIGKILLed (exit -9, no traceback), as the kernel OOM killer does.",
   "Find what killed rank 2 on node-b (dmesg/OOM killer) and lower its host memory use or raise the limit."),
 "run48b-torchrun3n-hang": ("dist.collective_timeout", 1,
   "[rank0]: RuntimeError: [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:78] Timed out waiting 15000ms for recv operation to complete",
   None, "torchrun", "rank 1 (node-b) sleeps 60 s before step 3's collectives; pg timeout 15 s; 3 agents",
   "Rank 1 on node-b stalled before a collective, so ranks 0 and 2 timed out after 15 s waiting for it.",
   "Find why rank 1 on node-b stalls (stack dump with py-spy) and remove the stall."),
 "run48b-torchrun2n-mismatch": ("dist.collective_mismatch", 3,
   "[rank3]: RuntimeError: [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:78] Timed out waiting 20000ms for recv operation to complete",
   None, "torchrun", "rank 3 (node-b) all_reduces an 8-element tensor at step 3 while the others use 4 elements",
   "Rank 3 called all_reduce with a tensor of another size (8 vs 4); gloo shows it only as timeouts on every rank.",
   "Make every rank all_reduce tensors of the same shape."),
 "run48b-torchrun3n-hostoom-files": ("mem.host_oom", 2, K9, "node-c.log", "torchrun",
   "rank 2 (node-c) moves itself into a 1 GiB memory cgroup and allocates 64x64 MiB at step 3: kernel OOM kill",
   "Rank 2 on node-c exceeded its 1 GiB memory limit and was SIGKILLed by the kernel OOM killer.",
   "Reduce rank 2's host memory use or give its node/cgroup more memory."),
 "run48b-torchrunc10d-raise-logdir": ("user.code_error", 1, "[rank1]: KeyError: 'features'",
   "node-b/job48b_*/attempt_0/0/stderr.log", "torchrun",
   "rank 1 (node-b per c10d rendezvous) raises KeyError at step 3; c10d rdzv at node-a; --log-dir --tee 3 per node; app logs per host",
   "Rank 1 on node-b raised KeyError 'features' in its data loading code; the other ranks lost their peer.",
   "Fix the data record/loader so the 'features' key exists (or handle its absence)."),
 "run48b-torchrunc10d-sigkill": ("mem.host_oom", 2, K9, None, "torchrun",
   "rank 2 (node-c per c10d rendezvous) SIGKILLs itself at step 3; 3 agents, c10d rdzv",
   "Rank 2 on node-c was SIGKILLed (exit -9, no traceback), as the kernel OOM killer does.",
   "Find what killed rank 2 on node-c (dmesg/OOM killer) and lower its host memory use."),
 "run48b-mpirun-raise": ("user.code_error", 2, "[rank2]: KeyError: 'features'", None, "mpirun",
   "rank 2 (node-b, mpirun MPMD) raises KeyError at step 3",
   "Rank 2 on node-b raised KeyError 'features' in its data loading code; mpirun aborted the job.",
   "Fix the data record/loader so the 'features' key exists."),
 "run48b-mpirun-sigkill": ("mem.host_oom", 3, "mpirun noticed that process rank 3 with PID 0 on node vm exited on signal 9 (Killed).",
   None, "mpirun", "rank 3 (node-b) SIGKILLs itself at step 3",
   "Rank 3 was SIGKILLed (signal 9, no traceback), as the kernel OOM killer does.",
   "Find what killed rank 3 (dmesg/OOM killer) and lower its host memory use."),
 "run48b-mpirun-hang": ("dist.collective_timeout", 2,
   "[rank0]: RuntimeError: [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:78] Timed out waiting 15000ms for recv operation to complete",
   None, "mpirun", "rank 2 (node-b) sleeps 60 s before step 3's collectives; pg timeout 15 s",
   "Rank 2 on node-b stalled before a collective, so the other ranks timed out after 15 s.",
   "Find why rank 2 stalls (py-spy dump) and remove the stall."),
 "run48b-mpirun-hostoom": ("mem.host_oom", 1, "mpirun noticed that process rank 1 with PID 0 on node vm exited on signal 9 (Killed).",
   None, "mpirun", "rank 1 (node-a) moves itself into a 1 GiB memory cgroup and allocates 64x64 MiB at step 3: kernel OOM kill",
   "Rank 1 exceeded its 1 GiB memory cgroup limit and was SIGKILLed by the kernel OOM killer.",
   "Reduce rank 1's host memory use or raise the memory limit."),
 "run48b-shell-raise-files": ("user.code_error", 3, "[rank3]: KeyError: 'features'", "node-b.log", "shell",
   "rank 3 (node-b) raises KeyError at step 3; shell loop per node, node-b's console in its own file, app logs per host",
   "Rank 3 on node-b raised KeyError 'features' in its data loading code; the other ranks lost their peer.",
   "Fix the data record/loader so the 'features' key exists."),
 "run48b-shell-mismatch": ("dist.collective_mismatch", 1,
   "[rank1]: RuntimeError: [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:129] Timed out waiting 20000ms for send operation to complete",
   None, "shell", "rank 1 (node-a) all_reduces an 8-element tensor at step 3 while the others use 4 elements",
   "Rank 1 called all_reduce with a tensor of another size (8 vs 4); gloo shows it only as timeouts on every rank.",
   "Make every rank all_reduce tensors of the same shape."),
 "run48b-shell-hostoom-files": ("mem.host_oom", 2, "Killed                  RANK=$(( $1 * 2 + lr ))", "node-b.log", "shell",
   "rank 2 (node-b, first worker) moves itself into a 1 GiB memory cgroup and allocates 64x64 MiB at step 3: kernel OOM kill",
   "Rank 2 on node-b exceeded its 1 GiB memory limit and was SIGKILLed by the kernel OOM killer (status 137).",
   "Reduce rank 2's host memory use or raise the memory limit."),
}
for h, l in [("run48b-torchrun2n-healthy", "torchrun"), ("run48b-mpirun-healthy", "mpirun"), ("run48b-shell-healthy-files", "shell")]:
    C[h] = ("none", None, None, None, l, "no fault (healthy run, 6 steps)", "The job finished normally.", "Nothing to fix.")
for cid, (cat, rank, dec, dfile, launcher, how, root, fix) in C.items():
    d = os.path.join(OUT, cid)
    if not os.path.isdir(d):
        print("missing", cid); continue
    if dfile and "*" in dfile:  # torchrun --log-dir adds a random suffix
        dfile = os.path.relpath(glob.glob(os.path.join(d, "ranks", dfile))[0], os.path.join(d, "ranks"))
    if dec is not None:
        text = open(os.path.join(d, "ranks", dfile) if dfile else os.path.join(d, "log.txt"), errors="replace").read()
        assert any(dec in ln for ln in text.splitlines()), (cid, dec)
    lab = {"id": cid, "source": SRC.format(id=cid), "category": cat, "fatal": cat != "none",
           "decisive_line": dec, "also_acceptable": [], "initiating_rank": rank, "collateral": [],
           "operator": None, "root_cause": root, "fix": fix, "launcher": launcher, "framework": "plain",
           "genuine": False, "induced_how": how, "confirmed_by": "induced",
           "confidence": "medium" if cat == "dist.collective_mismatch" else "high"}
    if dfile:
        lab["decisive_file"] = dfile
    json.dump(lab, open(os.path.join(d, "label.json"), "w"), indent=1)
    print("ok", cid, cat, rank)
