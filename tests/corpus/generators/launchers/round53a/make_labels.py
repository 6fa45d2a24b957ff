"""Writes label.json for every round53a case in POOL.  Labels come from what was induced; pid-dependent file
names / lines are resolved from the run's own output, and every decisive line is checked (grep -F style)
against log.txt or the decisive ranks/ file."""
import json, os, re, sys, glob
POOL = sys.argv[1] if len(sys.argv) > 1 else "/tmp/h53a/pool"
SRC = "real run: tests/corpus/generators/launchers/round53a/run_all.sh {id}, torch 2.13.0 CPU, gloo"
KEY = "KeyError: 'sample_1000003'"
TMO_R = "Timed out waiting 15000ms for recv operation to complete"
TMO_S = "Timed out waiting 15000ms for send operation to complete"
RAISE_RC = "Rank {r} raised KeyError: 'sample_1000003' in its own data-indexing code at step 3 (a record missing from the index); the other ranks then lost their peer in all_reduce."
RAISE_FIX = "Fix the data index / lookup so every sample key exists (or skip missing records)."
KILL_RC = "Rank {r} was SIGKILLed at step {s} (exit -9, no traceback; its log file simply stops), as the kernel OOM killer does; the other ranks lost their peer."
KILL_FIX = "Check the node's kernel log (dmesg) for an OOM kill and reduce that rank's host memory use or raise the limit."
OOM_RC = "Rank {r} exceeded its 1 GiB memory-cgroup limit while caching decoded samples and was SIGKILLed by the kernel OOM killer (no traceback; its file stops)."
OOM_FIX = "Reduce that rank's host memory use (don't cache all decoded samples) or raise the memory limit."
HANG_RC = "Rank {r} stalled before the step's gradient all_reduce for longer than the 15 s process-group timeout, so the other ranks timed out waiting for it."
HANG_FIX = "Find why that rank stalls (I/O, data loading) or raise the process-group timeout."
MM_RC = "Rank {r} all_reduced a gradient bucket of another shape ([160, 64] instead of [128, 64]) at step 3, so the collective sizes did not match."
MM_FIX = "Make every rank call the same collectives with the same tensor shapes."
M = "medium"

