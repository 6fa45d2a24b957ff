"""Write label.json for every round-14 case from what was INDUCED (rank, fault, category are fixed below),
taking the decisive line from the log itself (first line matching the case's pattern), and CHECK that
decisive_line, also_acceptable and collateral are exact substrings of a line of log.txt (or, for the srun
--output case, of ranks/<decisive_file> / any ranks/ file). Exits 1 if any check fails.

usage: python make_labels.py [--pool DIR] [--job DIR] [case-id ...]
"""
import argparse, glob, json, os, re, sys

HERE = os.path.dirname(os.path.abspath(__file__))
# gloo "peer went away" lines on surviving ranks; {p} = the launcher's line prefix before "[rankN]: "
PEER = r"{p}\[rank{r}\]: RuntimeError: \[[^\]]+\] (?:Connection closed by peer|Read error) \[[^\]]+\]:\d+"
TOUT = r"{p}\[rank{r}\]: RuntimeError: \[[^\]]+\] Timed out waiting {ms}ms for {op} operation to complete"
# srun's own lines (srun --label prefixes task output with "N: "; srun's messages carry no prefix)
SRUN_EXIT = r"srun: error: \w+: tasks? [\d,\-]+: (?:Exited with exit code \d+|Terminated|Killed|Aborted)"
CANCEL = r"slurmstepd-\w+: error: \*\*\* STEP \d+\.0 ON \w+ CANCELLED AT [\dT:\-]+ \*\*\*"
SIGTERM = r"Sending process \d+ closing signal SIGTERM"
SPAWN_TERM = r"Terminating process \d+ via signal SIGTERM"
D = r"\[default\d\]:"

