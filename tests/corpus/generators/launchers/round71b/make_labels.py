"""Writes label.json for every round71b case in POOL (default /tmp/h71b/pool) from what was induced.
decisive/also patterns are regexes; the label stores the exact text each one matched in log.txt
(checked to be a substring of a log line). Usage: python make_labels.py [POOL]"""
import json, os, re, sys

POOL = sys.argv[1] if len(sys.argv) > 1 else "/tmp/h71b/pool"
GLOO_TO = r"Timed out waiting \d+ms for (recv|send) operation to complete"
FH_TO = r"Timeout \(0:00:20\)!"
SEGV = r"Fatal Python error: Segmentation fault"
ABRT = r"Fatal Python error: Aborted"
HANG_FIX = "Fix or bound the blocking data-loading call on that rank (timeout/retry) so it reaches the collective; the stack dumps show where it is stuck."
C = {}


def case(cid, cat, rank, dec, also=(), coll=(), root="", fix="", how="", fatal=True, dfile=None):
    C[cid] = dict(category=cat, rank=rank, dec=dec, also=list(also), coll=list(coll), root=root, fix=fix,
                  how=how, fatal=fatal, dfile=dfile)


# (a) faulthandler.dump_traceback_later
case("run-r71b-torchrun-fhlater-hang-r1", "dist.collective_timeout", 1, GLOO_TO, [FH_TO],
     ["faulthandler 'Timeout (0:00:20)!' all-thread dumps from every rank (interleaved)", "Timed out waiting ... on ranks 0,2,3", "torchrun SIGTERMs rank 1 and 2, ChildFailedError"],
     "Rank 1 blocked in its own data loading (time.sleep in load_batch) at step 3, so ranks 0,2,3 waited in the DDP gradient all_reduce until the 30 s gloo timeout; the 20 s faulthandler dumps show rank 1 in load_batch and the others in backward.",
     HANG_FIX, "torchrun 4 ranks; job.py --mode hang --culprit 1 --step 3 --fh-later 20 --pg-timeout 30")
case("run-r71b-spawn-fhlater-exit-r2", "dist.collective_timeout", 2, FH_TO,
     [r"process \d terminated with exit code 1"],
     ["faulthandler all-thread dumps of the waiting ranks (in backward)", "mp.spawn terminates the other processes"],
     "Rank 2 blocked in load_batch at step 4 so the others waited in the DDP all_reduce; the job's faulthandler.dump_traceback_later(20, exit=True) watchdog dumped every rank's threads and exited the job before the 60 s gloo timeout.",
     HANG_FIX, "mp.spawn 3 ranks; job.py --mode hang --culprit 2 --step 4 --fh-later 20 --fh-exit --pg-timeout 60")
case("run-r71b-torchrun-fhlater-rank0only-lock-r1", "dist.collective_timeout", 1, GLOO_TO, [FH_TO],
     ["rank 0's faulthandler 'Timeout (0:00:20)!' dump (rank 0 waiting in backward)", "Timed out waiting on ranks 0 and 2", "ChildFailedError"],
     "Rank 1 deadlocked on a lock it already held in its data code at step 2, so ranks 0 and 2 waited in the DDP all_reduce until the 25 s gloo timeout; only rank 0 had the faulthandler watchdog armed, so its dump shows only the waiting side.",
     "Fix the self-deadlock (non-reentrant lock acquired twice) in rank 1's data code.",
     "torchrun 3 ranks; job.py --mode hang --hang-kind lock --culprit 1 --step 2 --fh-later 20 --fh-ranks 0 --pg-timeout 25")
case("run-r71b-torchrun-fhlater-logdir-r3", "dist.collective_timeout", 3, GLOO_TO, [FH_TO],
     ["faulthandler dumps of all ranks", "Timed out waiting on ranks 0-2", "ChildFailedError"],
     "Rank 3 blocked in load_batch at step 2, so the other ranks waited in the DDP gradient all_reduce until the 30 s gloo timeout; the faulthandler dumps at 20 s show rank 3 in load_batch.",
     HANG_FIX, "torchrun 4 ranks --log-dir --redirects 3 --tee 3; job.py --mode hang --culprit 3 --step 2 --fh-later 20 --pg-timeout 30",
     dfile="auto")
