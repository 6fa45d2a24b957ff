import json, os, re, glob, sys
OUT = "/tmp/r38c/out"
GEN = "tests/corpus/generators/launchers/round38c/run_all.sh"
def find(d, pat, files):
    """first line matching regex pat in the given files (relative to d); returns (file, line)"""
    for f in files:
        for l in open(os.path.join(d, f), errors="replace").read().splitlines():
            if re.search(pat, l):
                return f, l
    raise SystemExit(f"{d}: no match for {pat}")
def ranks(d, suffix):
    return sorted("ranks/" + x for x in os.listdir(os.path.join(d, "ranks")) if x.endswith(suffix))
KEYERR = r"\]: KeyError: 'input_ids'"
cases = {}
for d in sorted(glob.glob(OUT + "/run38c-*")):
    cid = os.path.basename(d)
    launcher = "submitit" if "submitit" in cid else "bash"
    fault = next(k for k in ("healthy", "raise", "sigkill", "hostoom", "hang") if f"-{k}" in cid)
    m = re.search(r"-r(\d+)$", cid); rank = int(m.group(1)) if m else None
    f = None
    n = int(re.search(r"(\d+)-", cid.split("-", 1)[1].replace("tde", "")).group(1)) if False else None
    lab = dict(id=cid, source=f"real run: {GEN} {cid}, torch 2.13.0 CPU, gloo, submitit 1.5.4" if launcher == "submitit" else f"real run: {GEN} {cid}, torch 2.13.0 CPU, gloo")
    also, coll, dfile = [], [], None
    if fault == "healthy":
        lab.update(category="none", fatal=False, decisive_line=None)
        rc = fx = None; how = "healthy run, 6 DDP steps, no fault"
    elif fault == "raise":
        if "bashtee" in cid: f, l = find(d, KEYERR, ["log.txt"])
        elif "bashbg" in cid: f, l = find(d, KEYERR, [f"ranks/rank{rank}.log"])
        else: f, l = find(d, KEYERR, [x for x in ranks(d, "_log.err") if x.endswith(f"_{rank}_log.err")])
        dec = l.strip()
        lab.update(category="user.code_error", fatal=True)
        coll = ["the other ranks fail in their next DDP allreduce with gloo 'Connection closed by peer'"]
        if launcher == "submitit": coll.append("the driver's job.results() re-raises task 0's collateral FailedJobError")
        rc = f"Rank {rank}'s data loader hit a record without 'input_ids' and raised KeyError('input_ids')."
        fx = "Fix the data record/loader (validate records or skip ones lacking 'input_ids')."
        how = f"FAULT=raise FAIL_RANK={rank}: load_batch deletes 'input_ids' from the record on that rank"
    elif fault in ("sigkill", "hostoom"):
        if "bashbg" in cid:
            f, l = find(d, rf"\[launch\] rank {rank} .*signal KILL", ["log.txt"]); dec = l.strip()
            also = [find(d, r"Killed\s+RANK=", ["log.txt"])[1].strip()]
        elif "bashtee" in cid:
            f, l = find(d, rf"^\[{rank}\] exit status 137", ["log.txt"]); dec = l.strip()
        else:
            f, l = find(d, rf"^task {rank}: UncompletedJobError", ["log.txt"]); dec = l.split(" with path")[0]
        lab.update(category="mem.host_oom", fatal=True)
        coll = ["the other ranks fail in their next collective with gloo 'Connection closed/reset by peer'"]
        if launcher == "submitit": coll.append("the driver's job.results() re-raises task 0's collateral FailedJobError")
        if fault == "sigkill":
            rc = f"Rank {rank} was SIGKILLed mid-run (no traceback; its log ends abruptly)."
            fx = "Find what killed the rank (kernel OOM killer / an external kill: check dmesg) and give it more memory or stop the killer."
            how = f"FAULT=sigkill FAIL_RANK={rank}: os.kill(os.getpid(), SIGKILL) at the fault step"
        else:
            rc = f"Rank {rank} exceeded its 1.5 GiB memory cgroup and was SIGKILLed by the kernel OOM killer (its log shows a growing prefetch cache)."
            fx = "Bound the rank's host-memory growth (cap the prefetch cache) or raise the memory limit."
            how = f"FAULT=hostoom FAIL_RANK={rank}: that rank joins cgroup v1 memory r38c_oom (limit 1.5 GiB, memsw too) and allocates 256 MiB blocks until the kernel OOM-kills it (dmesg: 'Memory cgroup out of memory: Killed process')"
    elif fault == "hang":
        if "bashtee" in cid: f, l = find(d, r"Timed out waiting 15000ms", ["log.txt"])
        elif "bashbg" in cid: f, l = find(d, r"Timed out waiting 15000ms", ranks(d, ".log"))
        else: f, l = find(d, r"Timed out waiting 15000ms", ["log.txt"])
        dec = l.strip()
        if f.startswith("ranks/"):
            also = [x.strip() for g in ranks(d, ".log") if g != f for x in open(os.path.join(d, g)).read().splitlines() if "Timed out waiting 15000ms" in x]
        else:
            also = [x.strip() for x in open(os.path.join(d, f)).read().splitlines() if "Timed out waiting 15000ms" in x and x.strip() != dec]
        lab.update(category="dist.collective_timeout", fatal=True)
        coll = ["the hung rank fails later with gloo 'Connection closed by peer' once it wakes up", "the other waiting rank reports its own gloo timeout"]
        rc = f"Rank {rank} stalled (slept 40 s) before its forward, so the other ranks' DDP allreduce hit the 15 s gloo timeout."
        fx = f"Find why rank {rank} stalls (it logs nothing past its last step) and remove the stall, or raise the process-group timeout if the work is legitimately slow."
        how = f"FAULT=hang FAIL_RANK={rank} HANG_S=40 PG_TIMEOUT=15: time.sleep before the forward at the fault step"
    if f and f.startswith("ranks/"): dfile = f[len("ranks/"):]
    if fault != "healthy":
        assert any(dec in x for x in open(os.path.join(d, f), errors="replace").read().splitlines()), (cid, dec)
        lab["decisive_line"] = dec
    lab.update(also_acceptable=also, initiating_rank=rank, collateral=coll, operator=None, root_cause=rc if fault != "healthy" else None,
               fix=fx if fault != "healthy" else None,
               launcher={"submitit": "submitit", "bash": "bash"}[launcher], framework="plain", genuine=False,
               induced_how=how + {"submitit": " (submitit LocalExecutor, " + ("helpers.TorchDistributedEnvironment + env://" if "tde" in cid else "JobEnvironment + tcp://") + ")",
                                  "bash": " (homegrown bash launcher: " + ("background ranks + wait, logs/rank$N.log" if "bashbg" in cid else "background ranks piped through sed \"s/^/[N] /\" | tee train.log") + ")"}[launcher],
               confirmed_by="induced", confidence="high")
    if dfile: lab["decisive_file"] = dfile
    json.dump(lab, open(os.path.join(d, "label.json"), "w"), indent=1, ensure_ascii=False)
    print(cid, lab["category"], rank, (dfile or "log.txt"), "|", (lab["decisive_line"] or "")[:110])
