"""Writes label.json for each round-42b case (from what was induced) and checks the decisive line is in log.txt.
The decisive line is the caught error's own line on the rank that went out of step: the exception line of the
logged/printed traceback, or (for one-line warnings / bare prints) the log line that carries the exception."""
import json, os, re, sys
STAGE = sys.argv[1] if len(sys.argv) > 1 else "/work/helpers/stage42"
UC = "user.code_error"
# id: (launcher, framework, fault, rank, report, args)
C = {
 "run42b-torchrun-skipbatch-mismatch": ("torchrun", "plain", "skip-batch", 1, "exception", "--fault skip-batch --fault-rank 1 --report exception"),
 "run42b-torchrun-skipbatch-timeout": ("torchrun", "plain", "skip-batch", 2, "warning", "--fault skip-batch --fault-rank 2 --report warning --val-every 100"),
 "run42b-torchrun4-retry-shard": ("torchrun", "plain", "retry-shard", 3, "warning-tb", "--fault retry-shard --fault-rank 3 --report warning-tb --val-every 100 (4 ranks)"),
 "run42b-torchrun-val-keyerror": ("torchrun", "plain", "val-keyerror", 1, "exception", "--fault val-keyerror --fault-rank 1 --report exception"),
 "run42b-torchrun-val-keyerror-warning": ("torchrun", "plain", "val-keyerror", 2, "warning", "--fault val-keyerror --fault-rank 2 --report warning"),
 "run42b-torchrun-nan-guard": ("torchrun", "plain", "nan-guard", 2, "print", "--fault nan-guard --fault-rank 2 --report print --val-every 100"),
 "run42b-torchrun4-skip-noreduce": ("torchrun", "plain", "skip-noreduce", 2, "error-short", "--fault skip-noreduce --fault-rank 2 --report error-short --val-every 100 (4 ranks)"),
 "run42b-spawn-skipbatch": ("mp.spawn", "plain", "skip-batch", 1, "print-tb", "--spawn 3 --fault skip-batch --fault-rank 1 --report print-tb --val-every 100"),
 "run42b-spawn-retry-shard": ("mp.spawn", "plain", "retry-shard", 2, "exception", "--spawn 3 --fault retry-shard --fault-rank 2 --report exception --val-every 100"),
 "run42b-spawn-val-keyerror": ("mp.spawn", "plain", "val-keyerror", 1, "print", "--spawn 3 --fault val-keyerror --fault-rank 1 --report print"),
 "run42b-spawn4-nan-guard": ("mp.spawn", "plain", "nan-guard", 3, "warning", "--spawn 4 --fault nan-guard --fault-rank 3 --report warning --val-every 100"),
 "run42b-accelerate-skipbatch": ("torchrun", "accelerate", "skip-batch", 1, "warning-tb", "--accelerate --fault skip-batch --fault-rank 1 --report warning-tb"),
 "run42b-accelerate-val-keyerror": ("torchrun", "accelerate", "val-keyerror", 2, "error-short", "--accelerate --fault val-keyerror --fault-rank 2 --report error-short"),
 "run42b-accelerate-retry-shard": ("torchrun", "accelerate", "retry-shard", 1, "print", "--accelerate --fault retry-shard --fault-rank 1 --report print --val-every 100"),
}
HEALTHY = {
 "run42b-torchrun-healthy-allskip": ("torchrun", "plain", "--fault all-skip --report exception",
   "Healthy: every rank hits the same corrupt sample at step 3, logs the ValueError with logger.exception and skips the batch; all ranks skip together, stay in step and finish (exit 0)."),
 "run42b-spawn-healthy-syncedskip": ("mp.spawn", "plain", "--spawn 3 --fault synced-skip --fault-rank 2 --report warning-tb",
   "Healthy: rank 2 catches a corrupt-sample ValueError and logs it as a WARNING with traceback; the ranks agree through an all_reduce of a skip flag and all skip step 3 together; all finish (exit 0)."),
 "run42b-torchrun4-healthy-outside": ("torchrun", "plain", "--fault outside --fault-rank 3 --report exception",
   "Healthy: rank 3 fails to write a metrics file (FileNotFoundError, logged with logger.exception) outside any collective and carries on in step; all 4 ranks finish (exit 0)."),
 "run42b-accelerate-healthy-syncedskip": ("torchrun", "accelerate", "--accelerate --fault synced-skip --fault-rank 1 --report print-tb",
   "Healthy: rank 1 catches a corrupt-sample ValueError and prints it with traceback.print_exc(); the ranks agree through an all_reduce of a skip flag and all skip step 3 together; all finish (exit 0)."),
}
EXC = {"skip-batch": "ValueError: corrupt sample", "skip-noreduce": "ValueError: corrupt sample",
       "retry-shard": "FileNotFoundError: [Errno 2] No such file or directory: '/data/shards",
       "val-keyerror": "KeyError: 'mae'", "nan-guard": "FloatingPointError: non-finite loss"}
PRINT = {"skip-batch": "ValueError('corrupt sample", "retry-shard": "FileNotFoundError(2, 'No such file or directory')",
         "val-keyerror": "KeyError('mae')", "nan-guard": "FloatingPointError('non-finite loss"}
