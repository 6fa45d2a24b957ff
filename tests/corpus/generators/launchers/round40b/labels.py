"""Writes label.json for each round-40b case folder and checks decisive lines against log.txt.
Every case holds more than one problem; the label names the FIRST real failure. Usage: python3 labels.py /work/helpers/stage40"""
import json, os, re, sys
OUT = sys.argv[1] if len(sys.argv) > 1 else "/work/helpers/stage40"
GLOO = "gloo 'Connection closed by peer ... remote worker crashing' on the surviving ranks (consequence)"
HANDLED = "an earlier HANDLED FileNotFoundError traceback ('could not load cached feature stats, recomputing them') at step 1 on rank {r}; the job went on (not a failure)"
VAL = "ValueError: sample {s}: expected 16 features, got 15 (corrupt record in shard {r})"
RC_VAL = "Rank {r}'s data shard holds a corrupt record (15 features instead of 16) and the job's loader raised ValueError at step {k}."
FIX_VAL = "Repair or drop the corrupt record in shard {r} (validate records when building the shard)."
C = {}
def add(cid, cat, rank, dec, col, rc, fix, how, also=(), notes=None):
    C[cid] = dict(cat=cat, rank=rank, dec=dec, also=list(also), col=col, rc=rc, fix=fix, how=how, notes=notes)
def pre(rank, s, launcher):  # torchrun prefixes an uncaught traceback with [rankN]:
    return f"[rank{rank}]: {s}" if launcher == "torchrun" else s
# 1. handled exception with traceback early, real failure later
for cid, r, w, k in [("run40b-torchrun-handled-then-keyerror", 2, 0, 4), ("run40b-mpspawn-handled-then-keyerror", 3, 1, 3), ("run40b-python-handled-then-keyerror", None, 0, 3)]:
    L = cid.split("-")[1]
    add(cid, "user.code_error", r, pre(r, "KeyError: 'label'", L), [HANDLED.format(r=w)] + ([GLOO] if r else []),
        f"A record in {'rank %d' % r if r is not None else 'the'} data shard has no 'label' field, so the loader raised KeyError('label') at step {k}; the FileNotFoundError logged earlier was handled and harmless.",
        "Fix or skip records without a label when building the shard.",
        f"rank {w} logs a caught FileNotFoundError with logger.exception at step 1 and continues; {'rank %d' % r if r is not None else 'the process'} raises KeyError('label') at step {k}",
        also=["KeyError: 'label'"] if L == "torchrun" else [])
add("run40b-torchrun-handled-then-sigkill", "mem.host_oom", 2, "failed (exitcode: -9) local_rank: 2", [HANDLED.format(r=1), GLOO],
    "Rank 2 was SIGKILLed (exit -9, no traceback) at step 3, as the kernel OOM killer does; the FileNotFoundError logged earlier was handled and harmless.",
    "Find what killed rank 2 (dmesg / OOM killer); reduce its host memory use or raise the limit.",
    "rank 1 logs a caught FileNotFoundError at step 1; rank 2 os.kill(getpid(), SIGKILL) at step 3")
# 2. real failure on rank 2, then a different error on rank 0 as a consequence
add("run40b-torchrun-raise-ckpt-gather", "user.code_error", 2, pre(2, VAL.format(s=10, r=2), "torchrun"),
    [GLOO, "rank 0's emergency checkpoint: all_gather_object fails with a second gloo error ('During handling of the above exception, another exception occurred')"],
    RC_VAL.format(r=2, k=3), FIX_VAL.format(r=2),
    "rank 2 raises ValueError at step 3; rank 0 catches its gloo error and runs an emergency checkpoint that calls dist.all_gather_object", also=[VAL.format(s=10, r=2)])
add("run40b-mpspawn-raise-ckpt-dir", "user.code_error", 2, VAL.format(s=14, r=2),
    [GLOO, "rank 0's emergency checkpoint: torch.save raises 'RuntimeError: Parent directory .../ckpt40b/emergency_step4 does not exist.'"],
    RC_VAL.format(r=2, k=4), FIX_VAL.format(r=2),
    "rank 2 raises ValueError at step 4; rank 0 catches its gloo error and torch.save()s an emergency checkpoint into a directory never created")
add("run40b-torchrun-sigkill-ckpt-gather", "mem.host_oom", 2, "failed (exitcode: -9) local_rank: 2",
    [GLOO, "rank 0's emergency checkpoint (all_gather_object) fails with a second gloo error"],
    "Rank 2 was SIGKILLed (exit -9, no traceback) at step 3, as the kernel OOM killer does; rank 0's failed emergency checkpoint is a consequence.",
    "Find what killed rank 2 (dmesg / OOM killer); reduce its host memory use or raise the limit; make the emergency checkpoint rank-local.",
    "rank 2 os.kill(getpid(), SIGKILL) at step 3; rank 0 catches its gloo error and runs an emergency checkpoint that calls dist.all_gather_object")
