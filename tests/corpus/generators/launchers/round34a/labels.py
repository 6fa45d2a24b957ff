"""Write label.json for every round-34a case in OUT (argv[1], default /work/helpers/stage34).
Category / fatal / rank come from what job.py induced (table below); the decisive line is found in the recorded
log.txt by a regex and checked to be an exact substring of one line. Exit codes come from META (run_all.sh)."""
import json
import re
import sys
from pathlib import Path

OUT = Path(sys.argv[1] if len(sys.argv) > 1 else "/work/helpers/stage34")
META = Path(sys.argv[2] if len(sys.argv) > 2 else "/work/helpers/stage34a.meta")
SRC = "real run: tests/corpus/generators/launchers/round34a/run_all.sh {id}, torch 2.13.0 CPU, gloo"
GLOO = "the other ranks: gloo 'Connection closed by peer' / 'Connection reset by peer' in DDP backward or all_reduce"
TERM = "survivors' 'terminate called without an active exception' (-6) while torchrun tears them down"
NOFIX = "Nothing to fix."
# id -> category, fatal, rank, decisive regex (None for clean), also_acceptable regexes, collateral, root_cause, fix, how
H = "none", False, None, None, [], []
CASES = {
 "run34a-torchrun-thread-upload-healthy": (*H, "Healthy run; rank 1's metrics-uploader thread dies with 'Exception in thread Thread-1 (upload):' and a real ConnectionRefusedError (nothing listens on 127.0.0.1:9), training goes on and finishes.", NOFIX, "job.py --mode thread_upload --fault-rank 1; exit 0"),
 "run34a-spawn-thread-upload-healthy": (*H, "Healthy mp.spawn run; rank 2's metrics-uploader daemon thread dies with a ConnectionRefusedError traceback, the job itself finishes.", NOFIX, "job.py --spawn 4 --mode thread_upload --fault-rank 2; exit 0"),
 "run34a-torchrun-loader-skip-healthy": (*H, "Healthy run; rank 2's DataLoader worker hits corrupt sample 13, logs it with logger.exception (ERROR + ValueError traceback) and skips it.", NOFIX, "job.py --mode loader_skip --fault-rank 2; exit 0"),
 "run34a-spawn-loader-skip-healthy": (*H, "Healthy mp.spawn run; rank 1's DataLoader worker logs corrupt sample 13 with its ValueError traceback and skips it.", NOFIX, "job.py --spawn 3 --mode loader_skip --fault-rank 1; exit 0"),
 "run34a-torchrun-retry-ok-healthy": (*H, "Healthy run; rank 3's shard fetch gets two real ConnectionResetErrors ('attempt 1/3 failed', tracebacks) and succeeds on attempt 3.", NOFIX, "job.py --mode retry_ok --fault-rank 3 (local server RSTs the first 2 connections); exit 0"),
 "run34a-torchrun-autobatch-ok-healthy": (*H, "Healthy run; every rank's auto-batch-size probe logs real DefaultCPUAllocator 'can't allocate memory' failures for too-large workspaces, halves down to bs=64 and trains.", NOFIX, "job.py --mode autobatch_ok; exit 0"),
 "run34a-torchrun-warnings-noise-healthy": (*H, "Healthy run with TORCH_CPP_LOG_LEVEL=INFO / TORCH_DISTRIBUTED_DEBUG=INFO c10d chatter, DDP init dumps, an env dump and torch UserWarnings logged with stack lines.", NOFIX, "TORCH_CPP_LOG_LEVEL=INFO TORCH_DISTRIBUTED_DEBUG=INFO job.py --mode warnings_noise; exit 0"),
 "run34a-torchrun-faulthandler-slow-healthy": (*H, "Healthy run; faulthandler.dump_traceback_later(2) fires on rank 2 during one 3 s slow step ('Timeout (0:00:02)!' + stack), then training finishes.", NOFIX, "job.py --mode faulthandler_slow --fault-rank 2 --step 4; exit 0"),
 "run34a-spawn-profiler-json-healthy": (*H, "Healthy mp.spawn run that prints a torch.profiler table and logs an eval record whose JSON string contains 'Traceback ... ZeroDivisionError' text of a scored sample.", NOFIX, "job.py --spawn 3 --mode profiler_json; exit 0"),
 "run34a-torchrun-metric-names-healthy": (*H, "Healthy run whose metrics and smoke-test names contain error/FAILED/Exception (val/error_rate, test_failed=0, '0 FAILED').", NOFIX, "job.py --mode metric_names; exit 0"),
 "run34a-torchrun-restart-ok-healthy": (*H, "Rank 1 raises OSError (EIO) on the first attempt only; torchrun (--max-restarts 1, c10d rendezvous) restarts the worker group and the second attempt finishes with exit 0.", NOFIX, "torchrun --max-restarts 1 job.py --mode restart_ok --fault-rank 1 --step 3 (OSError injected only when TORCHELASTIC_RESTART_COUNT=0); exit 0"),
 "run34a-torchrun-exit-ignored-healthy": (*H, "Healthy run; after 'training finished' every rank prints 'Exception ignored in atexit callback' and 'Exception ignored in: <function Tmp.__del__>' tracebacks at interpreter shutdown, exit code stays 0.", NOFIX, "job.py --mode exit_ignored (atexit callback and __del__ raise at shutdown); exit 0"),
 "run34a-torchrun-ckpt-upload-warn-healthy": (*H, "Healthy run; rank 3's checkpoint copy fails (real RuntimeError from torch.save: parent dir does not exist) and is logged with logger.exception as 'will retry next epoch'; training finishes.", NOFIX, "job.py --mode ckpt_upload_warn --fault-rank 3 --step 5; exit 0"),
 "run34a-torchrun-recompile-warn-healthy": ("compile.recompile_limit", False, None, r"torch\._dynamo hit config\.recompile_limit \(8\)", [], [],
    "Non-fatal: a torch.compile'd helper (dynamic=False) fed 10 shapes hits dynamo's recompile_limit on every rank and falls back to eager; the job finishes.",
    "Compile the helper with dynamic=True (or mark the batch dim dynamic) so it is not recompiled per shape.", "job.py --mode recompile_warn; exit 0"),
 "run34a-torchrun-graph-break-warn-healthy": ("compile.graph_break_data_dependent", False, None, r"Graph Break Reason: Data-dependent branching", [r"Graph break in user code at \S+job\.py:\d+"], [],
    "Non-fatal: TORCH_LOGS=graph_breaks shows the compiled input-normalisation breaking its graph at a data-dependent branch (if x.abs().max() > 1e3); the job finishes.",
    "Replace the Python branch with torch.where / torch.clamp so the function traces as one graph.", "TORCH_LOGS=graph_breaks job.py --mode graph_break_warn; exit 0"),
 "run34a-torchrun-thread-fatal": ("user.code_error", True, 2, r"json\.decoder\.JSONDecodeError: Expecting value: line 1 column 1 \(char 0\)",
    [r"RuntimeError: timed out after 8s waiting for batch \d+ from the prefetch queue"], [GLOO, TERM],
    "Rank 2's prefetch thread dies on an empty (truncated) JSON record ('Exception in thread Thread-1 (prefetch):'), so its main loop's own q.get(timeout=8) gives up with RuntimeError and the other ranks lose their gloo peer.",
    "Fix or skip the truncated record in the prefetch reader, and propagate thread exceptions to the main loop instead of waiting on the queue.", "job.py --mode thread_fatal --fault-rank 2"),
 "run34a-spawn-loader-fatal": ("user.code_error", True, 1, r"ValueError: sample 13: bad magic bytes .*",
    [r"ValueError: Caught ValueError in DataLoader worker process 0\."], ["mp.spawn terminates the other processes via SIGTERM"],
    "Rank 1's DataLoader worker raises ValueError on corrupt sample 13 (not caught), mp.spawn re-raises it as 'Caught ValueError in DataLoader worker process 0' for process 1.",
    "Repair or drop sample 13 (or catch decode errors in __getitem__ and skip the sample).", "job.py --spawn 3 --mode loader_fatal --fault-rank 1"),
 "run34a-torchrun-retry-fail": ("user.code_error", True, 2, r"RuntimeError: giving up on shard-0002\.bin after 3 attempts",
    [r"ConnectionResetError: \[Errno 104\] Connection reset by peer"], [GLOO],
    "Rank 2's shard server resets every connection; after 'attempt 1/3..3/3 failed: ConnectionResetError' the retry loop raises 'giving up on shard-0002.bin after 3 attempts' and the rank dies.",
    "Fix the shard server / network path that resets connections (or make the job fail over to another source).", "job.py --mode retry_fail --fault-rank 2 (local server RSTs every connection)"),
 "run34a-torchrun-autobatch-fail": ("mem.cpu_alloc_failure", True, 1, r"RuntimeError: auto batch size: no batch size fits, even bs=1 failed: .*",
    [r"DefaultCPUAllocator: can't allocate memory: you tried to allocate 70368744177664 bytes"], [GLOO, TERM],
    "Rank 1's auto-batch-size probe (per-sample workspace 64 TiB from a bad seq_len) gets real DefaultCPUAllocator failures down to bs=1 and gives up with RuntimeError.",
    "Fix rank 1's seq_len / per-sample memory config so a batch fits in host memory.", "job.py --mode autobatch_fail --fault-rank 1"),
 "run34a-torchrun-warnings-hang": ("dist.collective_timeout", True, 2, r"Timed out waiting 15000ms for \S+ operation to complete", [], ["ranks 0 and 1 time out in all_reduce / DDP backward", "torchrun tears the job down"],
    "Rank 2 sleeps 40 s ('refreshing tokenizer cache') before its step-3 collectives amid warning/INFO noise; the other ranks hit the 15 s gloo timeout.",
    "py-spy dump the stalled rank and remove the stall before the collective (raise the PG timeout only for legitimately slow work).", "TORCH_CPP_LOG_LEVEL=INFO TORCH_DISTRIBUTED_DEBUG=INFO job.py --mode warnings_hang --fault-rank 2 --step 3"),
 "run34a-torchrun-faulthandler-kill": ("mem.host_oom", True, 3, r"failed \(exitcode: -9\) local_rank: 3 \(pid: \d+\)", [], [GLOO],
    "Rank 3 has a faulthandler-dumped slow step (noise), then is SIGKILLed at the next step with no traceback (stand-in for an OOM kill); torchrun reports its -9 exit.",
    "Find what SIGKILLed that rank (dmesg / OOM killer / scheduler) and remove the cause, e.g. lower its host memory use.", "job.py --mode faulthandler_kill --fault-rank 3 --step 3 (os.kill(getpid(), SIGKILL))"),
 "run34a-torchrun-restart-fail": ("user.code_error", True, 1, r"OSError: \[Errno 5\] Input/output error: '/home/user/job/data/shard-0003\.bin'", [], [GLOO, "torchrun restarts the group once (--max-restarts 1), the second attempt fails the same way"],
    "Rank 1 raises OSError (EIO reading shard-0003.bin) at step 3 on both attempts; torchrun's single restart does not help and the job fails.",
    "Replace or re-copy the unreadable shard-0003.bin (check the storage it lives on).", "torchrun --max-restarts 1 job.py --mode restart_fail --fault-rank 1 --step 3"),
 "run34a-torchrun-exit-ignored-fatal": ("user.code_error", True, 2, r"KeyError: '<unk>'", [], [GLOO, "'Exception ignored in' shutdown noise on every rank"],
    "Rank 2 raises KeyError '<unk>' (token missing from the vocab) at step 4; the log then ends with harmless 'Exception ignored in' shutdown tracebacks.",
    "Add '<unk>' to the vocab (or map unknown tokens with vocab.get).", "job.py --mode exit_ignored_fatal --fault-rank 2 --step 4"),
 "run34a-torchrun-mismatch-noise": ("dist.collective_mismatch", True, 1, None, [], ["the other ranks fail in the same all_reduce"],
    "Rank 1 all_reduces an 8-element histogram while ranks 0 and 2 use 4 elements (gloo on a receiving rank: op.preamble.length <= op.nbytes. 8 vs 4) (after a harmless uploader-thread traceback on rank 0).",
    "Build the histogram tensor with the same number of bins on every rank.", "job.py --mode mismatch_noise --fault-rank 1 --step 4"),
 "run34a-torchrun-nan-exit1": ("user.code_error", True, 2, r"too many non-finite losses \(3 in a row\) on rank 2; stopping", [], [GLOO],
    "Rank 2's inputs turn NaN from step 3 (its loss is the first non-finite one; DDP's gradient all-reduce then spreads NaN to every rank from step 4); it logs 'non-finite loss ... skipping batch' warnings that look handled, then 'too many non-finite losses' and sys.exit(1).",
    "Find and drop the NaN features in rank 2's shard (validate inputs in the data pipeline).", "job.py --mode nan_exit1 --fault-rank 2 --step 3"),
 "run34a-spawn-validate-exit2": ("user.code_error", True, 1, r"validation check failed: rank 1 has 0 validation samples after filtering.*", [], ["mp.spawn terminates the other processes"],
    "Rank 1's validation check finds 0 samples after filtering (min_len 4096 > longest sample 2048), logs CRITICAL and calls sys.exit(2).",
    "Lower min_len below the data's longest sample (or fix the filter) so every rank has validation samples.", "job.py --spawn 3 --mode validate_exit2 --fault-rank 1 --step 5"),
}
MISMATCH = [r"op\.preamble\.length <= op\.nbytes\. \d+ vs \d+\. Received data size doesn't match expected size\."]
EXTRA = {}  # genuine cases found along the way (id -> same tuple), filled below
EXTRA["run34a-torchrun-autobatch-teardown-abort"] = ("dist.teardown_abort", True, 0, r"terminate called without an active exception",
    [r"failed \(exitcode: -6\) local_rank: 0 \(pid: \d+\)"], ["torchrun SIGTERMs ranks 1 and 2 after rank 0's abort"],
    "All ranks finish training ('training finished: 8 steps'), then rank 0 aborts at shutdown with 'terminate called without an active exception' (exit -6), so torchrun fails the job.",
    "Call dist.destroy_process_group() on every rank and make sure no gloo/c10d background thread is left joinable at exit; the work itself completed.",
    "job.py --mode autobatch_ok; the abort at exit arose by itself (not induced), first run of that case")

