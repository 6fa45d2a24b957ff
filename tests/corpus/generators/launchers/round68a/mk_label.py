#!/usr/bin/env python3
"""Write label.json for a round-68a case: mk_label.py <case_dir> <id> <launcher_exit_code>.
Entries come from labels68a.py (dict C). Healthy cases (category none): checks exit code 0 and 'training complete'.
Failing cases: checks a non-zero exit code and that decisive_line and also_acceptable are substrings of a line of
log.txt (like grep -F) and, with "file", of that per-rank file under ranks/."""
import json, os, sys

d, cid, rc = sys.argv[1], sys.argv[2], int(sys.argv[3])
C = {}
exec(open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "labels68a.py")).read())
if cid not in C:
    print(f"   (no label entry for {cid} yet)"); sys.exit(0)
e = C[cid]
healthy = e["category"] == "none"
label = {
    "id": cid,
    "source": f"real run: tests/corpus/generators/launchers/round68a/run_all.sh OUT {cid} (ddp68a.py {e['args']}), torch 2.13.0 CPU, gloo",
    "category": e["category"], "fatal": not healthy, "decisive_line": e.get("decisive"),
    "also_acceptable": e.get("also", []), "initiating_rank": e.get("rank"), "collateral": e.get("collateral", []),
    "operator": None, "root_cause": e["root_cause"], "fix": e["fix"], "launcher": "torchrun", "framework": "plain",
    "torch_version": "2.13.0", "genuine": False, "induced_how": f"{e['how']}; launcher exit code {rc}",
    "confirmed_by": "induced", "confidence": e.get("confidence", "high"),
}
if e.get("file"):
    label["decisive_file"] = e["file"]
if e.get("notes"):
    label["notes"] = e["notes"]
lines = open(os.path.join(d, "log.txt"), errors="replace").read().splitlines()
ok = True
if healthy:
    ok = rc == 0 and label["decisive_line"] is None and label["initiating_rank"] is None
    if e.get("file") is None and not any("training complete" in l for l in lines):
        # --redirects 3: the training output is only in the per-rank files
        ok &= any("training complete" in open(os.path.join(r, f), errors="replace").read()
                  for r, _, fs in os.walk(os.path.join(d, "ranks")) for f in fs)
else:
    ok = rc != 0 and label["decisive_line"] is not None
    for s in [label["decisive_line"]] + label["also_acceptable"]:
        if e.get("file") and s == label["decisive_line"]:
            fl = open(os.path.join(d, "ranks", e["file"]), errors="replace").read().splitlines()
            n = sum(s in l for l in fl); print(f"   in ranks/{e['file']}: {n}"); ok &= n > 0
            continue
        n = sum(s in l for l in lines)
        if n == 0 and os.path.isdir(os.path.join(d, "ranks")):  # also-acceptable lines may be in per-rank files
            n = sum(s in l for r, _, fs in os.walk(os.path.join(d, "ranks")) for f in fs
                    for l in open(os.path.join(r, f), errors="replace"))
        print(f"   grep -cF {s[:80]!r}: {n}")
        ok &= n > 0
json.dump(label, open(os.path.join(d, "label.json"), "w"), indent=2, ensure_ascii=False)
print("   label OK" if ok else "   LABEL CHECK FAILED")
if not ok:
    sys.exit(1)