C = {
 # --- torchrun
 "run-r53a-torchrun-raise-logs-rank": dict(cat="user.code_error", rank=2, dec=KEY, dfile="logs/rank2.log", launcher="torchrun",
   how="FAULT=raise CULPRIT=2: rank 2 looks up a missing sample key at step 3; each process logs to logs/rank{N}.log via logging.FileHandler (log.exception on failure)",
   rc=RAISE_RC.format(r=2), fix=RAISE_FIX),
 "run-r53a-torchrun-sigkill-worker-txt": dict(cat="mem.host_oom", rank=3, dec="failed (exitcode: -9) local_rank: 3", dfile="worker_3.txt", conf=M,
   also=[r"RE:exitcode  : -9 \(pid: \d+\)  \(SIGKILL\)", "LAST:worker_3.txt"], launcher="torchrun",
   how="FAULT=sigkill CULPRIT=3 FAULT_STEP=4: rank 3 does os.kill(os.getpid(), 9); each process does sys.stdout = sys.stderr = open('worker_{N}.txt'), lines carry no rank",
   rc=KILL_RC.format(r=3, s=4), fix=KILL_FIX),
 "run-r53a-torchrun-hang-rank-of": dict(cat="dist.collective_timeout", rank=1, dec=TMO_R, dfile="train-rank-00-of-04.log", launcher="torchrun",
   how="FAULT=hang CULPRIT=1 PG_TIMEOUT=15 HANG_S=40: rank 1 sleeps 40 s before the step-3 all_reduce; files train-rank-NN-of-04.log via FileHandler",
   rc=HANG_RC.format(r=1), fix=HANG_FIX),
 "run-r53a-torchrun-mismatch-out-err": dict(cat="dist.collective_mismatch", rank=2, conf=M,
   dec="op.preamble.length <= op.nbytes. 5120 vs 4096. Received data size doesn't match expected size", dfile="err.1", launcher="torchrun",
   how="FAULT=mismatch CULPRIT=2: rank 2 all_reduces a [160,64] tensor where the others reduce [128,64] at step 3; each process dup2()s stdout to out.N and stderr to err.N",
   rc=MM_RC.format(r=2) + " Without TORCH_DISTRIBUTED_DEBUG the size check fires on a peer (rank 1 aborts with gloo::EnforceNotMet in err.1); the files do not name the culprit (rank 2's own files only show 'Connection reset by peer').",
   fix=MM_FIX),
 "run-r53a-torchrun-mismatch-detail-rankdir": dict(cat="dist.collective_mismatch", rank=3,
   dec="Detected mismatch between collectives on ranks. Rank 3 is running collective: CollectiveFingerPrint(SequenceNumber=12, OpType=ALLREDUCE, TensorShape=[160, 64]",
   dfile="rank_3/train.log", launcher="torchrun",
   how="FAULT=mismatch CULPRIT=3 TORCH_DISTRIBUTED_DEBUG=DETAIL: rank 3 all_reduces a [160,64] tensor at step 3; files rank_N/train.log via FileHandler",
   rc=MM_RC.format(r=3), fix=MM_FIX),
 "run-r53a-torchrun-oom-hostpid": dict(cat="mem.host_oom", rank=1, dec="failed (exitcode: -9) local_rank: 1", dfile="FIND:[rank 1]", conf=M,
   also=[r"RE:exitcode  : -9 \(pid: \d+\)  \(SIGKILL\)"], launcher="torchrun",
   how="FAULT=oom CULPRIT=1: rank 1 moves itself into a 1 GiB cgroup-v1 memory cgroup (memsw too) and allocates 64 MiB tensors at step 3 -> kernel OOM kill; files host-<hostname>-<pid>.log (rank only inside the lines)",
   rc=OOM_RC.format(r=1), fix=OOM_FIX),
 "run-r53a-torchrun2n-raise-localrank": dict(cat="user.code_error", rank=4, dec=KEY, dfile="node-b/rank1.log", launcher="torchrun",
   how="two torchrun agents (--nnodes 2 --nproc-per-node 3, static rendezvous) as fake nodes node-a/node-b; FAULT=raise CULPRIT=4 (node-b, local rank 1); files <node>/rank<LOCAL_RANK>.log via FileHandler, no rank in lines; both agents' consoles in log.txt",
   rc=RAISE_RC.format(r=4) + " Its file is node-b/rank1.log: the number in the name is the local rank.", fix=RAISE_FIX),
 "run-r53a-torchrun2n-sigkill-localrank": dict(cat="mem.host_oom", rank=3, dec="failed (exitcode: -9) local_rank: 0", dfile="node-b/gpu0.log", conf=M,
   also=["LAST:node-b/gpu0.log"], launcher="torchrun",
   how="two torchrun agents (--nnodes 2 --nproc-per-node 3) as fake nodes node-a/node-b; FAULT=sigkill CULPRIT=3 (node-b, local rank 0) at step 3; files <node>/gpu<LOCAL_RANK>.log via sys.stdout redirect",
   rc=KILL_RC.format(r=3, s=3) + " Its file is node-b/gpu0.log (local rank 0 of node-b).", fix=KILL_FIX),
 # --- mp.spawn
 "run-r53a-spawn-raise-hostpid-startline": dict(cat="user.code_error", rank=1, dec=KEY, dfile="FIND:global rank 1 of", launcher="mp.spawn",
   how="FAULT=raise CULPRIT=1: rank 1 looks up a missing key at step 3; files host-<hostname>-<pid>.log via sys.stdout/stderr redirect; the rank appears only in each file's start line",
   rc=RAISE_RC.format(r=1), fix=RAISE_FIX),
 "run-r53a-spawn-sigkill-slurm": dict(cat="mem.host_oom", rank=2, dec="process 2 terminated with signal SIGKILL", dfile="job.48213.2.out", conf=M,
   also=["LAST:job.48213.2.out"], launcher="mp.spawn",
   how="NPROCS=5 FAULT=sigkill CULPRIT=2: rank 2 SIGKILLs itself at step 3; files job.<jobid>.<rank>.out (Slurm %j.%t style) via sys.stdout redirect, no rank in lines",
   rc=KILL_RC.format(r=2, s=3), fix=KILL_FIX),
 "run-r53a-spawn-hang-out-err": dict(cat="dist.collective_timeout", rank=3, dec=TMO_R, dfile="out.2", launcher="mp.spawn",
   how="FAULT=hang CULPRIT=3 PG_TIMEOUT=15: rank 3 sleeps 40 s before the step-3 all_reduce; each process dup2()s stdout to out.N, stderr to err.N",
   rc=HANG_RC.format(r=3), fix=HANG_FIX),
 "run-r53a-spawn-oom-worker-txt": dict(cat="mem.host_oom", rank=1, dec="process 1 terminated with signal SIGKILL", dfile="worker_1.txt", conf=M,
   also=["LAST:worker_1.txt"], launcher="mp.spawn",
   how="FAULT=oom CULPRIT=1: rank 1 joins a 1 GiB memory cgroup and allocates 64 MiB tensors at step 3 -> kernel OOM kill; files worker_N.txt via FileHandler, no rank in lines",
   rc=OOM_RC.format(r=1), fix=OOM_FIX),
 "run-r53a-spawn-mismatch-rank-of": dict(cat="dist.collective_mismatch", rank=4, conf=M,
   dec="op.preamble.length <= op.nbytes. 4096 vs 3280. Received data size doesn't match expected size", dfile="train-rank-4-of-5.log", launcher="mp.spawn",
   how="NPROCS=5 FAULT=mismatch CULPRIT=4: rank 4 all_reduces a [160,64] tensor at step 3; files train-rank-N-of-5.log via sys.stdout redirect (C++ stderr stays on the console)",
   rc=MM_RC.format(r=4) + " The size check fires on a peer (rank 3 aborts, SIGABRT; its gloo::EnforceNotMet text goes to the console, not to a file); nothing in the logs names rank 4.",
   fix=MM_FIX),
 # --- shell loop
 "run-r53a-shell-raise-node-gpu": dict(cat="user.code_error", rank=3, dec=KEY, dfile="node1/gpu3.log", launcher="shell",
   how="shell loop, 2 fake nodes of 2, `exec > node$n/gpu$r.log 2>&1` per rank; FAULT=raise CULPRIT=3; the job's own lines carry no rank",
   rc=RAISE_RC.format(r=3), fix=RAISE_FIX),
 "run-r53a-shell-sigkill-hostpid-norank": dict(cat="mem.host_oom", rank=2, dec="PID:rank 2 (pid {pid}) was killed by signal 9 (SIGKILL)", dfile="PIDFILE:2", conf=M,
   also=["PID:{pid} Killed"], launcher="shell",
   how="shell loop, `exec > host-$(hostname)-$BASHPID.log 2>&1` then exec python (same pid); FAULT=sigkill CULPRIT=2 at step 3; no rank in the file name or the lines",
   rc=KILL_RC.format(r=2, s=3) + " Its file host-<host>-<pid>.log carries no rank; the loop's console links that pid to rank 2.", fix=KILL_FIX),
 "run-r53a-shell-hang-slurm": dict(cat="dist.collective_timeout", rank=4, dec=TMO_S, dfile="job.48213.0.out", launcher="shell",
   how="shell loop of 6, `exec > job.$SLURM_JOB_ID.$r.out 2>&1`; FAULT=hang CULPRIT=4 PG_TIMEOUT=15 HANG_S=30 (rank 4 wakes after the others failed and sees 'Connection closed')",
   rc=HANG_RC.format(r=4), fix=HANG_FIX),
 "run-r53a-shell-oom-flat": dict(cat="mem.host_oom", rank=3, dec="PID:rank 3 (pid {pid}) was killed by signal 9 (SIGKILL)", dfile="train_r3.log", conf=M,
   also=["PID:{pid} Killed"], launcher="shell", pidrank=3,
   how="shell loop, `exec > train_r$r.log 2>&1`; FAULT=oom CULPRIT=3: rank 3 joins a 1 GiB memory cgroup and allocates 64 MiB tensors at step 3 -> kernel OOM kill",
   rc=OOM_RC.format(r=3), fix=OOM_FIX),
 "run-r53a-shell-mismatch-detail-slurm-array": dict(cat="dist.collective_mismatch", rank=1,
   dec="Detected mismatch between collectives on ranks. Rank 1 is running collective: CollectiveFingerPrint(SequenceNumber=12, OpType=ALLREDUCE, TensorShape=[160, 64]",
   dfile="slurm-48213_1.out", launcher="shell",
   how="shell loop, `exec > slurm-${SLURM_JOB_ID}_$r.out 2>&1`; TORCH_DISTRIBUTED_DEBUG=DETAIL FAULT=mismatch CULPRIT=1 (a [160,64] all_reduce at step 3); job lines carry no rank",
   rc=MM_RC.format(r=1), fix=MM_FIX),
}
for lch, lname in (("torchrun", "torchrun"), ("spawn", "mp.spawn"), ("shell", "shell")):
    C[f"run-r53a-{lch}-healthy-noisy"] = dict(cat="none", rank=None, dec=None, dfile=None, launcher=lname,
        how="no fault; NOISY=1 adds harmless warnings (UserWarning, missing wandb, straggler step, tensorboard write failure)",
        rc="Healthy run: training finished on all ranks; only harmless warnings.", fix="Nothing to fix.")


