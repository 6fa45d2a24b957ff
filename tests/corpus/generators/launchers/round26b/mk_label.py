"""Write label.json for every round-26b case from what was induced (table below) and what its log shows.

The decisive line is found in log.txt (or, for the --log-dir case, also in the ranks/ tree) with a regex and
stored as the matched text (a `[rankN]: ` prefix is kept when the line has one); it is asserted to be an exact
substring of a log line. usage: python mk_label.py [ids...]     env: OUT (cases), META (run_all.sh's json)
"""
import glob
import json
import os
import re
import sys

OUT = os.environ.get("OUT", "/work/helpers/stage26b")
META = os.environ.get("META", "/work/helpers/stage26b.meta")

TORCHRUN_KILL = r"failed \(exitcode: -9\) local_rank: {r} \(pid: \d+\) of binary: \S+"
TORCHRUN_EXIT1 = r"failed \(exitcode: 1\) local_rank: {r} \(pid: \d+\) of binary: \S+"
SPAWN_KILL = r"process {r} terminated with signal SIGKILL"
SPAWN_RAISED = r"-- Process {r} terminated with the following error:"
PRE = r"(\[rank\d\]: )?"
TIMEOUT = PRE + r"RuntimeError: \[\S+unbound_buffer\.cc:\d+\] Timed out waiting \d+ms for \w+ operation to complete"
CLOSED = PRE + r"RuntimeError: \[\S+pair\.cc:\d+\] Connection closed by peer \[[\d.]+\]:\d+\..*"
STORE_TO = PRE + r"(torch\.distributed\.)?DistStoreError: (wait timeout after \d+ms, keys: \S+|Timed out after \d+ seconds waiting for clients\. \d+/\d+ clients joined\.)"
SOCK_TO = r"waitForInput: socket SocketImpl\(.*\) timed out after \d+ms"

# the raise of each phase: (exception line regex, where/what, fix)
RAISES = {
    "init": (r"ValueError: invalid literal for int\(\) with base 10: '25six'",
             "while parsing its own entry of the shard spec, before init_process_group ('25six' is not an int)",
             "Fix the malformed shard-size entry for that rank (validate the per-rank config before launching)."),
    "resume": (r"KeyError: 'optimizer'",
               "while loading its checkpoint shard, whose state dict has no 'optimizer' entry (the others then waited in the resume-step all-reduce)",
               "Re-write or repair that rank's checkpoint shard (or resume without optimizer state when it is missing)."),
    "step1": (r"ValueError: batch 0: targets have shape \(8, 1\) but 8 class ids were expected",
              "in its own batch check at the first training step (before backward)",
              "Make the data pipeline produce targets of the shape the training step expects (8 class ids, not an (8, 1) float tensor)."),
    "valid": (r"ZeroDivisionError: float division by zero",
              "in the validation loop after epoch 1: its validation shard was empty, so averaging the val loss divided by zero (the other ranks were blocked in the per-batch eval all-reduce)",
              "Give every rank a non-empty validation shard (or guard the average against zero batches and keep the per-rank collective count equal)."),
    "save": (r"TypeError: Object of type Tensor is not JSON serializable",
             "while writing its checkpoint manifest at the final save (a tensor was put into the json manifest); the other ranks waited in the barrier after saving",
             "Store plain Python numbers in the manifest (e.g. loss.item()), not tensors."),
    "teardown": (r"RuntimeError: rank \d: metrics sink closed before final flush \(\d+ records pending\)",
                 "in its cleanup after training (final metrics flush), before the final barrier and destroy_process_group",
                 "Flush the metrics sink before it is closed (or make the teardown flush tolerant of a closed sink)."),
}
PHASE_TXT = {
    "init": "before init_process_group (while joining the process group)",
    "resume": "while loading its checkpoint shard at resume (after init_process_group)",
    "step1": "in the first training step",
    "valid": "in the validation loop after epoch 1",
    "save": "while saving the final checkpoint shard",
    "teardown": "in the teardown after training",
}