add("run40b-torchrun-eval-zerodiv-assert", "user.code_error", 2, pre(2, "ZeroDivisionError: division by zero", "torchrun"),
    ["rank 0 and rank 1 log 'could not gather eval results from all ranks' (gloo Connection closed by peer)",
     "rank 0's own 'AssertionError: expected eval results from 3 ranks, got 1' (consequence)", GLOO],
    "Rank 2's evaluation split is empty, so its accuracy computation divided by zero; rank 0's assertion on missing results follows from it.",
    "Guard the metric against an empty split (or give every rank a non-empty eval shard).",
    "rank 2 computes correct / n with n == 0 in eval; rank 0 tolerates the failed all_gather_object and asserts on the result count",
    also=["ZeroDivisionError: division by zero"])
add("run40b-mpspawn-eval-zerodiv-gatherfail", "user.code_error", 2, "ZeroDivisionError: division by zero",
    ["ranks 1 and 3 log 'could not gather eval results from all ranks', then fail in dist.barrier (gloo Connection closed by peer)", GLOO],
    "Rank 2's evaluation split is empty, so its accuracy computation divided by zero; the gather/barrier errors on other ranks follow from it.",
    "Guard the metric against an empty split (or give every rank a non-empty eval shard).",
    "rank 2 computes correct / n with n == 0 in eval; the others tolerate the failed all_gather_object (rank 0's assert did not get printed before mp.spawn terminated it)")
# 3. warning storm (non-fatal) then an unrelated fatal error
MM = "RuntimeError: mat1 and mat2 shapes cannot be multiplied (4x12 and 16x32)"
FW = "FutureWarning storm every step (torch.cuda.amp.autocast / GradScaler / clip_grad_norm deprecated) - non-fatal"
for cid, r, k in [("run40b-torchrun-warnstorm-shape", 1, 5), ("run40b-python-warnstorm-shape", None, 4)]:
    L = cid.split("-")[1]
    add(cid, "user.code_error", r, pre(r, MM, L), [FW] + ([GLOO] if r else []),
        f"At step {k} {'rank %d' % r if r is not None else 'the job'} got a batch with 12 features instead of 16, so the first Linear(16, 32) could not multiply it; the deprecation warnings are unrelated.",
        "Fix the feature pipeline so every batch has the 16 features the model expects.",
        f"warnings.simplefilter('always') + deprecated torch.cuda.amp / clip_grad_norm calls every step; {'rank %d' % r if r is not None else 'the process'} slices its batch to 12 columns at step {k}",
        also=[MM] if L == "torchrun" else [])
GB = "dynamo 'Graph break from `Tensor.item()`' warning on each rank at the first compile (non-fatal)"
for cid, r, k in [("run40b-torchrun-graphbreak-index", 2, 4), ("run40b-python-graphbreak-index", None, 3)]:
    L = cid.split("-")[1]
    add(cid, "user.code_error", r, pre(r, "IndexError: list index out of range", L), [GB + (" plus TORCH_LOGS=graph_breaks detail" if not r else "")] + ([GLOO] if r else []),
        f"{'Rank %d' % r if r is not None else 'The job'}'s dataset is shorter than the steps it is asked for, so the batch index ran past its end at step {k}; the graph-break warning is unrelated.",
        "Size the per-rank sampler/steps from the shard length (or drop_last) so no index passes the end of the shard.",
        f"model torch.compile(backend='eager') with a .item() graph break; {'rank %d' % r if r is not None else 'the process'}'s shard holds 4*(k-1)+2 samples",
        also=["IndexError: list index out of range"] if L == "torchrun" else [])
# 4. torchrun --max-restarts 1
add("run40b-torchrun-restart-two-errors", "user.code_error", 2, pre(2, VAL.format(s=14, r=2), "torchrun"),
    [GLOO, "attempt 1 (after restart): gloo 'Connection refused' retries and 'Gloo connectFullMesh failed ... timed out connecting' in init_process_group (the restarted group reconnects to attempt 0's dead peer address)"],
    RC_VAL.format(r=2, k=4) + " The restart then failed differently: gloo could not connect the restarted group (connectFullMesh).",
    FIX_VAL.format(r=2),
    "attempt 0: rank 2 raises ValueError at step 4; attempt 1 was meant to fail on resume (KeyError 'optimizer') but died earlier in gloo init (connectFullMesh)",
    also=[VAL.format(s=14, r=2)], notes="Two attempts fail in different ways; the FIRST attempt's cause (rank 2's ValueError in attempt 0) is labelled decisive.")
