"""Write label.json for every round-12 case from what was INDUCED (rank, fault, category are fixed below),
taking the decisive line from the log itself (first line matching the case's pattern), and CHECK that
decisive_line, also_acceptable and collateral are exact substrings of a line of log.txt (and of
ranks/<decisive_file> for --log-dir cases). Exits 1 if any check fails.

usage: python make_labels.py [--pool DIR] [--job DIR] [case-id ...]
"""
import argparse, json, os, re, sys

HERE = os.path.dirname(os.path.abspath(__file__))
GLOO_PEER = r"\[default{r}\]:\[rank{r}\]: RuntimeError: \[[^\]]+\] (?:Connection closed by peer|Read error) \[[^\]]+\]:\d+"
SIGTERM = r"Sending process \d+ closing signal SIGTERM"

# id -> what was induced.  dec: regex whose FIRST match (in log.txt) is the decisive line (group 0).
CASES = {
    "run12-torchrun-hf-collator-raise": dict(
        launcher="torchrun", framework="transformers", category="user.code_error", fatal=True, rank=1, world=3,
        dec=r"\[default1\]:\[rank1\]: KeyError: 'label'",
        coll=[GLOO_PEER.format(r=0), GLOO_PEER.format(r=2), SIGTERM],
        induced="custom data collator on rank 1 drops the 'label' field when building its 4th batch; "
                "f['label'] raises KeyError inside Trainer's dataloader fetch",
        root="Rank 1's data collator raised KeyError: 'label' (a batch without labels); the other ranks lost "
             "their gloo peer in accelerate's all_gather and were SIGTERMed by torchrun.",
        fix="Make the collator validate/handle samples missing the 'label' field (fix the dataset record).",
        script="hf_trainer.py"),
    "run12-torchrun-hf-collator-raise-w5": dict(
        launcher="torchrun", framework="transformers", category="user.code_error", fatal=True, rank=4, world=5,
        dec=r"\[default4\]:\[rank4\]: KeyError: 'label'",
        coll=[GLOO_PEER.format(r=0), GLOO_PEER.format(r=3), SIGTERM],
        induced="custom data collator on rank 4 (world 5) drops the 'label' field in its 5th batch -> KeyError",
        root="Rank 4's data collator raised KeyError: 'label'; ranks 0-3 died on 'Connection closed by peer'.",
        fix="Make the collator validate/handle samples missing the 'label' field (fix the dataset record).",
        script="hf_trainer.py"),
    "run12-torchrun-hf-callback-sigkill": dict(
        launcher="torchrun", framework="transformers", category="mem.host_oom", fatal=True, rank=2, world=4,
        dec=r"failed \(exitcode: -9\) local_rank: 2 \(pid: \d+\) of binary: \S+",
        coll=[GLOO_PEER.format(r=1), GLOO_PEER.format(r=3), SIGTERM],
        induced="a TrainerCallback.on_step_end on rank 2 does os.kill(os.getpid(), SIGKILL) at global step 3 "
                "(no traceback)",
        root="Rank 2 was SIGKILLed (exit -9, no traceback); the surviving ranks failed on the lost gloo peer.",
        fix="Find what killed rank 2 (kernel OOM killer / scheduler: check dmesg and memory), give it more "
            "memory or reduce its footprint.",
        script="hf_trainer.py"),
    "run12-torchrun-hf-callback-hang": dict(
        launcher="torchrun", framework="transformers", category="dist.collective_timeout", fatal=True, rank=0,
        world=3,
        dec=r"\[default\d\]:\[rank\d\]: RuntimeError: \[[^\]]+\] Timed out waiting 20000ms for (?:send|recv) "
            r"operation to complete",
        coll=[r"\[default\d\]:\[rank\d\]: RuntimeError: \[[^\]]+\] Timed out waiting 20000ms for (?:send|recv) "
              r"operation to complete", SIGTERM],
        induced="a TrainerCallback.on_step_end on rank 0 sleeps 60 s at global step 3 (silent); the gloo PG "
                "(created by the script with timeout=20 s, since use_cpu=True drops ddp_timeout) times out on "
                "ranks 1 and 2 in the next step's collective",
        root="Rank 0 stalled silently in on_step_end; ranks 1 and 2 timed out after 20 s waiting for it in a "
             "gloo collective.",
        fix="Remove the blocking work from rank 0's callback (or do it on all ranks / asynchronously) or raise "
            "the process group timeout.",
        notes="transformers 5.24.0: with use_cpu=True TrainingArguments does not pass ddp_timeout to "
              "init_process_group (a first run with ddp_timeout=20 just waited 60 s and finished), so the script "
              "creates the gloo group itself with timeout=20 s (--own-pg 1) before building TrainingArguments.",
        script="hf_trainer.py"),
    "run12-lightning-ddpspawn-raise": dict(
        launcher="lightning_ddp_spawn", framework="lightning", category="user.code_error", fatal=True, rank=2,
        world=3, dec=r"IndexError: list index out of range",
        coll=[r"Terminating process \d+ via signal SIGTERM", r"\[rank: \d\] Received SIGTERM: 15",
              r"-- Process 2 terminated with the following error:"],
        induced="training_step on global rank 2 indexes a 3-element list with batch_idx+10 at batch 3 "
                "(Trainer(strategy='ddp_spawn', accelerator='cpu', devices=3))",
        root="Rank 2's training_step raised IndexError: list index out of range; torch.multiprocessing "
             "SIGTERMed ranks 0 and 1.",
        fix="Fix the out-of-range index in training_step.",
        script="lightning_job.py"),
    "run12-torchrun-lightning-hostoom": dict(
        launcher="torchrun", framework="lightning", category="mem.host_oom", fatal=True, rank=1, world=3,
        dec=r"failed \(exitcode: -9\) local_rank: 1 \(pid: \d+\) of binary: \S+",
        coll=[GLOO_PEER.format(r=0), GLOO_PEER.format(r=2), SIGTERM],
        induced="Lightning Trainer(strategy='ddp', accelerator='cpu', devices=3) under torchrun; rank 1 writes its "
                "pid into cgroup v1 memory cgroup r12oom (memory.limit_in_bytes = memsw = 1.5 GiB) in setup(), "
                "then at batch 3 allocates+touches 256 MiB blocks until the kernel OOM killer SIGKILLs it",
        root="Rank 1 exceeded its 1.5 GiB memory cgroup and was SIGKILLed by the kernel OOM killer (exit -9); "
             "ranks 0 and 2 failed on the lost gloo peer.",
        fix="Reduce rank 1's host memory use (the growing in-memory cache) or raise the memory limit.",
        script="lightning_job.py"),
    "run12-torchrun-elastic-same": dict(
        launcher="torchrun", framework="plain", category="user.code_error", fatal=True, rank=0, world=3,
        dec=r"\[default0\]:\[rank0\]: ValueError: shard_00\.bin: record \d+ has 15 features, expected 16",
        coll=[GLOO_PEER.format(r=1), GLOO_PEER.format(r=2), SIGTERM],
        induced="torchrun --max-restarts 1; rank 0 raises ValueError at step 3 in attempt 0 and again in attempt 1",
        root="Rank 0 raised the same ValueError (bad record in shard_00.bin) in both attempts, so the restart "
             "could not help and the job failed.",
        fix="Fix or skip the malformed record in shard_00.bin; restarts do not fix deterministic data errors.",
        notes="The decisive line appears identically in attempt 0 and attempt 1 (same rank, same error).",
        script="elastic_ddp.py"),
    "run12-torchrun-elastic-switch": dict(
        launcher="torchrun", framework="plain", category="user.code_error", fatal=True, rank=3, world=4,
        dec=r"\[default3\]:\[rank3\]: FileNotFoundError: \[Errno 2\] No such file or directory: "
            r"'ckpt/optimizer_rank3\.pt'",
        also=[],
        coll=[r"\[default1\]:\[rank1\]: ValueError: shard_01\.bin: record \d+ has 15 features, expected 16",
              GLOO_PEER.format(r=0), GLOO_PEER.format(r=2), SIGTERM],
        induced="torchrun --max-restarts 1; attempt 0: rank 1 raises ValueError (bad shard record) at step 3; "
                "attempt 1: rank 3 raises FileNotFoundError (missing optimizer checkpoint) at step 3",
        root="The job's final failure is attempt 1's: rank 3 could not find ckpt/optimizer_rank3.pt; attempt 0 "
             "had failed earlier on rank 1's ValueError.",
        fix="Provide/restore the per-rank optimizer checkpoint (and fix rank 1's malformed shard record).",
        notes="Labelled with the job's FINAL failure (attempt 1, rank 3). Attempt 0's failure (rank 1, ValueError: "
              "shard_01.bin ...) is listed in collateral.",
        script="elastic_ddp.py"),
    "run12-torchrun-elastic-recover": dict(
        launcher="torchrun", framework="plain", category="user.code_error", fatal=False, rank=2, world=3,
        dec=r"\[default2\]:\[rank2\]: ValueError: shard_02\.bin: record \d+ has 15 features, expected 16",
        coll=[GLOO_PEER.format(r=0), GLOO_PEER.format(r=1), SIGTERM,
              r"\[default\d\]:[^\n]* INFO train: attempt 1 rank \d training complete"],
        induced="torchrun --max-restarts 1; rank 2 raises ValueError at step 2 in attempt 0 only; attempt 1 "
                "trains to the end (torchrun exit 0)",
        root="Attempt 0 failed on rank 2's ValueError; torchrun restarted the workers and attempt 1 completed.",
        fix="None needed for this run (recovered); fix the transient shard read on rank 2 to avoid the restart.",
        notes="Not fatal: the launcher exited 0 after attempt 1 completed.",
        script="elastic_ddp.py"),
    "run12-torchrun-elastic-switch-logdir": dict(
        launcher="torchrun", framework="plain", category="user.code_error", fatal=True, rank=4, world=5,
        dec=r"\[rank4\]: FileNotFoundError: \[Errno 2\] No such file or directory: 'ckpt/optimizer_rank4\.pt'",
        dfile="attempt_1/4/stderr.log",
        coll=[r"\[default0\]:\[rank0\]: ValueError: shard_00\.bin: record \d+ has 15 features, expected 16",
              GLOO_PEER.format(r=1), GLOO_PEER.format(r=3), SIGTERM],
        induced="torchrun --log-dir D --redirects 3 --tee 3 --max-restarts 1, world 5; attempt 0: rank 0 raises "
                "ValueError at step 2; attempt 1: rank 4 raises FileNotFoundError at step 2",
        root="The job's final failure is attempt 1's: rank 4 could not find ckpt/optimizer_rank4.pt; attempt 0 "
             "had failed on rank 0's ValueError.",
        fix="Provide/restore the per-rank optimizer checkpoint (and fix rank 0's malformed shard record).",
        notes="Labelled with the job's FINAL failure (attempt 1, rank 4); attempt 0's failure (rank 0, ValueError) "
              "is in collateral. ranks/ holds the launcher's per-attempt per-rank stdout/stderr files.",
        script="elastic_ddp.py"),
    "run12-torchrun-elastic-recover-logdir": dict(
        launcher="torchrun", framework="plain", category="user.code_error", fatal=False, rank=0, world=4,
        dec=r"\[rank0\]: ValueError: shard_00\.bin: record \d+ has 15 features, expected 16",
        dfile="attempt_0/0/stderr.log",
        coll=[GLOO_PEER.format(r=1), GLOO_PEER.format(r=2), SIGTERM,
              r"failed \(exitcode: -?\d+\) local_rank: \d \(pid: \d+\) of binary: \S+",
              r"\[default\d\]:terminate called without an active exception"],
        induced="torchrun --log-dir D --redirects 3 --tee 3 --max-restarts 2, world 4; rank 0 raises ValueError at "
                "step 4 in attempt 0 only; attempt 1 trains to the end (exit 0)",
        root="Attempt 0 failed on rank 0's ValueError; attempt 1 completed after the restart.",
        fix="None needed for this run (recovered); fix the transient shard read on rank 0 to avoid the restart.",
        notes="Not fatal.",
        script="elastic_ddp.py"),
    "run12-torchrun-logfmt-raise": dict(
        launcher="torchrun", framework="plain", category="user.code_error", fatal=True, rank=3, world=4,
        dec=r"KeyError: '</s>'",
        also=[r"\S+ \S+ \[RANK 3\] ERROR trainer: training failed"],
        coll=[r"\S+ \S+ \[RANK [012]\] ERROR trainer: training failed",
              r"failed \(exitcode: -?\d+\) local_rank: \d \(pid: \d+\) of binary: \S+",
              r"terminate called without an active exception", SIGTERM],
        induced="no --tee; rank (RANK env) in a logging.Filter field; rank 3's tokenize() looks up a missing "
                "vocab key at step 4 -> KeyError, printed by logger.exception('training failed'), then sys.exit(1)",
        root="Rank 3 raised KeyError: '</s>' (special token missing from its vocabulary), logged with "
             "logger.exception; the other ranks then failed on the lost gloo peer.",
        fix="Add the missing '</s>' token to rank 3's shard vocabulary (or fall back to a default id).",
        notes="The traceback lines themselves carry no rank; only the preceding '[RANK 3] ERROR' log line does.",
        script="logfmt_raise.py"),
    "run12-mpspawn-dataloader-worker-raise": dict(
        launcher="mp.spawn", framework="plain", category="user.code_error", fatal=True, rank=1, world=3,
        dec=r"UnicodeDecodeError: 'utf-8' codec can't decode byte 0xff in position 0: invalid start byte in "
            r"record 301",
        also=[r"RuntimeError: Caught UnicodeDecodeError in DataLoader worker process \d\."],
        coll=[r"Terminating process \d+ via signal SIGTERM", r"-- Process 1 terminated with the following error:"],
        induced="rank 1's Dataset.__getitem__ raises UnicodeDecodeError for index 301 inside a DataLoader worker "
                "(num_workers=2); the DataLoader re-raises it in rank 1 as RuntimeError, mp.spawn reports it",
        root="A DataLoader worker of rank 1 failed to decode record 301 (UnicodeDecodeError), which was re-raised "
             "in rank 1 and ended the mp.spawn job.",
        fix="Repair or skip the corrupt record 301 (decode with errors='replace' or validate the data).",
        script="spawn_dl_worker.py"),
    "run12-mpirun-allgather-mismatch": dict(
        launcher="mpirun", framework="plain", category="dist.collective_mismatch", fatal=True, rank=0, world=4,
        # (--tag-output may cut this line into tagged fragments, so match from "[enforce fail at" only)
        dec=r"\[enforce fail at [^\]]+\] op\.preamble\.length <= op\.nbytes\. \d+ vs \d+\. Received data size "
            r"doesn't match expected size\. Is there a distributed collective mismatch in your code\?",
        coll=[r"\[1,\d\]<stderr>:terminate called after throwing an instance of '",
              r"mpirun noticed that process rank \d with PID \d+ on node \S+ exited on signal 6 \(Aborted\)\.",
              r"\[1,\d\]<stderr>:\[rank\d\]: RuntimeError: \[[^\]]+\] (?:Connection closed by peer|Read error)"],
        induced="mpirun --tag-output -np 4; at step 3 rank 0 passes a 6-float tensor to all_gather while the others "
                "pass 4 floats (no TORCH_DISTRIBUTED_DEBUG)",
        root="Rank 0 called all_gather with a tensor of a different size; a receiving rank hit gloo's "
             "'Received data size doesn't match expected size' enforce and aborted.",
        fix="Make every rank pass the same tensor shape to all_gather (pad, or use all_gather_object).",
        notes="The rank that prints the mismatch (and aborts with signal 6) is a receiver, not the culprit rank 0.",
        script="mpi_job.py"),
    "run12-mpirun-segv": dict(
        launcher="mpirun", framework="plain", category="user.code_error", fatal=True, rank=2, world=3,
        dec=r"mpirun noticed that process rank 2 with PID \d+ on node \S+ exited on signal 11 \(Segmentation "
            r"fault\)\.",
        coll=[r"\[1,\d\]<stderr>:\[rank\d\]: RuntimeError: \[[^\]]+\] (?:Connection closed by peer|Read error)",
              r"Primary job  terminated normally, but 1 process returned"],
        induced="mpirun --tag-output -np 3; rank 2 does os.kill(os.getpid(), signal.SIGSEGV) at step 3",
        root="Rank 2 died of a segmentation fault (signal 11); ranks 0 and 1 failed on the lost gloo peer.",
        fix="Find the crashing native code on rank 2 (enable faulthandler / a core dump and get the stack).",
        notes="segfault, no category fits (CPU job: not cuda.illegal_memory_access; not a teardown abort).",
        script="mpi_job.py"),
}