EXTRA["run34a-torchrun-faulthandler-teardown-abort"] = ("dist.teardown_abort", True, 0, r"terminate called without an active exception",
    [r"Fatal Python error: Aborted", r"failed \(exitcode: -6\) local_rank: 0 \(pid: \d+\)"],
    ["torchrun SIGTERMs ranks 1 and 2 after rank 0's abort", "rank 2's harmless faulthandler 'Timeout (0:00:02)!' dump of a slow step"],
    "All ranks finish training ('training finished: 8 steps'), then rank 0 aborts at shutdown ('terminate called without an active exception', faulthandler's 'Fatal Python error: Aborted'), exit -6, so torchrun fails the job.",
    "Call dist.destroy_process_group() on every rank and make sure no gloo/c10d background thread is left joinable at exit; the work itself completed.",
    "job.py --mode faulthandler_slow --fault-rank 2 --step 4; the abort at exit arose by itself (not induced), one run of that case")
SRCID = {"run34a-torchrun-autobatch-teardown-abort": "run34a-torchrun-autobatch-ok-healthy",
         "run34a-torchrun-faulthandler-teardown-abort": "run34a-torchrun-faulthandler-slow-healthy"}


def main():
    meta = {}
    if META.exists():
        for ln in META.read_text().splitlines():
            m = re.match(r"(\S+) rc=(\d+) cmd: (.*)", ln)
            if m:
                meta[m.group(1)] = (int(m.group(2)), m.group(3))
    bad = 0
    for cid, t in {**CASES, **EXTRA}.items():
        d = OUT / cid
        if not (d / "log.txt").exists():
            continue
        cat, fatal, rank, pat, also_p, coll, rc_txt, fix, how = t
        lines = (d / "log.txt").read_text(errors="replace").splitlines()
        pats = MISMATCH if cid == "run34a-torchrun-mismatch-noise" else ([pat] if pat else [])
        dec = None
        for p in pats:
            dec = next((m.group(0).strip() for ln in lines for m in [re.search(p, ln)] if m), None)
            if dec:
                break
        also = [a for p in also_p for a in [next((m.group(0).strip() for ln in lines for m in [re.search(p, ln)] if m), None)] if a]
        if pats and not dec:
            print(f"!! {cid}: decisive pattern not found")
            bad += 1
        for s in [dec] + also:
            if s and not any(s in ln for ln in lines):
                print(f"!! {cid}: not a substring: {s}")
                bad += 1
        ec = meta.get(cid, (None, ""))[0]
        if cid in EXTRA:
            ec = 1
        if (not fatal) != (ec == 0):
            print(f"!! {cid}: fatal={fatal} but exit code {ec}")
            bad += 1
        genuine = cid in EXTRA
        lab = {"id": cid, "source": SRC.format(id=SRCID.get(cid, cid)),
               "category": cat, "fatal": fatal, "decisive_line": dec, "also_acceptable": also,
               "initiating_rank": rank, "collateral": coll, "operator": None, "root_cause": rc_txt, "fix": fix,
               "launcher": "torchrun" if "-torchrun-" in cid else "mp.spawn", "framework": "plain",
               "genuine": genuine, "induced_how": how, "confirmed_by": "observed" if genuine else "induced",
               "confidence": "high" if not genuine else "medium", "exit_code": ec}
        if genuine:
            lab["notes"] = ("Recorded with an earlier job.py (same modes; its start line still printed 'mode=<name>' and "
                            "source line numbers differ). The abort at exit is flaky: seen in 6 of ~45 torchrun runs while "
                            "two jobs shared the 2 cores, 0 of 14 runs one at a time.")
        (d / "label.json").write_text(json.dumps(lab, indent=1) + "\n")
        print(f"{cid}: {cat} fatal={fatal} rank={rank} exit={ec} decisive={dec!r}")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
