"""labels.py [OUT] - write label.json for every round-41a case folder in OUT (default /work/helpers/stage41).
The decisive line is the first log line matching the case's pattern (checked to be a substring of a log line)."""
import json, os, re, sys

OUT = sys.argv[1] if len(sys.argv) > 1 else "/work/helpers/stage41"
SRC = "real run: tests/corpus/generators/launchers/round41a/run_all.sh {id} (job.py), torch 2.13.0 CPU, gloo"
LAUNCH = {"spawn": "mp.spawn", "shell": "shell", "shellappend": "shell", "shellpipe": "shell", "torchrun": "torchrun"}
HOW = {"spawn": "mp.spawn ranks inherit one stdout/stderr, `> log.txt 2>&1`, PYTHONUNBUFFERED unset",
       "shell": "shell loop `for r ...; do RANK=$r python job.py & done; wait` > log.txt 2>&1, PYTHONUNBUFFERED unset",
       "shellappend": "shell loop, each rank `>> log.txt 2>&1` itself, PYTHONUNBUFFERED unset",
       "shellpipe": "shell loop piped: `( loop ) 2>&1 | tee log.txt`, PYTHONUNBUFFERED unset",
       "torchrun": "torchrun without --tee (workers inherit the console) > log.txt 2>&1",
       "torchrun-redirects": "torchrun --redirects 3 without --log-dir (worker output goes to a temp dir; only the launcher's summary, with @record tracebacks, reaches the console) > log.txt 2>&1"}
KILL_FIX = "Find what kills the rank (OOM killer, scheduler, a watchdog: check dmesg / the scheduler's records) and remove the cause."

def case(id, cat, rank, pat, root, fix, induced, collateral=(), notes=None, fatal=True):
    return dict(id=id, cat=cat, rank=rank, pat=pat, root=root, fix=fix, induced=induced, collateral=list(collateral),
                notes=notes, fatal=fatal)

