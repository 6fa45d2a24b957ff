# writes label.json for a case; checks decisive_line is a substring of a line in log.txt
import json, sys, os
OUT = "/work/helpers/stage46"
def L(id, launcher, args, category, decisive, rank, root, fix, induced, collateral=(), also=(), notes=None, fatal=True, conf="high"):
    d = os.path.join(OUT, id)
    lines = open(os.path.join(d, "log.txt"), errors="replace").read().splitlines()
    for s in [x for x in [decisive, *also] if x]:
        assert any(s in l for l in lines), (id, s)
    lab = {"id": id,
           "source": f"real run: tests/corpus/generators/launchers/round46b/run_all.sh {id} ({args}), torch 2.13.0 CPU, gloo",
           "category": category, "fatal": fatal, "decisive_line": decisive, "also_acceptable": list(also),
           "initiating_rank": rank, "collateral": list(collateral), "operator": None,
           "root_cause": root, "fix": fix, "launcher": launcher, "framework": "plain",
           "genuine": False, "induced_how": induced, "confirmed_by": "induced", "confidence": conf}
    if notes: lab["notes"] = notes
    json.dump(lab, open(os.path.join(d, "label.json"), "w"), indent=1)
    print("ok", id)
