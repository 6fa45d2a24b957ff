#!/usr/bin/env python3
"""Write label.json for a round-24a case: mk_label.py <case_dir> <id> <launcher_exit_code>.
Checks that decisive_line (and also_acceptable) occur in a line of log.txt."""
import json, os, sys

d, cid, rc = sys.argv[1], sys.argv[2], int(sys.argv[3])
T = "tests/corpus/generators/launchers/round24a/run_all.sh"
# id: (category, decisive_line, initiating_rank, collateral, root_cause, fix, induced_how[, extra])
C = {}
exec(open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "labels24a.py")).read())
if cid not in C:
    print(f"   (no label entry for {cid} yet)"); sys.exit(0)
e = C[cid]
cat, dec, rank, coll, rc_s, fix, how = e[:7]
extra = e[7] if len(e) > 7 else {}
fw = {"ignite": "pytorch-ignite", "fabric": "lightning-fabric", "accelerate": "hf-accelerate"}[cid.split("-")[1]]
launcher = e[7].get("launcher") if len(e) > 7 else None
launcher = launcher or {"ignite": "ignite-parallel", "fabric": "fabric-launch", "accelerate": "accelerate-notebook_launcher"}[cid.split("-")[1]]
label = {
    "id": cid,
    "source": f"real run: {T} {cid}, torch 2.13.0 CPU, gloo",
    "category": cat, "fatal": cat != "none", "decisive_line": dec, "also_acceptable": extra.get("also_acceptable", []),
    "initiating_rank": rank, "collateral": coll, "operator": None,
    "root_cause": rc_s, "fix": fix, "launcher": launcher, "framework": fw, "torch_version": "2.13.0",
    "genuine": False, "induced_how": f"{how}; launcher exit code {rc}", "confirmed_by": "induced", "confidence": "high",
}
ok = True
if cat == "none":
    ok = rc == 0
else:
    log = open(os.path.join(d, "log.txt")).read()
    for s in [dec] + label["also_acceptable"]:
        n = sum(s in l for l in log.splitlines())
        print(f"   grep -cF {s[:70]!r}: {n}")
        ok &= n > 0
    ok &= rc != 0
if not ok:
    label["confidence"] = "low"; print(f"   !!! {cid}: check failed (rc {rc})", file=sys.stderr)
json.dump(label, open(f"{d}/label.json", "w"), indent=2)
open(f"{d}/label.json", "a").write("\n")