RAISE_ROOT = "Rank {r}'s load_batch() reads record['target'] from a record written with an old schema ('label'), raising KeyError at step {s}."
RAISE_FIX = "Rewrite the shard with the current schema or make load_batch accept the old 'label' key."
HANG_ROOT = "Rank {r} stalls (sleeps 45 s) before the step-{s} metrics all_reduce, so the other ranks' gloo collective times out after 15 s."
HANG_FIX = "Find why rank {r} stalls before the collective (dump its stack, e.g. py-spy) and fix the blocking code."
MM_ROOT = "Rank {r} all_reduces a metrics tensor of 3+4096 elements at step {s} while the others reduce 3, so gloo receives more bytes than expected and aborts the receiving rank."
MM_FIX = "Make every rank all_reduce metrics tensors of the same shape (pack the histogram on every rank or reduce it separately)."
DT_ROOT = "Rank {r} all_reduces a metrics tensor of shape [5] at step {s} while the others use [3]; TORCH_DISTRIBUTED_DEBUG=DETAIL's fingerprint check reports it."
TR = "the other ranks fail in their collective (Connection closed by peer / reset) and are terminated by the launcher"
SH = "the other ranks fail in their collective with gloo 'Connection closed by peer' errors (no launcher to stop them)"
C = [
  case("run41a-spawn-raise-r2", "user.code_error", 2, r"KeyError: 'target'", RAISE_ROOT.format(r=2, s=4), RAISE_FIX,
       "FAULT=raise FAIL_RANK=2 FAIL_STEP=4, mp.spawn 4 ranks", ["mp.spawn SIGTERMs ranks 0, 1, 3; their buffered stdout (banner, \\r progress) appears late"]),
  case("run41a-shell-raise-r1", "user.code_error", 1, r"KeyError: 'target'", RAISE_ROOT.format(r=1, s=5), RAISE_FIX,
       "FAULT=raise FAIL_RANK=1 FAIL_STEP=5, shell loop 3 ranks", [SH]),
  case("run41a-shellappend-raise-r2", "user.code_error", 2, r"KeyError: 'target'", RAISE_ROOT.format(r=2, s=3), RAISE_FIX,
       "FAULT=raise FAIL_RANK=2 FAIL_STEP=3, shell loop 4 ranks each appending to log.txt", [SH + "; one survivor aborts (bash reported 'Aborted' on the loop's own stderr, not in log.txt)"]),
  case("run41a-torchrun-raise-r2", "user.code_error", 2, r"KeyError: 'target'", RAISE_ROOT.format(r=2, s=3), RAISE_FIX,
       "FAULT=raise FAIL_RANK=2 FAIL_STEP=3, torchrun 4 ranks, no --tee", [TR, "rank 1 aborts (SIGABRT) and torchrun's 'Root Cause (first observed failure)' names rank 1, not rank 2"],
       notes="torchrun's summary blames local_rank 1 (exitcode -6, observed first); the KeyError traceback is prefixed [rank2]."),
  case("run41a-torchrun-redirects-raise-r1", "user.code_error", 1, r"KeyError: 'target'", RAISE_ROOT.format(r=1, s=4), RAISE_FIX,
       "FAULT=raise FAIL_RANK=1 FAIL_STEP=4, RECORD=1, torchrun --redirects 3 (no --log-dir), 3 ranks", [TR]),
  case("run41a-spawn-sigkill-r1", "mem.host_oom", 1, r"process 1 terminated with signal SIGKILL", "Rank 1 is SIGKILLed at step 3 (no traceback; its buffered stdout is lost).", KILL_FIX,
       "FAULT=sigkill FAIL_RANK=1 FAIL_STEP=3 (os.kill(getpid(), SIGKILL)), mp.spawn 3 ranks", ["mp.spawn terminates ranks 0 and 2"]),
  case("run41a-shell-sigkill-r2", "mem.host_oom", 2, r"Killed\s+RANK=", "Rank 2 is SIGKILLed at step 2 (no traceback; its buffered stdout, banner included, is lost).", KILL_FIX,
       "FAULT=sigkill FAIL_RANK=2 FAIL_STEP=2, shell loop 3 ranks", [SH + " / reset by peer"],
       notes="bash's 'Killed' line names only a pid; it is rank 2's only by elimination (ranks 0 and 1 print banners with their pids)."),
  case("run41a-shellpipe-sigkill-r1", "mem.host_oom", 1, r"Killed\s+RANK=", "Rank 1 is SIGKILLed at step 4 (no traceback; its buffered stdout, banner included, is lost).", KILL_FIX,
       "FAULT=sigkill FAIL_RANK=1 FAIL_STEP=4, shell loop 3 ranks piped through tee", [SH],
       notes="bash's 'Killed' line names only a pid; it is rank 1's only by elimination (ranks 0 and 2 print banners with their pids)."),
  case("run41a-torchrun-sigkill-r1", "mem.host_oom", 1, r"failed \(exitcode: -9\) local_rank: 1", "Rank 1 is SIGKILLed at step 3 (no traceback).", KILL_FIX,
       "FAULT=sigkill FAIL_RANK=1 FAIL_STEP=3, torchrun 3 ranks, no --tee", [TR]),
  case("run41a-torchrun-redirects-sigkill-r2", "mem.host_oom", 2, r"failed \(exitcode: -9\) local_rank: 2", "Rank 2 is SIGKILLed at step 3 (no traceback).", KILL_FIX,
       "FAULT=sigkill FAIL_RANK=2 FAIL_STEP=3, RECORD=1, torchrun --redirects 3 (no --log-dir), 3 ranks", [TR]),
  case("run41a-spawn-hang-r3", "dist.collective_timeout", 3, r"Timed out waiting 15000ms", HANG_ROOT.format(r=3, s=2), HANG_FIX.format(r=3),
       "FAULT=hang FAIL_RANK=3 FAIL_STEP=2 PG_TIMEOUT=15, mp.spawn 4 ranks", ["mp.spawn terminates the other ranks, the hung rank 3 included"],
       notes="The log shows only process 2's timeout; the silent rank 3 is not named anywhere."),
  case("run41a-shell-hang-r1", "dist.collective_timeout", 1, r"Timed out waiting 15000ms", HANG_ROOT.format(r=1, s=3), HANG_FIX.format(r=1),
       "FAULT=hang FAIL_RANK=1 FAIL_STEP=3 PG_TIMEOUT=15, shell loop 3 ranks", ["ranks 0 and 2 time out and exit; when rank 1 wakes its all_reduce fails with 'Connection closed by peer'"],
       notes="Rank 1's own traceback (Connection closed by peer) comes last, after the real timeouts."),
  case("run41a-torchrun-hang-r2", "dist.collective_timeout", 2, r"Timed out waiting 15000ms", HANG_ROOT.format(r=2, s=2), HANG_FIX.format(r=2),
       "FAULT=hang FAIL_RANK=2 FAIL_STEP=2 PG_TIMEOUT=15, torchrun 3 ranks, no --tee", ["torchrun SIGTERMs the hung rank 2 and rank 0; Root Cause names rank 1"],
       notes="The silent rank 2 appears only as SIGTERMed in torchrun's summary."),
  case("run41a-torchrun-redirects-hang-r1", "dist.collective_timeout", 1, r"Timed out waiting 15000ms", HANG_ROOT.format(r=1, s=2), HANG_FIX.format(r=1),
       "FAULT=hang FAIL_RANK=1 FAIL_STEP=2 PG_TIMEOUT=15, RECORD=1, torchrun --redirects 3 (no --log-dir), 3 ranks", ["torchrun SIGTERMs ranks 1 (hung) and 2; Root Cause names rank 0"],
       notes="The silent rank 1 appears only as SIGTERMed, with error_file <N/A>, in torchrun's summary."),
  case("run41a-spawn-mismatch-r2", "dist.collective_mismatch", 2, r"op\.preamble\.length <= op\.nbytes", MM_ROOT.format(r=2, s=3), MM_FIX,
       "FAULT=mismatch FAIL_RANK=2 FAIL_STEP=3 EXTRA=4096, mp.spawn 3 ranks", ["the receiving rank 1 aborts (SIGABRT); mp.spawn terminates the others"],
       notes="The enforce message comes from the receiving rank (1, per 'process 1 terminated with signal SIGABRT'); the sender, rank 2, is not named."),
  case("run41a-shell-mismatch-r3", "dist.collective_mismatch", 3, r"op\.preamble\.length <= op\.nbytes", MM_ROOT.format(r=3, s=4), MM_FIX,
       "FAULT=mismatch FAIL_RANK=3 FAIL_STEP=4 EXTRA=4096, shell loop 4 ranks", [SH + "; the receiving rank aborts"],
       notes="The enforce message (no rank) comes from the receiving rank; the sender, rank 3, is not named."),
  case("run41a-torchrun-mismatch-r2", "dist.collective_mismatch", 2, r"op\.preamble\.length <= op\.nbytes", MM_ROOT.format(r=2, s=2), MM_FIX,
       "FAULT=mismatch FAIL_RANK=2 FAIL_STEP=2 EXTRA=4096, torchrun 3 ranks, no --tee", [TR + "; the receiving rank 1 aborts (exitcode -6) and is torchrun's Root Cause"],
       notes="torchrun's Root Cause names local_rank 1 (the receiver that aborted); the sender rank 2 is not named."),
  case("run41a-spawn-mismatch-detail-r1", "dist.collective_mismatch", 1, r"Detected mismatch between collectives on ranks\.", DT_ROOT.format(r=1, s=2), MM_FIX,
       "FAULT=mismatch FAIL_RANK=1 FAIL_STEP=2 EXTRA=2 NO_DDP=1 TORCH_DISTRIBUTED_DEBUG=DETAIL, mp.spawn 3 ranks", ["every rank raises the fingerprint error; mp.spawn reports process 2's"],
       notes="Only process 2's error is shown; its message says 'but Rank 1 is running collective: ... TensorShape=[5]'."),
  case("run41a-shell-mismatch-detail-r2", "dist.collective_mismatch", 2, r"Rank 2 is running collective: CollectiveFingerPrint", DT_ROOT.format(r=2, s=3), MM_FIX,
       "FAULT=mismatch FAIL_RANK=2 FAIL_STEP=3 EXTRA=2 NO_DDP=1 TORCH_DISTRIBUTED_DEBUG=DETAIL, shell loop 3 ranks", ["ranks 0 and 1 raise the same fingerprint error"]),
  case("run41a-torchrun-mismatch-detail-r1", "dist.collective_mismatch", 1, r"Rank 1 is running collective: CollectiveFingerPrint", DT_ROOT.format(r=1, s=3), MM_FIX,
       "FAULT=mismatch FAIL_RANK=1 FAIL_STEP=3 EXTRA=2 NO_DDP=1 TORCH_DISTRIBUTED_DEBUG=DETAIL, torchrun 3 ranks, no --tee", ["ranks 0 and 2 raise the same fingerprint error; torchrun's Root Cause names rank 2"]),
]
HEALTHY = {"run41a-spawn-healthy": "mp.spawn 4 ranks, FAULT=none, 8 steps, exit 0",
           "run41a-shell-healthy": "shell loop 3 ranks, FAULT=none, 10 steps, exit 0",
           "run41a-shellappend-healthy": "shell loop 4 ranks appending to one file, FAULT=none, exit 0",
           "run41a-torchrun-healthy": "torchrun 3 ranks no --tee, FAULT=none, exit 0"}

