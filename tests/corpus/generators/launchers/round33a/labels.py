"""Write label.json for every round-33a case in OUT (argv[1], default /work/helpers/stage33).
Category and initiating rank come from what run_all.sh induced (its case table, parsed here); the decisive line
is found in the recorded log.txt by the scenario's pattern, and checked to be an exact substring of one line.
The rank markers below are the ones each --fmt prints (job.py): the launchers add no per-line prefix."""
import json
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = Path(sys.argv[1] if len(sys.argv) > 1 else "/work/helpers/stage33")
SRC = "real run: tests/corpus/generators/launchers/round33a/run_all.sh {id}, torch 2.13.0 CPU, gloo"
MARK = {  # how a log line of rank R shows its rank, per --fmt
    "asctime_r": "'[R{r}]' after the timestamp", "logfmt": "the logfmt key 'rank={r}'",
    "json": "the JSON key '\"rank\": {r}'", "structlog": "the structlog key 'rank={r}'",
    "loguru": "the loguru field '| rank{r} |'", "rank_slash": "the '[Rank {r}/{w}]' prefix",
    "worker": "the '[worker-{r}]' prefix", "frac": "the '{r}/{w} |' prefix", "hostrank": "the 'host-a:{r} |' prefix",
    "loggername": "the logger name 'train.rank{r}'", "procname": "the process name 'Worker-{r}'",
    "rank0only": "nothing (only rank 0 writes log lines; other ranks print only tracebacks)",
    "accelerate": "accelerate's '[RANK {r}]' message prefix (get_logger, main_process_only=False)"}
EXC = {
    "torch": "its traceback lines carry torch's own '[rank{r}]: ' excepthook prefix",
    "plain": "its traceback is a bare Python traceback with no prefix",
    "logexc": "the job logs it once with logger.exception (prefixed record) before the traceback",
    "logexc-plain": "the job logs it once with logger.exception (prefixed record), then a bare traceback follows",
    "hook": "the job's sys.excepthook logs every traceback line with the rank prefix"}
LAUNCH_SAYS = {"torchrun": "torchrun's summary names rank {r} as root cause",
               "spawn": "mp.spawn's parent names process {r}", "mpirun": "mpirun names process rank {r}"}
FIX = {"raise": "Rebuild the shard index so no '.partial' sample keys are referenced (or skip missing keys in the loader).",
       "sigkill": "Find what SIGKILLed that rank (kernel log / scheduler / OOM killer) and remove the cause, e.g. lower its host memory use.",
       "hang": "py-spy dump the stalled rank to see where it blocks before the collective; fix the stall (raise the PG timeout only if the work is legitimately slow).",
       "mismatch": "Build the metrics/histogram tensor with the same number of bins on every rank before all_reduce.",
       "none": "Nothing to fix."}
CAT = {"raise": "user.code_error", "sigkill": "mem.host_oom", "hang": "dist.collective_timeout",
       "mismatch": "dist.collective_mismatch", "none": "none"}


def cases():
    txt = (HERE / "run_all.sh").read_text()
    for m in re.finditer(r'\[(run33a-[^\]]+)\]="([^"]*)"', txt):
        la, w, fmt, exc, sc, fr, step, env = m.group(2).split("|")
        yield m.group(1), dict(la=la, w=int(w), fmt=fmt, exc=exc, sc=sc, r=int(fr), step=int(step), env=env)


def first(lines, pat):
    for ln in lines:
        m = re.search(pat, ln)
        if m:
            return m.group(0)
    return None