# (b) faulthandler.enable + native crash / abort
SEGV_ROOT = "Rank {r} dereferenced a NULL pointer in its own code (ctypes.string_at(0) in {where}) and died of SIGSEGV; faulthandler printed the thread stacks, the other ranks then lost their gloo peer."
SEGV_FIX = "Fix the invalid native memory access in the job's own code (ctypes call with a NULL pointer)."
ABRT_ROOT = "Rank {r} called os.abort() in its own data code and died of SIGABRT; faulthandler printed its thread stacks and the launcher tore the job down."
ABRT_FIX = "Remove/handle the abort path in the job's data code (raise a Python exception instead)."
case("run-r71b-torchrun-fhenable-segv-r1", "user.code_error", 1, SEGV, [r"failed \(exitcode: -11\) local_rank: 1"],
     ["Connection reset by peer on ranks 0 and 2", "ChildFailedError"], SEGV_ROOT.format(r=1, where="load_batch"), SEGV_FIX,
     "torchrun 3 ranks; job.py --mode segv --culprit 1 --step 3 --fh-enable")
case("run-r71b-spawn-fhenable-abort-r3", "user.code_error", 3, ABRT, [r"process 3 terminated with signal SIGABRT"],
     ["mp.spawn terminates processes 0-2"], ABRT_ROOT.format(r=3), ABRT_FIX,
     "mp.spawn 4 ranks; job.py --mode abort --culprit 3 --step 3 --fh-enable")
case("run-r71b-torchrun-fhenable-segv-thread-r2", "user.code_error", 2, SEGV, [r"failed \(exitcode: -11\) local_rank: 2"],
     ["survivors SIGTERMed by torchrun", "ChildFailedError"], SEGV_ROOT.format(r=2, where="its prefetch thread"), SEGV_FIX,
     "torchrun 4 ranks; job.py --mode segv --in-thread --culprit 2 --step 4 --fh-enable")
case("run-r71b-torchrun-fhenable-segv-r0", "user.code_error", 0, SEGV, [r"failed \(exitcode: -11\) local_rank: 0"],
     ["Connection reset/closed by peer on ranks 1 and 2", "ChildFailedError"], SEGV_ROOT.format(r=0, where="load_batch"), SEGV_FIX,
     "torchrun 3 ranks; job.py --mode segv --culprit 0 --step 5 --fh-enable")
case("run-r71b-torchrun-fhenable-abort-r2", "user.code_error", 2, ABRT, [r"failed \(exitcode: -6\) local_rank: 2"],
     ["Connection reset/closed by peer on the other ranks", "ChildFailedError"], ABRT_ROOT.format(r=2), ABRT_FIX,
     "torchrun 3 ranks; job.py --mode abort --culprit 2 --step 2 --fh-enable")
case("run-r71b-spawn-fhenable-segv-r1", "user.code_error", 1, SEGV, [r"process 1 terminated with signal SIGSEGV"],
     ["mp.spawn terminates the other processes"], SEGV_ROOT.format(r=1, where="load_batch"), SEGV_FIX,
     "mp.spawn 3 ranks; job.py --mode segv --culprit 1 --step 3 --fh-enable")
# (c) py-spy watchdog
case("run-r71b-torchrun-pyspy-hang-r2", "dist.collective_timeout", 2, GLOO_TO,
     [r"no training progress for \d+s", r"rank 2 \(pid \d+\) is behind the others"],
     ["watchdog's py-spy dump of rank 2 (in load_batch)", "Timed out waiting on ranks 0 and 1", "ChildFailedError"],
     "Rank 2 blocked in load_batch at step 4 so ranks 0 and 1 waited in the DDP all_reduce until the 30 s gloo timeout; the external watchdog's py-spy dump of the lagging rank shows it in time.sleep in load_batch.",
     HANG_FIX, "watchdog.py --stall 10 (py-spy dump of lagging rank) around torchrun 3 ranks; job.py --mode hang --culprit 2 --step 4 --pg-timeout 30")
