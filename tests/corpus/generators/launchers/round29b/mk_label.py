#!/usr/bin/env python3
"""Write label.json for a round-29b case: mk_label.py <case_dir> <id> <launcher_exit_code>.
Entries come from labels29b.py (C[id] = dict(category, rank, decisive | decisive_re, also | also_re, collateral,
root_cause, fix, how, framework)). A *_re entry is a regex: the label gets the text it matches in the log (for pids).
Checks: healthy cases exit 0 and print 'training complete'; failures exit non-zero; every decisive/also line is a
substring of one line of log.txt (or of ranks/<decisive_file> when given)."""
import json, os, re, sys

d, cid, rc = sys.argv[1], sys.argv[2], int(sys.argv[3])
C = {}
exec(open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "labels29b.py")).read())
if cid not in C:
    print(f"   (no label entry for {cid} yet)"); sys.exit(0)
e = C[cid]
if e.get("decisive_file"):   # a glob relative to ranks/ (torchrun's run-id folder name is random)
    import glob
    hits = sorted(glob.glob(os.path.join(d, "ranks", e["decisive_file"])))
    e["decisive_file"] = os.path.relpath(hits[0], os.path.join(d, "ranks")) if hits else e["decisive_file"]
log = open(os.path.join(d, "log.txt"), errors="replace").read()
dtext = open(os.path.join(d, "ranks", e["decisive_file"]), errors="replace").read() if e.get("decisive_file") else log


def find(rx, text):
    m = re.search(rx, text)
    return m.group(0) if m else f"<no match for {rx}>"


decisive = e.get("decisive") or (find(e["decisive_re"], dtext) if e.get("decisive_re") else None)
also = list(e.get("also", [])) + [find(rx, log) for rx in e.get("also_re", [])]
rank = e.get("rank")
if e.get("rank_re"):   # rank read from the log (a genuine case where the failing rank varies between runs)
    m = re.search(e["rank_re"], log)
    rank = int(m.group(1)) if m else None
if e.get("rank_unique_re") and len(re.findall(e["rank_unique_re"], log)) > 1:
    rank = None   # several ranks show the failure (e.g. two ranks aborted at exit): no single initiating rank
fatal = e["category"] != "none"
label = {
    "id": cid,
    "source": f"real run: tests/corpus/generators/launchers/round29b/run_all.sh {cid}, torch 2.13.0 CPU, gloo",
    "category": e["category"], "fatal": fatal, "decisive_line": decisive, "also_acceptable": also,
    "initiating_rank": rank, "collateral": e.get("collateral", []), "operator": e.get("operator"),
    "root_cause": e["root_cause"], "fix": e["fix"], "launcher": e.get("launcher") or ("torch.distributed.launch" if cid.startswith("run29b-launch") else "elastic" if cid.startswith("run29b-elastic") else "torchrun"),
    "framework": e.get("framework", "plain"), "torch_version": "2.13.0",
    "genuine": e.get("genuine", False), "induced_how": f"{e['how']}; launcher exit code {rc}",
    "confirmed_by": e.get("confirmed_by", "induced"), "confidence": e.get("confidence", "high"),
}
if e.get("notes"):
    label["notes"] = e["notes"]
if e.get("decisive_file"):
    label["decisive_file"] = e["decisive_file"]
ok = (rc == 0 and "training complete" in log) if not fatal else rc != 0
for s in ([decisive] if decisive else []) + also:
    text = dtext if (e.get("decisive_file") and s == decisive) else log
    n = sum(s in l for l in text.splitlines())
    print(f"   grep -cF {s[:90]!r}: {n}")
    ok &= n > 0
if not ok:
    label["confidence"] = "low"; print(f"   !!! {cid}: check failed (rc {rc})", file=sys.stderr)
json.dump(label, open(f"{d}/label.json", "w"), indent=2)
open(f"{d}/label.json", "a").write("\n")
