"""Write label.json for every round-25b case from what was induced (table below) and what its log shows.

The decisive line is found in log.txt with a regex and stored as the matched text (so `ts` timestamps and
`[rankN]:` prefixes stay out of it unless they are part of the match); it is checked to be an exact substring
of a log line. usage: python mk_label.py [ids...]     env: OUT (cases), META (run_all.sh's per-case json)
"""
import json
import os
import re
import sys

OUT = os.environ.get("OUT", "/work/helpers/stage25b")
META = os.environ.get("META", "/work/helpers/stage25b.meta")

SETUPS = {
    "absl": "absl.logging with its glog-style handler (`I1206 21:00:00.123456 <thread> train25b.py:59] rank R: ...`), the rank only in the message text",
    "pid": "Python logging `%(asctime)s %(process)d %(levelname)s %(name)s: %(message)s`; the rank appears only in one start-up line per process (`rank R has pid P`)",
    "print": "plain print() without flush and PYTHONUNBUFFERED unset, so each rank's stdout is block-buffered (lines arrive in blocks, or are lost when a rank is killed)",
    "shared": "every rank appends to one shared train.log (logging.FileHandler mode 'a', `%(asctime)s %(levelname)s [host:pid] [rank R] msg`) and the launcher's console output is appended to the same file with `2>&1 | tee -a train.log`; log.txt is train.log",
    "ts": "Python logging to stdout, the launcher's stdout+stderr piped through moreutils `ts '[%Y-%m-%d %H:%M:%.S]'` (a timestamp on every line)",
    "nohup": "launcher started with `nohup` on a terminal (under script(1)), so nohup appended stdout+stderr to nohup.out; log.txt is nohup.out",
}
TORCHRUN_KILL = r"failed \(exitcode: -9\) local_rank: {r} \(pid: \d+\) of binary: \S+"
SPAWN_KILL = r"process {r} terminated with signal SIGKILL"
TIMEOUT = r"RuntimeError: \[\S+unbound_buffer\.cc:\d+\] Timed out waiting \d+ms for \w+ operation to complete"
CLOSED = r"RuntimeError: \[\S+pair\.cc:\d+\] Connection closed by peer \[[\d.]+\]:\d+\..*"

# id -> (launcher, scenario, bad rank, step index, world)
CASES = {
    "run25b-absl-raise": ("torchrun", "raise", 2, 3, 3),
    "run25b-absl-hang": ("mp.spawn", "hang", 1, 2, 3),
    "run25b-absl-ok": ("torchrun", "ok", None, None, 4),
    "run25b-pid-sigkill": ("torchrun", "sigkill", 2, 2, 4),
    "run25b-pid-mismatch-detail": ("torchrun", "mismatch-detail", 0, 2, 3),
    "run25b-pid-dlworker": ("torchrun", "dlworker", 1, 2, 3),
    "run25b-print-raise": ("mp.spawn", "raise", 0, 2, 3),
    "run25b-print-sigkill": ("torchrun", "sigkill", 1, 3, 3),
    "run25b-print-hostoom": ("mp.spawn", "hostoom", 2, 2, 3),
    "run25b-shared-hang": ("torchrun", "hang", 0, 2, 4),
    "run25b-shared-hostoom": ("torchrun", "hostoom", 1, 3, 3),
    "run25b-shared-mismatch": ("mp.spawn", "mismatch", 3, 1, 4),
    "run25b-ts-sigkill": ("mp.spawn", "sigkill", 0, 2, 3),
    "run25b-ts-dlworker": ("mp.spawn", "dlworker", 2, 1, 3),
    "run25b-ts-hang": ("torchrun", "hang", 2, 3, 3),
    "run25b-nohup-raise": ("torchrun", "raise", 1, 2, 3),
    "run25b-nohup-hostoom": ("torchrun", "hostoom", 0, 1, 3),
    "run25b-nohup-ok": ("mp.spawn", "ok", None, None, 3),
}


def find(lines, pat, first=True):
    hits = []
    for ln in lines:
        m = re.search(pat, ln)
        if m:
            hits.append(m.group(0).rstrip())
            if first:
                break
    return hits