def kind(id):
    k = id.split("-")[1]
    return "torchrun-redirects" if "redirects" in id else k

rows = []
for c in C:
    d = os.path.join(OUT, c["id"])
    lines = open(os.path.join(d, "log.txt"), errors="replace").read().splitlines()
    dec = None
    for ln in lines:
        m = re.search(c["pat"], ln)
        if m:
            dec = ln[m.start():].rstrip()[:220].rstrip()
            break
    assert dec and any(dec in ln for ln in lines), c["id"]
    lab = {"id": c["id"], "source": SRC.format(id=c["id"]), "category": c["cat"], "fatal": True, "decisive_line": dec,
           "also_acceptable": [], "initiating_rank": c["rank"], "collateral": c["collateral"], "operator": None,
           "root_cause": c["root"], "fix": c["fix"], "launcher": LAUNCH[c["id"].split("-")[1]], "framework": "plain",
           "genuine": False, "induced_how": c["induced"] + "; output: " + HOW[kind(c["id"])], "confirmed_by": "induced",
           "confidence": "high"}
    if c["notes"]:
        lab["notes"] = c["notes"]
    json.dump(lab, open(os.path.join(d, "label.json"), "w"), indent=2); open(os.path.join(d, "label.json"), "a").write("\n")
    rows.append((c["id"], lab["launcher"], kind(c["id"]), c["induced"], c["cat"], c["rank"]))
for id, how in HEALTHY.items():
    d = os.path.join(OUT, id)
    assert "training finished" in open(os.path.join(d, "log.txt")).read()
    lab = {"id": id, "source": SRC.format(id=id), "category": "none", "fatal": False, "decisive_line": None,
           "also_acceptable": [], "initiating_rank": None, "collateral": [], "operator": None, "root_cause": None,
           "fix": None, "launcher": LAUNCH[id.split("-")[1]], "framework": "plain", "genuine": False,
           "induced_how": how + "; output: " + HOW[kind(id)], "confirmed_by": "induced", "confidence": "high"}
    json.dump(lab, open(os.path.join(d, "label.json"), "w"), indent=2); open(os.path.join(d, "label.json"), "a").write("\n")
    rows.append((id, lab["launcher"], kind(id), how, "none", None))
for r in sorted(rows):
    print("| %s | %s | %s | %s | %s | %s |" % r)
