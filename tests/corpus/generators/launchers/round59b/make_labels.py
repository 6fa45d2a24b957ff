"""Writes label.json for every round59b case in POOL.  Labels come from what was induced (table C: launcher,
fault, culprit, step, timeout, how the log loses information).  The decisive line is looked up by the fault's
marker (the culprit's exception line, gloo's size check / the DETAIL fingerprint line, the FIRST timeout report
of a waiting rank, the launcher's SIGKILL line) in log.txt and, for cases with a ranks/ folder, in the per-rank
files (.gz read decompressed).  When the marker survives nowhere (the log lost it), the line that best shows the
fault among what is left is labelled instead (the launcher's exit line for the culprit / the aborting receiver),
the label's notes say so, and initiating_rank is the culprit only when what is left shows it.
decisive_file (relative to ranks/) is set when the decisive line is in a per-rank file.
Usage: python3 make_labels.py [POOL] [FULL]   (FULL: the uncut console outputs that run_all.sh keeps)"""
import gzip
import json
import os
import re
import sys

POOL = sys.argv[1] if len(sys.argv) > 1 else "/tmp/h59b/pool"
FULL = sys.argv[2] if len(sys.argv) > 2 else "/tmp/h59b/full"
SRC = "real run: tests/corpus/generators/launchers/round59b/run_all.sh {id} ({cmd}), torch 2.13.0 CPU, gloo, 4 ranks"