add("run40b-torchrun-restart-static-fullmesh", "user.code_error", 1, pre(1, "ConnectionResetError: [Errno 104] Connection reset by peer while fetching shard part-001", "torchrun"),
    [GLOO, "attempt 1 (after restart, static rendezvous): gloo 'connectFullMesh failed ... Connection refused' (reconnects to attempt 0's dead peer address)"],
    "Rank 1's shard fetch failed with ConnectionResetError at step 3 in attempt 0; the restart then failed to build the gloo mesh under the static rendezvous.",
    "Retry the shard fetch; use --rdzv-backend=c10d (or --standalone) for restarts rather than the static master_port rendezvous.",
    "attempt 0: rank 1 raises ConnectionResetError at step 3; torchrun --max-restarts=1 with the static rendezvous; attempt 1 fails in init",
    also=["ConnectionResetError: [Errno 104] Connection reset by peer while fetching shard part-001"],
    notes="Two attempts fail in different ways; the FIRST attempt's cause is labelled decisive.")
add("run40b-torchrun-restart-kill-then-raise-logdir", "mem.host_oom", 1, "failed (exitcode: -9) local_rank: 1",
    [GLOO, "attempt 1 (after restart): gloo 'Connection refused' retries and 'Gloo connectFullMesh failed ... timed out connecting' in init_process_group (the restarted group reconnects to attempt 0's dead peer address)"],
    "In attempt 0 rank 1 was SIGKILLed (exit -9, no traceback) at step 3, as the OOM killer does; attempt 1 then failed differently (gloo connectFullMesh in init on rank 2).",
    "Find what killed rank 1 (dmesg / OOM killer) and reduce its host memory; fix shard part-002.",
    "attempt 0: rank 1 os.kill(getpid(), SIGKILL) at step 3; attempt 1 died in gloo init (connectFullMesh) before its planned RuntimeError; --log-dir tree in ranks/",
    notes="Two attempts fail in different ways; the FIRST attempt's cause (rank 1 killed) is labelled decisive.")
# 5. teardown failures after an earlier real error
AX = "atexit hook write_summary fails: 'Exception ignored in atexit callback' ... KeyError: 'best_acc' (teardown, consequence)"
for cid, r, k, s in [("run40b-torchrun-raise-atexit", 1, 3, 10), ("run40b-python-raise-atexit", None, 5, 18)]:
    L = cid.split("-")[1]
    add(cid, "user.code_error", r, pre(r, VAL.format(s=s, r=r or 0), L), [AX] + ([GLOO] if r else []),
        RC_VAL.format(r=r or 0, k=k) + " The atexit summary hook then failed because eval never ran.", FIX_VAL.format(r=r or 0),
        f"{'rank %d' % r if r is not None else 'the process'} raises ValueError at step {k}; an atexit hook reads summary['best_acc']",
        also=[VAL.format(s=s, r=r or 0)] if L == "torchrun" else [])
TD = "teardown: the atexit cleanup calls destroy_process_group a second time: 'Exception ignored in atexit callback' ... AssertionError: Process group cannot be None"
for cid, r, k, s in [("run40b-mpspawn-raise-teardown-destroy", 2, 3, 10), ("run40b-torchrun-raise-teardown-destroy", 1, 4, 14)]:
    L = cid.split("-")[1]
    add(cid, "user.code_error", r, pre(r, VAL.format(s=s, r=r), L), [TD, GLOO],
        RC_VAL.format(r=r, k=k) + " The later teardown error (destroy_process_group twice) is a consequence.", FIX_VAL.format(r=r) + " Destroy the process group once.",
        f"rank {r} raises ValueError at step {k}; finally destroys the group, an atexit cleanup destroys it again", also=[VAL.format(s=s, r=r)] if L == "torchrun" else [])