case("run-r71b-spawn-pyspy-all-kill-r1", "dist.collective_timeout", 1, r"no training progress for \d+s",
     [r"rank 1 \(pid \d+\) is behind the others"],
     ["py-spy dumps of all 4 ranks", "watchdog SIGTERMs all ranks", "process N terminated with signal SIGTERM"],
     "Rank 1 blocked in load_batch at step 3 so the others waited in the DDP all_reduce; the external watchdog saw no progress, py-spy-dumped every rank (rank 1 in load_batch, the rest in backward) and killed the job before the 120 s gloo timeout.",
     HANG_FIX, "watchdog.py --stall 10 --all --kill around mp.spawn 4 ranks; job.py --mode hang --culprit 1 --step 3 --pg-timeout 120")
# (d) excepthook / signal handlers
case("run-r71b-torchrun-excepthook-raise-r2", "user.code_error", 2, r"ValueError: corrupt record in shard 002: expected 16 features, got 15",
     [r"failed \(exitcode: 1\) local_rank: 2"],
     ["excepthook all-thread dumps on ranks 1-3", "RuntimeError Connection closed by peer on ranks 1 and 3", "ChildFailedError"],
     "Rank 2's data code raised ValueError (corrupt record) at step 3; its sys.excepthook printed every thread's stack before the traceback, and the other ranks then lost their gloo peer.",
     "Fix or skip the corrupt record in shard 002 (validate records in the data loader).",
     "torchrun 4 ranks; job.py --mode raise --culprit 2 --step 3 --excepthook")
case("run-r71b-torchrun-usr1-watchdog-hang-r1", "dist.collective_timeout", 1, GLOO_TO,
     [r"no training progress for \d+s", r"rank 1 \(pid \d+\) is behind the others"],
     ["SIGUSR1 stack dumps (sys._current_frames) printed by the ranks", "Timed out waiting on ranks 0 and 2", "ChildFailedError"],
     "Rank 1 blocked in load_batch at step 3 so ranks 0 and 2 waited in the DDP all_reduce until the 30 s gloo timeout; the watchdog sent SIGUSR1 and the job's handler printed each rank's threads (rank 1 in load_batch).",
     HANG_FIX, "watchdog.py --stall 10 --action usr1 --all around torchrun 3 ranks; job.py --usr1 frames --mode hang --culprit 1 --step 3 --pg-timeout 30")
case("run-r71b-torchrun-sigterm-dump-sigkill-r3", "mem.host_oom", 3, r"failed \(exitcode: -9\) local_rank: 3 \(pid: \d+\)",
     [],
     ["Connection reset by peer on ranks 0 and 2", "SIGTERM handler stack dump on rank 1", "ChildFailedError"],
     "Rank 3 was SIGKILLed at step 4 (no traceback, exit -9), the pattern of the kernel OOM killer; the others lost their gloo peer and were SIGTERMed, where the job's SIGTERM handler dumped their stacks.",
     "Find what killed rank 3 (dmesg / cgroup memory limit) and reduce its host memory use or raise the limit.",
     "torchrun 4 ranks; job.py --mode sigkill --culprit 3 --step 4 --sigterm-dump (os.kill(self, SIGKILL))")
case("run-r71b-torchrun-fhusr1-hang-r0", "dist.collective_timeout", 0, GLOO_TO,
     [r"no training progress for \d+s", r"rank 0 \(pid \d+\) is behind the others"],
     ["faulthandler SIGUSR1 all-thread dumps of all 3 ranks", "Timed out waiting on ranks 1 and 2", "ChildFailedError"],
     "Rank 0 blocked in load_batch at step 3 so ranks 1 and 2 waited in the DDP all_reduce until the 30 s gloo timeout; the watchdog's SIGUSR1 made faulthandler dump every rank (rank 0 in load_batch).",
     HANG_FIX, "watchdog.py --stall 10 --action usr1 --all around torchrun 3 ranks; job.py --usr1 fh --mode hang --culprit 0 --step 3 --pg-timeout 30")