# id: (launcher, command, fault, culprit, step, pg_timeout, loss)
C = {
 "run-r59b-torchrun-buffered-sigkill": ("torchrun", "torchrun --nproc-per-node 4 --no-python ./train.sh (python without -u)", "sigkill", 2, 5, 15, "buffered"),
 "run-r59b-torchrun-buffered-hang": ("torchrun", "torchrun --nproc-per-node 4 --no-python ./train.sh (python without -u)", "hang", 1, 4, 15, "buffered"),
 "run-r59b-spawn-buffered-osexit-valueerror": ("mp.spawn", "python spawn_main.py, ON_ERROR=os_exit", "valueerror", 1, 4, 15, "buffered-osexit"),
 "run-r59b-loop-buffered-sigkill": ("shell-loop", "./loop.sh (LOOP_OUT=console)", "sigkill", 3, 4, 15, "buffered"),
 "run-r59b-spawn-rank0print-sizemismatch": ("mp.spawn", "python spawn_main.py, PRINT_RANKS=0", "sizemismatch", 3, 3, 15, "rank0print-buffered"),
 "run-r59b-torchrun-rotate-keyerror": ("torchrun", "torchrun --nproc-per-node 4 job.py, OUT=rotate MAXBYTES=1500 BACKUPS=4", "keyerror", 2, 9, 15, "rotate"),
 "run-r59b-spawn-rotate-hang": ("mp.spawn", "python spawn_main.py, OUT=rotate MAXBYTES=1200 BACKUPS=3", "hang", 3, 6, 18, "rotate"),
 "run-r59b-loop-rotate-nostderr-sizemismatch": ("shell-loop", "./loop.sh (LOOP_OUT=nostderr: ranks 1-3 with 2>/dev/null), OUT=rotate MAXBYTES=1500 BACKUPS=3", "sizemismatch", 2, 5, 15, "rotate-nostderr"),
 "run-r59b-torchrun-rotate-filter0-sigkill": ("torchrun", "torchrun --nproc-per-node 4 --local-ranks-filter 0 job.py, OUT=rotate MAXBYTES=1500 BACKUPS=3", "sigkill", 1, 7, 15, "rotate-filter0"),
 "run-r59b-torchrun-gzip-atexit-valueerror": ("torchrun", "torchrun --nproc-per-node 4 job.py, OUT=file GZIP_AT_EXIT=1", "valueerror", 3, 4, 15, "gzip-atexit"),
 "run-r59b-spawn-gzip-sigkill": ("mp.spawn", "python spawn_main.py, OUT=file GZIP_LOGS=1", "sigkill", 2, 6, 15, "gzip-launcher"),
 "run-r59b-loop-logrotate-hang": ("shell-loop", "./loop.sh (LOOP_OUT=files: each rank > logs/rank<r>.log 2>&1, gzip after the job)", "hang", 2, 3, 15, "logrotate"),
 "run-r59b-loop-logrotate-keyerror": ("shell-loop", "./loop.sh (LOOP_OUT=files: each rank > logs/rank<r>.log 2>&1, gzip after the job)", "keyerror", 1, 5, 15, "logrotate"),
 "run-r59b-torchrun-tail60-hang": ("torchrun", "torchrun --nproc-per-node 4 job.py 2>&1 | tail -n 60", "hang", 3, 5, 15, "tail60"),
 "run-r59b-torchrun-tail60-sizemismatch-detail": ("torchrun", "TORCH_DISTRIBUTED_DEBUG=DETAIL GRAD_SYNC=manual torchrun --nproc-per-node 4 job.py 2>&1 | tail -n 60", "sizemismatch", 2, 4, 15, "tail60"),
 "run-r59b-loop-tail60-sigkill": ("shell-loop", "./loop.sh 2>&1 | tail -n 60", "sigkill", 2, 4, 15, "tail60"),
 "run-r59b-torchrun-head20k-keyerror": ("torchrun", "torchrun --nproc-per-node 4 job.py > out 2>&1; head -c 20000 out, EXTRA=3 NSTEPS=30", "keyerror", 1, 9, 15, "head20k"),
 "run-r59b-torchrun-filter0-keyerror": ("torchrun", "torchrun --nproc-per-node 4 --local-ranks-filter 0 job.py", "keyerror", 2, 4, 15, "filter0"),
 "run-r59b-torchrun-filter0-record-valueerror": ("torchrun", "torchrun --nproc-per-node 4 --local-ranks-filter 0 job.py with @record (RECORD=1)", "valueerror", 3, 3, 15, "filter0-record"),
 "run-r59b-loop-nostderr-keyerror": ("shell-loop", "./loop.sh (LOOP_OUT=nostderr: ranks 1-3 with 2>/dev/null)", "keyerror", 1, 4, 15, "nostderr"),
 "run-r59b-loop-rank0-hang": ("shell-loop", "./loop.sh (LOOP_OUT=rank0: ranks 1-3 > /dev/null 2>&1)", "hang", 3, 4, 20, "rank0only"),
 "run-r59b-torchrun-rotate-healthy": ("torchrun", "torchrun --nproc-per-node 4 job.py, OUT=rotate MAXBYTES=1500 BACKUPS=5", "none", None, None, 15, "rotate"),
 "run-r59b-spawn-rotate-gzip-healthy": ("mp.spawn", "python spawn_main.py, OUT=rotate MAXBYTES=1500 BACKUPS=5 GZIP_LOGS=1", "none", None, None, 15, "rotate-gzip"),
 "run-r59b-loop-logrotate-healthy": ("shell-loop", "./loop.sh (LOOP_OUT=files, gzip after the job)", "none", None, None, 15, "logrotate"),
}