def lines_of(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read().split("\n")


def first(pattern, lines):
    rx = re.compile(pattern)
    for ln in lines:
        m = rx.search(ln)
        if m:
            return m.group(0).rstrip()
    return None


def all_distinct(pattern, lines, limit=3):
    rx, out = re.compile(pattern), []
    for ln in lines:
        m = rx.search(ln)
        if m and m.group(0).rstrip() not in out:
            out.append(m.group(0).rstrip())
        if len(out) >= limit:
            break
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pool", default=os.path.normpath(os.path.join(HERE, "../../../../blind/pool12")))
    ap.add_argument("--job", default="/tmp/r12job")
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
        dec = first(c["dec"], lines)
        problems = []
        if dec is None:
            problems.append("decisive pattern not found")
        also = [x for p in c.get("also", []) for x in ([first(p, lines)] if first(p, lines) else [])]
        coll = [x for p in c["coll"] for x in all_distinct(p, lines)]
        for s in ([dec] if dec else []) + also + coll:
            if not any(s in ln for ln in lines):
                problems.append(f"not a substring of a log line: {s!r}")
        if c.get("dfile"):
            fl = lines_of(os.path.join(d, "ranks", c["dfile"]))
            if dec and not any(dec in ln for ln in fl):
                problems.append(f"decisive line not in ranks/{c['dfile']}")
        cmd, rc = "", "?"
        try:
            cmd = open(os.path.join(a.job, "out", cid + ".cmd")).read().strip()
            rc = open(os.path.join(a.job, "out", cid + ".rc")).read().strip()
        except OSError:
            pass
        cmd = cmd.replace(a.job, "/home/user/job").replace("/sys/fs/cgroup/memory/r12oom", "<memcg>")
        notes = c.get("notes", "")
        kern = os.path.join(a.job, "out", cid + ".kernel")
        if os.path.exists(kern) and open(kern).read().strip():
            k = open(kern).read().strip().splitlines()[-1]
            k = re.sub(r"^\[\s*[\d.]+\]\s*", "", k)
            notes = (notes + " " if notes else "") + f"Kernel log (dmesg, not in log.txt): {k}."
        if c["launcher"] == "torchrun":      # what torchrun itself blamed, per attempt, in THIS log (it races)
            seen = re.findall(r"failed \(exitcode: (-?\d+)\) local_rank: (\d+)", "\n".join(lines))
            if seen:
                blamed = "; ".join(f"attempt {i}: local_rank {r} (exitcode {e})" for i, (e, r) in enumerate(seen))
                notes = (notes + " " if notes else "") + f"torchrun's 'failed (exitcode: ...)' line(s) name: {blamed}."
            rc_m = re.search(r"Root Cause \(first observed failure\):\n\[0\]:\n.*\n.*\n\s+rank\s+: (\d+).*\n"
                             r"\s+exitcode\s+: (-?\d+)", "\n".join(lines))
            if rc_m:
                notes += f" Its Root Cause section names rank {rc_m.group(1)} (exitcode {rc_m.group(2)})."
        notes = (notes + " " if notes else "") + f"World size {c['world']}; launcher exit status {rc}."
        label = {
            "id": cid,
            "source": f"real run: tests/corpus/generators/launchers/round12/{c['script']} via `{cmd}`, "
                      f"torch 2.13.0 CPU, gloo",
            "category": c["category"], "fatal": c["fatal"], "decisive_line": dec,
        }
        if c.get("dfile"):
            label["decisive_file"] = c["dfile"]
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
        print(f"{status} {cid:42s} rank={c['rank']} {c['category']:26s} fatal={c['fatal']!s:5s} | {dec}")
        for p in problems:
            print("     ", p)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