def label(cid):
    launcher, scen, r, k, world = CASES[cid]
    setup = cid.split("-")[1]
    meta = json.load(open(f"{META}/{cid}.json"))
    lines = open(f"{OUT}/{cid}/log.txt", encoding="utf-8", errors="replace").read().splitlines()
    kill = (TORCHRUN_KILL if launcher == "torchrun" else SPAWN_KILL).format(r=r)
    notes = [f"World size {world}; launcher exit status {meta['rc']}" +
             (" (of the pipeline: tee/ts exit 0)" if setup in ("shared", "ts") else "") + "."]
    also, coll = [], []
    step_txt = f"at step index {k} (its log line 'step {k + 1}/6' is never reached)" if k is not None else ""
    if scen == "ok":
        cat, fatal, dec, rank = "none", False, None, None
        root = f"Healthy run: all {world} ranks trained 6 steps and finished ('training done'); no failure."
        fix = "Nothing to fix."
        how = "no fault injected (--fault none)"
    elif scen == "raise":
        cat, fatal, rank = "user.code_error", True, r
        dec = find(lines, r"(\[rank\d+\]: )?KeyError: 'targets'")[0]
        also = find(lines, r"failed \(exitcode: 1\) local_rank: %d \(pid: \d+\)" % r) if launcher == "torchrun" \
            else find(lines, r"-- Process %d terminated with the following error:" % r)
        coll = find(lines, CLOSED, first=False)
        root = f"Rank {r}'s batch preparation raised KeyError: 'targets' (the field is missing from its batch) {step_txt}; the other ranks then lost their gloo peer or were stopped by the launcher."
        fix = "Make the data pipeline always produce the 'targets' field (or validate batches and skip/repair bad ones) before the forward pass."
        how = f"--fault raise --bad-rank {r} --step {k}: rank {r} deletes 'targets' from its batch dict, the lookup raises KeyError"
    elif scen in ("sigkill", "hostoom"):
        cat, fatal, rank = "mem.host_oom", True, r
        dec = find(lines, kill)[0]
        coll = find(lines, CLOSED, first=False) + find(lines, TIMEOUT, first=False)
        if scen == "sigkill":
            root = f"Rank {r} was killed with SIGKILL {step_txt} without any traceback (exit -9), the signature of the kernel OOM killer; the other ranks lost their peer or were stopped by the launcher."
            fix = "Find what killed the rank (dmesg / cgroup OOM events); if it is memory, reduce that rank's host memory use or raise the memory limit."
            how = f"--fault sigkill --bad-rank {r} --step {k}: os.kill(os.getpid(), signal.SIGKILL) on rank {r}"
        else:
            root = f"Rank {r} grew an unbounded host-side tensor cache {step_txt} inside a 1 GiB memory cgroup and was SIGKILLed by the kernel OOM killer (exit -9, no traceback); the other ranks lost their peer or were stopped by the launcher."
            fix = "Bound the host-side cache (or free it each step), or give the job more host memory."
            how = (f"--fault hostoom --bad-rank {r} --step {k}: rank {r} writes its pid into the cgroup v1 memory cgroup "
                   "r25b_oom (memory.limit_in_bytes = memory.memsw.limit_in_bytes = 1G, created by run_all.sh), then "
                   "appends 64 MiB torch.ones tensors to a list until the kernel OOM killer SIGKILLs it")
            notes.append("cgroup memory.oom_control after the run: " + meta["oom_control"].strip())
    elif scen == "hang":
        cat, fatal, rank = "dist.collective_timeout", True, r
        hits = find(lines, TIMEOUT, first=False)
        dec, also = hits[0], hits[1:]
        coll = list(hits[1:]) + find(lines, CLOSED, first=False)
        root = f"Rank {r} stalled (sleep 90 s) {step_txt} before the DDP backward all-reduce; the other ranks waited in gloo past the 15 s process-group timeout and failed with 'Timed out waiting 15000ms'; the stalled rank itself printed nothing."
        fix = f"Find why rank {r} stalls (it never reached the collective) and fix that; raise the process-group timeout only if the stall is legitimate."
        how = f"--fault hang --bad-rank {r} --step {k} --pg-timeout 15: time.sleep(90) on rank {r} before loss.backward()"
    elif scen == "mismatch-detail":
        cat, fatal, rank = "dist.collective_mismatch", True, r
        hits = find(lines, r"RuntimeError: Detected mismatch between collectives on ranks\..*", first=False)
        dec, also = hits[0], hits[1:]
        coll = find(lines, CLOSED, first=False)
        root = f"With TORCH_DISTRIBUTED_DEBUG=DETAIL the collective fingerprint check found that rank {r} all-reduced a metrics tensor of shape [1024] while the other ranks all-reduced shape [2] {step_txt}."
        fix = "Make every rank all-reduce tensors of the same shape (append the histogram on all ranks, or reduce it in a separate collective every rank calls)."
        how = f"TORCH_DISTRIBUTED_DEBUG=DETAIL; --fault mismatch --bad-rank {r} --step {k}: rank {r} alone appends a 1022-bin histogram to its 2-element metrics tensor before dist.all_reduce"
    elif scen == "mismatch":
        cat, fatal, rank = "dist.collective_mismatch", True, r
        dec = find(lines, r"what\(\):\s+\[enforce fail at \S+\] .*")[0]
        # the launcher's SIGABRT line names the aborted receiving rank, not rank r: collateral
        coll = find(lines, TORCHRUN_KILL.replace("-9", "-6").format(r=r"\d+")) + find(lines, r"process \d+ terminated with signal SIGABRT")
        coll += find(lines, CLOSED, first=False) + find(lines, TIMEOUT, first=False)
        root = f"Rank {r} all-reduced a 1024-element metrics tensor while the other ranks all-reduced 2 elements {step_txt}; gloo's size check (enforce fail) aborted a receiving rank and the job fell apart."
        fix = "Make every rank all-reduce tensors of the same shape (append the histogram on all ranks, or reduce it in a separate collective every rank calls)."
        how = f"--fault mismatch --bad-rank {r} --step {k}: rank {r} alone appends a 1022-bin histogram to its 2-element metrics tensor before dist.all_reduce (no TORCH_DISTRIBUTED_DEBUG)"
    elif scen == "dlworker":
        cat, fatal, rank = "user.code_error", True, r
        dec = find(lines, r"ValueError: sample \d+: could not decode record \(expected 16 features, got 0\)")[0]
        also = find(lines, r"(\[rank\d+\]: )?ValueError: Caught ValueError in DataLoader worker process 0\.")
        also += find(lines, r"failed \(exitcode: 1\) local_rank: %d \(pid: \d+\)" % r) if launcher == "torchrun" \
            else find(lines, r"-- Process %d terminated with the following error:" % r)
        coll = find(lines, CLOSED, first=False)
        root = f"Rank {r}'s DataLoader worker process raised ValueError on a corrupt sample {step_txt}; the error was re-raised in rank {r}'s main process and the other ranks lost their peer or were stopped."
        fix = "Repair or filter the corrupt record (or make the dataset skip undecodable samples)."
        how = f"--fault dlworker --bad-rank {r} --step {k}: the Dataset of rank {r} raises ValueError in __getitem__ for one sample index of that step, inside a DataLoader worker (num_workers=1)"
    for d in [dec] + also:
        if d is not None:
            assert any(d in ln for ln in lines), (cid, d)
    lab = {
        "id": cid,
        "source": f"real run: tests/corpus/generators/launchers/round25b/run_all.sh {cid} (`{meta['cmd']}`, in the job dir), torch 2.13.0 CPU, gloo",
        "category": cat, "fatal": fatal, "decisive_line": dec,
        "also_acceptable": list(dict.fromkeys(a for a in also if a != dec)), "initiating_rank": rank, "collateral": coll[:6], "operator": None,
        "root_cause": root, "fix": fix, "launcher": launcher, "framework": "plain",
        "genuine": False, "induced_how": how + f"; world size {world}; logging set-up: {SETUPS[setup]}",
        "confirmed_by": "induced", "confidence": "high", "torch_version": "2.13.0",
        "notes": " ".join(notes),
    }
    json.dump(lab, open(f"{OUT}/{cid}/label.json", "w"), indent=2, ensure_ascii=False)
    print(cid, cat, rank, repr(dec)[:110])


if __name__ == "__main__":
    for cid in sys.argv[1:] or sorted(CASES):
        if os.path.exists(f"{META}/{cid}.json"):
            try:
                label(cid)
            except (IndexError, AssertionError) as e:   # the log does not show what was induced: re-run it
                print("NO LABEL", cid, repr(e))
