"""Round 51a: write label.json for each case from what was induced (table below) and the log.

Usage: python labels.py POOL.  The decisive line is found in log.txt by a pattern and printed for review;
the script refuses to write a label whose decisive line is not in the log.
"""
import json
import os
import re
import sys

POOL = sys.argv[1]
SRC = "tests/corpus/generators/launchers/round51a/run_all.sh (case {id}), torch 2.13.0 CPU, gloo"

# id: (launcher, scenario, fault rank, world size, pid<->rank line at start-up?, confidence)
CASES = {
    "run-r51a-torchrun-sigkill-pidmap": ("torchrun", "sigkill", 2, 4, True, "high"),
    "run-r51a-torchrun-oom-nomap": ("torchrun", "oom", 3, 5, False, "high"),
    "run-r51a-torchrun-raise-nomap": ("torchrun", "raise", 1, 4, False, "high"),
    "run-r51a-torchrun-hang-pidmap": ("torchrun", "hang", 2, 4, True, "high"),
    "run-r51a-torchrun-healthy-noisy": ("torchrun", "none", None, 4, True, "high"),
    "run-r51a-spawn-sigkill-nomap": ("mp.spawn", "sigkill", 3, 4, False, "high"),
    "run-r51a-spawn-raise-pidmap": ("mp.spawn", "raise", 4, 5, True, "high"),
    "run-r51a-spawn-hang-nomap": ("mp.spawn", "hang", 1, 4, False, "medium"),
    "run-r51a-spawn-oom-pidmap": ("mp.spawn", "oom", 2, 4, True, "high"),
    "run-r51a-mpirun-tag-sigkill-nomap": ("mpirun", "sigkill", 1, 4, False, "high"),
    "run-r51a-mpirun-tag-oom-pidmap": ("mpirun", "oom", 4, 6, True, "high"),
    "run-r51a-mpirun-sigkill-pidmap": ("mpirun", "sigkill", 3, 4, True, "high"),
    "run-r51a-mpirun-raise-nomap": ("mpirun", "raise", 2, 5, False, "high"),
    "run-r51a-mpirun-hang-pidmap": ("mpirun", "hang", 1, 4, True, "high"),
    "run-r51a-mpirun-healthy-noisy": ("mpirun", "none", None, 4, False, "high"),
    "run-r51a-shell-sigkill-pidmap": ("shell", "sigkill", 2, 4, True, "high"),
    "run-r51a-shell-sigkill-nomap": ("shell", "sigkill", 3, 5, False, "medium"),
    "run-r51a-shell-oom-pidmap": ("shell", "oom", 1, 4, True, "high"),
    "run-r51a-shell-raise-nomap": ("shell", "raise", 3, 4, False, "high"),
    "run-r51a-shell-hang-pidmap": ("shell", "hang", 4, 6, True, "high"),
    "run-r51a-shell-healthy-noisy": ("shell", "none", None, 5, True, "high"),
}
OVERRIDES = json.load(open(os.path.join(os.path.dirname(__file__), "overrides.json"))) \
    if os.path.exists(os.path.join(os.path.dirname(__file__), "overrides.json")) else {}

KILL_PAT = {
    "torchrun": r"failed \(exitcode: -9\) local_rank: \d+ \(pid: \d+\).*",
    "mp.spawn": r"process \d+ terminated with signal SIGKILL",
    "mpirun": r"mpirun noticed that process rank \d+ with PID \d+ on node \S+ exited on signal 9 \(Killed\)\.",
    "shell": r"line \d+: +\d+ Killed.*",
}
INDUCED = {
    "sigkill": "rank {r} SIGKILLs itself (os.kill(os.getpid(), 9)) while loading batch 3; no traceback",
    "oom": "rank {r} moves itself into a 1 GiB cgroup-v1 memory cgroup (memsw too) at start-up, then allocates and "
           "touches 128 MiB tensors while loading batch 3 until the kernel memcg OOM killer SIGKILLs it "
           "(dmesg: 'Memory cgroup out of memory: Killed process')",
    "raise": "rank {r} raises KeyError: 'label' while loading batch 3 (a record without a label)",
    "hang": "rank {r} sleeps 30-40 s before the all_reduce of step 3; the process-group timeout is 15 s",
    "none": "no fault; noisy but harmless warnings (num_workers warning, a recovered shard-read retry)",
}

COLLATERAL = {
    "sigkill": ["gloo 'Connection reset by peer' / 'Connection closed by peer' RuntimeErrors on the surviving ranks",
                "the launcher terminates the remaining ranks (or they exit on the broken connection)"],
    "raise": ["gloo 'Connection closed by peer' RuntimeErrors on the other ranks",
              "the launcher terminates the remaining ranks"],
    "hang": ["gloo 'Timed out waiting 15000ms' RuntimeErrors on the waiting ranks",
             "the hung rank prints nothing and is terminated by the launcher (or later fails on the closed connection)"],
}
COLLATERAL["oom"] = COLLATERAL["sigkill"]


def first(lines, pat):
    for ln in lines:
        m = re.search(pat, ln)
        if m:
            return m.group(0).rstrip()
    return None


for cid, (launcher, scen, r, world, pidmap, conf) in CASES.items():
    path = os.path.join(POOL, cid, "log.txt")
    if not os.path.exists(path):
        print("MISSING", cid); continue
    lines = open(path, errors="replace").read().splitlines()
    ov = OVERRIDES.get(cid, {})
    conf = ov.get("confidence", conf)
    lab = {"id": cid, "source": "real run: " + SRC.format(id=cid)}
    if scen == "none":
        lab.update(category="none", fatal=False, decisive_line=None, also_acceptable=[], initiating_rank=None,
                   collateral=[], operator=None, root_cause="Healthy run: training finished on every rank; the "
                   "warnings are harmless.", fix="Nothing to fix.")
    else:
        if scen in ("sigkill", "oom"):
            cat, dec = "mem.host_oom", first(lines, KILL_PAT[launcher])
        elif scen == "raise":
            cat, dec = "user.code_error", first(lines, r"^(\S+ ?)?KeyError: 'label'$")
        else:
            cat, dec = "dist.collective_timeout", first(lines, r"^.*Timed out waiting \d+ms.*$")
        dec = ov.get("decisive_line", dec)
        assert dec and any(dec in ln for ln in lines), (cid, dec)
        lab.update(category=cat, fatal=True, decisive_line=dec, also_acceptable=ov.get("also_acceptable", []),
                   initiating_rank=r, collateral=COLLATERAL[scen], operator=None,
                   root_cause=ov["root_cause"], fix=ov["fix"])
    lab.update(launcher=launcher, framework="plain", genuine=False, induced_how=INDUCED[scen].format(r=r),
               confirmed_by="induced", confidence=conf)
    if pidmap is False and scen != "none":
        lab["note"] = "the job logs only pids; no start-up line pairs a pid with a rank"
    json.dump(lab, open(os.path.join(POOL, cid, "label.json"), "w"), indent=1, ensure_ascii=False)
    print(f"{cid:40s} {lab['category']:26s} r={r} {conf:6s} | {lab['decisive_line']}")
