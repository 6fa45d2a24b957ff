#!/usr/bin/env python3
"""Write label.json for a round-28b case: mk_label.py <case_dir> <id> <exit_code>.
Healthy cases (category none): checks exit code 0 and 'training complete' (or pytest 'passed') in the log.
Failing cases: checks a non-zero exit code and that decisive_line (and each also_acceptable) is in one log line."""
import json, os, sys

d, cid, rc = sys.argv[1], sys.argv[2], int(sys.argv[3])
C = {}
exec(open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "labels28b.py")).read())
if cid not in C:
    print(f"   (no label entry for {cid} yet)"); sys.exit(0)
e = C[cid]
healthy = e["category"] == "none"
label = {
    "id": cid,
    "source": f"real run: tests/corpus/generators/launchers/round28b/run_all.sh {cid}, torch 2.13.0 CPU",
    "category": e["category"], "fatal": not healthy, "decisive_line": e.get("decisive"),
    "also_acceptable": e.get("also", []), "initiating_rank": e.get("rank"), "collateral": e.get("collateral", []),
    "operator": None, "root_cause": e["root_cause"], "fix": e["fix"], "launcher": e["launcher"],
    "framework": e.get("framework", "plain"), "renderer": e["renderer"], "torch_version": "2.13.0", "genuine": False,
    "induced_how": f"{e['how']}; exit code {rc}", "confirmed_by": "induced", "confidence": "high",
}
text = open(os.path.join(d, "log.txt"), encoding="utf-8", errors="replace").read()
lines = text.splitlines()
if healthy:
    ok = rc == 0 and label["decisive_line"] is None and ("training complete" in text or " passed" in text)
else:
    ok = rc != 0 and label["decisive_line"] is not None
for s in ([label["decisive_line"]] if label["decisive_line"] else []) + label["also_acceptable"]:
    n = sum(s in l for l in lines)
    print(f"   lines containing {s[:90]!r}: {n}")
    ok &= n > 0
print(f"   check {'OK' if ok else 'FAILED'}")
if not ok:
    label["confidence"] = "low"; print(f"   !!! {cid}: check failed (rc {rc})", file=sys.stderr)
json.dump(label, open(f"{d}/label.json", "w"), indent=2)
open(f"{d}/label.json", "a").write("\n")
