"""Write label.json for every round-13 case from what was INDUCED (rank, fault, category are fixed below),
taking the decisive line from the log itself (first line matching the case's pattern), and CHECK that
decisive_line, also_acceptable and collateral are exact substrings of a line of log.txt (and of
ranks/<decisive_file> for the --log-dir compile case). Exits 1 if any check fails.

usage: python make_labels.py [--pool DIR] [--job DIR] [case-id ...]
"""
import argparse, json, os, re, sys

HERE = os.path.dirname(os.path.abspath(__file__))
# gloo "peer went away" lines on surviving ranks; {p} = the launcher's line prefix before "[rankN]: "
PEER = r"{p}\[rank{r}\]: RuntimeError: \[[^\]]+\] (?:Connection closed by peer|Read error) \[[^\]]+\]:\d+"
TOUT = r"{p}\[rank{r}\]: RuntimeError: \[[^\]]+\] Timed out waiting {ms}ms for {op} operation to complete"
SIGTERM = r"Sending process \d+ closing signal SIGTERM"
SPAWN_TERM = r"Terminating process \d+ via signal SIGTERM"
D = r"\[default\d\]:"

# id -> what was induced.  dec: regex whose FIRST match (in log.txt) is the decisive line (group 0).
# also / coll: regexes; every distinct match (up to 3 per regex) is listed.
CASES = {
    "run13-torchrun-rank0-eval-barrier": dict(
        launcher="torchrun", framework="plain", category="dist.collective_timeout", rank=0, world=4,
        script="ddp_job.py",
        dec=TOUT.format(p=D, r="[123]", ms=15000, op="(?:send|recv)"),
        also=[TOUT.format(p=D, r="[123]", ms=15000, op="(?:send|recv)")],
        coll=[SIGTERM, r"failed \(exitcode: 1\) local_rank: \d \(pid: \d+\)"],
        induced="after step 3 rank 0 alone runs a ~45 s evaluation loop (logs 'eval batch i/30', sleeps 1.5 s "
                "per batch) while ranks 1-3 call dist.barrier(); gloo PG timeout 15 s",
        root="Rank 0 spent ~45 s in a rank-0-only evaluation while ranks 1-3 waited for it in dist.barrier(); "
             "their gloo barrier timed out after 15 s.",
        fix="Run evaluation on every rank (or put the barrier before it / raise the process group timeout above "
            "the evaluation time).",
        notes="Rank 0 itself never reports an error: it is still printing 'eval batch' lines when torchrun "
              "SIGTERMs it. The other waiting ranks' timeout lines are listed in also_acceptable (same report)."),
    "run13-torchrun-rank0-raise": dict(
        launcher="torchrun", framework="plain", category="user.code_error", rank=0, world=4, script="ddp_job.py",
        dec=r"\[default0\]:\[rank0\]: ValueError: could not convert string to float: 'n/a'",
        coll=[PEER.format(p=D, r="[123]"), SIGTERM],
        induced="load_batch() on rank 0 parses the CSV row '0.12,0.53,n/a,0.98' at step 2 -> float('n/a')",
        root="Rank 0's data code raised ValueError: could not convert string to float: 'n/a'; the other ranks "
             "lost their gloo peer and were SIGTERMed by torchrun.",
        fix="Handle/clean missing values ('n/a') in the CSV shard before converting to float."),
    "run13-spawn-w6-lastrank-sigkill": dict(
        launcher="mp.spawn", framework="plain", category="mem.host_oom", rank=5, world=6, script="spawn_job.py",
        dec=r"torch\.multiprocessing\.spawn\.ProcessExitedException: process 5 terminated with signal SIGKILL",
        coll=[SPAWN_TERM],
        induced="rank 5 (of 6) calls os.kill(os.getpid(), SIGKILL) at step 3 (no traceback)",
        root="Rank 5 was SIGKILLed (no traceback); mp.spawn terminated the other five ranks.",
        fix="Find what killed rank 5 (kernel OOM killer / scheduler: check dmesg and memory use) and give it "
            "more memory or reduce its footprint."),
    "run13-torchrun-2agents-raise": dict(
        launcher="torchrun", framework="plain", category="user.code_error", rank=3, world=4, script="ddp_job.py",
        dec=r"\[default1\]:\[rank3\]: RuntimeError: shape '\[32, 16\]' is invalid for input of size 496",
        coll=[PEER.format(p=D, r="[012]"), SIGTERM, r"failed \(exitcode: 1\) local_rank: \d \(pid: \d+\)"],
        induced="two torchrun agents on localhost as 2 nodes (--nnodes 2 --node-rank 0/1 --nproc-per-node 2, "
                "static rendezvous on 127.0.0.1:29734, --tee 3), both appending to the same log; on global rank 3 "
                "(node 1, local rank 1) load_batch() views a truncated 496-element record as [32, 16] at step 2",
        root="Global rank 3 (node 1, local rank 1) raised RuntimeError: shape '[32, 16]' is invalid for input of "
             "size 496 on a truncated record; ranks 0-2 lost their gloo peer.",
        fix="Validate record length in the data loader (skip or repair truncated records) before reshaping.",
        notes="torchrun's --tee prefix carries the LOCAL rank ('[default1]:[rank3]:'); each agent prints its own "
              "ChildFailedError summary, and node 0's names its own rank 0 as root cause."),
    "run13-torchrun-logfield-raise": dict(
        launcher="torchrun", framework="plain", category="user.code_error", rank=2, world=3, script="ddp_job.py",
        dec=r"\[rank2\]: KeyError: '</s>'",
        coll=[PEER.format(p="", r="[01]"), SIGTERM],
        induced="torchrun without --tee; the job's logging format is '%(asctime)s [RANK %(rank)s] %(levelname)s "
                "%(name)s: %(message)s' (a logging.Filter sets the field); on rank 2 tokenize() looks up '</s>' in "
                "a vocab that lacks it at step 3, uncaught",
        root="Rank 2's tokenizer raised KeyError: '</s>' (its vocab lacks the end-of-sequence token); the other "
             "ranks lost their gloo peer.",
        fix="Add the missing special token '</s>' to that shard's vocabulary (or validate vocab files at start).",
        notes="No launcher prefix, but PyTorch itself prefixes the uncaught traceback lines with '[rank2]: ' "
              "(torch.distributed does this once a process group exists); the logging lines carry '[RANK n]'."),
    "run13-torchrun-ddp-unused-param": dict(
        launcher="torchrun", framework="plain", category="dist.collective_mismatch", rank=1, world=3,
        script="ddp_job.py",
        dec=r"\[default1\]:\[rank1\]: RuntimeError: Expected to have finished reduction in the prior iteration "
            r"before starting a new one\.",
        also=[r"\[default1\]:\[rank1\]: Parameter indices which did not receive grad for rank 1: 2 3"],
        coll=[PEER.format(p=D, r="[02]"), SIGTERM],
        induced="DDP(find_unused_parameters=False); from step 2 on rank 1 alone skips the 'aux' submodule in "
                "forward (no per-step loss all_reduce in this run); its gradient bucket never becomes ready, so "
                "its allreduce is never launched",
        root="Rank 1 took a different forward branch and left the 'aux' parameters without gradients, so its "
             "DDP reduction for step 2 never ran while ranks 0 and 2 waited in theirs; at its next forward DDP "
             "raised 'Expected to have finished reduction in the prior iteration'.",
        fix="Make every rank use the same parameters each step (or pass find_unused_parameters=True / keep the "
            "unused submodule in the graph).",
        notes="The DDP error appears only on rank 1 (the rank that skipped the submodule); ranks 0 and 2 die on "
              "'Connection closed by peer' in their backward allreduce. Category dist.collective_mismatch: the "
              "ranks' gradient collectives diverged because of rank 1's branch; the catalog has no DDP-specific "
              "category, and user.code_error would also be defensible (the fault is in the model's forward)."),
    "run13-torchrun-ddp-unused-param-losssync": dict(
        launcher="torchrun", framework="plain", category="dist.collective_mismatch", rank=1, world=3,
        script="ddp_job.py",
        dec=r"\[default1\]:  what\(\):  \[enforce fail at [^\]]+\] op\.preamble\.length <= op\.nbytes\. \d+ vs "
            r"\d+\. Received data size doesn't match expected size\. Is there a distributed collective mismatch "
            r"in your code\?",
        coll=[PEER.format(p=D, r="[02]"), r"\[default1\]:terminate called after throwing an instance of "
              r"'gloo::EnforceNotMet'", r"failed \(exitcode: -6\) local_rank: 1 \(pid: \d+\)", SIGTERM],
        induced="same program as run13-torchrun-ddp-unused-param but WITH the per-step all_reduce of the loss: "
                "rank 1 skips the 'aux' submodule from step 2 on (DDP find_unused_parameters=False), so its DDP "
                "bucket allreduce is never launched and its next collective (the 1-float loss all_reduce) meets "
                "the others' gradient allreduce",
        root="Rank 1 skipped a submodule so its DDP gradient allreduce never launched; its 4-byte loss "
             "all_reduce then received the other ranks' gradient-allreduce data and gloo aborted rank 1 "
             "(SIGABRT) on the size mismatch.",
        fix="Make every rank use the same parameters each step (or pass find_unused_parameters=True).",
        notes="Extra case (not in the brief's list): the first run of scenario 6 kept the per-step loss "
              "all_reduce and never reached DDP's 'Expected to have finished reduction' error; gloo's size check "
              "fired first, in rank 1's background thread (terminate -> exit -6)."),
    "run13-torchrun-rank0-extra-bcast": dict(
        launcher="torchrun", framework="plain", category="dist.collective_timeout", rank=0, world=4,
        script="ddp_job.py",
        dec=TOUT.format(p=r"\[default0\]:", r=0, ms=20000, op="send"),
        also=[TOUT.format(p=D, r="[123]", ms=20000, op="(?:send|recv)")],
        coll=[PEER.format(p=D, r="[123]"), SIGTERM, r"failed \(exitcode: 1\) local_rank: \d \(pid: \d+\)"],
        induced="after step 3 rank 0 alone calls dist.broadcast(src=0) of a 1000-element float metrics tensor "
                "(an 'if rank == 0' metrics sync); the other ranks go on to step 4's DDP gradient allreduce; no "
                "TORCH_DISTRIBUTED_DEBUG; gloo PG timeout 20 s",
        root="Rank 0 alone issued an extra dist.broadcast; the ranks' collective sequences diverged and, with no "
             "debug checks, gloo just timed out after 20 s (rank 0 in the broadcast's send, rank 2 in its "
             "allreduce recv) and the rest lost their peers.",
        fix="Call the metrics broadcast on every rank (or none); use TORCH_DISTRIBUTED_DEBUG=DETAIL to locate "
            "such divergences.",
        notes="No size/mismatch message appears: the log only shows timeouts (rank 0's traceback is in "
              "dist.broadcast) and 'Connection closed by peer' on ranks 1 and 3, so the label is "
              "dist.collective_timeout as the brief directs."),
    "run13-torchrun-rank0-extra-bcast-detail": dict(
        launcher="torchrun", framework="plain", category="dist.collective_mismatch", rank=0, world=4,
        script="ddp_job.py",
        dec=r"\[default0\]:\[rank0\]: RuntimeError: Detected mismatch between collectives on ranks\. Rank 0 is "
            r"running collective: CollectiveFingerPrint\(SequenceNumber=\d+, OpType=BROADCAST, "
            r"TensorShape=\[1000\]",
        coll=[r"\[default[123]\]:\[rank[123]\]: RuntimeError: Detected mismatch between collectives on ranks\. "
              r"Rank \d is running collective: CollectiveFingerPrint\(SequenceNumber=\d+, OpType=ALLREDUCE", SIGTERM],
        induced="as run13-torchrun-rank0-extra-bcast (rank 0 alone broadcasts 1000 floats after step 3) with "
                "TORCH_DISTRIBUTED_DEBUG=DETAIL; gradients averaged by hand with dist.all_reduce per parameter "
                "(--no-ddp) because DDP's constructor segfaults under DETAIL in torch 2.13.0 CPU",
        root="Rank 0 alone called an extra dist.broadcast([1000]); DETAIL's collective fingerprint check found "
             "it running BROADCAST where the other ranks run ALLREDUCE.",
        fix="Call the metrics broadcast on every rank (or none).",
        notes="Ranks 1-3's mismatch lines say 'but Rank 0 is running collective: ...OpType=GATHER' (the "
              "wrapper's own check collective), so only rank 0's line names the BROADCAST. First attempt with "
              "DDP: all 4 ranks SIGSEGV in DistributedDataParallel.__init__ (logger.set_construction_data_and_log) "
              "under TORCH_DISTRIBUTED_DEBUG=DETAIL (INFO and OFF work), so this run does not use DDP."),
    "run13-accelerate-under-torchrun-raise": dict(
        launcher="torchrun", framework="accelerate", category="user.code_error", rank=1, world=3,
        script="accel_job.py",
        dec=r"\[default1\]:\[rank1\]: IndexError: list index out of range",
        coll=[PEER.format(p=D, r="[02]"), SIGTERM],
        induced="accelerate Accelerator(cpu=True) (MULTI_CPU, gloo) under torchrun; on rank 1 the DataLoader's "
                "collate_fn maps a class id 3 into a 3-name table for its batch index 2",
        root="Rank 1's collate function raised IndexError: list index out of range (a class id outside the "
             "class-name table); the other ranks lost their gloo peer.",
        fix="Fix the label mapping (extend the class-name table or filter the unknown class id).",
        notes="accelerate's DataLoaderShard prefetches one batch, so the batch-2 collate ran while step 1 was "
              "being fetched: rank 1 logged only step 0."),
    "run13-lightning-rank0-val-raise": dict(
        launcher="lightning_ddp", framework="lightning", category="user.code_error", rank=0, world=3,
        script="lightning_val.py",
        dec=r"\[rank0\]: ZeroDivisionError: float division by zero",
        coll=[PEER.format(p="", r="[12]")],
        induced="Trainer(accelerator='cpu', devices=3, strategy='ddp') started as plain `python lightning_val.py` "
                "(Lightning's subprocess launcher starts ranks 1-2); in validation after epoch 0, global rank 0's "
                "validation_step divides an error sum by the count of valid targets, 0 for its batch 1",
        root="Rank 0's validation_step raised ZeroDivisionError (a validation batch with no valid targets); "
             "ranks 1 and 2, already in epoch 1's backward, lost their gloo peer.",
        fix="Guard the mean against an empty mask (skip the batch or use a masked mean that handles n == 0).",
        notes="Rank 0 is Lightning's launcher process itself, so there is no launcher summary after the failure; "
              "ranks 1 and 2 (its children) print their tracebacks after rank 0's and exit on their own "
              "shortly after it."),
    "run13-torchrun-logdir-compile": dict(
        launcher="torchrun", framework="plain", category="compile.cpp_toolchain_missing", rank=2, world=3,
        script="ddp_job.py", dfile="attempt_0/2/stderr.log",
        dec=r"\[rank2\]: torch\._inductor\.exc\.InductorError: InvalidCxxCompiler: No working C\+\+ compiler "
            r"found in torch\._inductor\.config\.cpp\.cxx: \(None, '/nonexistent/g\+\+'\)",
        coll=[SIGTERM, r"failed \(exitcode: 1\) local_rank: 2 \(pid: \d+\)"],
        induced="torchrun --log-dir D --redirects 3 --tee 3; two eager warm-up steps, then the torch.compile'd "
                "DDP model from step 2; rank 2 alone has CXX=/nonexistent/g++ in its environment (set before "
                "importing torch), each rank has a private inductor cache with FX/AOT graph caches off",
        root="Rank 2's inductor found no working C++ compiler (CXX=/nonexistent/g++) when compiling the model's "
             "first compiled call; torchrun SIGTERMed ranks 0 and 1, which were still compiling.",
        fix="Point CXX at an installed C++ compiler on that node (or install g++) and unset the bad CXX.",
        notes="ranks/ is torchrun's --log-dir tree; the decisive line is in attempt_0/2/stderr.log (and, via "
              "--tee, in log.txt with the '[default2]:' prefix). stdout.log files are empty: the job logs to "
              "stderr."),
    "run13-spawn-rank0-hostoom": dict(
        launcher="mp.spawn", framework="plain", category="mem.host_oom", rank=0, world=3, script="spawn_job.py",
        dec=r"torch\.multiprocessing\.spawn\.ProcessExitedException: process 0 terminated with signal SIGKILL",
        coll=[SPAWN_TERM],
        induced="mp.spawn nprocs=3; rank 0 writes its pid into cgroup v1 memory cgroup r13oom "
                "(memory.limit_in_bytes = memsw = 1 GiB) at start, then at step 3 allocates+touches 128 MiB "
                "blocks until the kernel OOM killer SIGKILLs it",
        root="Rank 0 exceeded its 1 GiB memory cgroup building an unbounded feature cache and was SIGKILLed by "
             "the kernel OOM killer; mp.spawn terminated ranks 1 and 2.",
        fix="Bound the feature cache (or give the job more host memory)."),
    "run13-torchrun-logdir-rank0-sigkill": dict(
        launcher="torchrun", framework="plain", category="mem.host_oom", rank=0, world=3, script="ddp_job.py",
        dec=r"failed \(exitcode: -9\) local_rank: 0 \(pid: \d+\) of binary: \S+",
        coll=[SIGTERM],
        induced="torchrun --log-dir D --redirects 3 (no --tee); rank 0 calls os.kill(os.getpid(), SIGKILL) "
                "right after logging step 3",
        root="Rank 0 was SIGKILLed (exit -9, no traceback); torchrun SIGTERMed ranks 1 and 2.",
        fix="Find what killed rank 0 (kernel OOM killer / scheduler: check dmesg and memory use) and give it "
            "more memory or reduce its footprint.",
        notes="log.txt is the console (torchrun's own lines only; the ranks' output went to the log dir); "
              "ranks/ is the --log-dir tree, where each stderr.log just stops after step 3 and nothing names the "
              "kill, so the decisive line is in log.txt."),
    "run13-mpirun-detail-dtype": dict(
        launcher="mpirun", framework="plain", category="dist.collective_mismatch", rank=2, world=4,
        script="mpi_dtype.py",
        dec=r"\[1,2\]<stderr>:\[rank2\]: RuntimeError: Detected mismatch between collectives on ranks\. Rank 2 is "
            r"running collective: CollectiveFingerPrint\(SequenceNumber=\d+, OpType=ALLREDUCE, TensorShape=\[4\], "
            r"TensorDtypes=Double",
        also=[r"\[1,[013]\]<stderr>:\[rank[013]\]: RuntimeError: Detected mismatch between collectives on ranks\. "
              r"Rank [013] is running collective: .*?, but Rank 2 is running collective: CollectiveFingerPrint\("
              r"SequenceNumber=\d+, OpType=ALLREDUCE, TensorShape=\[4\], TensorDtypes=Double"],
        coll=[r"mpirun detected that one or more processes exited with non-zero status",
              r"Process name: \[\[\d+,1\],\d\]"],
        induced="mpirun --tag-output --oversubscribe -np 4 (env:// rendezvous, MASTER_ADDR/PORT via -x, rank from "
                "OMPI_COMM_WORLD_RANK), TORCH_DISTRIBUTED_DEBUG=DETAIL; at step 2 rank 2 builds its metrics "
                "tensor as float64 where ranks 0, 1, 3 use float32, then all_reduces it",
        root="Rank 2 all_reduced a float64 metrics tensor while the other ranks used float32; DETAIL's "
             "fingerprint check reported the dtype mismatch on every rank.",
        fix="Build the metrics tensor with the same dtype on every rank (e.g. dtype=torch.float32 explicitly).",
        notes="The other ranks' mismatch lines also name 'Rank 2 ... TensorDtypes=Double' (also_acceptable)."),
    "run13-torchrun-w5-rank4-hang": dict(
        launcher="torchrun", framework="plain", category="dist.collective_timeout", rank=4, world=5,
        script="ddp_job.py",
        dec=TOUT.format(p=D, r="[0-3]", ms=15000, op="(?:send|recv)"),
        also=[TOUT.format(p=D, r="[0-3]", ms=15000, op="(?:send|recv)")],
        coll=[SIGTERM, r"failed \(exitcode: 1\) local_rank: \d \(pid: \d+\)"],
        induced="rank 4 (of 5) sleeps 60 s before the per-step loss all_reduce at step 2 (silent); gloo PG "
                "timeout 15 s",
        root="Rank 4 stalled silently for 60 s before the step-2 loss all_reduce; ranks 0-3 timed out after "
             "15 s waiting for it.",
        fix="Find what blocks rank 4 before the collective (here a 60 s stall) or raise the process group "
            "timeout above it.",
        notes="Rank 4 prints nothing about the stall; torchrun SIGTERMs it. The other waiting ranks' timeout "
              "lines are listed in also_acceptable (same report)."),
    "run13-spawn-rank0-raise-detail": dict(
        launcher="mp.spawn", framework="plain", category="user.code_error", rank=0, world=4,
        script="spawn_job.py",
        dec=r"TypeError: unsupported operand type\(s\) for \*: 'Tensor' and 'NoneType'",
        coll=[r"\[rank\d\]:\[E[^\]]+\] Rank \d successfully reached monitoredBarrier, but received errors while "
              r"waiting for send/recv from rank 0\.", SPAWN_TERM, r"-- Process 0 terminated with the following error:"],
        induced="mp.spawn nprocs=4, TORCH_DISTRIBUTED_DEBUG=DETAIL, gradients averaged by hand (--no-ddp, DDP's "
                "constructor segfaults under DETAIL in torch 2.13.0 CPU); at step 2 rank 0's loss weight config "
                "value is None -> mse_loss(...) * None",
        root="Rank 0's loss code multiplied the loss by a config value that was None (TypeError); under DETAIL "
             "ranks 1-3 reported failing to hear from rank 0 in the monitored barrier.",
        fix="Fill in loss_weight in the config (or default it) before training.",
        notes="DETAIL's monitoredBarrier lines on ranks 1-3 point at rank 0, which agrees with the traceback."),
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
    ap.add_argument("--pool", default=os.path.normpath(os.path.join(HERE, "../../../../blind/pool13")))
    ap.add_argument("--job", default="/tmp/r13job")
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
        found = all_distinct(c["dec"], lines, limit=1)
        dec = found[0] if found else None
        problems = [] if dec else ["decisive pattern not found"]
        also = [x for p in c.get("also", []) for x in all_distinct(p, lines, skip=(dec,))]
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
        cmd = cmd.replace(a.job, "/home/user/job").replace("/sys/fs/cgroup/memory/r13oom", "<memcg>")
        notes = c.get("notes", "")
        kern = os.path.join(a.job, "out", cid + ".kernel")
        if os.path.exists(kern) and open(kern).read().strip():
            k = open(kern).read().strip().splitlines()[-1]
            k = re.sub(r"^\[\s*[\d.]+\]\s*", "", k)
            notes = (notes + " " if notes else "") + f"Kernel log (dmesg, not in log.txt): {k}."
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
        if c["launcher"] == "mpirun":        # which process mpirun says exited first (it races)
            m = re.search(r"Process name: \[\[\d+,1\],(\d+)\]", "\n".join(lines))
            if m:
                notes += f" mpirun's summary names process rank {m.group(1)} as the first to exit" + (
                    "." if m.group(1) == str(c["rank"]) else f", not rank {c['rank']}.")
        notes = (notes + " " if notes else "") + f"World size {c['world']}; launcher exit status {rc}."
        label = {
            "id": cid,
            "source": f"real run: tests/corpus/generators/launchers/round13/{c['script']} via `{cmd}`, "
                      f"torch 2.13.0 CPU, gloo",
            "category": c["category"], "fatal": True, "decisive_line": dec,
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
        print(f"{status} {cid:44s} rank={c['rank']} {c['category']:30s} | {(dec or '')[:110]}")
        for p in problems:
            print("     ", p)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
