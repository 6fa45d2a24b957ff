"""Write label.json for every round-17b case from what was INDUCED (rank, fault, category are fixed below), taking
the decisive line from the log itself (first line matching the case's pattern, in log.txt or, for the submitit
cases, in ranks/<decisive_file>), and CHECK that decisive_line, also_acceptable and collateral are exact substrings
of a line of log.txt or of a ranks/ file. Also refuses logs that name the scenario (job names, folders, rdzv ids
are neutral tokens). Exits 1 if any check fails.

usage: python make_labels.py [--pool DIR] [--job DIR] [case-id ...]
"""
import argparse, glob, json, os, re, sys

HERE = os.path.dirname(os.path.abspath(__file__))
# gloo lines of surviving ranks; {p}: the prefix before "[rankN]: " (srun --label's "N: ", or nothing)
PEER = r"{p}\[rank{r}\]: RuntimeError: \[[^\]]+\] (?:Connection closed by peer|Read error) \[[^\]]+\]:\d+"
TOUT = r"{p}\[rank{r}\]: RuntimeError: \[[^\]]+\] Timed out waiting {ms}ms for (?:send|recv) operation to complete"
SRUN_EXIT = r"srun: error: \w+: tasks? [\d,\-]+: (?:Exited with exit code \d+|Terminated|Killed|Aborted)"
CANCEL = r"(?:\d: )?slurmstepd-\w+: error: \*\*\* (?:STEP \d+\.\d+|JOB \d+) ON \w+ CANCELLED AT [\dT:\-]+ \*\*\*"
TR_FAIL = r"\d: E\d+ [\d:.]+ \d+ torch/distributed/elastic/multiprocessing/api\.py:\d+\] failed \(exitcode: -?\d+\) " \
          r"local_rank: \d \(pid: \d+\) of binary: \S+"
FAILED_JOB = r"submitit\.core\.utils\.FailedJobError: Job \(task=\d\) failed during processing with trace:"

TRUN = ("srun -N1 -n2 --label{k} launching `torchrun --nnodes=2 --nproc-per-node=2 --rdzv-backend=c10d "
        "--rdzv-endpoint=localhost:PORT` in each of its 2 tasks (one torchrun agent per Slurm task = one 'node', "
        "world size 4, Slurm 22.05 single node)")
LIT = ("srun -N1 --ntasks-per-node=3 -n3 --label python train_lightning.py (no --kill-on-bad-exit): Lightning 2.6.6 "
       "Trainer(accelerator='cpu', devices=3, num_nodes=1, strategy=DDPStrategy(gloo)) taking its ranks from Slurm "
       "(SLURMEnvironment)")
SUB = ("submitit 1.5.4 AutoExecutor on the local Slurm 22.05: one job, nodes=1, tasks_per_node=3, each task a gloo DDP "
       "rank from submitit's TorchDistributedEnvironment/JobEnvironment; the driver waits with job.results()")

