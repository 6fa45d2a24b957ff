#!/usr/bin/env python3
"""Write label.json for a round-35b case: mk_label.py <case_dir> <id> <launcher_exit_code>.
Healthy cases (category none): checks exit code 0 and 'training complete' in the log.
Failing cases: checks the expected non-zero exit code and that decisive_line (and also_acceptable) is a substring of
a log line (like grep -F)."""
import json, os, sys

d, cid, rc = sys.argv[1], sys.argv[2], int(sys.argv[3])
C = {}
exec(open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "labels35b.py")).read())
if cid not in C:
    print(f"   (no label entry for {cid} yet)"); sys.exit(0)
e = C[cid]
lines = open(os.path.join(d, "log.txt"), errors="replace").read().splitlines()
if "worker" in e:   # the pid of the DataLoader worker that failed, from "worker W of rank R started (pid N)"
    import re
    src = lines
    if e.get("file"):
        rd = os.path.dirname(os.path.join(d, "ranks", e["file"]))
        src = lines + [l for f in sorted(os.listdir(rd)) for l in open(os.path.join(rd, f), errors="replace").read().splitlines()]
    pat = re.compile(rf"worker {e['worker']} of rank {e['rank']} started \(pid (\d+)\)")
    pids = [m.group(1) for l in src for m in [pat.search(l)] if m]
    wpid = pids[-1] if pids else "?"
    for k in ("decisive", "root_cause"):
        e[k] = e[k].replace("{wpid}", wpid)
    e["also"] = [s.replace("{wpid}", wpid) for s in e.get("also", [])]
    e["collateral"] = [s.replace("{wpid}", wpid) for s in e["collateral"]]
launcher = e["launcher"]
healthy = e["category"] == "none"
label = {
    "id": cid,
    "source": (f"real run: tests/corpus/generators/launchers/round35b/run_all.sh {e.get('run_as', cid)}, torch 2.13.0 CPU, gloo"
               + ("; observed once, not induced" if e.get("genuine") else "")),
    "category": e["category"], "fatal": e.get("fatal", not healthy), "decisive_line": e.get("decisive"),
    "also_acceptable": e.get("also", []), "initiating_rank": e.get("rank"), "collateral": e["collateral"],
    "operator": None, "root_cause": e["root_cause"], "fix": e["fix"], "launcher": launcher, "framework": e.get("framework", "plain"),
    "torch_version": "2.13.0", "genuine": e.get("genuine", False), "induced_how": f"{e['how']}; launcher exit code {rc}",
    "confirmed_by": "observed" if e.get("genuine") else "induced", "confidence": "high",
}
if e.get("file"):
    label["decisive_file"] = e["file"]
if e.get("file"):  # the decisive line must also be in that per-rank file
    fl = open(os.path.join(d, "ranks", e["file"]), errors="replace").read().splitlines()
    n = sum(label["decisive_line"] in l for l in fl); print(f"   in ranks/{e['file']}: {n}"); ok_file = n > 0
else:
    ok_file = True
if healthy:
    ok = rc == 0 and any("training complete" in l for l in lines) and label["decisive_line"] is None
else:
    ok = rc == e.get("rc", rc) and (rc != 0 or not label["fatal"]) and label["decisive_line"] is not None
if e.get("file"):
    lines = lines + fl   # ranks/ tree case: the decisive line is in the per-rank file
for s in ([label["decisive_line"]] if label["decisive_line"] else []) + label["also_acceptable"]:
    n = sum(s in l for l in lines)
    print(f"   grep -cF {s[:80]!r}: {n}")
    ok &= n > 0
ok &= ok_file
print(f"   check {'OK' if ok else 'FAILED'}")
if not ok:
    label["confidence"] = "low"; print(f"   !!! {cid}: check failed (rc {rc})", file=sys.stderr)
json.dump(label, open(f"{d}/label.json", "w"), indent=2)
open(f"{d}/label.json", "a").write("\n")