case("run-r71b-torchrun-excepthook-raise-r0", "user.code_error", 0, r"KeyError: 'attention_mask'",
     [r"failed \(exitcode: 1\) local_rank: 0"],
     ["excepthook all-thread dumps on other ranks", "Connection closed/reset by peer on ranks 1 and 2", "ChildFailedError"],
     "Rank 0's data code looked up a missing 'attention_mask' key at step 2 and raised KeyError; its excepthook printed every thread's stack and the other ranks lost their gloo peer.",
     "Provide 'attention_mask' in the samples or stop requiring it in the data code.",
     "torchrun 3 ranks; job.py --mode raise --exc KeyError --culprit 0 --step 2 --excepthook --fh-enable")
case("run-r71b-spawn-sigterm-dump-sigkill-r1", "mem.host_oom", 1, r"process 1 terminated with signal SIGKILL",
     [], ["SIGTERM handler stack dumps of ranks 0,2,3 when mp.spawn terminates them"],
     "Rank 1 was SIGKILLed at step 3 (no traceback), the pattern of the kernel OOM killer; mp.spawn then SIGTERMed the others, whose handler dumped their stacks.",
     "Find what killed rank 1 (dmesg / cgroup memory limit) and reduce its host memory use or raise the limit.",
     "mp.spawn 4 ranks; job.py --mode sigkill --culprit 1 --step 3 --sigterm-dump (os.kill(self, SIGKILL))")
# healthy
for cid, how in [("run-r71b-torchrun-healthy-periodic-dump", "torchrun 3 ranks; job.py --steps 10 --step-time 0.5 --fh-later 2 --fh-repeat --fh-ranks 0 (periodic faulthandler dump on rank 0 every 2 s)"),
                 ("run-r71b-torchrun-healthy-usr1-dump", "torchrun 4 ranks; job.py --usr1 print_stack --self-usr1 2 --step 4 (rank 0 sends SIGUSR1 to rank 2, which prints its stacks)"),
                 ("run-r71b-spawn-healthy-fhusr1", "mp.spawn 3 ranks; job.py --usr1 fh --self-usr1 1 --step 3 (faulthandler.register(SIGUSR1) dump of rank 1)")]:
    case(cid, "none", None, None, [], [], "Healthy run: the stack dumps are printed on purpose for debugging and training finishes.",
         "Nothing to fix.", how, fatal=False)


def find(log, pat):
    for line in log.splitlines():
        m = re.search(pat, line)
        if m:
            return m.group(0)
    return None


for cid, c in C.items():
    d = os.path.join(POOL, cid)
    if not os.path.isfile(os.path.join(d, "log.txt")):
        print("MISSING", cid); continue
    log = open(os.path.join(d, "log.txt"), errors="replace").read()
    dec = find(log, c["dec"]) if c["dec"] else None
    if c["dec"] and not dec:
        print("NO DECISIVE", cid, c["dec"]); continue
    also = [x for x in (find(log, p) for p in c["also"]) if x]
    lab = {"id": cid, "source": f"real run: tests/corpus/generators/launchers/round71b/run_all.sh {cid}, torch 2.13.0 CPU, gloo",
           "category": c["category"], "fatal": c["fatal"], "decisive_line": dec, "also_acceptable": also,
           "initiating_rank": c["rank"], "collateral": c["coll"], "operator": None, "root_cause": c["root"], "fix": c["fix"],
           "launcher": "torchrun" if "torchrun" in cid else "mp.spawn", "framework": "plain", "genuine": False,
           "induced_how": c["how"], "confirmed_by": "induced", "confidence": "high"}
    if c["dfile"] and os.path.isdir(os.path.join(d, "ranks")):
        for root, _, files in sorted(os.walk(os.path.join(d, "ranks"))):
            for f in sorted(files):
                p = os.path.join(root, f)
                if dec in open(p, errors="replace").read():
                    lab["decisive_file"] = os.path.relpath(p, os.path.join(d, "ranks")); break
            if "decisive_file" in lab:
                break
    json.dump(lab, open(os.path.join(d, "label.json"), "w"), indent=1, ensure_ascii=False)
    print("ok", cid, c["category"], c["rank"], repr(dec))
