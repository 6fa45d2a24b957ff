"""Write label.json for every round-17a case from what was INDUCED (rank, fault, category are fixed below),
taking the decisive line from the log itself (first line of log.txt matching the case's pattern; the label holds
the matched text) and CHECKING that decisive_line, also_acceptable and collateral are exact substrings of a line
of log.txt. For the mpirun cases whose decisive line is a rank's own output, decisive_file is the file of ranks/
(mpirun --output-filename tree: 1/rank.N/{stdout,stderr}) holding that line, and it is checked there too.
Exits 1 if any check fails.

usage: python make_labels.py [--pool DIR] [--job DIR] [--venv DIR] [case-id ...]
"""
import argparse, glob, json, os, re, subprocess, sys

HERE = os.path.dirname(os.path.abspath(__file__))
GLOO_PEER = r"RuntimeError: \[[^\]]+\] (?:Connection closed by peer \[[^\]]+\]:\d+|Read error \[[^\]]+\]:\d+: Connection reset by peer)"
TOUT = r"RuntimeError: \[[^\]]+\] Timed out waiting 20000ms for (?:send|recv) operation to complete"
ENFORCE = (r"\[enforce fail at [^\]]+\] op\.preamble\.length <= op\.nbytes\. \d+ vs \d+\. Received data size "
           r"doesn't match expected size\. Is there a distributed collective mismatch in your code\?")
TERMINATE = r"terminate called after throwing an instance of 'gloo::EnforceNotMet'"
DETAIL = (r"RuntimeError: Detected mismatch between collectives on ranks\. Rank \d is running collective: "
          r"CollectiveFingerPrint\(SequenceNumber=\d+, OpType=ALLREDUCE, TensorShape=\[\d\].*?\), but Rank \d is "
          r"running collective: CollectiveFingerPrint\(SequenceNumber=\d+, OpType=ALLREDUCE, TensorShape=\[\d\]")
CXX = (r"torch\._inductor\.exc\.InductorError: InvalidCxxCompiler: No working C\+\+ compiler found in "
       r"torch\._inductor\.config\.cpp\.cxx: \('/nonexistent/g\+\+',\)")
KEYERR = r"KeyError: 'sample-7c1e2'"
# torchrun (run by TorchX' dist.ddp) lines
TR_FAILED = r"failed \(exitcode: {c}\) local_rank: {r} \(pid: \d+\) of binary: \S+"
TR_CFE = r"torch\.distributed\.elastic\.multiprocessing\.errors\.ChildFailedError:"
TR_EXIT = r"exitcode  : {c} \(pid: \d+\)(?:  \(\w+\))?"
TX_FAILED = r"Job finished: FAILED"
# mpirun lines
MPI_NOTICED = r"mpirun noticed that process rank {r} with PID \d+ on node \S+ exited on signal {s} \(\w[\w ]*\)\."
MPI_FIRST = r"mpirun detected that one or more processes exited with non-zero status, thus causing"
MPI_PNAME = r"Process name: \[\[\d+,\d+\],\d+\]"
MPI_PRIMARY = r"Primary job  terminated normally, but 1 process returned"

TX = ("TorchX `torchx run -s local_cwd -cfg log_dir=<dir> dist.ddp -j 1x3 --script train.py` (the dist.ddp "
      "component runs torchrun --nnodes 1 --nproc_per_node 3 --tee 3 as one replica, train/0; the local_cwd scheduler "
      "prefixes every replica line with 'train/0 ' and tails it to the console), plain PyTorch DDP gloo script, PG "
      "timeout 20 s; fault selected by env R17_FAULT (inherited by the replica, never on a command line)")
MPI = ("Open MPI `mpirun --allow-run-as-root --oversubscribe -np 3 --output-filename <dir> -x MASTER_ADDR -x "
       "MASTER_PORT -x R17_FAULT python train.py` (each rank's output in <dir>/1/rank.N/{stdout,stderr}, copied to "
       "ranks/; the console shows it too), plain PyTorch DDP gloo script with env:// rendezvous, RANK/WORLD_SIZE from "
       "OMPI_COMM_WORLD_RANK/SIZE, PG timeout 20 s")
TX_NOTE = ("ranks/ is TorchX' log_dir tree: torchx/<app_id>/train/0/{stdout,stderr,combined}.log (the replica = the "
           "torchrun agent and its 3 workers) and torchx/<app_id>/torchelastic/.../attempt_0/<rank>/{stdout,stderr}.log "
           "(torchrun's per-worker files); TorchX writes a file named SUCCESS holding the final state even when it is "
           "FAILED. The console (log.txt) has every line, so there is no decisive_file.")

