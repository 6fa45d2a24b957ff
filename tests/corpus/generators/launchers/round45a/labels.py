"""Write label.json for every round-45a case in OUT (argv[1], default /work/helpers/stage45).
Category and initiating rank come from what run_all.sh induced; the decisive line is the first line (of log.txt, or
of the rank's file under ranks/) matching the given regex, kept whole, checked to be an exact substring of that file."""
import glob, json, re, sys
from pathlib import Path

OUT = Path(sys.argv[1] if len(sys.argv) > 1 else "/work/helpers/stage45")
SRC = "real run: tests/corpus/generators/launchers/round45a/run_all.sh {id}, torch 2.13.0 CPU, gloo"
UCE, OOM, NONE, TD = "user.code_error", "mem.host_oom", "none", "dist.teardown_abort"
PEER = "the other ranks fail in their next collective with gloo 'Connection closed by peer'"
TOUT = "the other ranks time out after 20 s in the step's collective (gloo 'Timed out waiting 20000ms')"
TERM = {"torchrun": "torchrun SIGTERMs the remaining ranks", "mp.spawn": "mp.spawn SIGTERMs the remaining ranks",
        "mpirun": "mpirun aborts the remaining ranks"}
BPP = r"BrokenProcessPool: A process in the process pool was terminated abruptly"
C = {}


def case(id, cat, rank, dec, launcher, root, fix, how, coll=None, file=None, fatal=True, conf="high", genuine=False, also=()):
    C[id] = dict(cat=cat, rank=rank, dec=dec, launcher=launcher, root=root, fix=fix, how=how, file=file, fatal=fatal,
                 coll=coll if coll is not None else [PEER, TERM[launcher]], conf=conf, genuine=genuine, also=list(also))


# ---- Pool task raises (RemoteTraceback chain); the worker's own line is decisive
for id, r, k, l in [("run45a-torchrun-pool-raise-r2", 2, 3, "torchrun"), ("run45a-spawn-pool-raise-r1", 1, 6, "mp.spawn")]:
    case(id, UCE, r, r"KeyError: 'text'", l,
         f"At the step-{k} shard refresh a multiprocessing.Pool tokenize task of rank {r} hits a record without a 'text' key and raises KeyError: 'text', re-raised in the rank by Pool.map, which dies.",
         "Validate/repair records before tokenizing (use rec.get('text') or fix the shard's schema).",
         f"train.py --helper pool --fault pool-raise --bad-rank {r} --step {k}" + (" --atexit" if "spawn" in id else ""),
         coll=[PEER, TERM[l]] + (["rank 1's atexit metrics-flush handler raises ValueError: I/O operation on closed file (noise after the failure)"] if "spawn" in id else []))
# ---- ProcessPoolExecutor worker dies
for id, r, k, l, how in [("run45a-torchrun-ppe-sigkill-r1", 1, 3, "torchrun", "sigkill"), ("run45a-mpirun-ppe-sigkill-r2", 2, 6, "mpirun", "sigkill"),
                         ("run45a-spawn-ppe-exit-r2", 2, 3, "mp.spawn", "exit")]:
    if how == "sigkill":
        case(id, OOM, r, BPP, l,
             f"A ProcessPoolExecutor decode worker of rank {r} is SIGKILLed at the step-{k} shard refresh (no traceback of its own); the rank gets BrokenProcessPool and dies.",
             "Find what killed the pool worker (kernel OOM killer / external kill: check dmesg) and give it more memory or fewer workers.",
             f"train.py --helper ppe --fault ppe-sigkill --bad-rank {r} --step {k}: the worker does os.kill(getpid(), SIGKILL)", l, conf="medium")
    else:
        case(id, UCE, r, BPP, l,
             f"A ProcessPoolExecutor decode worker of rank {r} calls os._exit(3) at the step-{k} shard refresh; the rank gets BrokenProcessPool and dies.",
             "Do not exit the interpreter from pool task code (raise an exception instead) and fix the decoder that does.",
             f"train.py --helper ppe --fault ppe-exit --bad-rank {r} --step {k}: the worker calls os._exit(3)", l, conf="medium")
# ---- ThreadPoolExecutor future raises; re-raised by .result() later
case("run45a-mpirun-tpe-raise-r3", UCE, 3, r"FileNotFoundError: \[Errno 2\] No such file or directory", "mpirun",
     "A ThreadPoolExecutor index-reader of rank 3 fails at the step-6 shard refresh with FileNotFoundError (missing shard index); future.result() re-raises it in the rank, which dies.",
     "Point the index reader at an existing shard index (or build the missing index before training).",
     "train.py --helper tpe --fault tpe-raise --bad-rank 3 --step 6")