LOSS_TXT = {
 "buffered": "ranks' stdout is block-buffered (no PYTHONUNBUFFERED / no python -u, stdout to a file), so a rank that is SIGKILLed or SIGTERMed by the launcher loses the step lines still in its buffer; stderr (tracebacks) is not lost",
 "buffered-osexit": "ranks' stdout is block-buffered and the job's top-level handler prints the traceback to stderr then calls os._exit(1) (no flush), and mp.spawn SIGTERMs the rest: none of the step lines reach the log, only stderr tracebacks",
 "rank0print-buffered": "only rank 0 prints step lines (if rank == 0) and its stdout is block-buffered; mp.spawn SIGTERMs it, so even rank 0's lines are lost",
 "rotate": "per-rank logs via logging.handlers.RotatingFileHandler with a small maxBytes (ranks/rank<r>.log is the newest, .log.1, .log.2 ... older, the oldest beyond backupCount dropped); the console shows only what the launcher and uncaught tracebacks print",
 "rotate-nostderr": "per-rank RotatingFileHandler logs, and the loop runs ranks 1-3 with 2>/dev/null, so their stderr (C++ abort messages, tracebacks) is lost; a rank that aborts writes nothing to its log file",
 "rotate-filter0": "per-rank RotatingFileHandler logs, and torchrun --local-ranks-filter 0 sends ranks 1-3's console output to /dev/null",
 "gzip-atexit": "per-rank log files that each rank gzips itself in an atexit hook (rank<r>.log -> rank<r>.log.gz); a rank SIGTERMed by torchrun never runs it, so its log stays plain",
 "gzip-launcher": "per-rank log files gzipped by the spawn launcher in a finally block when the job ends (ranks/rank<r>.log.gz)",
 "logrotate": "each rank's stdout+stderr goes to logs/rank<r>.log (block-buffered stdout) and a logrotate-like step gzips them after the job; the console has only the loop's own lines",
 "rotate-gzip": "per-rank RotatingFileHandler logs, all gzipped by the spawn launcher at exit (rank<r>.log.gz, rank<r>.log.1.gz ...)",
 "tail60": "the console output was cut to its last 60 lines (| tail -n 60), as a user pastes it",
 "head20k": "the console output was cut to its first 20000 bytes (head -c 20000), as a user pastes it",
 "filter0": "torchrun --local-ranks-filter 0: only local rank 0's stdout/stderr reach the console, ranks 1-3's go to /dev/null",
 "filter0-record": "torchrun --local-ranks-filter 0 (ranks 1-3's output goes to /dev/null), but job.py's main is wrapped in torch.distributed.elastic's @record, so torchrun's summary carries the failing ranks' exceptions from their error files",
 "nostderr": "the loop runs ranks 1-3 with 2>/dev/null: their stdout is on the console, their stderr (tracebacks) is lost",
 "rank0only": "the loop keeps only rank 0's output (ranks 1-3 > /dev/null 2>&1)",
}

FAULT_HOW = {
 "keyerror": "rank {r}'s data loader gets an old-schema record at step {k} (key 'label_v1' instead of 'target') -> KeyError: 'target'",
 "valueerror": "rank {r}'s data loader raises ValueError at step {k} (a record of shard-00{r}.bin has 15 features, expected 16)",
 "sigkill": "rank {r} SIGKILLs itself (os.kill(os.getpid(), SIGKILL)) at the start of step {k}, no traceback",
 "hang": "rank {r}'s data fetch sleeps past the {t} s process-group timeout at step {k}, before its DDP forward/backward; it prints nothing",
 "sizemismatch": "rank {r}'s per-step metrics all_reduce at step {k} has 65 elements where the other ranks' has 64 (an extra grad-norm value)",
}
CAT = {"keyerror": "user.code_error", "valueerror": "user.code_error", "sigkill": "mem.host_oom",
       "hang": "dist.collective_timeout", "sizemismatch": "dist.collective_mismatch", "none": "none"}
ROOT = {
 "keyerror": "Rank {r}'s data loader read an old-schema record without the 'target' key at step {k} and raised KeyError: 'target'; the other ranks then lost their peer in the DDP gradient all_reduce.",
 "valueerror": "Rank {r}'s data loader hit a malformed record (15 features instead of 16) in shard-00{r}.bin at step {k} and raised ValueError; the other ranks then lost their peer.",
 "sigkill": "Rank {r} was SIGKILLed at step {k} (no traceback, only the launcher sees signal 9), the pattern of a host OOM kill; the other ranks then lost their peer.",
 "hang": "Rank {r} stalled in its data fetch at step {k} for longer than the {t} s process-group timeout, so the other ranks timed out in the DDP gradient all_reduce.",
 "sizemismatch": "Rank {r} called the per-step metrics all_reduce at step {k} with 65 elements while the other ranks used 64, a collective size mismatch.",
}
FIX = {
 "keyerror": "Re-export the shard with the current schema (or map the old 'label_v1' key to 'target' when reading).",
 "valueerror": "Repair or skip the malformed records of that shard (validate the feature count when building it).",
 "sigkill": "Find what killed the rank (dmesg / the OOM killer, the scheduler) and reduce its host memory or raise the limit.",
 "hang": "Fix the stall in that rank's data fetch (timeouts, prefetch, local cache) or raise the process-group timeout above it.",
 "sizemismatch": "Make every rank all_reduce a tensor of the same size (log extra per-rank values separately, not in the shared metrics tensor).",
}


