#!/usr/bin/env python3
"""Write label.json for a round-26a case: mk_label.py <case_dir> <id> <launcher_exit_code>.
Healthy cases: checks exit code 0 and 'training complete' in the log. Warning cases: also checks decisive_line."""
import json, os, sys

d, cid, rc = sys.argv[1], sys.argv[2], int(sys.argv[3])
C = {}
exec(open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "labels26a.py")).read())
if cid not in C:
    print(f"   (no label entry for {cid} yet)"); sys.exit(0)
e = C[cid]
launcher = {"torchrun": "torchrun", "spawn": "mp.spawn", "lightning": "lightning-trainer",
            "accelerate": "accelerate-launch"}[cid.split("-")[1]]
fw = {"torchrun": "plain", "spawn": "plain", "lightning": "lightning", "accelerate": "hf-accelerate"}[cid.split("-")[1]]
label = {
    "id": cid,
    "source": f"real run: tests/corpus/generators/launchers/round26a/run_all.sh {cid}, torch 2.13.0 CPU, gloo",
    "category": e["category"], "fatal": False, "decisive_line": e.get("decisive"), "also_acceptable": e.get("also", []),
    "initiating_rank": e.get("rank"), "collateral": e["collateral"], "operator": None,
    "root_cause": e["root_cause"], "fix": e["fix"], "launcher": launcher, "framework": fw, "torch_version": "2.13.0",
    "genuine": False, "induced_how": f"{e['how']}; launcher exit code {rc}", "confirmed_by": "induced",
    "confidence": "high",
}
log = open(os.path.join(d, "log.txt")).read()
ok = rc == 0 and "training complete" in log
for s in ([label["decisive_line"]] if label["decisive_line"] else []) + label["also_acceptable"]:
    n = sum(s in l for l in log.splitlines())
    print(f"   grep -cF {s[:70]!r}: {n}")
    ok &= n > 0
if not ok:
    label["confidence"] = "low"; print(f"   !!! {cid}: check failed (rc {rc})", file=sys.stderr)
json.dump(label, open(f"{d}/label.json", "w"), indent=2)
open(f"{d}/label.json", "a").write("\n")
