"""Turns one raw multi-node run (RAW = the folder multinode.sh wrote) into a case folder DEST/<id>/ranks/...
plus label.json.  Paths are rewritten (venv -> /opt/venv, work dir -> /home/user/job).  The decisive line is
located in the logs by what was induced (it must exist; otherwise this script fails and the run is redone).
usage: make_case.py ID SCENARIO FAULT_RANK RAW DEST VENV WORK [detail]
"""
import json, os, re, shutil, sys

cid, scen, frank, raw, dest, venv, work = sys.argv[1:8]
detail = len(sys.argv) > 8 and sys.argv[8] == "detail"
frank = int(frank)
out = os.path.join(dest, cid)
shutil.rmtree(out, ignore_errors=True)
ranks = os.path.join(out, "ranks")

def rw(s):
    return s.replace(venv, "/opt/venv").replace(work, "/home/user/job")

files = {}
for root, _, fs in os.walk(raw):
    for f in fs:
        if f == "exits.txt":
            continue
        src = os.path.join(root, f)
        rel = rw(os.path.relpath(src, raw))
        dst = os.path.join(ranks, rel)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        txt = rw(open(src, encoding="utf-8", errors="surrogateescape").read())
        open(dst, "w", encoding="utf-8", errors="surrogateescape").write(txt)
        files[rel] = txt.splitlines()

def lines(pred_file, needle):
    hits = []
    for rel in sorted(files):
        if pred_file(rel):
            for ln in files[rel]:
                if needle in ln:
                    hits.append((rel, ln))
    return hits

def rank_of(rel):
    """global rank of a per-rank log file (from its own log lines)."""
    d = os.path.dirname(rel)
    for f in ("stdout.log", "stderr.log"):
        for ln in files.get(os.path.join(d, f), []):
            m = re.search(r"\[rank(\d+)[\] ]", ln)
            if m:
                return int(m.group(1))
    return None

per_rank = lambda rel: rel.endswith("stderr.log") or rel.endswith("stdout.log")
console = lambda rel: rel.endswith(".console.log")
cut = lambda ln: ln.strip()[:180]
also = []
common = {"launcher": "torchrun", "framework": "plain", "genuine": False, "confirmed_by": "induced",
          "confidence": "high", "operator": None}
if scen == "none":
    lab = dict(category="none", fatal=False, decisive_line=None, initiating_rank=None, collateral=[],
               root_cause="Healthy multi-node run: every rank finished training.", fix="Nothing to fix.")
    dfile = None
else:
    if scen == "raise":
        hits = lines(per_rank, "]: KeyError: 'labels'")
        cat, rc, fix = ("user.code_error", f"Global rank {frank} raised KeyError: 'labels' in its data loading; the peers then lost their connection.",
                        "Fix the data loading code so the batch has a 'labels' key.")
    elif scen == "record":
        hits = lines(lambda r: r.endswith("stderr.log"), "ValueError: corrupt sample 1733")
        cat, rc, fix = ("user.code_error", f"Global rank {frank} raised ValueError on a corrupt sample (recorded in its error.json); the peers then lost their connection.",
                        "Fix or skip the corrupt sample in the data shard.")
    elif scen == "sigkill":
        hits = lines(console, "failed (exitcode: -9)")
        cat, rc, fix = ("mem.host_oom", f"Global rank {frank} was SIGKILLed (exit -9, no traceback), as the OOM killer does; its peers then failed.",
                        "Find what killed the process (host memory / OOM killer) and reduce its memory use or raise the limit.")
    elif scen == "hang":
        hits = [(r, l) for r, l in lines(per_rank, "imed out") if rank_of(r) != frank]
        cat, rc, fix = ("dist.collective_timeout", f"Global rank {frank} stalled before the gradient all_reduce past the process-group timeout, so the other ranks timed out waiting for it.",
                        "Find why that rank stalls (its work before the collective) or raise the timeout if the delay is legitimate.")
    elif scen == "mismatch":
        needle = "Detected mismatch between collectives" if detail else "Received data size doesn't match expected size"
        hits = lines(per_rank, needle)
        if detail:  # prefer the line that shows the odd rank's own shape
            hits.sort(key=lambda h: rank_of(h[0]) != frank)
        cat, rc, fix = ("dist.collective_mismatch", f"Global rank {frank} all_reduced a tensor of another size (33 vs 32 elements) than the other ranks.",
                        "Make every rank call the same collectives with tensors of the same shape.")
    elif scen == "compile":
        hits = [(r, l) for r, l in lines(lambda r: r.endswith("stderr.log"), "nonexistent") if rank_of(r) == frank
                and ("Error" in l or "rror:" in l)]
        cat, rc, fix = ("compile.cpp_toolchain_missing", f"On global rank {frank} CXX points at a missing compiler (/nonexistent/g++), so inductor's C++ codegen failed in torch.compile.",
                        "Point CXX at an installed C++ compiler (or install g++) on that node.")
    if not hits:
        sys.exit(f"{cid}: decisive line not found")
    dfile, dline = hits[0][0], cut(hits[0][1])
    also = sorted({cut(l) for _, l in hits[1:4] if cut(l) != dline})
    lab = dict(category=cat, fatal=True, decisive_line=dline, initiating_rank=frank,
               collateral=["other ranks: gloo connection closed / reset or SIGTERM by their agent"],
               root_cause=rc, fix=fix)
    if scen == "hang":
        lab["collateral"] = ["other ranks: gloo timeout in all_reduce"]
    assert any(dline in l for l in files[dfile])
label = {"id": cid, "source": f"real run: tests/corpus/generators/launchers/round101a/run_all.sh {cid}, torch 2.13.0 CPU, gloo, multi-node torchrun on localhost",
         **lab, "also_acceptable": also, **common,
         "induced_how": os.environ.get("INDUCED", scen)}
if dfile:
    label["decisive_file"] = dfile
json.dump(label, open(os.path.join(out, "label.json"), "w"), indent=1, ensure_ascii=False)
print(cid, label["category"], label["initiating_rank"], dfile, repr(label["decisive_line"]))