CASES = {
    # ---------------- srun launching torchrun
    "run17-sruntorchrun-raise": dict(
        launcher="srun", framework="plain", category="user.code_error", rank=2, world=4, script="train17.py",
        dec=r"\d: \[rank2\]: KeyError: 'sample-7c2e9'",
        coll=[PEER.format(p=r"\d: ", r="[013]"), TR_FAIL, SRUN_EXIT, CANCEL],
        induced=TRUN.format(k=" --kill-on-bad-exit=1") + "; at step 3 the data loader of global rank 2 looks up a "
                "corrupt sample id 'sample-7c2e9' in its shard index (dict) -> KeyError, uncaught",
        root="Global rank 2's data loader raised KeyError: 'sample-7c2e9' (a corrupt id in its shard manifest); the "
             "other ranks lost their gloo peer, both torchrun agents failed and srun cancelled the step.",
        fix="Repair/validate the shard manifest (skip or report ids missing from the index) before training."),
    "run17-sruntorchrun-sigkill": dict(
        launcher="srun", framework="plain", category="mem.host_oom", rank=1, world=4, script="train17.py",
        dec=r"\d: E\d+ [\d:.]+ \d+ torch/distributed/elastic/multiprocessing/api\.py:\d+\] failed \(exitcode: -9\) "
            r"local_rank: 1 \(pid: \d+\) of binary: \S+",
        also=[r"\d:   exitcode  : -9 \(pid: \d+\)  \(SIGKILL\)", r"\d:   traceback : Signal 9 \(SIGKILL\) received by PID \d+"],
        coll=[PEER.format(p=r"\d: ", r="[023]"), SRUN_EXIT],
        induced=TRUN.format(k="") + " without --kill-on-bad-exit; global rank 1 calls os.kill(os.getpid(), "
                "SIGKILL) after logging step 3 (no traceback)",
        root="Global rank 1 (local_rank 1 of the agent in Slurm task 0) was SIGKILLed with no traceback; its torchrun "
             "agent reported exitcode -9 and stopped its other worker, and the other agent's workers failed on "
             "their lost gloo peer.",
        fix="Find what killed rank 1 (kernel OOM killer / an external kill: check dmesg, sacct MaxRSS) and give it "
            "more memory or reduce its footprint."),
    "run17-sruntorchrun-hang": dict(
        launcher="srun", framework="plain", category="dist.collective_timeout", rank=2, world=4,
        script="train17.py",
        dec=TOUT.format(p=r"\d: ", r="[013]", ms=15000),
        also=[TOUT.format(p=r"\d: ", r="[013]", ms=15000)],
        coll=[TR_FAIL, SRUN_EXIT, CANCEL],
        induced=TRUN.format(k=" --kill-on-bad-exit=1") + ", gloo PG timeout 15 s; global rank 2 sleeps 60 s before "
                "the per-step loss all_reduce at step 2",
        root="Global rank 2 stalled silently before the step-2 loss all_reduce; ranks 0, 1 and 3 waited in it until "
             "gloo's 15 s timeout fired, then the agents and srun tore the job down.",
        fix="Find why rank 2 stalls (py-spy dump it while it hangs) or raise the process-group timeout if the stall "
            "is legitimate.",
        notes="Rank 2 prints nothing after step 1 and no error of its own (its agent SIGTERMs it); the torchrun "
              "summary of its agent names rank 3 (a timed-out peer on the same agent) as root cause."),
    "run17-sruntorchrun-mismatch": dict(
        launcher="srun", framework="plain", category="dist.collective_mismatch", rank=1, world=4,
        script="train17.py",
        dec=r"\d:   what\(\):  \[enforce fail at [^\]]+\] op\.preamble\.length <= op\.nbytes\. \d+ vs \d+\. Received "
            r"data size doesn't match expected size\. Is there a distributed collective mismatch in your code\?",
        coll=[r"\d: terminate called after throwing an instance of 'gloo::EnforceNotMet'",
              PEER.format(p=r"\d: ", r="[0-3]"), TR_FAIL, SRUN_EXIT],
        induced=TRUN.format(k=" --kill-on-bad-exit=1") + "; after the step-3 loss all_reduce global rank 1 "
                "all_reduces 1000 grad-norm stats where ranks 0, 2, 3 all_reduce 4",
        root="Global rank 1 all_reduced a 1000-element stats tensor while the other ranks all_reduced 4 elements; "
             "gloo detected the size mismatch on a receiving rank (abort), the others lost their peer.",
        fix="Make every rank call the same collectives with the same tensor sizes (pack the same number of stats "
            "on all ranks).",
        notes="The gloo enforce abort happens on a RECEIVING rank (not rank 1), so the aborting rank (exitcode -6) "
              "is the one torchrun's summary names; the line carries no [rankN] prefix. An earlier try with 8 vs 4 "
              "elements in this world of 4 produced no size error at all (the 4-element ranks completed, rank 1 "
              "timed out), hence 1000."),
    "run17-sruntorchrun-mismatch-detail": dict(
        launcher="srun", framework="plain", category="dist.collective_mismatch", rank=2, world=4,
        script="train17.py",
        dec=r"\d: \[rank2\]: RuntimeError: Detected mismatch between collectives on ranks\. Rank 2 is running "
            r"collective: CollectiveFingerPrint\(SequenceNumber=\d+, OpType=ALLREDUCE, TensorShape=\[8\]",
        also=[r"\d: \[rank[013]\]: RuntimeError: Detected mismatch between collectives on ranks\. Rank [013] is "
              r"running collective: CollectiveFingerPrint\(SequenceNumber=\d+, OpType=ALLREDUCE, TensorShape=\[4\]"],
        coll=[TR_FAIL, SRUN_EXIT, CANCEL],
        induced="TORCH_DISTRIBUTED_DEBUG=DETAIL " + TRUN.format(k=" --kill-on-bad-exit=1") + "; gradients averaged "
                "by hand (no DDP: DDP's constructor segfaults under DETAIL in torch 2.13.0 CPU); after the step-3 loss "
                "all_reduce global rank 2 all_reduces 8 grad-norm stats where ranks 0, 1, 3 all_reduce 4",
        root="Global rank 2 all_reduced an 8-element stats tensor where the others all_reduced 4; "
             "TORCH_DISTRIBUTED_DEBUG=DETAIL's collective fingerprint check reported the mismatch on every rank.",
        fix="Make every rank call the same collectives with the same tensor sizes (pack the same number of stats "
            "on all ranks)."),
    # ---------------- Lightning under srun
    "run17-srunlightning-raise": dict(
        launcher="srun", framework="lightning", category="user.code_error", rank=1, world=3,
        script="train_lightning.py",
        dec=r"1: \[rank1\]: KeyError: 'img-0x3f9a'",
        coll=[PEER.format(p=r"[02]: ", r="[02]"), SRUN_EXIT],
        induced=LIT + "; at batch 3 rank 1's Dataset.__getitem__ (num_workers=0) looks up a corrupt manifest id "
                "'img-0x3f9a' in its index -> KeyError, uncaught",
        root="Rank 1's Dataset.__getitem__ raised KeyError: 'img-0x3f9a' (a corrupt manifest entry); ranks 0 and 2 "
             "then failed in DDP's gradient all_reduce on their lost gloo peer.",
        fix="Repair/validate the dataset manifest (skip or report ids missing from the index) before training."),
    "run17-srunlightning-sigkill": dict(
        launcher="srun", framework="lightning", category="mem.host_oom", rank=2, world=3,
        script="train_lightning.py",
        dec=r"srun: error: \w+: task 2: Killed",
        coll=[PEER.format(p=r"[01]: ", r="[01]"), SRUN_EXIT],
        induced=LIT + "; rank 2 calls os.kill(os.getpid(), SIGKILL) at the start of training_step for batch 4 "
                "(no traceback)",
        root="Rank 2 was SIGKILLed with no traceback (srun: 'task 2: Killed'); ranks 0 and 1 then failed on their "
             "lost gloo peer.",
        fix="Find what killed rank 2 (kernel OOM killer / an external kill: check dmesg, sacct MaxRSS) and give it "
            "more memory or reduce its footprint."),
    "run17-srunlightning-hang": dict(
        launcher="srun", framework="lightning", category="dist.collective_timeout", rank=1, world=3,
        script="train_lightning.py",
        dec=TOUT.format(p=r"[02]: ", r="[02]", ms=20000),
        also=[TOUT.format(p=r"[02]: ", r="[02]", ms=20000)],
        coll=[PEER.format(p=r"1: ", r="1"), SRUN_EXIT],
        induced=LIT + ", DDPStrategy timeout 20 s; rank 1 sleeps 60 s at the start of training_step for batch 3, "
                "the others block in DDP's gradient all_reduce",
        root="Rank 1 stalled silently for 60 s in training_step; ranks 0 and 2 timed out after 20 s in DDP's "
             "gradient all_reduce; rank 1 itself failed later on the peers it had lost.",
        fix="Find why rank 1 stalls (py-spy dump it while it hangs) or raise the DDP process-group timeout if the "
            "stall is legitimate.",
        notes="Without --kill-on-bad-exit srun waits for rank 1, which wakes up, logs its step (with a ~60 s step "
              "time) and then dies on 'Connection closed by peer'."),
    # ---------------- submitit
    "run17-submitit-raise": dict(
        launcher="srun", framework="plain", category="user.code_error", rank=1, world=3, script="submit_ddp.py",
        dfile="*_1_log.err",
        dec=r"\[rank1\]: KeyError: 'rec-f00d7'",
        coll=[FAILED_JOB, PEER.format(p="", r="[02]"), SRUN_EXIT],
        induced=SUB + "; at step 3 rank 1 looks up a corrupt record id 'rec-f00d7' in its shard index -> KeyError "
                "(submitit records it and re-raises)",
        root="Rank 1 (submitit task 1) raised KeyError: 'rec-f00d7' on a corrupt shard-manifest id; ranks 0 and 2 "
             "failed on their lost gloo peer, and the driver's job.results() re-raised task 0's collateral error.",
        fix="Repair/validate the shard manifest (skip or report ids missing from the index) before training.",
        notes="The driver output (log.txt) shows only task 0's FailedJobError ('Connection closed by peer'): "
              "submitit re-raises the lowest failing task. The cause is in ranks/<jobid>_1_log.err."),
    "run17-submitit-sigkill": dict(
        launcher="srun", framework="plain", category="mem.host_oom", rank=2, world=3, script="submit_ddp.py",
        dfile="*_0_log.err",
        dec=r"srun: error: \w+: task 2: Killed",
        coll=[FAILED_JOB, PEER.format(p="", r="[01]"), SRUN_EXIT],
        induced=SUB + "; rank 2 calls os.kill(os.getpid(), SIGKILL) after logging step 2 (no traceback, no result "
                "pickle; submitit learns the job ended through sacct, Slurm accounting via slurmdbd)",
        root="Rank 2 (submitit task 2) was SIGKILLed with no traceback (srun: 'task 2: Killed', in the job-level "
             "stderr file); ranks 0 and 1 failed on their lost gloo peer and the driver re-raised task 0's error.",
        fix="Find what killed rank 2 (kernel OOM killer / an external kill: check dmesg, sacct MaxRSS) and give it "
            "more memory or reduce its footprint.",
        notes="srun's own messages land in <jobid>_0_log.err (submitit's sbatch --error file is task 0's file); "
              "task 2's .err is empty and its .out stops after step 2."),
    "run17-submitit-hang": dict(
        launcher="srun", framework="plain", category="dist.collective_timeout", rank=1, world=3,
        script="submit_ddp.py",
        dfile="*_0_log.err",
        dec=TOUT.format(p="", r="0", ms=20000),
        also=[TOUT.format(p="", r="2", ms=20000),
              r"^RuntimeError: \[[^\]]+\] Timed out waiting 20000ms for (?:send|recv) operation to complete"],
        coll=[FAILED_JOB, PEER.format(p="", r="1"), SRUN_EXIT],
        induced=SUB + ", gloo PG timeout 20 s; rank 1 sleeps 45 s before the per-step loss all_reduce at step 3",
        root="Rank 1 (submitit task 1) stalled silently before the step-3 loss all_reduce; ranks 0 and 2 timed out "
             "after 20 s, and rank 1 later failed on its lost peers.",
        fix="Find why rank 1 stalls (py-spy dump it while it hangs) or raise the process-group timeout if the stall "
            "is legitimate.",
        notes="Ranks 0 and 2 time out in the same millisecond; rank 0's file is taken as decisive, rank 2's line "
              "and the driver's copy of task 0's error (log.txt) are also acceptable."),
    # ---------------- Slurm time limit
    "run17-srun-timelimit": dict(
        launcher="srun", framework="plain", category="dist.collective_timeout", rank=2, world=3,
        script="train17.py",
        dec=r"\d: slurmstepd-\w+: error: \*\*\* STEP \d+\.0 ON \w+ CANCELLED AT [\dT:\-]+ DUE TO TIME LIMIT \*\*\*",
        coll=[r"srun: Job step aborted: Waiting up to \d+ seconds for job step to finish\.", SRUN_EXIT],
        induced="srun -t 1 -N1 -n3 --label python train17.py --rank-from slurm (ranks from SLURM_PROCID, 1-minute "
                "time limit, --log-local: each rank logs its step line before the loss all_reduce); gloo PG timeout "
                "600 s; rank 2 sleeps 900 s before logging step 2 and the loss all_reduce, ranks 0 and 1 wait in it",
        root="Rank 2 hung (silently) before the step-2 loss all_reduce while ranks 0 and 1 waited in it; the "
             "process-group timeout (600 s) was longer than the job's 1-minute limit, so Slurm cancelled the step "
             "for TIME LIMIT before any timeout was reported.",
        fix="Find why rank 2 stalls (py-spy dump it while it hangs); set the process-group timeout well below the "
            "job time limit so a hang is reported (with the rank) instead of being cut off by Slurm.",
        notes="No rank prints an error; rank 2 is the only rank without a 'step 2' line."),
    "run17-sbatch-timelimit": dict(
        launcher="srun", framework="plain", category="dist.collective_timeout", rank=1, world=3,
        script="timelimit_job.sh",
        dec=r"slurmstepd-\w+: error: \*\*\* JOB \d+ ON \w+ CANCELLED AT [\dT:\-]+ DUE TO TIME LIMIT \*\*\*",
        also=[r"\d: slurmstepd-\w+: error: \*\*\* STEP \d+\.0 ON \w+ CANCELLED AT [\dT:\-]+ DUE TO TIME LIMIT \*\*\*"],
        coll=[r"srun: Job step aborted: Waiting up to \d+ seconds for job step to finish\.",
              r"srun: forcing job termination"],
        induced="sbatch --time=1 -N1 -n3 timelimit_job.sh (the batch script runs `srun --label python train17.py "
                "--rank-from slurm --log-local`: each rank logs its step line before the loss all_reduce); gloo PG "
                "timeout 600 s; rank 1 sleeps 900 s before logging step 3 and the loss all_reduce, ranks 0 and 2 wait "
                "in it; log.txt is the job's output file (sbatch --output)",
        root="Rank 1 hung (silently) before the step-3 loss all_reduce while ranks 0 and 2 waited in it; the "
             "process-group timeout (600 s) was longer than the job's 1-minute limit, so Slurm cancelled the job "
             "for TIME LIMIT before any timeout was reported.",
        fix="Find why rank 1 stalls (py-spy dump it while it hangs); set the process-group timeout well below the "
            "job time limit so a hang is reported (with the rank) instead of being cut off by Slurm.",
        notes="No rank prints an error; rank 1 is the only rank without a 'step 3' line."),
}
# the case id, the script's --mode, '# induced' source comments, or a path/name that names the scenario must not
# appear in a log (they would give it away); the real error texts (SIGKILL, 'collective mismatch') may
LEAKS = re.compile(r"run17|induced|--mode|(?<![-\w])mode=|[/'\"](?:[\w-]*-)?(?:raise|sigkill|hang|mismatch|timelimit)"
                   r"(?:-[\w-]*)?[/'\"]", re.I)


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
    ap.add_argument("--pool", default=os.path.normpath(os.path.join(HERE, "../../../../blind/pool17")))
    ap.add_argument("--job", default="/tmp/r17bjob")
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
        files = [os.path.join(d, "log.txt")]
        for f in sorted(glob.glob(os.path.join(d, "ranks", "**", "*"), recursive=True)):
            if os.path.isfile(f):
                ranks_lines += lines_of(f); files.append(f)
        found = all_distinct(c["dec"], search, limit=1)
        dec = found[0] if found else None
        problems = [] if dec else ["decisive pattern not found"]
        also = [x for p in c.get("also", []) for x in all_distinct(p, lines + ranks_lines, skip=(dec,))]
        coll = [x for p in c["coll"] for x in all_distinct(p, lines + ranks_lines)]
        if not coll:
            problems.append("no collateral line found")
        if dec and not any(dec in ln for ln in search):
            problems.append(f"decisive line not a substring of a line of {dfile or 'log.txt'}")
        for s in also + coll:
            if not any(s in ln for ln in lines + ranks_lines):
                problems.append(f"not a substring of a log line: {s!r}")
        for f in files:
            for ln in lines_of(f):
                if LEAKS.search(ln):
                    problems.append(f"scenario leak in {os.path.relpath(f, d)}: {ln[:120]!r}")
                    break
        cmd, rc = "", "?"
        try:
            cmd = open(os.path.join(a.job, "out", cid + ".cmd")).read().strip()
            rc = open(os.path.join(a.job, "out", cid + ".rc")).read().strip()
        except OSError:
            pass
        cmd = cmd.replace(a.job, "/home/user/job")
        notes = c.get("notes", "")
        text = "\n".join(lines)
        m = re.search(r"^srun: error: \w+: tasks? ([\d,\-]+): (.+)$", "\n".join(search if dfile else lines), re.M)
        if m:
            notes = (notes + " " if notes else "") + f"srun's first error line names task(s) {m.group(1)} ({m.group(2)})."
        seen = re.findall(r"^(\d): .*failed \(exitcode: (-?\d+)\) local_rank: (\d+)", text, re.M)
        if seen:
            notes += " torchrun's 'failed (exitcode: ...)' line(s) name: " + "; ".join(
                f"Slurm task {t} local_rank {r} (exitcode {e})" for t, e, r in seen) + "."
        roots = re.findall(r"(\d): Root Cause \(first observed failure\):\n\d: \[0\]:\n.*\n.*\n\d:\s+rank\s+: (\d+).*\n"
                           r"\d:\s+exitcode\s+: (-?\d+)", text)
        if roots:
            notes += " Their Root Cause sections name: " + "; ".join(
                f"rank {r} (exitcode {e}, Slurm task {t})" for t, r, e in roots) + "."
        ranks_of = re.findall(r"^(\d): .*\[rank(\d)\] process group ready .*slurm_task=(\d)", text, re.M)
        if seen and ranks_of:
            per = {}
            for _, r, t in ranks_of:
                per.setdefault(t, []).append(int(r))
            notes += " Rendezvous placed global ranks " + "; ".join(
                f"{sorted(v)} on Slurm task {k}" for k, v in sorted(per.items())) + "."
        notes = (notes + " " if notes else "") + f"World size {c['world']}; launcher exit status {rc}."
        notes = notes.strip()
        label = {
            "id": cid,
            "source": f"real run: tests/corpus/generators/launchers/round17b/{c['script']} via `{cmd}`, "
                      f"torch 2.13.0 CPU, gloo, Slurm 22.05.8",
            "category": c["category"], "fatal": True, "decisive_line": dec,
        }
        if dfile:
            label["decisive_file"] = dfile
        label.update({
            "also_acceptable": also, "initiating_rank": c["rank"], "collateral": coll, "operator": None,
            "root_cause": c["root"], "fix": c["fix"], "launcher": c["launcher"], "framework": c["framework"],
            "genuine": False, "induced_how": c["induced"], "confirmed_by": "induced", "confidence": "high",
            "torch_version": "2.13.0", "notes": notes,
        })
        with open(os.path.join(d, "label.json"), "w") as f:
            json.dump(label, f, indent=2, ensure_ascii=False); f.write("\n")
        status = "OK " if not problems else "BAD"
        bad += bool(problems)
        print(f"{status} {cid:38s} rank={c['rank']} {c['category']:26s} | {(dfile + ': ') if dfile else ''}{(dec or '')[:90]}")
        for p in problems:
            print("     ", p)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