KILLFIX = "Find what killed rank {r} (kernel OOM killer / an external kill: check dmesg on the node) and give it more memory or reduce its footprint."
STALLFIX = "Find why rank {r} stalls (py-spy dump it) or raise the process-group timeout if the stall is legitimate."
SIZEFIX = "Make every rank pass the same tensor size to the collective (pack the same number of stats on every rank)."
KEYFIX = "Repair/validate the shard manifest (skip or report ids missing from the index) before training."
CXXFIX = "Install a working C++ compiler on that node (or point torch._inductor.config.cpp.cxx / CXX at one)."

CASES = {
    "run17-torchx-raise": dict(
        launcher="torchx", category="user.code_error", rank=2, dec=r"\[rank2\]: " + KEYERR,
        coll=[GLOO_PEER, TR_FAILED.format(c=1, r=2), TR_CFE, TX_FAILED],
        induced=TX + "; at step 3 rank 2's load_batch() looks up a corrupt sample id 'sample-7c1e2' in its shard "
                "index (dict) -> KeyError, uncaught",
        root="Rank 2's data loading raised KeyError: 'sample-7c1e2' (an id missing from its shard index); the other "
             "ranks lost their gloo peer, torchrun stopped the workers and TorchX reported the job FAILED.",
        fix=KEYFIX),
    "run17-torchx-sigkill": dict(
        launcher="torchx", category="mem.host_oom", rank=1, dec=TR_FAILED.format(c=-9, r=1),
        also=[TR_EXIT.format(c=-9), r"traceback : Signal 9 \(SIGKILL\) received by PID \d+"],
        coll=[GLOO_PEER, TR_CFE, TX_FAILED],
        induced=TX + "; rank 1 calls os.kill(os.getpid(), SIGKILL) after its step-3 optimizer step (no traceback)",
        root="Rank 1 was SIGKILLed (exit -9, no traceback, e.g. by the OOM killer); ranks 0 and 2 lost their gloo "
             "peer and torchrun stopped the job.",
        fix=KILLFIX.format(r=1)),
    "run17-torchx-hang": dict(
        launcher="torchx", category="dist.collective_timeout", rank=2, dec=TOUT, also=[TOUT],
        coll=[TR_FAILED.format(c=1, r=r"\d"), TR_CFE, TX_FAILED],
        induced=TX + "; rank 2 sleeps 90 s before the step-2 loss all_reduce",
        root="Rank 2 stalled silently before the step-2 loss all_reduce; ranks 0 and 1 timed out in it after 20 s "
             "and torchrun stopped the job.",
        fix=STALLFIX.format(r=2),
        notes="Rank 2 prints nothing after step 1; torchrun's 'Root Cause (first observed failure)' names a WAITING "
              "rank (the first to exit, with code 1), not the rank that stalled."),
    "run17-torchx-mismatch": dict(
        launcher="torchx", category="dist.collective_mismatch", rank=1, dec=ENFORCE, also=[TERMINATE],
        coll=[GLOO_PEER, TR_FAILED.format(c=-6, r=r"\d"), TR_CFE, TX_FAILED],
        induced=TX + "; after the step-3 loss all_reduce rank 1 all_reduces 8 grad-norm stats where ranks 0 and 2 "
                "all_reduce 4",
        root="Rank 1 all_reduced an 8-element tensor where the other ranks used 4 elements; gloo's size check "
             "aborted a receiving rank (SIGABRT, exit -6) and torchrun stopped the job.",
        fix=SIZEFIX,
        notes="The enforce message comes from a RECEIVING rank's gloo thread (the one torchrun reports with exitcode "
              "-6 as root cause), not from rank 1."),
    "run17-torchx-mismatch-detail": dict(
        launcher="torchx", category="dist.collective_mismatch", rank=2, dec=DETAIL, also=[DETAIL],
        coll=[TR_FAILED.format(c=1, r=r"\d"), TR_CFE, TX_FAILED],
        induced=TX + ", with `--env TORCH_DISTRIBUTED_DEBUG=DETAIL` on dist.ddp; after the step-3 loss all_reduce "
                "rank 2 all_reduces 8 grad-norm stats where ranks 0 and 1 all_reduce 4. (Under DETAIL the model is "
                "not wrapped in DDP, whose constructor segfaults on every rank under DETAIL with torch 2.13.0 CPU; "
                "gradients are all_reduced by hand.)",
        root="Rank 2 all_reduced an 8-element tensor where the other ranks used 4 (TensorShape=[8] vs [4] in the "
             "DETAIL fingerprint check); every rank raised and torchrun stopped the job.",
        fix=SIZEFIX),
    "run17-torchx-compile": dict(
        launcher="torchx", category="compile.cpp_toolchain_missing", rank=1, dec=r"\[rank1\]: " + CXX,
        coll=[TR_FAILED.format(c=1, r=1), TR_CFE, TX_FAILED],
        induced=TX + "; rank 1 alone sets torch._inductor.config.cpp.cxx = ('/nonexistent/g++',) before "
                "torch.compile of its model runs (first forward); every rank has its own TORCHINDUCTOR_CACHE_DIR",
        root="Inductor on rank 1 found no working C++ compiler (cpp.cxx points at /nonexistent/g++) when compiling "
             "the model's first forward; rank 1 exited and torchrun stopped the others.",
        fix=CXXFIX),
    "run17-mpirun-raise": dict(
        launcher="mpirun", category="user.code_error", rank=1, dec=r"\[rank1\]: " + KEYERR, dfile=True,
        coll=[GLOO_PEER, MPI_PRIMARY, MPI_FIRST, MPI_PNAME],
        induced=MPI + "; at step 3 rank 1's load_batch() looks up a corrupt sample id 'sample-7c1e2' in its shard "
                "index (dict) -> KeyError, uncaught",
        root="Rank 1's data loading raised KeyError: 'sample-7c1e2' (an id missing from its shard index); the other "
             "ranks lost their gloo peer and mpirun aborted the job.",
        fix=KEYFIX),
    "run17-mpirun-sigkill": dict(
        launcher="mpirun", category="mem.host_oom", rank=2, dec=MPI_NOTICED.format(r=2, s=9),
        coll=[GLOO_PEER, MPI_PRIMARY],
        induced=MPI + "; rank 2 calls os.kill(os.getpid(), SIGKILL) after its step-2 optimizer step (no traceback)",
        root="Rank 2 was SIGKILLed (signal 9, no traceback, e.g. by the OOM killer); ranks 0 and 1 lost their gloo "
             "peer and mpirun aborted the job.",
        fix=KILLFIX.format(r=2),
        notes="The decisive line is mpirun's console line; ranks/1/rank.2/stderr is empty. Open MPI prints 'PID 0' "
              "in that line (as printed)."),
    "run17-mpirun-hang": dict(
        launcher="mpirun", category="dist.collective_timeout", rank=1, dec=TOUT, also=[TOUT], dfile=True,
        coll=[MPI_PRIMARY, MPI_FIRST, MPI_PNAME],
        induced=MPI + "; rank 1 sleeps 90 s before the step-3 loss all_reduce",
        root="Rank 1 stalled silently before the step-3 loss all_reduce; ranks 0 and 2 timed out in it after 20 s "
             "and mpirun aborted the job.",
        fix=STALLFIX.format(r=1),
        notes="Rank 1 prints nothing after step 2 (ranks/1/rank.1/stderr is empty); mpirun's 'The first process to "
              "do so was' names a WAITING rank (exit code 1), not the rank that stalled."),
    "run17-mpirun-mismatch": dict(
        launcher="mpirun", category="dist.collective_mismatch", rank=2, dec=ENFORCE, also=[TERMINATE], dfile=True,
        coll=[GLOO_PEER, MPI_PRIMARY, MPI_NOTICED.format(r=r"\d", s=6)],
        induced=MPI + "; after the step-3 loss all_reduce rank 2 all_reduces 8 grad-norm stats where ranks 0 and 1 "
                "all_reduce 4",
        root="Rank 2 all_reduced an 8-element tensor where the other ranks used 4 elements; gloo's size check "
             "aborted a receiving rank (SIGABRT) and mpirun aborted the job.",
        fix=SIZEFIX,
        notes="The enforce message is in a RECEIVING rank's stderr (the rank mpirun reports as exited on signal 6), "
              "not in rank 2's."),
    "run17-mpirun-mismatch-detail": dict(
        launcher="mpirun", category="dist.collective_mismatch", rank=1, dec=DETAIL, also=[DETAIL], dfile=True,
        coll=[MPI_PRIMARY, MPI_FIRST, MPI_PNAME],
        induced=MPI + ", plus -x TORCH_DISTRIBUTED_DEBUG=DETAIL; after the step-2 loss all_reduce rank 1 all_reduces "
                "8 grad-norm stats where ranks 0 and 2 all_reduce 4. (Under DETAIL the model is not wrapped in DDP, "
                "whose constructor segfaults on every rank under DETAIL with torch 2.13.0 CPU; gradients are "
                "all_reduced by hand.)",
        root="Rank 1 all_reduced an 8-element tensor where the other ranks used 4 (TensorShape=[8] vs [4] in the "
             "DETAIL fingerprint check); every rank raised and mpirun aborted the job.",
        fix=SIZEFIX),
    "run17-mpirun-compile": dict(
        launcher="mpirun", category="compile.cpp_toolchain_missing", rank=2, dec=r"\[rank2\]: " + CXX, dfile=True,
        coll=[MPI_PRIMARY, MPI_FIRST, MPI_PNAME],
        induced=MPI + ", plus -x R17_CACHE_ROOT; rank 2 alone sets torch._inductor.config.cpp.cxx = "
                "('/nonexistent/g++',) before torch.compile of its model runs (first forward); every rank has its "
                "own TORCHINDUCTOR_CACHE_DIR",
        root="Inductor on rank 2 found no working C++ compiler (cpp.cxx points at /nonexistent/g++) when compiling "
             "the model's first forward; rank 2 exited and mpirun aborted the job.",
        fix=CXXFIX),
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


def version(venv, mod):
    try:
        return subprocess.run([os.path.join(venv, "bin/python"), "-c", f"import {mod}; print({mod}.__version__)"],
                              capture_output=True, text=True, timeout=120).stdout.strip().splitlines()[-1]
    except Exception:
        return "?"


def ompi_version():
    try:
        out = subprocess.run(["mpirun", "--version"], capture_output=True, text=True, timeout=60).stdout
        return re.search(r"\(Open MPI\) (\S+)", out).group(1)
    except Exception:
        return "?"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pool", default=os.path.normpath(os.path.join(HERE, "../../../../blind/pool17")))
    ap.add_argument("--job", default="/tmp/r17job")
    ap.add_argument("--venv", default="/work/helpers/venv17a")
    ap.add_argument("ids", nargs="*")
    a = ap.parse_args()
    vers = {"torchx": f"TorchX {version(a.venv, 'torchx')} (local_cwd scheduler, dist.ddp component)",
            "mpirun": f"Open MPI {ompi_version()} mpirun (Debian openmpi-bin)"}
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
        problems = [] if dec else ["decisive pattern not found in log.txt"]
        dfile = None
        if dec and c.get("dfile"):
            for h in sorted(glob.glob(os.path.join(d, "ranks", "**", "*"), recursive=True)):
                if os.path.isfile(h) and any(dec in ln for ln in lines_of(h)):
                    dfile = os.path.relpath(h, os.path.join(d, "ranks"))
                    break
            else:
                problems.append("decisive line in no ranks/ file")
        also = [x for p in c.get("also", []) for x in all_distinct(p, lines, skip=(dec,))]
        coll = [x for p in c["coll"] for x in all_distinct(p, lines, limit=2)]
        for s in ([dec] if dec else []) + also + coll:
            if not any(s in ln for ln in lines):
                problems.append(f"not a substring of a log.txt line: {s!r}")
        for p in c["coll"]:
            if not all_distinct(p, lines, limit=1):
                problems.append(f"collateral pattern not found: {p!r}")
        cmd, rc = "", "?"
        try:
            cmd = open(os.path.join(a.job, "out", cid + ".cmd")).read().strip()
            rc = open(os.path.join(a.job, "out", cid + ".rc")).read().strip()
        except OSError:
            pass
        cmd = cmd.replace(a.job, "/home/user/job")
        cmd = re.sub(r"MASTER_PORT=\d+", "MASTER_PORT=<free port>", cmd)
        notes = c.get("notes", "")
        if c["launcher"] == "torchx":
            notes = (notes + " " if notes else "") + TX_NOTE
        elif dfile:
            notes = (notes + " " if notes else "") + ("ranks/ is mpirun's --output-filename tree (1/rank.N/stdout, "
                                                      "stderr); the console (log.txt) interleaves the same lines.")
        else:
            notes = (notes + " " if notes else "") + "ranks/ is mpirun's --output-filename tree (1/rank.N/stdout, stderr)."
        notes += f" World size 3; launcher exit status {rc}."
        label = {
            "id": cid,
            "source": f"real run: tests/corpus/generators/launchers/round17a/train.py via `{cmd}`, "
                      f"{vers[c['launcher']]}, torch 2.13.0 CPU, gloo",
            "category": c["category"], "fatal": True, "decisive_line": dec,
        }
        if dfile:
            label["decisive_file"] = dfile
        label.update({
            "also_acceptable": also, "initiating_rank": c["rank"], "collateral": coll, "operator": None,
            "root_cause": c["root"], "fix": c["fix"], "launcher": c["launcher"], "framework": "plain",
            "genuine": False, "induced_how": c["induced"], "confirmed_by": "induced", "confidence": "high",
            "notes": notes,
        })
        with open(os.path.join(d, "label.json"), "w") as f:
            json.dump(label, f, indent=2, ensure_ascii=False); f.write("\n")
        status = "OK " if not problems else "BAD"
        bad += bool(problems)
        print(f"{status} {cid:30s} rank={c['rank']} {c['category']:30s} rc={rc} {dfile or '':18s}| {(dec or '')[:80]}")
        for p in problems:
            print("     ", p)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