def read(p):
    if p.endswith(".gz"):
        with gzip.open(p, "rt", errors="replace") as f:
            return f.read()
    with open(p, errors="replace") as f:
        return f.read()


def rank_files(d):
    """{name: lines} of ranks/, ordered rank, then newest first (rank2.log before rank2.log.1)."""
    rd = os.path.join(d, "ranks")
    if not os.path.isdir(rd):
        return {}

    def key(n):
        m = re.match(r"rank(\d+)\.log(?:\.(\d+))?", n)
        return (int(m.group(1)), int(m.group(2) or 0))
    return {n: read(os.path.join(rd, n)).splitlines() for n in sorted(os.listdir(rd), key=key)}


def first(lines, pred):
    for l in lines:
        if pred(l):
            return l
    return None


def tail(line, start):
    return line[line.index(start):].rstrip()


def err_time(lines):
    """timestamp of the ERROR record in a logging-format rank file (None if none)"""
    for l in lines:
        m = re.match(r"(\S+ \S+) \[rank\d+\] ERROR", l)
        if m:
            return m.group(1)
    return None


def find_in_files(files, pred, order=None):
    """-> (file, line) of the first matching line; files searched in `order` (names) or their own order"""
    for n in (order or files):
        l = first(files[n], pred)
        if l is not None:
            return n, l
    return None, None


def loop_exit_order(lines):
    return [int(m.group(1)) for m in (re.search(r"^rank (\d+) \(pid \d+\) exited with status", l) for l in lines) if m]


def decisive(cid, lines, files, fault, r, launcher):
    """-> (decisive, also_acceptable, decisive_file or None, lost: the fault's own line is gone)"""
    txt = "\n".join(lines)
    if fault in ("keyerror", "valueerror"):
        mk = "KeyError: 'target'" if fault == "keyerror" else f"ValueError: shard-00{r}.bin:"
        l = first(lines, lambda l: mk in l)
        fn, fl = find_in_files(files, lambda l: mk in l, [n for n in files if n.startswith(f"rank{r}.")])
        if l is not None or fl is not None:
            dec = tail(l if l is not None else fl, mk.split(":")[0] + ":")
            return dec, [], fn, False
        # the exception is lost: the launcher's exit line for that rank
        if launcher == "torchrun":
            return f"failed (exitcode: 1) local_rank: {r}", [], None, True
        if launcher == "mp.spawn":
            return f"process {r} terminated with exit code 1", [], None, True
        return first(lines, lambda l: l.startswith(f"rank {r} (pid")).rstrip(), [], None, True
    if fault == "sigkill":
        if launcher == "torchrun":
            l = first(lines, lambda l: f"failed (exitcode: -9) local_rank: {r}" in l)
            if l is not None:
                return f"failed (exitcode: -9) local_rank: {r}", [], None, False
            # torchrun's first-failure line names another rank: the summary entry of the killed rank
            i = next(i for i, l in enumerate(lines) if f"rank      : {r} (local_rank: {r})" in l)
            ex = lines[i + 1].strip()
            assert "-9" in ex and "SIGKILL" in ex, (cid, ex)
            tb = [l.strip() for l in lines[i:i + 5] if "Signal 9 (SIGKILL) received by PID" in l]
            return ex.split("traceback")[0].strip(), [tb[0].replace("traceback : ", "")] if tb else [], None, False
        if launcher == "mp.spawn":
            return f"process {r} terminated with signal SIGKILL", [], None, False
        l = first(lines, lambda l: l.startswith(f"rank {r} (pid") and "status 137" in l)
        pid = re.search(r"pid (\d+)", l).group(1)
        k = first(lines, lambda l: re.search(rf"line \d+: +{pid} Killed", l))
        return l.rstrip(), [k.rstrip()] if k else [], None, False
    if fault == "hang":
        tl = [l.rstrip() for l in lines if "Timed out waiting" in l and "RuntimeError" in l]
        if tl:
            have = sorted((n for n, ls in files.items() if any(tl[0] in l for l in ls)),
                          key=lambda n: err_time(files[n]) or "~")
            return tl[0], [x for x in dict.fromkeys(tl) if x != tl[0]], (have[0] if have else None), False
        # only in the per-rank files: the first report by the ERROR record's time, or (no timestamps on
        # stderr lines) by the loop's exit order
        hits = {n: [l.rstrip() for l in ls if "Timed out waiting" in l and "RuntimeError" in l] for n, ls in files.items()}
        hits = {n: h for n, h in hits.items() if h}
        if any(err_time(files[n]) for n in hits):
            order = sorted(hits, key=lambda n: err_time(files[n]) or "~")
        else:
            ex = loop_exit_order(lines)
            order = sorted(hits, key=lambda n: ex.index(int(re.match(r"rank(\d+)", n).group(1))))
        dec = hits[order[0]][0]
        also = [x for n in order for x in hits[n] if x != dec]
        return dec, list(dict.fromkeys(also)), order[0], False
    if fault == "sizemismatch":
        dl = [tail(l, "Detected mismatch") for l in lines if "Detected mismatch between collectives" in l]
        if dl:
            own = [x for x in dl if x.startswith(f"Detected mismatch between collectives on ranks. Rank {r} is running")]
            dec = dl[0]
            return dec, [x for x in dict.fromkeys(dl) if x != dec], None, False
        el = first(lines, lambda l: "[enforce fail" in l and "op.preamble.length <= op.nbytes" in l)
        if el is not None:
            return tail(el, "[enforce fail"), [], None, False
        # the size check's message is lost: the receiving rank's abort is what is left
        if launcher == "shell-loop":
            l = first(lines, lambda l: re.search(r"line \d+: +\d+ Aborted", l))
            st = first(lines, lambda l: "exited with status 134" in l)
            return l.rstrip(), [st.rstrip()] if st else [], None, True
        if launcher == "mp.spawn":
            l = first(lines, lambda l: "terminated with signal SIGABRT" in l)
            return tail(l, "process"), [], None, True
        l = first(lines, lambda l: "failed (exitcode: -6)" in l)
        return tail(l, "failed (exitcode: -6)").split(" (pid")[0], [], None, True
    raise ValueError(fault)