SRUN = "srun --label --kill-on-bad-exit=1 (Slurm 22.05, single node)"
CASES = {
    "run14-srun-raise": dict(
        launcher="srun", framework="plain", category="user.code_error", rank=2, world=3, script="train_job.py",
        dec=r"2: \[rank2\]: KeyError: 'sample-9f3a1'",
        coll=[PEER.format(p=r"[01]: ", r="[01]"), SRUN_EXIT, CANCEL],
        induced=f"{SRUN}, 3 tasks; at step 3 load_batch() on rank 2 looks up a corrupt sample id 'sample-9f3a1' "
                "in its shard index (dict) -> KeyError, uncaught",
        root="Rank 2's data loader raised KeyError: 'sample-9f3a1' (a corrupt id in its shard manifest); the other "
             "ranks lost their gloo peer and srun cancelled the step.",
        fix="Repair/validate the shard manifest (skip or report ids missing from the index) before training."),
    "run14-srun-raise-rank0": dict(
        launcher="srun", framework="plain", category="user.code_error", rank=0, world=4, script="train_job.py",
        dec=r"0: \[rank0\]: ValueError: could not convert string to float: 'n/a'",
        coll=[PEER.format(p=r"[123]: ", r="[123]"), r"\d: terminate called without an active exception",
              SRUN_EXIT, CANCEL],
        induced=f"{SRUN}, 4 tasks, per-step output with print() (no logging); at step 2 rank 0 parses the CSV "
                "row '0.12,0.53,n/a,0.98' -> float('n/a') ValueError, uncaught",
        root="Rank 0's CSV parsing raised ValueError: could not convert string to float: 'n/a'; ranks 1-3 lost "
             "their gloo peer (rank 3 aborted on the way out) and srun cancelled the step.",
        fix="Handle/clean missing values ('n/a') in the CSV shard before converting to float.",
        notes="srun's first error line names a SURVIVING task ('Aborted': that rank hit 'terminate called "
              "without an active exception' while exiting after its gloo peer error), not rank 0, whose own exit "
              "was pre-empted by the step cancel (rank 0 is among the 'Terminated' tasks)."),
    "run14-srun-sigkill": dict(
        launcher="srun", framework="plain", category="mem.host_oom", rank=1, world=4, script="train_job.py",
        dec=r"srun: error: \w+: task 1: Killed",
        coll=[SRUN_EXIT, CANCEL],
        induced=f"{SRUN}, 4 tasks; rank 1 calls os.kill(os.getpid(), SIGKILL) after logging step 3 (no traceback)",
        root="Rank 1 was SIGKILLed (no traceback; srun reports 'task 1: Killed'); srun then cancelled the step and "
             "terminated the other ranks.",
        fix="Find what killed rank 1 (kernel OOM killer / an external kill: check dmesg, sacct MaxRSS) and give it "
            "more memory or reduce its footprint.",
        notes="The survivors were terminated by srun before gloo reported anything, so no rank prints an error."),
    "run14-srun-nokill-sigkill": dict(
        launcher="srun", framework="plain", category="mem.host_oom", rank=2, world=4, script="train_job.py",
        dec=r"srun: error: \w+: task 2: Killed",
        coll=[PEER.format(p=r"[013]: ", r="[013]"), SRUN_EXIT],
        induced="srun --label WITHOUT --kill-on-bad-exit (Slurm's default), 4 tasks; rank 2 calls "
                "os.kill(os.getpid(), SIGKILL) after logging step 2 (no traceback)",
        root="Rank 2 was SIGKILLed (no traceback; srun reports 'task 2: Killed'); the other ranks then failed on "
             "their own with gloo 'Connection closed by peer' errors.",
        fix="Find what killed rank 2 (kernel OOM killer / an external kill: check dmesg, sacct MaxRSS) and give it "
            "more memory or reduce its footprint.",
        notes="Without --kill-on-bad-exit srun does not cancel the step: ranks 0, 1 and 3 each print a gloo peer "
              "error traceback and exit 1, so the log holds three tracebacks and only srun's 'Killed' line "
              "names the initiating rank."),
    "run14-srun-hang": dict(
        launcher="srun", framework="plain", category="dist.collective_timeout", rank=3, world=4,
        script="train_job.py",
        dec=TOUT.format(p=r"[012]: ", r="[012]", ms=15000, op="(?:send|recv)"),
        also=[TOUT.format(p=r"[012]: ", r="[012]", ms=15000, op="(?:send|recv)")],
        coll=[SRUN_EXIT, CANCEL],
        induced=f"{SRUN}, 4 tasks, gloo PG timeout 15 s; rank 3 sleeps 60 s before the per-step loss all_reduce "
                "at step 2",
        root="Rank 3 stalled (silently) before the step-2 loss all_reduce; ranks 0-2 waited in it and gloo timed "
             "them out after 15 s, then srun cancelled the step.",
        fix="Find why rank 3 stalls (profile/py-spy it) or raise the process-group timeout if the stall is "
            "legitimate.",
        notes="Rank 3 prints nothing after step 1; it is among the ranks srun terminates."),
    "run14-srun-mismatch": dict(
        launcher="srun", framework="plain", category="dist.collective_mismatch", rank=2, world=3,
        script="train_job.py",
        dec=r"\d:   what\(\):  \[enforce fail at [^\]]+\] op\.preamble\.length <= op\.nbytes\. \d+ vs \d+\. Received "
            r"data size doesn't match expected size\. Is there a distributed collective mismatch in your code\?",
        coll=[r"\d: terminate called after throwing an instance of 'gloo::EnforceNotMet'",
              PEER.format(p=r"[01]: ", r="[01]"), PEER.format(p=r"2: ", r="2"), SRUN_EXIT, CANCEL],
        induced=f"{SRUN}, 3 tasks; after the step-3 loss all_reduce rank 2 all_reduces a grad-norm stats tensor "
                "of 8 floats where ranks 0 and 1 all_reduce 4 floats",
        root="Rank 2 all_reduced an 8-element tensor where the other ranks used 4 elements; gloo's size check "
             "aborted the receiving rank (SIGABRT) and srun cancelled the step.",
        fix="Make every rank pass the same tensor size to the collective (pack the same number of stats on "
            "every rank).",
        notes="The enforce message appears on a RECEIVING rank (the one gloo aborted, 'Aborted' in srun's line), "
              "not on rank 2, which called the bigger all_reduce."),
    "run14-srun-mismatch-detail": dict(
        launcher="srun", framework="plain", category="dist.collective_mismatch", rank=1, world=3,
        script="train_job.py",
        dec=r"1: \[rank1\]: RuntimeError: Detected mismatch between collectives on ranks\. Rank 1 is running "
            r"collective: CollectiveFingerPrint\(SequenceNumber=\d+, OpType=ALLREDUCE, TensorShape=\[8\]",
        also=[r"[02]: \[rank[02]\]: RuntimeError: Detected mismatch between collectives on ranks\. Rank [02] is "
              r"running collective: CollectiveFingerPrint\(SequenceNumber=\d+, OpType=ALLREDUCE, TensorShape=\[4\]"
              r"[^)]*\)\)\), but Rank 1 is running collective"],
        coll=[SRUN_EXIT],
        induced=f"{SRUN}, 3 tasks, TORCH_DISTRIBUTED_DEBUG=DETAIL, gradients averaged by hand (DDP's constructor "
                "segfaults under DETAIL in torch 2.13.0 CPU); after step 3 rank 1 all_reduces 8 grad-norm stats "
                "where ranks 0 and 2 all_reduce 4",
        root="Rank 1 all_reduced a tensor of shape [8] where ranks 0 and 2 used shape [4]; DETAIL's collective "
             "fingerprint check raised 'Detected mismatch between collectives' on every rank.",
        fix="Make every rank pass the same tensor size to the collective (pack the same number of stats on "
            "every rank)."),
    "run14-srun-mismatch-extrabcast": dict(
        launcher="srun", framework="plain", category="dist.collective_timeout", rank=1, world=4,
        script="train_job.py",
        dec=TOUT.format(p=r"1: ", r=1, ms=20000, op="send"),
        also=[TOUT.format(p=r"[023]: ", r="[023]", ms=20000, op="(?:send|recv)")],
        coll=[PEER.format(p=r"[023]: ", r="[023]"), r"\d: terminate called without an active exception",
              SRUN_EXIT, CANCEL],
        induced=f"{SRUN}, 4 tasks, gloo PG timeout 20 s, no TORCH_DISTRIBUTED_DEBUG; after step 3 rank 1 alone "
                "calls dist.broadcast(src=1) of a 1000-element metrics tensor (a rank-specific metrics sync); the "
                "others go on to step 4's DDP gradient allreduce",
        root="Rank 1 alone issued an extra dist.broadcast, so the ranks' collective sequences diverged; with no "
             "debug checks gloo just timed out after 20 s (rank 1 in the broadcast's send) and the rest lost "
             "their peers.",
        fix="Call the metrics broadcast on every rank (or none); use TORCH_DISTRIBUTED_DEBUG=DETAIL to locate "
            "such divergences.",
        notes="Induced as a collective mismatch (extra broadcast), but no line states a mismatch: only timeouts "
              "(rank 1's traceback is in dist.broadcast) and 'Connection closed "
              "by peer'. Labelled dist.collective_timeout like the corpus's run13-torchrun-rank0-extra-bcast; "
              "dist.collective_mismatch is the underlying cause."),
    "run14-srun-compile": dict(
        launcher="srun", framework="plain", category="compile.cpp_toolchain_missing", rank=2, world=3,
        script="train_job.py",
        dec=r"2: \[rank2\]: torch\._inductor\.exc\.InductorError: InvalidCxxCompiler: No working C\+\+ compiler "
            r"found in torch\._inductor\.config\.cpp\.cxx: \(None, '/nonexistent/g\+\+'\)",
        coll=[SRUN_EXIT, CANCEL],
        induced=f"{SRUN}, 3 tasks; eager warm-up, torch.compile'd DDP model from step 2; rank 2 alone sets "
                "CXX=/nonexistent/g++ before importing torch (private inductor cache per rank, FX graph cache "
                "off)",
        root="Rank 2's environment points CXX at a missing compiler (/nonexistent/g++), so inductor found no "
             "working C++ compiler when the compiled model first ran; srun cancelled the step.",
        fix="Unset CXX or point it at an installed C++ compiler on that node (or make g++ available).",
        notes="Ranks 0 and 1 were terminated by srun while compiling/waiting; they print no error."),
    "run14-srun-compile-fullgraph-rank0": dict(
        launcher="srun", framework="plain", category="compile.graph_break_data_dependent", rank=0, world=3,
        script="train_job.py",
        dec=r"0: \[rank0\]: torch\._dynamo\.exc\.Unsupported: Data-dependent branching",
        also=[r"0: \[rank0\]:   Explanation: Detected data-dependent branching"],
        coll=[SRUN_EXIT, CANCEL],
        induced=f"{SRUN}, 3 tasks; torch.compile(net, fullgraph=True) used from step 2 (gradients averaged by "
                "hand: fullgraph over DDP fails on every rank in torch 2.13.0); on rank 0 alone the forward runs an "
                "input check `if x.abs().max() > 50:` (data-dependent branch)",
        root="Rank 0's forward takes a data-dependent Python branch on a tensor value, which torch.compile with "
             "fullgraph=True cannot capture (Unsupported: Data-dependent branching); srun cancelled the step.",
        fix="Make the check branchless (always x.clamp(-50, 50) / torch.where) or use torch.cond, or drop "
            "fullgraph=True.",
        notes="Ranks 1 and 2 compile the same model without the check and are terminated by srun."),
    "run14-srun-hostoom": dict(
        launcher="srun", framework="plain", category="mem.host_oom", rank=2, world=3, script="train_job.py",
        dec=r"srun: error: \w+: task 2: Killed",
        also=[r"2: .*INFO \[rank2\] feature cache: \d+ MiB"],
        coll=[PEER.format(p=r"[01]: ", r="[01]"), SRUN_EXIT, CANCEL],
        induced=f"{SRUN}, 3 tasks, Slurm without memory enforcement (task/none); rank 2 moves itself into a "
                "cgroup-v1 memory cgroup limited to 1 GiB at start, then at step 3 caches 128 MiB blocks "
                "(allocated and touched) until the kernel OOM killer SIGKILLs it",
        root="Rank 2 grew an unbounded host-memory cache past its 1 GiB memory limit and the kernel OOM killer "
             "SIGKILLed it (srun: 'task 2: Killed'); the other ranks lost their gloo peer.",
        fix="Bound the feature cache (or raise the memory limit for that rank).",
        notes="also_acceptable holds rank 2's first 'feature cache' progress lines (the growth before the kill)."),
    "run14-srun-hostoom-slurmcgroup": dict(
        launcher="srun", framework="plain", category="mem.host_oom", rank=1, world=3, script="train_job.py",
        dec=r"srun: error: \w+: task 1: Out Of Memory",
        also=[r"\d: slurmstepd-\w+: error: Detected \d+ oom-kill event\(s\) in StepId=\d+\.0\. Some of your "
              r"processes may have been killed by the cgroup out-of-memory handler\."],
        coll=[PEER.format(p=r"[02]: ", r="[02]"), CANCEL],
        induced="srun --label --kill-on-bad-exit=1 --mem=2500M, 3 tasks, Slurm 22.05 with proctrack/cgroup + "
                "task/cgroup (cgroup v1, ConstrainRAMSpace=yes); at step 3 rank 1 caches 128 MiB blocks "
                "(allocated and touched) until the step's memory cgroup OOM-kills it",
        root="Rank 1 grew an unbounded host-memory cache until the job's Slurm memory cgroup (--mem=2500M) "
             "OOM-killed it; the other ranks lost their gloo peer and srun cancelled the step.",
        fix="Bound the feature cache on rank 1 or request more memory (--mem / --mem-per-cpu).",
        notes="slurmstepd's step messages (the oom-kill event and the CANCELLED line) carry srun's '0: ' label, "
              "although they are not task 0's output and task 1 was the one killed."),
    "run14-srun-taskfiles-raise": dict(
        launcher="srun", framework="plain", category="user.code_error", rank=1, world=3, script="train_job.py",
        dec=r"\[rank1\]: KeyError: 'sample-9f3a1'", dfile="slurm-*-1.out",
        coll=[PEER.format(p="", r="[02]"), SRUN_EXIT, r"slurmstepd-\w+: error: \*\*\* STEP \d+\.0 ON \w+ CANCELLED"],
        induced="srun --kill-on-bad-exit=1 --output=slurm-%j-%t.out (no --label; one output file per task, "
                "stderr included), 3 tasks; at step 2 load_batch() on rank 1 looks up a corrupt sample id "
                "'sample-9f3a1' -> KeyError, uncaught",
        root="Rank 1's data loader raised KeyError: 'sample-9f3a1' (a corrupt id in its shard manifest); the other "
             "ranks lost their gloo peer and srun cancelled the step.",
        fix="Repair/validate the shard manifest (skip or report ids missing from the index) before training.",
        notes="log.txt is srun's console (only srun's own lines); the traceback is in ranks/slurm-<jobid>-1.out. "
              "The console's 'task 1: Exited with exit code 1' names the rank but not the cause."),
    "run14-torchrun2n-sigkill": dict(
        launcher="torchrun", framework="plain", category="mem.host_oom", rank=2, world=4, script="train_job.py",
        dec=r"failed \(exitcode: -9\) local_rank: 0 \(pid: \d+\) of binary: \S+",
        also=[r"exitcode  : -9 \(pid: \d+\)  \(SIGKILL\)"],
        coll=[PEER.format(p=D, r="[01]"), SIGTERM, r"failed \(exitcode: 1\) local_rank: \d \(pid: \d+\)"],
        induced="two torchrun agents on localhost as 2 nodes (--nnodes 2 --node-rank 0/1 --nproc-per-node 2, "
                "--rdzv-backend c10d --rdzv-endpoint 127.0.0.1:29852, --tee 3 on both), both appending to the same "
                "log; global rank 2 (node 1, local rank 0) SIGKILLs itself after logging step 3",
        root="Global rank 2 (second agent, local rank 0) was SIGKILLed (exitcode -9, no traceback); its agent "
             "SIGTERMed rank 3 and ranks 0-1 on the first agent lost their gloo peer.",
        fix="Find what killed rank 2 (kernel OOM killer / an external kill: check dmesg on that node) and give "
            "it more memory or reduce its footprint.",
        notes="Each agent prints its own ChildFailedError summary; the first agent's names one of its own ranks "
              "(exitcode 1) as root cause. The tee prefix carries the LOCAL rank ('[default0]:' is rank 0 on "
              "node 0 and rank 2 on node 1)."),
    "run14-torchrun2n-hang": dict(
        launcher="torchrun", framework="plain", category="dist.collective_timeout", rank=3, world=4,
        script="train_job.py",
        dec=TOUT.format(p=D, r="[01]", ms=15000, op="(?:send|recv)"),
        also=[TOUT.format(p=D, r="[01]", ms=15000, op="(?:send|recv)")],
        coll=[SIGTERM, r"failed \(exitcode: 1\) local_rank: \d \(pid: \d+\)"],
        induced="two torchrun agents on localhost as 2 nodes (--nnodes 2 --node-rank 0/1 --nproc-per-node 2, "
                "--rdzv-backend c10d --rdzv-endpoint 127.0.0.1:29853), both appending to the same log; agent 0 "
                "--tee 3, agent 1 --redirects 3 --log-dir (its workers' output only in files, copied to ranks/); "
                "gloo PG timeout 15 s; global rank 3 (node 1, local rank 1) sleeps 60 s before the step-2 loss "
                "all_reduce",
        root="Global rank 3 (second agent, local rank 1) stalled silently before the step-2 loss all_reduce; the "
             "other ranks timed out in it after 15 s and the agents tore the job down.",
        fix="Find why rank 3 stalls (profile/py-spy it) or raise the process-group timeout if the stall is "
            "legitimate.",
        notes="The second agent's workers (global ranks 2 and 3) are not in the console: ranks/attempt_0/<local "
              "rank>/ holds their files (attempt_0/0 = global rank 2, which also times out; attempt_0/1 = rank 3, "
              "silent). The second agent's Root Cause names rank 2 (exitcode 1) and rank 3 only as SIGTERMed."),
    "run14-spawn-jsonlog-raise": dict(
        launcher="mp.spawn", framework="plain", category="user.code_error", rank=1, world=3,
        script="spawn_jsonlog.py",
        dec=r"^KeyError: 'randaug'$",
        also=[r'\{"ts": "[^"]+", "level": "error", "logger": "trainer", "rank": 1, "msg": "augmentation failed"'],
        coll=[SPAWN_TERM, r"-- Process 1 terminated with the following error:"],
        induced="torch.multiprocessing.spawn, 3 ranks, JSON-lines logging (one object per line with a \"rank\" "
                "field); at step 3 rank 1 looks up augmentation policy 'randaug' in a dict that lacks it -> "
                "KeyError, logged as a JSON error record with the traceback in \"exc\" and re-raised",
        root="Rank 1's augmentation lookup raised KeyError: 'randaug' (a policy name missing from the registry); "
             "mp.spawn terminated the other ranks.",
        fix="Register the 'randaug' policy (or validate the augmentation config at start-up).",
        notes="The JSON error record carries the same exception inside its \"exc\" string (escaped newlines)."),
    "run14-spawn-jsonlog-hang": dict(
        launcher="mp.spawn", framework="plain", category="dist.collective_timeout", rank=2, world=4,
        script="spawn_jsonlog.py",
        dec=r"RuntimeError: \[[^\]]+\] Timed out waiting 15000ms for (?:send|recv) operation to complete",
        coll=[SPAWN_TERM, r"-- Process \d terminated with the following error:"],
        induced="torch.multiprocessing.spawn, 4 ranks, JSON-lines logging with a \"rank\" field, gloo PG timeout "
                "15 s; rank 2 sleeps 60 s before the per-step loss all_reduce at step 2",
        root="Rank 2 stalled silently before the step-2 loss all_reduce; another rank's gloo all_reduce timed out "
             "after 15 s and mp.spawn terminated the rest.",
        fix="Find why rank 2 stalls (profile/py-spy it) or raise the process-group timeout if the stall is "
            "legitimate.",
        notes="mp.spawn reports only the first failing process (a waiting rank, not rank 2); the JSON step lines "
              "show rank 2 never logging step 2."),
}