case("run45a-torchrun-logdir-tpe-atexit-r2", UCE, 2, r"FileNotFoundError: \[Errno 2\] No such file or directory", "torchrun",
     "A ThreadPoolExecutor index-reader of rank 2 fails at the step-3 shard refresh with FileNotFoundError (missing shard index); future.result() re-raises it, the rank dies and then its atexit metrics-flush handler raises ValueError too.",
     "Point the index reader at an existing shard index (or build the missing index before training).",
     "train.py --helper tpe --fault tpe-raise --atexit --bad-rank 2 --step 3; torchrun --log-dir --redirects 3",
     coll=["rank 2's atexit handler: ValueError: I/O operation on closed file (after the failure)", PEER, TERM["torchrun"]],
     file="attempt_0/2/stderr.log")
# ---- background prefetch thread dies; the rank hangs on queue.get(), the others time out
for id, r, k, l, f in [("run45a-torchrun-prefetch-hang-r2", 2, 3, "torchrun", None), ("run45a-spawn-prefetch-hang-r1", 1, 3, "mp.spawn", None),
                       ("run45a-torchrun-logdir-prefetch-hang-r3", 3, 6, "torchrun", "attempt_0/3/stderr.log")]:
    case(id, UCE, r, r"UnicodeDecodeError: 'utf-8' codec can't decode byte 0xff", l,
         f"Rank {r}'s background prefetch thread dies at the step-{k} shard refresh on a UnicodeDecodeError (corrupt record); the rank's main thread then waits forever on the prefetch queue, so the other ranks time out after 20 s.",
         "Decode records defensively (errors='replace' or skip corrupt ones) and propagate prefetch-thread failures to the main thread instead of blocking on queue.get() without a timeout.",
         f"train.py --helper prefetch --fault prefetch-hang --bad-rank {r} --step {k} --pg-timeout 20" + ("; torchrun --log-dir --redirects 3" if f else ""),
         coll=[TOUT, TERM[l] + " (the hung rank included)"], file=f)
# ---- subprocess.run(check=True) of prep_shard.py
for id, r, k, l in [("run45a-torchrun-subproc-fail-r3", 3, 3, "torchrun"), ("run45a-mpirun-subproc-fail-r1", 1, 3, "mpirun")]:
    case(id, UCE, r, r"prep_shard.py: error: vocab file .* not found", l,
         f"At the step-{k} shard refresh rank {r} runs prep_shard.py with a per-rank vocab path that does not exist; the tool exits 2 ('vocab file ... not found'), the rank logs its stderr and dies of CalledProcessError.",
         "Pass the tool an existing vocab file (the shared vocab.txt, not a per-rank path).",
         f"train.py --helper subproc --fault subproc-fail --bad-rank {r} --step {k}",
         also=[r"subprocess.CalledProcessError: Command .* returned non-zero exit status 2"])
case("run45a-torchrun-logdir-subproc-oom-r1", OOM, 1, r"died with <Signals.SIGKILL: 9>", "torchrun",
     "Rank 1's prep_shard.py subprocess (in a 1 GiB memory cgroup) builds a 2 GiB merge table and is SIGKILLed by the kernel OOM killer (cgroup oom_kill 1); subprocess.run(check=True) raises CalledProcessError 'died with SIGKILL' and the rank dies.",
     "Give the data-prep tool more memory (raise the cgroup/container limit) or make it build its table in smaller pieces.",
     "train.py --helper subproc --fault subproc-oom --bad-rank 1 --step 3 with OOM_CGROUP (cgroup v1, limit 1G, memsw 1G) joined by the tool only; torchrun --log-dir --redirects 3",
     file="attempt_0/1/stderr.log")
# ---- DataLoader workers
case("run45a-torchrun-dl-pool-r1", UCE, 1, r"AssertionError: daemonic processes are not allowed to have children", "torchrun",
     "Rank 1's Dataset.__getitem__ starts its own multiprocessing.Pool inside a (daemonic) DataLoader worker; the worker fails with 'daemonic processes are not allowed to have children', re-raised by the DataLoader in the rank at step 1.",
     "Do not create process pools inside Dataset.__getitem__ when num_workers > 0 (use threads, or do the parallel work in the workers themselves).",
     "train.py --helper dl-pool --fault dl-pool --bad-rank 1 (DataLoader num_workers=2; sample 5 starts a Pool)",
     also=[r"AssertionError: Caught AssertionError in DataLoader worker process"])