# id -> (launcher, phase, fault, bad rank, extra)
CASES = {
    "run26b-torchrun-init-raise": ("torchrun", "init", "raise", 2, ""),
    "run26b-torchrun-init-sigkill": ("torchrun", "init", "sigkill", 0, ""),
    "run26b-spawn-init-hang": ("mp.spawn", "init", "hang", 1, ""),
    "run26b-torchrun-resume-raise": ("torchrun", "resume", "raise", 1, ""),
    "run26b-spawn-resume-sigkill": ("mp.spawn", "resume", "sigkill", 2, ""),
    "run26b-torchrun-resume-hang": ("torchrun", "resume", "hang", 0, ""),
    "run26b-spawn-step1-raise": ("mp.spawn", "step1", "raise", 0, ""),
    "run26b-torchrun-step1-sigkill": ("torchrun", "step1", "sigkill", 1, ""),
    "run26b-torchrun-valid-hang": ("torchrun", "valid", "hang", 0, "rank0"),
    "run26b-spawn-valid-raise": ("mp.spawn", "valid", "raise", 2, ""),
    "run26b-torchrun-valid-sigkill": ("torchrun", "valid", "sigkill", 1, ""),
    "run26b-torchrun-save-raise": ("torchrun", "save", "raise", 0, ""),
    "run26b-spawn-save-hang": ("mp.spawn", "save", "hang", 1, ""),
    "run26b-torchrun-teardown-sigkill": ("torchrun", "teardown", "sigkill", 2, "atexit"),
    "run26b-spawn-teardown-raise": ("mp.spawn", "teardown", "raise", 1, ""),
    "run26b-spawn-teardown-hang": ("mp.spawn", "teardown", "hang", 0, ""),
    "run26b-torchrun-restart-raise": ("torchrun", "step1", "raise", 1, "restart-logdir"),
    "run26b-torchrun-restart-sigkill": ("torchrun", "resume", "sigkill", 2, "restart"),
    "run26b-torchrun-restart-sigkill-meshfail": ("torchrun", "resume", "sigkill", 2, "restart-meshfail"),
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
    launcher, phase, fault, r, extra = CASES[cid]
    meta = json.load(open(f"{META}/{cid}.json"))
    d = f"{OUT}/{cid}"
    lines = open(f"{d}/log.txt", encoding="utf-8", errors="replace").read().splitlines()
    where = PHASE_TXT[phase]
    also, coll, dfile = [], [], None
    notes = [f"World size 3; launcher exit status {meta['rc']}."]
    restart = extra.startswith("restart")
    if extra == "restart-meshfail":
        notes.append("torchrun --max-restarts 1 WITHOUT a per-attempt store namespace: the restarted attempt 1 failed already in init_process_group ('Gloo connectFullMesh failed ... Connection refused', stale gloo addresses of attempt 0 in torchrun's store), so torchrun's final summary names attempt 1's exit-1 ranks, not the SIGKILLed rank; that failure is collateral of the restart, the initiating cause is attempt 0's SIGKILL.")
    elif restart:
        notes.append("torchrun --max-restarts 1 (each attempt joins its own PrefixStore namespace 'attempt<TORCHELASTIC_RESTART_COUNT>'): the agent restarted the whole worker group once and attempt 1 failed the same way as attempt 0.")
    if fault == "raise":
        pat, what, fix = RAISES[phase]
        cat = "user.code_error"
        hits = find(lines, PRE + pat, first=False)
        dec, also = hits[0], hits[1:]
        also += find(lines, TORCHRUN_EXIT1.format(r=r), first=False) if launcher == "torchrun" else find(lines, SPAWN_RAISED.format(r=r))
        coll = find(lines, CLOSED, first=False) + find(lines, TIMEOUT, first=False)
        coll += find(lines, r"failed \(exitcode: -6\) local_rank: \d \(pid: \d+\)", first=False)
        root = f"Rank {r} raised {dec.split(': ', 1)[-1] if dec.startswith('[rank') else dec} {what}; the other ranks lost their gloo peer or were stopped by the launcher."
        how = f"--phase {phase} --fault raise --bad-rank {r}"
    elif fault == "sigkill":
        cat = "mem.host_oom"
        hits = find(lines, (TORCHRUN_KILL if launcher == "torchrun" else SPAWN_KILL).format(r=r), first=False)
        dec, also = hits[0], hits[1:]
        coll = find(lines, CLOSED, first=False) + find(lines, TIMEOUT, first=False)
        coll += find(lines, PRE + r"RuntimeError: Gloo connectFullMesh failed with .*", first=False)
        when = where if extra != "atexit" else "in an atexit handler at process exit, after training, the final barrier and destroy_process_group had finished"
        root = f"Rank {r} was killed with SIGKILL {when}, without any traceback (exit -9), the signature of the kernel OOM killer; the other ranks lost their peer or were stopped by the launcher."
        fix = "Find what killed the rank (dmesg / cgroup OOM events); if it is memory, reduce that rank's host memory use or raise the memory limit."
        how = f"--phase {phase} --fault sigkill --bad-rank {r}: os.kill(os.getpid(), signal.SIGKILL) on rank {r} {when}"
    elif fault == "hang" and phase == "init":
        cat = "dist.peer_or_store_failure"
        hits = find(lines, STORE_TO, first=False)
        dec, also = hits[0], hits[1:] + find(lines, SOCK_TO)
        coll = hits[1:]
        root = f"Rank {r} never called init_process_group within the 15 s timeout (it stalled 90 s before it), so the other ranks' store wait for the process group's keys timed out."
        fix = f"Find why rank {r} stalls before joining the process group; raise the init timeout only if the delay is legitimate."
        how = f"--phase init --fault hang --bad-rank {r} --pg-timeout 15: time.sleep(90) on rank {r} before init_process_group"
    else:   # hang after init
        cat = "dist.collective_timeout"
        hits = find(lines, TIMEOUT, first=False)
        dec, also = hits[0], hits[1:]
        coll = hits[1:] + find(lines, CLOSED, first=False)
        waiting = {"resume": "in the all-reduce of the resume step",
                   "valid": "already in epoch 2's DDP gradient all-reduce (only rank 0 validates)",
                   "save": "in the barrier after saving their shards",
                   "teardown": "in the final barrier before destroy_process_group"}[phase]
        root = f"Rank {r} stalled (sleep 90 s) {where}; the other ranks waited {waiting} past the 15 s gloo timeout and failed with 'Timed out waiting 15000ms'; the stalled rank itself printed no error."
        fix = f"Find why rank {r} stalls {where} (e.g. slow shared storage) and fix that; raise the process-group timeout only if the stall is legitimate."
        how = f"--phase {phase}{' --val-on rank0' if extra == 'rank0' else ''} --fault hang --bad-rank {r} --pg-timeout 15: time.sleep(90) on rank {r} {where}"
    if extra in ("restart", "restart-logdir"):
        root += " torchrun (--max-restarts 1) restarted the worker group once and the same fault recurred in attempt 1."
    if extra == "restart-meshfail":
        root += " torchrun (--max-restarts 1) restarted the group once, but the restarted ranks failed already in init_process_group (gloo connectFullMesh: connection refused to addresses left in the store by attempt 0)."
        fix += " (For restarts to work, give each attempt its own store namespace, e.g. PrefixStore(f'attempt{TORCHELASTIC_RESTART_COUNT}').)"
    if extra == "restart-logdir":
        ranks = sorted(glob.glob(f"{d}/ranks/*/attempt_0/{r}/stderr.log"))
        rl = open(ranks[0]).read().splitlines()
        plain = find(rl, RAISES[phase][0])[0]
        assert plain in dec
        dfile = os.path.relpath(ranks[0], f"{d}/ranks")
        notes.append(f"torchrun --log-dir logs --tee 3: the per-rank files are kept under ranks/ (attempt_0, attempt_1); console lines carry the [rankN]: prefix of --tee, the files do not.")
    for x in [dec] + also:
        assert any(x in ln for ln in lines), (cid, x)
    lab = {
        "id": cid,
        "source": f"real run: tests/corpus/generators/launchers/round26b/run_all.sh {cid} (`{meta['cmd']}`, in the job dir), torch 2.13.0 CPU, gloo",
        "category": cat, "fatal": True, "decisive_line": dec,
        "also_acceptable": list(dict.fromkeys(a for a in also if a != dec)), "initiating_rank": r,
        "collateral": list(dict.fromkeys(coll))[:6], "operator": None,
        "root_cause": root, "fix": fix, "launcher": launcher, "framework": "plain",
        "genuine": False,
        "induced_how": how + "; world size 3, tiny DDP MLP, 2 epochs x 3 steps" + ("; torchrun --max-restarts 1" if restart else ""),
        "confirmed_by": "induced", "confidence": "high", "torch_version": "2.13.0",
        "phase": phase, "notes": " ".join(notes),
    }
    if dfile:
        lab["decisive_file"] = dfile
    json.dump(lab, open(f"{d}/label.json", "w"), indent=2, ensure_ascii=False)
    print(cid, cat, r, repr(dec)[:110])


if __name__ == "__main__":
    for cid in sys.argv[1:] or sorted(CASES):
        if os.path.exists(f"{META}/{cid}.json"):
            try:
                label(cid)
            except (IndexError, AssertionError) as e:   # the log does not show what was induced: re-run it
                print("NO LABEL", cid, repr(e))