def lines_of(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read().split("\n")


def all_distinct(pattern, lines, limit=3, skip=()):
    rx, out = re.compile(pattern), []
    for ln in lines:
        m = rx.search(ln)
        if m and m.group(0).rstrip() not in out and m.group(0).rstrip() not in skip:
            out.append(m.group(0).rstrip())
        if len(out) >= limit:
            break
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pool", default=os.path.normpath(os.path.join(HERE, "../../../../blind/pool14")))
    ap.add_argument("--job", default="/tmp/r14job")
    ap.add_argument("ids", nargs="*")
    a = ap.parse_args()
    bad = 0
    for cid, c in CASES.items():
        if a.ids and cid not in a.ids:
            continue
        d = os.path.join(a.pool, cid)
        if not os.path.exists(os.path.join(d, "log.txt")):
            print(f"MISSING {cid}"); bad += 1; continue
        lines = lines_of(os.path.join(d, "log.txt"))
        dfile, search = None, lines
        if c.get("dfile"):
            hits = sorted(glob.glob(os.path.join(d, "ranks", c["dfile"])))
            dfile = os.path.relpath(hits[0], os.path.join(d, "ranks")) if hits else None
            search = lines_of(hits[0]) if hits else []
        ranks_lines = []
        for f in sorted(glob.glob(os.path.join(d, "ranks", "**", "*"), recursive=True)):
            if os.path.isfile(f):
                ranks_lines += lines_of(f)
        found = all_distinct(c["dec"], search, limit=1)
        dec = found[0] if found else None
        problems = [] if dec else ["decisive pattern not found"]
        also = [x for p in c.get("also", []) for x in all_distinct(p, lines + ranks_lines, skip=(dec,))]
        coll = [x for p in c["coll"] for x in all_distinct(p, lines + ranks_lines)]
        if dec and not any(dec in ln for ln in search):
            problems.append(f"decisive line not a substring of a line of {dfile or 'log.txt'}")
        for s in also + coll:
            if not any(s in ln for ln in lines + ranks_lines):
                problems.append(f"not a substring of a log line: {s!r}")
        cmd, rc = "", "?"
        try:
            cmd = open(os.path.join(a.job, "out", cid + ".cmd")).read().strip()
            rc = open(os.path.join(a.job, "out", cid + ".rc")).read().strip()
        except OSError:
            pass
        cmd = cmd.replace(a.job, "/home/user/job").replace("/sys/fs/cgroup/memory/r14oom", "<memcg>")
        notes = c.get("notes", "")
        kern = os.path.join(a.job, "out", cid + ".kernel")
        if os.path.exists(kern) and open(kern).read().strip():
            k = open(kern).read().strip().splitlines()[-1]
            k = re.sub(r"^\[\s*[\d.]+\]\s*", "", k)
            notes = (notes + " " if notes else "") + f"Kernel log (dmesg, not in log.txt): {k}."
        if c["launcher"] == "srun":          # which task srun's first error line names (it races)
            m = re.search(r"^srun: error: \w+: tasks? ([\d,\-]+): (.+)$", "\n".join(lines), re.M)
            if m:
                notes = (notes + " " if notes else "") + f"srun's first error line names task(s) {m.group(1)} " \
                        f"({m.group(2)})."
        if c["launcher"] == "torchrun":      # what torchrun itself blamed, in THIS log (it races)
            seen = re.findall(r"failed \(exitcode: (-?\d+)\) local_rank: (\d+)", "\n".join(lines))
            if seen:
                blamed = "; ".join(f"local_rank {r} (exitcode {e})" for e, r in seen)
                notes = (notes + " " if notes else "") + f"torchrun's 'failed (exitcode: ...)' line(s) name: {blamed}."
            roots = re.findall(r"Root Cause \(first observed failure\):\n\[0\]:\n.*\n.*\n\s+rank\s+: (\d+).*\n"
                               r"\s+exitcode\s+: (-?\d+)", "\n".join(lines))
            if roots:
                notes += " Its Root Cause section(s) name: " + "; ".join(
                    f"rank {r} (exitcode {e})" for r, e in roots) + "."
        notes = (notes + " " if notes else "") + f"World size {c['world']}; launcher exit status {rc}."
        label = {
            "id": cid,
            "source": f"real run: tests/corpus/generators/launchers/round14/{c['script']} via `{cmd}`, "
                      f"torch 2.13.0 CPU, gloo",
            "category": c["category"], "fatal": True, "decisive_line": dec,
        }
        if dfile:
            label["decisive_file"] = dfile
        label.update({
            "also_acceptable": also, "initiating_rank": c["rank"], "collateral": coll, "operator": None,
            "root_cause": c["root"], "fix": c["fix"], "launcher": c["launcher"], "framework": c["framework"],
            "genuine": False, "induced_how": c["induced"], "confirmed_by": "induced", "confidence": "high",
            "notes": notes,
        })
        with open(os.path.join(d, "label.json"), "w") as f:
            json.dump(label, f, indent=2, ensure_ascii=False); f.write("\n")
        status = "OK " if not problems else "BAD"
        bad += bool(problems)
        print(f"{status} {cid:40s} rank={c['rank']} {c['category']:34s} | {(dec or '')[:100]}")
        for p in problems:
            print("     ", p)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