case("run45a-spawn-dl-oom-r2", OOM, 2, r"DataLoader worker \(pid \d+\) is killed by signal: Killed", "mp.spawn",
     "A DataLoader worker of rank 2 joins a 1 GiB memory cgroup and preloads a 2.5 GiB augmentation table; the kernel OOM killer SIGKILLs it (cgroup oom_kill 1) and the rank dies with 'DataLoader worker ... is killed by signal: Killed'.",
     "Give the DataLoader workers more memory (raise the limit) or stop preloading the big table in every worker.",
     "train.py --spawn 3 --helper dl-oom --fault dl-oom --bad-rank 2 with OOM_CGROUP (cgroup v1, limit 1G, memsw 1G) joined by that worker only",
     also=[r"DataLoader worker \(pid\(s\) \d+\) exited unexpectedly"])
# ---- healthy: the nested helper fails once and is handled
case("run45a-torchrun-healthy-pool-retry", NONE, None, None, "torchrun",
     "Healthy run: a Pool tokenize task of rank 1 raises KeyError once at step 3, the rank logs a warning with the traceback, retries with the repaired record and all ranks finish.",
     "None needed.", "train.py --helper pool --healthy pool-retry --bad-rank 1 --step 3", coll=[], fatal=False)
case("run45a-spawn-healthy-ppe-rebuild", NONE, None, None, "mp.spawn",
     "Healthy run: a ProcessPoolExecutor worker of rank 2 exits abruptly at step 3, the rank catches BrokenProcessPool, rebuilds the executor, retries and all ranks finish.",
     "None needed.", "train.py --spawn 3 --helper ppe --healthy ppe-rebuild --bad-rank 2 --step 3", coll=[], fatal=False)
case("run45a-mpirun-healthy-subproc-retry", NONE, None, None, "mpirun",
     "Healthy run: rank 2's prep_shard.py call fails once at step 3 (shard locked, exit 1), the rank logs the tool's stderr, retries and all ranks finish.",
     "None needed.", "train.py --helper subproc --healthy subproc-retry --bad-rank 2 --step 3", coll=[], fatal=False)
# ---- not induced: first run of the healthy-subproc-retry command; rank 0 aborted at shutdown after 'done'
case("run45a-mpirun-subproc-retry-teardown-r0", TD, 0, r"terminate called without an active exception", "mpirun",
     "All 4 ranks finished training ('done', nested prep_shard retry handled), then rank 0 aborted during process shutdown (std::terminate, SIGABRT) and mpirun reports it exited on signal 6.",
     "Shut down cleanly: destroy_process_group after a final barrier and let background threads finish before interpreter exit; results are complete.",
     "not induced: the first run of run_all.sh run45a-mpirun-healthy-subproc-retry aborted at teardown (the rerun, kept as that case, was clean)",
     coll=["mpirun reports rank 0 exited on signal 6 (Aborted)"], conf="medium", genuine=True,
     also=[r"exited on signal 6 \(Aborted\)"])


def first(text, rx):
    for line in text.splitlines():
        if re.search(rx, line):
            return line
    return None


for id, c in C.items():
    d = OUT / id
    if not d.is_dir():
        print("missing", id); continue
    src = d / "log.txt"
    dfile = None
    if c["file"]:
        hits = glob.glob(str(d / "ranks" / "*" / c["file"]))
        assert len(hits) == 1, (id, hits)
        src = Path(hits[0]); dfile = str(src.relative_to(d / "ranks"))
    text = src.read_text(errors="replace")
    dec = None
    if c["dec"]:
        dec = first(text, c["dec"]).strip()
        assert dec in text, id
    also = [l.strip() for l in (first(text, rx) for rx in c["also"]) if l]
    lab = {"id": id, "source": SRC.format(id=id) if not c["genuine"] else SRC.format(id="run45a-mpirun-healthy-subproc-retry") + " (first run, not induced)",
           "category": c["cat"], "fatal": c["fatal"], "decisive_line": dec, "also_acceptable": also,
           "initiating_rank": c["rank"], "collateral": c["coll"], "operator": None, "root_cause": c["root"], "fix": c["fix"],
           "launcher": c["launcher"], "framework": "plain", "genuine": c["genuine"], "induced_how": c["how"],
           "confirmed_by": "induced" if not c["genuine"] else "log", "confidence": c["conf"]}
    if dfile:
        lab["decisive_file"] = dfile
    (d / "label.json").write_text(json.dumps(lab, indent=1) + "\n")
    print(f"{id:45s} {c['cat']:24s} {c['rank']!s:5s} {dfile or 'log.txt'}: {dec}"[:230])
