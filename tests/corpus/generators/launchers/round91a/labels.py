"""Writes label.json for each round91a case folder in $POOL (default /tmp/h91a/pool).

The decisive line is looked up in the produced files (never invented): a regex per scenario is matched against
the failing (or, for a hang, a waiting) rank's NEWEST log file under ranks/, or against log.txt, and the exact
matched text becomes decisive_line. Exits non-zero if a case does not show what was induced.
"""
import glob
import json
import os
import re
import sys

POOL = os.environ.get("POOL", "/tmp/h91a/pool")

# id -> (launcher, world, layout, scenario, fail_rank, extra)
CASES = {
    "run91-torchrun-raise-rotating": ("torchrun", 4, "rotating", "raise", 2, {}),
    "run91-torchrun-sigkill-gzip": ("torchrun", 4, "gzip", "sigkill", 3, {}),
    "run91-torchrun-hang-perdir": ("torchrun", 3, "perdir", "hang", 1, {}),
    "run91-torchrun-mismatch-jsonl-detail": ("torchrun", 4, "jsonl", "mismatch", 3, {}),
    "run91-torchrun-compile-alllog": ("torchrun", 3, "alllog", "compile-cxx", 2, {}),
    "run91-torchrun-hostoom-timed": ("torchrun", 4, "timed", "hostoom", 1, {}),
    "run91-torchrun-raise-tqdm": ("torchrun", 3, "tqdm", "raise", 1, {"console_only": True}),
    "run91-torchrun-mismatch-gzip-detail": ("torchrun", 4, "gzip", "mismatch", 2, {}),
    "run91-spawn-raise-jsonlhand": ("mp.spawn", 4, "jsonl-hand", "raise", 3, {"exc": "value"}),
    "run91-spawn-sigkill-perdir": ("mp.spawn", 3, "perdir", "sigkill", 2, {}),
    "run91-spawn-hang-rotating": ("mp.spawn", 4, "rotating", "hang", 3, {}),
    "run91-spawn-mismatch-hostrank-detail": ("mp.spawn", 3, "hostrank", "mismatch", 1, {}),
    "run91-spawn-hostoom-gzip": ("mp.spawn", 3, "gzip", "hostoom", 2, {}),
    "run91-spawn-compile-tqdm": ("mp.spawn", 3, "tqdm", "compile-fg", 1, {}),
    "run91-spawn-raise-timed": ("mp.spawn", 3, "timed", "raise", 2, {}),
    "run91-shell-raise-hostrank": ("shell", 4, "hostrank", "raise", 0, {}),
    "run91-shell-sigkill-tqdm": ("shell", 3, "tqdm", "sigkill", 2, {}),
    "run91-shell-hang-jsonl": ("shell", 4, "jsonl", "hang", 2, {}),
    "run91-shell-mismatch-alllog-detail": ("shell", 4, "alllog", "extra", 2, {}),
    "run91-shell-compile-timed": ("shell", 3, "timed", "compile-cxx", 1, {}),
    "run91-shell-hostoom-rotating": ("shell", 4, "rotating", "hostoom", 3, {}),
}

CATEGORY = {"raise": "user.code_error", "sigkill": "mem.host_oom", "hostoom": "mem.host_oom",
            "hang": "dist.collective_timeout", "mismatch": "dist.collective_mismatch",
            "extra": "dist.collective_mismatch", "compile-cxx": "compile.cpp_toolchain_missing",
            "compile-fg": "compile.graph_break_data_dependent"}

LAYOUT_WORDS = {
    "rotating": "each rank logs to rank<r>.log with a RotatingFileHandler (small maxBytes, backups .1 .2 ...)",
    "gzip": "each rank logs to rank<r>.log with a RotatingFileHandler whose namer/rotator gzip the backups (.1.gz ...)",
    "timed": "each rank logs to rank<r>.log with a TimedRotatingFileHandler (when='S', interval=2; timestamp suffixes)",
    "perdir": "each rank logs to its own directory rank_<r>/train.log",
    "hostrank": "each rank logs to node<n>-rank<r>.log",
    "jsonl": "each process logs JSON lines (python-json-logger) to <host>-<pid>.jsonl, the rank only as a field",
    "jsonl-hand": "every rank appends JSON lines (hand-written json.dumps formatter) to one events.jsonl, the rank as a field",
    "alllog": "each rank logs to rank<r>.log and also to a shared all.log",
    "tqdm": "each rank logs to rank<r>.log, with a tqdm progress bar written into the same file",
}


def read(path):
    with open(path, errors="replace") as f:
        return f.read()


