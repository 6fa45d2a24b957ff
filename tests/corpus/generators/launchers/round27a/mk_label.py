#!/usr/bin/env python3
"""Write label.json for a round-27a case: mk_label.py <case_dir> <id> <launcher_exit_code>.
Entries come from labels27a.py (C[id] = dict(category, rank, decisive, also, collateral, root_cause, fix, how)).
Checks: healthy cases exit 0 and print 'training complete'; failures exit non-zero; every decisive/also line is a
substring of one line of log.txt (or of ranks/<decisive_file> when given)."""
import json, os, sys

d, cid, rc = sys.argv[1], sys.argv[2], int(sys.argv[3])
C = {}
exec(open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "labels27a.py")).read())
if cid not in C:
    print(f"   (no label entry for {cid} yet)"); sys.exit(0)
e = C[cid]
kind = cid.split("-")[1]
fatal = e["category"] != "none"
label = {
    "id": cid,
    "source": f"real run: tests/corpus/generators/launchers/round27a/run_all.sh {cid}, torch 2.13.0 CPU, gloo",
    "category": e["category"], "fatal": fatal, "decisive_line": e.get("decisive"), "also_acceptable": e.get("also", []),
    "initiating_rank": e.get("rank"), "collateral": e.get("collateral", []), "operator": None,
    "root_cause": e["root_cause"], "fix": e["fix"], "launcher": {"torchrun": "torchrun", "accelerate": "accelerate"}[kind],
    "framework": "hf-trainer", "torch_version": "2.13.0",
    "genuine": False, "induced_how": f"{e['how']}; launcher exit code {rc}", "confirmed_by": "induced",
    "confidence": "high",
}
label.update(e.get("extra", {}))
if e.get("decisive_file"):
    label["decisive_file"] = e["decisive_file"]
log = open(os.path.join(d, "log.txt"), errors="replace").read()
ok = (rc == 0 and "training complete" in log) if not fatal else rc != 0
for s in ([label["decisive_line"]] if label["decisive_line"] else []) + label["also_acceptable"]:
    n = sum(s in l for l in log.splitlines())
    if e.get("decisive_file") and s == label["decisive_line"]:
        n = sum(s in l for l in open(os.path.join(d, "ranks", e["decisive_file"]), errors="replace").read().splitlines())
    print(f"   grep -cF {s[:70]!r}: {n}")
    ok &= n > 0
if not ok:
    label["confidence"] = "low"; print(f"   !!! {cid}: check failed (rc {rc})", file=sys.stderr)
json.dump(label, open(f"{d}/label.json", "w"), indent=2)
open(f"{d}/label.json", "a").write("\n")