def main():
    bad = 0
    for cid, c in cases():
        d = OUT / cid
        if not (d / "log.txt").exists():
            continue
        lines = (d / "log.txt").read_text(errors="replace").splitlines()
        la, sc, r, w, fmt, exc = c["la"], c["sc"], c["r"], c["w"], c["fmt"], c["exc"]
        mark = MARK[fmt].format(r=r, w=w)
        also, coll = [], []
        if sc == "raise":
            dec = first(lines, r"KeyError: 'shard-\d+/sample-\d+\.partial'")
            coll = ["the other ranks: gloo 'Connection closed by peer' / 'Connection reset by peer' in DDP backward or all_reduce"]
            excs = EXC["logexc" if exc.startswith("logexc") and la == "spawn" else exc].format(r=r)
            if la == "spawn":
                excs += "; mp.spawn's parent re-raises it after '-- Process {r} terminated with the following error:'".format(r=r)
            rc = (f"Rank {r} raises KeyError in load_batch at step {c['step']} (a '.partial' shard key missing from its index) "
                  f"and the other ranks then lose their gloo peer; in this log the rank is shown by {mark}: {excs}, its "
                  f"last step line is step {c['step'] - 1}, and " + LAUNCH_SAYS[la].format(r=r) + ".")
        elif sc == "sigkill":
            pat = {"torchrun": rf"failed \(exitcode: -9\) local_rank: {r} \(pid: \d+\)",
                   "spawn": rf"process {r} terminated with signal SIGKILL",
                   "mpirun": rf"mpirun noticed that process rank {r} with PID \d+ on node \S+ exited on signal 9 \(Killed\)"}[la]
            dec = first(lines, pat)
            coll = ["the other ranks: gloo connection closed/reset errors in the next collective", "survivors terminated by the launcher"]
            rc = (f"Rank {r} is SIGKILLed at step {c['step']} with no traceback (the induced stand-in for an OOM kill); its "
                  f"log lines ({mark}) stop after step {c['step'] - 1} while the others fail in gloo, and "
                  + LAUNCH_SAYS[la].format(r=r).replace(" as root cause", "") + " with signal 9.")
        elif sc == "hang":
            dec = first(lines, r"Timed out waiting \d+ms for (recv|send) operation to complete")
            coll = [f"ranks other than {r}: gloo 'Timed out waiting 20000ms' in DDP backward / all_reduce",
                    f"rank {r} (stalled, silent) killed by the launcher"]
            rc = (f"Rank {r} stalls silently (sleep) before step {c['step']}'s forward/backward, so the other ranks time out "
                  f"after 20 s in the gradient all_reduce; rank {r} is the one whose log lines ({mark}) stop at step "
                  f"{c['step'] - 1} and that reports no timeout itself.")
        elif sc == "mismatch":
            if "DETAIL" in c["env"]:
                dec = first(lines, rf"Rank {r} is running collective: CollectiveFingerPrint\([^)]*\)")
                also = [x for x in [first(lines, r"Tensor Tensor shapes: \d+vs \d+"), first(lines, r"Detected mismatch between collectives on ranks\. Rank \d+ is running collective")] if x]
            else:
                pat = r"op\.preamble\.length <= op\.nbytes\. \d+ vs \d+\. Received data size doesn't match expected size\."
                hits = [re.search(pat, ln).group(0) for ln in lines if re.search(pat, ln)]
                dec, also = (hits[0], hits[1:]) if hits else (None, [])
            coll = ["the other ranks: gloo connection closed/reset or timeout errors", "the mismatching rank aborts (gloo::EnforceNotMet, SIGABRT)"]
            rc = (f"Rank {r} all_reduces a 60-element metrics tensor at step {c['step']} while the other ranks use 64, "
                  f"so gloo's size check fails; rank {r} is shown by {mark} (its last step line is step {c['step'] - 1})"
                  + ("and by the launcher's report of the aborted process." if len(also) == 0 else
                     "; two ranks hit the gloo size check (two unprefixed 'enforce fail' lines), " +
                     ("and torchrun's first-observed failure is rank 0, so only the induced rank's step lines identify it."
                      if la == "torchrun" else f"and {la} names rank {r} as the aborted process.")))
        else:
            dec = None
            coll = []
            rc = (f"Healthy {w}-rank run: only a UserWarning, a caught and logged ModuleNotFoundError (optional "
                  f"tensorboardX) and a straggler WARNING; rank marker: {mark}.")
        ok = dec is None or sum(dec in ln for ln in lines) >= 1
        if sc != "none" and (dec is None or not ok):
            print("NO DECISIVE LINE:", cid)
            bad += 1
            continue
        lab = {"id": cid, "source": SRC.format(id=cid), "category": CAT[sc], "fatal": sc != "none",
               "decisive_line": dec, "also_acceptable": also, "initiating_rank": None if sc == "none" else r,
               "collateral": coll, "operator": None, "root_cause": rc, "fix": FIX[sc],
               "launcher": {"spawn": "mp.spawn"}.get(la, la),
               "framework": "accelerate" if fmt == "accelerate" else "plain", "genuine": False,
               "induced_how": (f"job.py --fmt {fmt} --exc {exc} --scenario {sc}" +
                               (f" --fault-rank {r} --step {c['step']}" if sc != "none" else "") +
                               f", world size {w}" + (f", {c['env']}" if c["env"] else "")),
               "confirmed_by": "induced", "confidence": "high"}
        (d / "label.json").write_text(json.dumps(lab, indent=1) + "\n")
        print(f"{cid:45s} {CAT[sc]:25s} rank={lab['initiating_rank']}  {dec}")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