def rank_file(case, layout, rank):
    """The newest (uncompressed, unsuffixed) log file of `rank`, relative to ranks/."""
    r = os.path.join(case, "ranks")
    if layout in ("rotating", "gzip", "timed", "tqdm", "alllog"):
        return f"rank{rank}.log"
    if layout == "perdir":
        return f"rank_{rank}/train.log"
    if layout == "hostrank":
        return os.path.basename(glob.glob(f"{r}/node*-rank{rank}.log")[0])
    if layout == "jsonl":
        for p in glob.glob(f"{r}/*.jsonl"):
            if f'"rank": {rank},' in read(p):
                return os.path.basename(p)
    if layout == "jsonl-hand":
        return "events.jsonl"
    raise SystemExit(f"{case}: no log file for rank {rank}")


def find(text, pattern, must_contain=None):
    for line in text.splitlines():
        if must_contain and must_contain not in line:
            continue
        m = re.search(pattern, line)
        if m:
            return m.group(0)
    return None


def main():
    bad = 0
    for cid, (launcher, world, layout, scen, fr, extra) in CASES.items():
        case = os.path.join(POOL, cid)
        if not os.path.isdir(case):
            print("MISSING", cid)
            bad += 1
            continue
        log = read(os.path.join(case, "log.txt"))
        cat = CATEGORY[scen]
        also, dfile, dline = [], None, None
        jrank = f'"rank": {fr},' if layout.startswith("jsonl") else None
        collateral = []
        if scen == "raise":
            pat = r"KeyError: '[^']+'" if extra.get("exc", "key") == "key" else r"ValueError: corrupt record in [^\"]*got 31"
            if extra.get("console_only"):
                dline = find(log, pat, f"[rank{fr}]:")
            else:
                dfile = rank_file(case, layout, fr)
                dline = find(read(os.path.join(case, "ranks", dfile)), pat, jrank)
                also = [x for x in [find(log, pat, f"[rank{fr}]:")] if x] if launcher == "torchrun" else []
            exc = "KeyError for a sample key missing from the shard index" if extra.get("exc", "key") == "key" \
                else "ValueError (corrupt record) in data loading"
            root = f"rank {fr} raised a {exc} in its own data loading code; the launcher then tore the job down."
            fix = "Fix the data loading bug on that rank (regenerate the stale manifest / skip or repair the corrupt record)."
            induced = f"rank {fr} raises in load_batch at its --fail-step"
            collateral = ["other ranks fail or are terminated after the failing rank exits (gloo connection reset / SIGTERM)"]
        elif scen in ("sigkill", "hostoom"):
            if launcher == "torchrun":
                dline = find(log, rf"failed \(exitcode: -9\) local_rank: {fr} \(pid: \d+\)")
                if dline is None:
                    dline = find(log, r"exitcode  : -9 \(pid: \d+\)")
            elif launcher == "mp.spawn":
                dline = find(log, rf"process {fr} terminated with signal SIGKILL")
            else:
                pid = re.search(rf"\[launch\] started rank {fr} pid (\d+)", log).group(1)
                dline = find(log, rf"line \d+: +{pid} Killed")
                a = find(log, rf"\[launch\] rank {fr} \(pid {pid}\) exited with code 137")
                also = [a] if a else []
            if scen == "sigkill":
                root = f"rank {fr} was SIGKILLed (exit -9, no traceback) mid-training; the surviving ranks lost their gloo peer."
                fix = "Find what killed that rank (kernel OOM killer / host memory pressure) and give it more host memory or use less."
                induced = f"rank {fr} calls os.kill(os.getpid(), SIGKILL) at its --fail-step"
            else:
                root = (f"rank {fr} ran out of host memory inside its 1 GiB memory cgroup (an unbounded cache grew by 256 MiB a step) "
                        "and the kernel OOM killer SIGKILLed it.")
                fix = "Bound the in-memory cache (or raise the memory limit of that rank's container/cgroup)."
                induced = (f"rank {fr} joins a 1 GiB memory cgroup (memsw too) at startup and from its --fail-step allocates "
                           "and touches 256 MiB more each step until the cgroup OOM killer SIGKILLs it (oom_kill counter checked)")
            collateral = ["survivors fail with gloo 'Connection reset by peer' / are terminated by the launcher"]
        elif scen == "hang":
            waiter = 0 if fr != 0 else 1
            dfile = rank_file(case, layout, waiter)
            jw = f'"rank": {waiter},' if layout.startswith("jsonl") else None
            dline = find(read(os.path.join(case, "ranks", dfile)), r"Timed out waiting \d+ms for \w+ operation to complete", jw)
            root = (f"rank {fr} stalled (slept far longer than the process-group timeout before the metric all_reduce), so the "
                    "other ranks' gloo collectives timed out.")
            fix = "Find why that rank stalls before the collective (it logged 'refreshing data manifest'); move slow work out of the step or raise the timeout."
            induced = f"rank {fr} sleeps 4x the process-group timeout before dist.all_reduce at its --fail-step"
            collateral = ["waiting ranks raise gloo timeouts", "the silent rank is terminated or fails afterwards"]
        elif scen in ("mismatch", "extra"):
            dfile = rank_file(case, layout, fr)
            dline = find(read(os.path.join(case, "ranks", dfile)),
                         rf"Detected mismatch between collectives on ranks\. Rank {fr} is running collective: "
                         r"CollectiveFingerPrint\(SequenceNumber=\d+, OpType=\w+, TensorShape=\[\d+\]", jrank)
            if scen == "mismatch":
                root = f"rank {fr} all_reduced a metric tensor of a different size (3 vs 2 elements) than the other ranks; TORCH_DISTRIBUTED_DEBUG=DETAIL flagged the collective fingerprint mismatch."
                fix = "Make every rank reduce tensors of the same shape (the extra metric field must be added on all ranks)."
                induced = f"rank {fr} calls all_reduce on a 3-element tensor instead of 2 at its --fail-step, with TORCH_DISTRIBUTED_DEBUG=DETAIL"
            else:
                root = f"rank {fr} called an extra dist.broadcast that the other ranks did not call; TORCH_DISTRIBUTED_DEBUG=DETAIL flagged the collective fingerprint mismatch."
                fix = "Make every rank issue the same sequence of collectives (guard the extra broadcast consistently on all ranks)."
                induced = f"rank {fr} calls an extra dist.broadcast before the metric all_reduce at its --fail-step, with TORCH_DISTRIBUTED_DEBUG=DETAIL"
            collateral = ["the other ranks report the same mismatch from their side"]
        elif scen == "compile-cxx":
            dfile = rank_file(case, layout, fr)
            dline = find(read(os.path.join(case, "ranks", dfile)),
                         r"InvalidCxxCompiler: No working C\+\+ compiler found in torch\._inductor\.config\.cpp\.cxx: \('/nonexistent/g\+\+',\)")
            root = f"on rank {fr} torch._inductor.config.cpp.cxx points to a C++ compiler that does not exist, so inductor could not compile the model."
            fix = "Point inductor at an installed C++ compiler on that node (fix CXX / cpp.cxx, install g++)."
            induced = f"rank {fr} alone sets torch._inductor.config.cpp.cxx = ('/nonexistent/g++',) before torch.compile runs"
            collateral = ["other ranks are terminated by the launcher"]
        elif scen == "compile-fg":
            dfile = rank_file(case, layout, fr)
            dline = find(read(os.path.join(case, "ranks", dfile)), r"torch\._dynamo\.exc\.Unsupported: Data-dependent branching")
            root = f"rank {fr} compiled with fullgraph=True a forward that branches on a tensor value (only on that rank), which dynamo cannot trace."
            fix = "Make the forward branchless (torch.where / torch.cond) or drop fullgraph=True."
            induced = f"rank {fr} builds its model with a data-dependent `if h.mean() > 0.1` branch and torch.compile(fullgraph=True)"
            collateral = ["other ranks are terminated by the launcher"]
        if not dline:
            print("NO DECISIVE LINE", cid, dfile)
            bad += 1
            continue
        target = os.path.join(case, "ranks", dfile) if dfile else os.path.join(case, "log.txt")
        assert dline in read(target), (cid, dline)
        label = {
            "id": cid,
            "source": f"real run: tests/corpus/generators/launchers/round91a/run_all.sh {cid} (run_case.sh + ranklog_train.py), "
                      f"torch 2.13.0 CPU, gloo, world size {world}; {LAYOUT_WORDS[layout]}",
            "category": cat, "fatal": True, "decisive_line": dline, "also_acceptable": also,
            "initiating_rank": fr, "collateral": collateral, "operator": None,
            "root_cause": root, "fix": fix,
            "launcher": {"shell": "shell"}.get(launcher, launcher), "framework": "plain", "genuine": False,
            "induced_how": induced, "confirmed_by": "induced", "confidence": "high",
        }
        if dfile:
            label["decisive_file"] = dfile
        with open(os.path.join(case, "label.json"), "w") as f:
            json.dump(label, f, indent=1)
            f.write("\n")
        print(f"OK {cid:40s} {cat:34s} rank {fr} {dfile or 'log.txt'}: {dline[:90]}")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