WHAT = {
 "skip-batch": ("Rank {r} hit a corrupt sample (ValueError: expected 16 features, got 19), caught and logged it and skipped the batch, including that step's gradient all_reduce, so it fell one collective out of step and the other ranks' next collectives failed ({echo}).",
                "Do not skip a collective on one rank: filter/repair the corrupt sample in the data pipeline, or agree on skipping across ranks (all_reduce a skip flag) so every rank skips together."),
 "skip-noreduce": ("Rank {r} hit a corrupt sample (ValueError), caught and logged it, trained on a fallback batch but skipped the gradient all_reduce for that step, so it fell out of step and the other ranks' collectives failed ({echo}).",
                "Always run the gradient all_reduce on every rank (or skip on all ranks together); fix or filter the corrupt sample."),
 "retry-shard": ("Rank {r} could not open its data shard (FileNotFoundError), caught and logged it and kept retrying with back-off sleeps instead of joining the step's all_reduce, so the other ranks timed out waiting for it ({echo}).",
                "Make the shard available on that rank's mount (or fail fast / skip the shard on all ranks); do not retry for longer than the process-group timeout while peers wait."),
 "val-keyerror": ("Rank {r}'s metric code looked up a missing key (KeyError: 'mae'); the error was caught and logged and validation returned early on that rank, skipping the remaining validation all_reduces, so the ranks' collectives no longer matched ({echo}).",
                "Fix the metric code (compute/provide 'mae' or use the key that exists) and never leave a loop of collectives early on one rank only."),
 "nan-guard": ("Rank {r}'s loss guard raised FloatingPointError on a non-finite loss; it was caught and logged and that rank skipped backward and the gradient all_reduce for the step, so it fell out of step and the other ranks' collectives failed ({echo}).",
                "Find where the NaN comes from on that rank (data or numerics) and, if steps are skipped, agree on skipping across ranks so every rank skips together."),
}
ECHOES = [("Timed out waiting", "gloo timeouts"), ("Received data size doesn't match", "gloo size mismatch"),
          ("Connection closed by peer", "connection closed"), ("terminated with signal", "process killed"),
          ("failed (exitcode", "launcher failure"), ("Connection reset by peer", "connection reset")]

def lines_of(cid):
    return open(os.path.join(STAGE, cid, "log.txt"), encoding="utf-8", errors="replace").read().split("\n")

def write(cid, d):
    p = os.path.join(STAGE, cid)
    d["source"] = f"real run: tests/corpus/generators/launchers/round42b/run_all.sh {cid} (outofstep42.py), torch 2.13.0 CPU, gloo"
    json.dump(d, open(os.path.join(p, "label.json"), "w"), indent=1)
    lines = lines_of(cid)
    for s in ([d["decisive_line"]] if d["decisive_line"] else []):
        n = sum(s in l for l in lines)
        print(("OK  " if n else "MISSING ") + cid, repr(s[:90]), n)

for cid, (la, fw, fault, r, rep, a) in C.items():
    if not os.path.exists(os.path.join(STAGE, cid, "log.txt")):
        print("NO LOG", cid); continue
    lines = lines_of(cid)
    key = PRINT[fault] if rep == "print" else EXC[fault]
    hits = [l for l in lines if key in l and "# KeyError" not in l]
    if not hits:
        print("MISSING", cid, key); continue
    dec = hits[0].strip()
    if rep == "warning":  # one-line warning: start at the rank tag, not the timestamp
        dec = dec[dec.index("[rank"):]
    if rep == "print" and fault == "retry-shard":
        dec = dec[dec.index("reading shard failed"):]
    coll, names = [], []
    for k, nm in ECHOES:
        h = [l.strip() for l in lines if k in l]
        if h:
            coll.append(h[0][:300]); names.append(nm)
    rc, fix = WHAT[fault]
    write(cid, {"id": cid, "source": "", "category": UC, "fatal": True, "decisive_line": dec, "also_acceptable": [],
                "initiating_rank": r, "collateral": coll, "operator": None,
                "root_cause": rc.format(r=r, echo=", ".join(names) or "job failed"), "fix": fix,
                "launcher": la, "framework": fw, "genuine": False,
                "induced_how": f"outofstep42.py {a}: the error is caught on rank {r} and reported with --report {rep}; that rank carries on out of step (gloo, timeout 12 s)",
                "confirmed_by": "induced", "confidence": "high", "torch_version": "2.13.0"})
for cid, (la, fw, a, how) in HEALTHY.items():
    if not os.path.exists(os.path.join(STAGE, cid, "log.txt")):
        print("NO LOG", cid); continue
    write(cid, {"id": cid, "source": "", "category": "none", "fatal": False, "decisive_line": None, "also_acceptable": [],
                "initiating_rank": None, "collateral": [], "operator": None, "root_cause": None, "fix": None,
                "launcher": la, "framework": fw, "genuine": False, "induced_how": f"outofstep42.py {a}. {how}",
                "confirmed_by": "induced", "confidence": "high", "torch_version": "2.13.0"})
    print("healthy", cid, open(os.path.join(STAGE, cid, "exit.txt")).read().strip())