def lines_of(p):
    return open(p, errors="replace").read().splitlines()


bad = 0
for cid, c in C.items():
    d = os.path.join(POOL, cid)
    if not os.path.isdir(d):
        print("MISSING", cid); continue
    rk = os.path.join(d, "ranks")
    log = lines_of(os.path.join(d, "log.txt")) if os.path.exists(os.path.join(d, "log.txt")) else []
    pid = None
    pr = c.get("pidrank", c["rank"])
    for l in log:
        m = re.match(rf"started rank {pr} pid (\d+)$", l)
        if m: pid = m.group(1)
    dfile = c["dfile"]
    if dfile and dfile.startswith("FIND:"):
        hits = [os.path.relpath(f, rk) for f in sorted(glob.glob(rk + "/**/*", recursive=True))
                if os.path.isfile(f) and any(dfile[5:] in l for l in lines_of(f))]
        dfile = hits[0] if len(hits) == 1 else print("AMBIGUOUS", cid, hits)
    elif dfile and dfile.startswith("PIDFILE:"):
        dfile = [os.path.relpath(f, rk) for f in glob.glob(rk + f"/*-{pid}.log")][0]
    def resolve(s):
        if s.startswith("PID:"):
            return s[4:].format(pid=pid)
        if s.startswith("RE:"):
            for l in log:
                m = re.search(s[3:], l)
                if m: return m.group(0)
            return "UNRESOLVED " + s
        if s.startswith("LAST:"):
            return [l for l in lines_of(os.path.join(rk, s[5:])) if l.strip()][-1]
        return s
    dec = resolve(c["dec"]) if c["dec"] else None
    also = [resolve(s) for s in c.get("also", [])]
    texts = log + (lines_of(os.path.join(rk, dfile)) if dfile else [])
    for s in ([dec] if dec else []) + also:
        if not any(s in l for l in texts):
            print("DECISIVE NOT FOUND", cid, repr(s)); bad += 1
    healthy = c["cat"] == "none"
    where = None
    if dec:
        where = "decisive file" if any(dec in l for l in lines_of(os.path.join(rk, dfile))) else "log.txt"
    lab = {"id": cid, "source": SRC.format(id=cid), "category": c["cat"], "fatal": not healthy,
           "decisive_line": dec, "also_acceptable": also, "initiating_rank": c["rank"],
           "collateral": [] if healthy else ["the other ranks fail in the gradient all_reduce (connection closed/reset or timeout) or are terminated by the launcher"],
           "operator": None, "root_cause": c["rc"], "fix": c["fix"], "launcher": c["launcher"], "framework": "plain",
           "genuine": False, "induced_how": c["how"], "confirmed_by": "induced", "confidence": c.get("conf", "high"),
           "decisive_file": dfile}
    json.dump(lab, open(os.path.join(d, "label.json"), "w"), indent=1, ensure_ascii=False)
    print(f"{cid:48s} {c['cat']:26s} rank={c['rank']} file={dfile} dec_in={where}")
print("done", len(C), "problems", bad)