def collateral(lines, files, fault, r, launcher):
    txt = "\n".join(lines) + "\n" + "\n".join("\n".join(v) for v in files.values())
    out = []
    if "Connection closed by peer" in txt or "Connection reset by peer" in txt:
        out.append("other ranks fail with gloo 'Connection closed/reset by peer' RuntimeErrors once their peer is gone")
    if "terminate called without an active exception" in txt:
        out.append("a surviving rank aborts (SIGABRT, 'terminate called without an active exception') while shutting down after the gloo error")
    m = re.search(r"failed \(exitcode: (-?\d+)\) local_rank: (\d+)", "\n".join(lines))
    if launcher == "torchrun" and m and int(m.group(2)) != r:
        out.append(f"torchrun's first-failure line and 'Root Cause' name local_rank {m.group(2)} (exitcode {m.group(1)}), not the culprit (rank {r})")
    m = re.search(r"-- Process (\d+) terminated with the following error", "\n".join(lines)) or \
        re.search(r"process (\d+) terminated with (?:signal|exit code) (\w+)", "\n".join(lines))
    if launcher == "mp.spawn" and m and int(m.group(1)) != r:
        out.append(f"mp.spawn reports process {m.group(1)}, not the culprit (process {r})")
    if fault == "sizemismatch" and "Detected mismatch" not in txt:
        out.append("gloo's size check fires on a RECEIVING peer, which aborts (terminate called after 'gloo::EnforceNotMet')")
    if fault == "hang":
        out.append(f"rank {r} itself reports nothing about the stall; the other ranks time out in the DDP gradient all_reduce")
    if launcher == "torchrun" and "closing signal SIGTERM" in txt:
        out.append("torchrun SIGTERMs the remaining ranks and prints a ChildFailedError summary")
    if launcher == "mp.spawn" and "Terminating process" in txt:
        out.append("mp.spawn SIGTERMs the remaining processes")
    if launcher == "shell-loop":
        ex = loop_exit_order(lines)
        if ex:
            out.append("the loop reports the ranks' exits in the order they ended: " + ", ".join(map(str, ex)))
    return out