# 6. two ranks fail independently, nearly at once: the first by timestamp is decisive
KE = "KeyError: 'label_smoothing (missing in config of rank {r})'"
for cid, a, b, k, s in [("run40b-torchrun-two-fail-r3-first", 3, 1, 4, 14), ("run40b-mpspawn-two-fail-r2-first", 2, 1, 3, 10), ("run40b-torchrun-two-fail-r1-first", 1, 2, 5, 18)]:
    L = cid.split("-")[1]
    add(cid, "user.code_error", a, pre(a, VAL.format(s=s, r=a), L), [f"rank {b}'s independent {KE.format(r=b)}, logged later by timestamp", GLOO],
        RC_VAL.format(r=a, k=k) + f" Rank {b} independently failed a moment later (missing config key), which is a second, later problem.",
        FIX_VAL.format(r=a) + f" Also add 'label_smoothing' to rank {b}'s config.",
        f"rank {a} raises ValueError at step {k}; rank {b} sleeps the --delay then raises KeyError, before any collective could tell it",
        also=[VAL.format(s=s, r=a)] if L == "torchrun" else [],
        notes=f"Both failures are real and independent; rank {a}'s has the earlier timestamp in the job's own log lines.")
add("run40b-torchrun-restart-c10d-gloo-timeout", "user.code_error", 1, pre(1, "ConnectionResetError: [Errno 104] Connection reset by peer while fetching shard part-001", "torchrun"),
    [GLOO, "attempt 1 (after restart, c10d rendezvous): gloo 'failed to connect' retries on ranks 0/1 and rank 2 'Timed out waiting 30000ms for recv operation to complete' in init"],
    "Rank 1's shard fetch failed with ConnectionResetError at step 3 in attempt 0; the restarted attempt 1 could not form the gloo group and timed out.",
    "Retry the shard fetch inside the job; do not rely on a torchrun restart of a gloo group on torch 2.13 (it reconnects to stale peer addresses).",
    "attempt 0: rank 1 raises ConnectionResetError at step 3; torchrun --max-restarts=1 with c10d rendezvous; attempt 1 (meant to succeed) failed in gloo init",
    also=["ConnectionResetError: [Errno 104] Connection reset by peer while fetching shard part-001"],
    notes="Planned as 'attempt 1 recovers' but attempt 1 failed in gloo init; labelled from the log: the FIRST attempt's cause is decisive.")
HEALTHY = {}

def cmd_of(cid):
    for l in open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "run_all.sh")):
        m = re.match(r'C\[%s\]="(.*)"' % re.escape(cid), l.strip())
        if m: return (m.group(1).replace("$TRUN", "torchrun --nnodes=1 --master_port=29642")
                      .replace("$TRDZV", "torchrun --nnodes=1 --rdzv-backend=c10d --rdzv-endpoint=localhost:29643 --rdzv-id=j40b")
                      .replace("$PY ", "python ").replace("$WORK", "/home/user/job"))
bad = 0
for cid in sorted(list(C) + list(HEALTHY)):
    d = os.path.join(OUT, cid)
    if not os.path.exists(os.path.join(d, "log.txt")): print("MISSING", cid); bad += 1; continue
    text = open(os.path.join(d, "log.txt")).read(); log = text.splitlines()
    L = cid.split("-")[1].replace("mpspawn", "mp.spawn")
    src = f"real run: tests/corpus/generators/launchers/round40b/multi_job.py via `{cmd_of(cid)}`, torch 2.13.0 CPU, gloo"
    if cid in C:
        c = C[cid]
        lab = {"id": cid, "source": src, "category": c["cat"], "fatal": True, "decisive_line": c["dec"], "also_acceptable": c["also"],
               "initiating_rank": c["rank"], "collateral": c["col"], "operator": None, "root_cause": c["rc"], "fix": c["fix"],
               "launcher": L, "framework": "plain", "genuine": False, "induced_how": c["how"], "confirmed_by": "induced", "confidence": "high"}
        if c["notes"]: lab["notes"] = c["notes"]
        for s in [c["dec"]] + c["also"]:
            if not any(s in l for l in log): print("NOT FOUND", cid, s); bad += 1
    else:
        lab = {"id": cid, "source": src, "category": "none", "fatal": False, "decisive_line": None, "also_acceptable": [],
               "initiating_rank": None, "collateral": ["attempt 0: rank 1 ConnectionResetError and gloo errors on the others; torchrun restarted the group (transient, recovered)"],
               "operator": None, "root_cause": None, "fix": None, "launcher": L, "framework": "plain", "genuine": False,
               "induced_how": HEALTHY[cid], "confirmed_by": "induced", "confidence": "high",
               "notes": "Healthy in the end: attempt 0 failed, the restarted attempt 1 finished training and torchrun exited 0."}
        if text.count("training finished") < 3: print("HEALTHY FAILED", cid); bad += 1
    json.dump(lab, open(os.path.join(d, "label.json"), "w"), indent=2, ensure_ascii=False)
    print(f"{cid:48s} {L:9s} {lab['category']:18s} {lab['initiating_rank']}")
print("problems:", bad)