def main():
    for cid, (launcher, cmd, fault, r, k, tmo, loss) in C.items():
        d = os.path.join(POOL, cid)
        if not os.path.isdir(d):
            print("MISSING", cid)
            continue
        lines = read(os.path.join(d, "log.txt")).splitlines()
        files = rank_files(d)
        full = os.path.join(FULL, cid + ".txt")
        how = (f"FAULT={fault}" + (f" CULPRIT={r} STEP={k}" if r is not None else "") +
               f"; 4 gloo ranks on CPU, DDP model, process-group timeout {tmo} s; log: {LOSS_TXT[loss]}")
        lab = {"id": cid, "source": SRC.format(id=cid, cmd=cmd), "category": CAT[fault], "fatal": fault != "none"}
        notes = [LOSS_TXT[loss] + "."]
        if fault == "none":
            assert not any("Error" in l for l in lines), cid
            assert sum("training done" in l for v in files.values() for l in v) == 4, cid
            lab.update(decisive_line=None, also_acceptable=[], initiating_rank=None, collateral=[], operator=None,
                       root_cause="Healthy run: all 4 ranks trained their steps, passed the final barrier and exited 0; the per-rank logs were rotated/compressed as configured.",
                       fix="Nothing to fix.")
            how += "; no fault"
            dfile, lost = None, False
        else:
            dec, also, dfile, lost = decisive(cid, lines, files, fault, r, launcher)
            lab.update(decisive_line=dec, also_acceptable=also, initiating_rank=r,
                       collateral=collateral(lines, files, fault, r, launcher), operator=None,
                       root_cause=ROOT[fault].format(r=r, k=k, t=tmo), fix=FIX[fault])
            how += "; fault: " + FAULT_HOW[fault].format(r=r, k=k, t=tmo)
            if lost:
                notes.append("The fault's own line (" + {"keyerror": "the KeyError", "valueerror": "the ValueError",
                             "sizemismatch": "gloo's 'op.preamble.length <= op.nbytes ... Received data size doesn't match expected size' enforce message"}[fault]
                             + ") is not in what is left; the decisive line is the line that best shows the fault among what is left.")
            # check the labelled lines are in log.txt or in the decisive file
            where = files[dfile] if dfile else lines
            assert any(dec in l for l in where), (cid, dec)
            for s in also:
                assert any(s in l for l in lines) or any(s in l for v in files.values() for l in v), (cid, s)
        extra = NOTES.get(cid)
        if extra:
            txt = "\n".join(lines)
            note, rank = extra(lines, files, full) if callable(extra) else extra
            notes.append(note)
            if rank != "keep":
                lab["initiating_rank"] = rank
        lab.update(launcher=launcher, framework="plain", torch_version="2.13.0", genuine=False,
                   induced_how=how, confirmed_by="induced", confidence="high", notes=" ".join(notes))
        if dfile:
            lab["decisive_file"] = dfile
        with open(os.path.join(d, "label.json"), "w") as f:
            json.dump(lab, f, indent=2, ensure_ascii=False)
            f.write("\n")
        print(f"{cid:48s} {lab['category']:25s} r={lab['initiating_rank']} {dfile or 'log.txt':12s} {str(lab['decisive_line'])[:90]}")


# per-case notes, written after reading the logs of the runs that were labelled (a rerun may differ in the
# details: which rank torchrun names first, the exit order of the loop, where a cut falls); the asserts above
# re-check the decisive lines.  id -> (note, initiating_rank or "keep")
NOTES = {
 "run-r59b-torchrun-buffered-sigkill": ("Ranks 0 and 2 have no step lines at all in log.txt: rank 2's buffer died with the SIGKILL and rank 0's with torchrun's SIGTERM; ranks 1 and 3 raised (Connection reset by peer) and flushed at exit. torchrun names local_rank 2's -9 exit.", "keep"),
 "run-r59b-torchrun-buffered-hang": ("The hung rank 1 has no line at all in log.txt (its buffered step lines died with torchrun's SIGTERM); the three waiting ranks' step lines and timeout tracebacks are there. torchrun's first-failure line names a waiting rank (exitcode 1), rank 1 appears only as a SIGTERMed (-15) entry of the summary.", "keep"),
 "run-r59b-spawn-buffered-osexit-valueerror": ("No step line of any rank reaches log.txt (os._exit skips the flush, the rest are SIGTERMed by mp.spawn); the tracebacks on stderr carry no rank prefix; the ValueError names shard-001.bin and mp.spawn says 'process 1 terminated with exit code 1'.", "keep"),
 "run-r59b-loop-buffered-sigkill": ("Rank 3's step lines never reach log.txt (buffer lost with the SIGKILL); bash's job report ('./loop.sh: line 29: PID Killed') and the loop's 'rank 3 (pid PID) exited with status 137' are what show it; the survivors' 'Connection reset/closed by peer' tracebacks and step lines (flushed at their normal exit) are there.", "keep"),
 "run-r59b-spawn-rank0print-sizemismatch": ("Only rank 0 prints step lines and even those are lost (block-buffered, SIGTERMed by mp.spawn): log.txt holds only the receiving rank's C++ abort ('terminate called after throwing an instance of gloo::EnforceNotMet' + the enforce message) and mp.spawn's 'process 2 terminated with signal SIGABRT'. The abort is on a receiver (process 2), not on the culprit (rank 3), which the log does not name; initiating_rank is the rank that called the larger all_reduce.", "keep"),
 "run-r59b-torchrun-rotate-keyerror": ("The steps before the failure are spread over ranks/rank2.log.3 .. rank2.log.1 (oldest first) and the failure with its traceback is in ranks/rank2.log; the KeyError traceback is also on the console (uncaught exception on stderr).", "keep"),
 "run-r59b-spawn-rotate-hang": ("The console has no step lines, only mp.spawn's report of one waiting process's timeout; the per-rank files show ranks 0-2 logging 'training failed' with gloo timeouts at step 6 while ranks/rank3.log ends with step 5 and no error (SIGTERMed while stalled). decisive_file is the file of the waiting rank whose error record is earliest and that holds the decisive line.", "keep"),
 "run-r59b-loop-rotate-nostderr-sizemismatch": ("LOST: the receiving rank that hit gloo's size check (rank 1) runs with 2>/dev/null, so the 'terminate called ... gloo::EnforceNotMet' / 'op.preamble.length <= op.nbytes ... Received data size doesn't match expected size' lines are gone, and an abort writes nothing to its rotating log (ranks/rank1.log ends with its step-4 line). What is left: bash's 'Aborted' job report and 'exited with status 134' for rank 1, and 'Connection reset/closed by peer' errors in the other ranks' files. Nothing left names the culprit (rank 2, whose own log shows only a peer error), so initiating_rank is null.", None),
 "run-r59b-torchrun-rotate-filter0-sigkill": ("--local-ranks-filter 0: only rank 0's (peer) error reaches the console; ranks/rank1.log ends abruptly with its step-6 line (no error record: SIGKILL), the older steps are in rank1.log.1/.log.2. torchrun's 'failed (exitcode: -9) local_rank: 1' is in log.txt.", "keep"),
 "run-r59b-torchrun-gzip-atexit-valueerror": ("ranks/rank0.log.gz, rank2.log.gz and rank3.log.gz were compressed by their ranks' atexit hook after their exceptions; ranks/rank1.log stayed plain because torchrun SIGTERMed rank 1 before it failed. The ValueError is in log.txt too.", "keep"),
 "run-r59b-spawn-gzip-sigkill": ("All four per-rank logs were gzipped by the launcher; they all end with step 5 and show nothing of the kill (rank 2 died at the start of step 6, the others were SIGTERMed by mp.spawn). Only mp.spawn's 'process 2 terminated with signal SIGKILL' shows it.", "keep"),
 "run-r59b-loop-logrotate-hang": ("The console has only the loop's exit lines and the rotation line; everything else is in ranks/rank<r>.log.gz (stdout block-buffered, flushed at exit). The stderr traceback lines have no timestamps, so the first timeout report is taken by the loop's exit order (first rank to exit that timed out). The hung rank 2's own file shows only a 'Connection closed by peer' error after its stall (its peers had already gone) and it exited last.", "keep"),
 "run-r59b-loop-logrotate-keyerror": ("The console has only the loop's lines: two surviving ranks abort during teardown ('Aborted', status 134) and are reported BEFORE the culprit's 'exited with status 1'; the KeyError is only in ranks/rank1.log.gz.", "keep"),
 "run-r59b-torchrun-tail60-hang": ("LOST: 'tail -n 60' kept only the end of one waiting rank's traceback (rank 1's recv timeout) and torchrun's summary; the step lines and the first timeout report (rank 0's send timeout, 30 lines earlier in the full output) were cut. torchrun's first-failure line names local_rank 0. The hung rank 3 appears only as one of the SIGTERMed (-15) summary entries, which the log does not single out, so initiating_rank is null.", None),
 "run-r59b-torchrun-tail60-sizemismatch-detail": ("LOST: 'tail -n 60' cut the step lines and the first three DETAIL fingerprint reports (ranks 1, 3, 0: 'Rank X is running ... TensorShape=[64], but Rank 2 is running ... TensorShape=[65]'); what is left is rank 2's own report (Rank 2 [65] vs Rank 0 [64]) and torchrun's summary, whose first-failure line names local_rank 0. The remaining line still shows rank 2 with the odd 65-element all_reduce.", "keep"),
 "run-r59b-loop-tail60-sigkill": ("'tail -n 60' cut the launch line and most step lines; bash's 'Killed' job report and the loop's 'rank 2 ... exited with status 137' survive at the top of what is left, followed by the survivors' 'Connection closed/reset by peer' tracebacks.", "keep"),
 "run-r59b-torchrun-head20k-keyerror": ("'head -c 20000' of 24 KB: kept the step lines, rank 1's KeyError traceback and the first surviving ranks' peer errors; the cut falls inside a later traceback line, so torchrun's 'failed (exitcode: 1) local_rank: 1' line and the ChildFailedError summary are lost.", "keep"),
 "run-r59b-torchrun-filter0-keyerror": ("LOST: --local-ranks-filter 0 sent rank 2's stderr to /dev/null and there is no @record, so the KeyError appears nowhere; only rank 0's step lines and torchrun's 'failed (exitcode: 1) local_rank: 2' + Root Cause 'rank : 2 ... exitcode : 1 ... traceback : To enable traceback see ...' remain. torchrun's line names rank 2, so initiating_rank stays 2.", 2),
 "run-r59b-torchrun-filter0-record-valueerror": ("--local-ranks-filter 0 hides rank 3's traceback from the console, but @record wrote it to the error file and torchrun's Root Cause entry quotes the ValueError (indented line of the summary). The error_file paths are torchrun's default temp log dir.", "keep"),
 "run-r59b-loop-nostderr-keyerror": ("LOST: ranks 1-3 run with 2>/dev/null, so rank 1's KeyError traceback is gone; its step lines (stdout) stop at step 3 like everyone's. What is left: rank 0's 'Connection closed by peer' traceback, a teardown abort of rank 2 ('Aborted', status 134) reported FIRST, then 'rank 1 (pid ...) exited with status 1'. The decisive line is the culprit's exit line; nothing left singles out rank 1 (every survivor also exits 1), so initiating_rank is null.", None),
 "run-r59b-loop-rank0-hang": ("LOST: only rank 0's output is kept; its send timeout is the only timeout report left (the other waiting ranks' output went to /dev/null; rank 1 exited first). The hung rank 3 exited last (after its 30 s stall, on a dead peer), which the log shows only as the order of the exit lines, all status 1, so initiating_rank is null.", None),
 "run-r59b-torchrun-rotate-healthy": ("Healthy: the per-rank RotatingFileHandler logs rotated 3-4 times (rank<r>.log ... .log.4); the console has only torchrun's OMP banner.", "keep"),
 "run-r59b-spawn-rotate-gzip-healthy": ("Healthy: rotating per-rank logs, all gzipped by the launcher at exit; the console has only 'compressed logs in .../logs/'.", "keep"),
 "run-r59b-loop-logrotate-healthy": ("Healthy: per-rank stdout files gzipped after the job; the console has the loop's exit lines (all status 0).", "keep"),
}

if __name__ == "__main__":
    main()
