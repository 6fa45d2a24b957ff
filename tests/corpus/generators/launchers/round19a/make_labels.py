"""Write label.json for every round-19a case from what was INDUCED (rank, fault, category fixed below), taking the
decisive line (and also-acceptable / collateral lines) from the log itself (first line matching each pattern) and
CHECKING that each is an exact substring of a line of log.txt. Also refuses logs that name the scenario.
Exits 1 if any check fails.

usage: python make_labels.py [--pool DIR] [--job DIR] [case-id ...]
"""
import argparse, json, os, re, sys

HERE = os.path.dirname(os.path.abspath(__file__))
R = r"\[rank{r}\]: "
PEER = (r"\[rank{r}\]: RuntimeError: \[[^\]]+\] (?:Connection closed by peer \[[^\]]+\]:\d+|"
        r"Read error \[[^\]]+\]:\d+: Connection reset by peer)")
TOUT = r"\[rank{r}\]: RuntimeError: \[[^\]]+\] Timed out waiting 20000ms for (?:send|recv) operation to complete"
TR_FAIL = (r"E\d+ [\d:.]+ \d+ torch/distributed/elastic/multiprocessing/api\.py:\d+\] failed \(exitcode: {e}\) "
           r"local_rank: {r} \(pid: (?P<pid>\d+)\) of binary: \S+")
EXITC = r"exitcode  : {e} \(pid: {pid}\)  \({sig}\)"
SIGC = r"traceback : Signal {n} \({sig}\) received by PID {pid}"
CHILD = r"torch\.distributed\.elastic\.multiprocessing\.errors\.ChildFailedError:"
TR_TERM = r"W\d+ [\d:.]+ \d+ torch/distributed/elastic/multiprocessing/api\.py:\d+\] Sending process \d+ closing signal SIGTERM"
SP_TERM = r"W\d+ [\d:.]+ \d+ torch/multiprocessing/spawn\.py:\d+\] Terminating process \d+ via signal SIGTERM"
SP_EXIT = r"torch\.multiprocessing\.spawn\.ProcessExitedException: process {r} terminated with {what}"
SRUN_TASK = r"srun: error: \S+: task {r}: {what}"
SRUN_TERM = r"srun: error: \S+: tasks [\d,-]+: Terminated"
SRUN_EXIT1 = r"srun: error: \S+: tasks? [\d,-]+: Exited with exit code 1"
STEP_CANCEL = r"slurmstepd-\S+: error: \*\*\* STEP \d+\.0 ON \S+ CANCELLED AT \S+ \*\*\*"
MPI_SIG = r"mpirun noticed that process rank {r} with PID \d+ on node \S+ exited on signal {n} \({sig}\)\."
MPI_EXIT = r"mpirun detected that one or more processes exited with non-zero status, thus causing"
MPI_PRIMARY = r"Primary job  terminated normally, but 1 process returned"
SH_EXIT = r"launch_ranks: rank {r} \(pid \d+\) exited with status {s}"
SYSEXIT = r"bad config: lr must be positive"
ZLIB = r"zlib\.error: Error -3 while decompressing data: [\w ]+"
THREAD = r"Exception in thread prefetch:"
CORRUPT = r"ValueError: corrupt sample \d+ in shard-\d+\.rec: record header checksum mismatch"
CAUGHT = r"ValueError: Caught ValueError in DataLoader worker process \d\."

TR = "torchrun --nnodes 1 --nproc-per-node {n} (console output, no --log-dir/--tee), world size {n}"
SP = ("spawn_job19.py: torch.multiprocessing.spawn(train19.run, nprocs={n}, join=True) (start method spawn), "
      "world size {n}; the ProcessExitedException/ProcessRaisedException is uncaught in the parent")
MPI = ("mpirun --oversubscribe --tag-output -np {n} (Open MPI 4.1.4, run as root), ranks from OMPI_COMM_WORLD_RANK/"
       "SIZE, env:// rendezvous (MASTER_ADDR/MASTER_PORT exported with -x), world size {n}")
SRUN = ("srun --label -N1 -n {n} --kill-on-bad-exit=1 (Slurm 22.05, single node, proctrack/pgid), ranks from "
        "SLURM_PROCID/SLURM_NTASKS, env:// rendezvous, world size {n}")
SRUN_NK = ("srun --label -N1 -n {n} (no --kill-on-bad-exit: srun waits for every task), ranks from SLURM_PROCID, "
           "env:// rendezvous, world size {n}")
ACC = ("accelerate launch --config_file acc_cpu.yaml --num_processes {n} (Accelerate 1.16.0, distributed_type "
       "MULTI_GPU with use_cpu: true, which Accelerate launches through torchrun), the script uses "
       "Accelerator(cpu=True) + InitProcessGroupKwargs(timeout=20 s) (gloo, MULTI_CPU) and prepares the model as DDP, "
       "world size {n}")
LIT = ("python train_lightning19.py --devices {n}: Lightning 2.6.6 Trainer(accelerator='cpu', devices={n}, "
       "strategy=DDPStrategy(process_group_backend='gloo', timeout=20 s)); Lightning's subprocess launcher re-runs "
       "the script for ranks 1..{m}; DataLoader with 2 workers per rank; world size {n}")
SH = ("launch_ranks.sh {n} PORT: a plain bash launcher that starts {n} `python train19.py` processes with "
      "MASTER_ADDR/MASTER_PORT/RANK/WORLD_SIZE set and reports each one's exit status as it ends, world size {n}")

KILLFIX = "Find and fix the native crash in rank {r}'s own code (run it under faulthandler/gdb to get its stack)."
SEGV_ROOT = ("Rank {r} died of a segmentation fault (SIGSEGV, exit -11, no Python traceback) in the job's own "
             "native call after step {k}; the other ranks lost their gloo peer or were stopped by the launcher.")
ABRT_ROOT = ("Rank {r} aborted (SIGABRT, exit -6, no Python traceback) after step {k}; the other ranks lost their "
             "gloo peer or were stopped by the launcher.")
ABRT_FIX = "Find what calls abort() in rank {r} (enable faulthandler / run under gdb) and fix it."
EXIT3_ROOT = ("Rank {r} exited silently with exit code 3 (os._exit, no traceback) after step {k}; the other ranks "
              "lost their gloo peer or were stopped by the launcher.")
EXIT3_FIX = "Find the code path in rank {r} that exits with status 3 (a bare os._exit/sys.exit(3)) and make it raise a proper error or not exit mid-training."
SYS_ROOT = ("Rank {r} stopped itself with sys.exit('bad config: lr must be positive') at step {k} (its per-rank lr "
            "schedule had a negative value); the other ranks lost their gloo peer.")
SYS_FIX = "Fix the learning-rate schedule/config of rank {r} (lr must be positive) and validate it before training starts."
EARLY_ROOT = ("Rank {r} ran out of data after {k} steps (uneven shards), left the training loop and went on to a "
              "local evaluation (it later exited 0), while the other ranks blocked in step {k1}'s collectives and "
              "timed out after 20 s.")
EARLY_FIX = ("Give every rank the same number of batches (drop_last / equal shards, or DDP's join() context "
             "manager for uneven inputs).")
TERM_ROOT = "Rank {r} was terminated by an external SIGTERM (exit -15 / 'Terminated') after step {k}; no error of its own."
TERM_FIX = ("Find who sent SIGTERM to rank {r}'s process (an operator, a watchdog or the scheduler) and stop it, or "
            "handle SIGTERM by checkpointing before exit.")
WORKER_ROOT = ("A DataLoader worker of rank {r} raised ValueError on a corrupt sample of its shard ({what}); the "
               "other ranks lost their gloo peer.")
WORKER_FIX = "Repair or skip the corrupt record in rank {r}'s data shard (validate shards before training)."
THREAD_ROOT = ("Rank {r}'s background prefetch thread died on zlib.error (a corrupt compressed record in its shard); "
               "its main loop kept waiting on the empty queue, so the other ranks timed out in the next collective.")
THREAD_FIX = ("Repair the corrupt record in rank {r}'s shard, and make the prefetch thread forward its exception to the "
              "main thread (or use a queue timeout) so the rank fails fast.")

CASES = {
    "run19-torchrun-segv": dict(
        launcher="torchrun", framework="plain", n=4, rank=3, k=4, category="user.code_error", fault="segv:3:4",
        dec=TR_FAIL.format(e=-11, r=3), also=[EXITC.format(e=-11, pid="{pid}", sig="SIGSEGV"),
                                             SIGC.format(n=11, sig="SIGSEGV", pid="{pid}")],
        coll=[PEER.format(r=r"\d"), TR_TERM, CHILD],
        induced=TR + "; rank 3 calls ctypes.string_at(0) (reads address 0) right after its step-4 optimizer step",
        root=SEGV_ROOT, fix=KILLFIX),
    "run19-mpspawn-segv": dict(
        launcher="mp.spawn", framework="plain", n=5, rank=0, k=3, category="user.code_error", fault="segv:0:3",
        dec=SP_EXIT.format(r=0, what="signal SIGSEGV"), coll=[SP_TERM],
        induced=SP + "; rank 0 calls ctypes.string_at(0) right after its step-3 optimizer step",
        root=SEGV_ROOT, fix=KILLFIX,
        notes="torch.multiprocessing SIGTERMed ranks 1-4 before they reported a gloo error."),
    "run19-mpirun-abort": dict(
        launcher="mpirun", framework="plain", n=3, rank=2, k=4, category="user.code_error", fault="abort:2:4",
        dec=MPI_SIG.format(r=2, n=6, sig="Aborted"), coll=[PEER.format(r=r"\d"), MPI_PRIMARY],
        induced=MPI + "; rank 2 calls os.abort() right after its step-4 optimizer step",
        root=ABRT_ROOT, fix=ABRT_FIX),
    "run19-torchrun-abort": dict(
        launcher="torchrun", framework="plain", n=6, rank=0, k=3, category="user.code_error", fault="abort:0:3",
        dec=TR_FAIL.format(e=-6, r=0), also=[EXITC.format(e=-6, pid="{pid}", sig="SIGABRT"),
                                            SIGC.format(n=6, sig="SIGABRT", pid="{pid}")],
        coll=[PEER.format(r=r"\d"), TR_TERM, CHILD],
        induced=TR + "; rank 0 calls os.abort() right after its step-3 optimizer step",
        root=ABRT_ROOT, fix=ABRT_FIX,
        notes=("Collateral SIGABRT: rank 1 first failed on its lost gloo peer (Connection reset by peer) and then "
               "aborted while exiting ('terminate called without an active exception'), so the Failures section "
               "also lists rank 1 with exitcode -6; the Root Cause section and the launcher's 'failed (exitcode: -6) "
               "local_rank: 0' line name rank 0, which aborted first without any error of its own.")),
    "run19-srun-exit3": dict(
        launcher="srun", framework="plain", n=4, rank=3, k=5, category="user.code_error", fault="exit3:3:5",
        dec=SRUN_TASK.format(r=3, what="Exited with exit code 3"), coll=[PEER.format(r=r"\d"), STEP_CANCEL, SRUN_TERM],
        induced=SRUN + "; rank 3 calls os._exit(3) after its step-5 optimizer step (prints nothing)",
        root=EXIT3_ROOT, fix=EXIT3_FIX),
    "run19-mpspawn-exit3": dict(
        launcher="mp.spawn", framework="plain", n=3, rank=1, k=4, category="user.code_error", fault="exit3:1:4",
        dec=SP_EXIT.format(r=1, what="exit code 3"), coll=[SP_TERM],
        induced=SP + "; rank 1 calls os._exit(3) after its step-4 optimizer step (prints nothing)",
        root=EXIT3_ROOT, fix=EXIT3_FIX),
    "run19-accelerate-sysexit": dict(
        launcher="accelerate", framework="accelerate", n=4, rank=0, k=3, category="user.code_error",
        fault="sysexit:0:3", dec=SYSEXIT, also=[TR_FAIL.format(e=1, r=0)],
        coll=[PEER.format(r=r"\d"), TR_TERM, CHILD],
        induced=ACC + "; rank 0's lr schedule has a negative value at step 3: the loop calls "
                      "sys.exit('bad config: lr must be positive') (SystemExit with a message, exit code 1)",
        root=SYS_ROOT, fix=SYS_FIX,
        notes=("The message line carries no rank; the launcher's 'failed (exitcode: 1) local_rank: 0' line and the "
               "Root Cause section (rank 0, no traceback/error_file) tie it to rank 0.")),
    "run19-lightning-sysexit": dict(
        launcher="lightning", framework="lightning", n=4, rank=3, k=4, category="user.code_error",
        fault="sysexit:3:4", dec=SYSEXIT, coll=[PEER.format(r=r"\d")],
        induced=LIT + "; in training_step rank 3's lr schedule has a negative value at batch 4: "
                      "sys.exit('bad config: lr must be positive')",
        root=SYS_ROOT, fix=SYS_FIX,
        notes=("The message line carries no rank and Lightning's launcher names no failed rank; rank 3 is the only "
               "rank without a gloo 'Connection closed by peer' traceback and logs no step-4 line.")),
    "run19-srun-early-exit0": dict(
        launcher="srun", framework="plain", n=3, rank=2, k=3, category="dist.collective_timeout", fault="early:2:3",
        dec=TOUT.format(r=r"\d"), also=[TOUT.format(r=r"\d")], coll=[SRUN_EXIT1],
        induced=SRUN_NK + "; rank 2's shard holds 3 batches, the others' 8: after step 3 rank 2 leaves the loop, logs "
                          "'epoch finished', runs a ~45 s local evaluation without collectives, destroys the process "
                          "group and exits 0; PG timeout 20 s",
        root=EARLY_ROOT, fix=EARLY_FIX,
        notes="srun reports only tasks 0-1 (exit code 1); task 2 ends later with exit code 0 ('done')."),
    "run19-shell-early-exit0": dict(
        launcher="shell", framework="plain", n=5, rank=0, k=4, category="dist.collective_timeout", fault="early:0:4",
        dec=TOUT.format(r=r"\d"), also=[TOUT.format(r=r"\d")], coll=[SH_EXIT.format(r=r"\d", s=1)],
        induced=SH + "; rank 0's shard holds 4 batches, the others' 8: after step 4 rank 0 leaves the loop, runs a "
                     "~45 s local evaluation without collectives and exits 0; PG timeout 20 s",
        root=EARLY_ROOT, fix=EARLY_FIX,
        notes="launch_ranks.sh reports ranks 1-4 exiting with status 1 and rank 0 (last) with status 0."),
    "run19-srun-ext-sigterm": dict(
        launcher="srun", framework="plain", n=5, rank=1, k=3, category="user.code_error", fault="pidfile:1:3",
        dec=SRUN_TASK.format(r=1, what="Terminated"), coll=[STEP_CANCEL, SRUN_TERM],
        induced=SRUN + "; the driver (run_all.sh) sends `kill -TERM <pid>` to rank 1's python process from outside "
                       "as soon as rank 1 has logged its step-3 line",
        root=TERM_ROOT, fix=TERM_FIX,
        notes="srun killed the other tasks at once (--kill-on-bad-exit), before they printed any gloo error."),
    "run19-torchrun-ext-sigterm": dict(
        launcher="torchrun", framework="plain", n=3, rank=2, k=4, category="user.code_error", fault="pidfile:2:4",
        dec=TR_FAIL.format(e=-15, r=2), also=[EXITC.format(e=-15, pid="{pid}", sig="SIGTERM"),
                                             SIGC.format(n=15, sig="SIGTERM", pid="{pid}")],
        coll=[TR_TERM, CHILD],
        induced=TR + "; the driver (run_all.sh) sends `kill -TERM <pid>` to rank 2's worker process from outside as "
                     "soon as rank 2 has logged its step-4 line",
        root=TERM_ROOT, fix=TERM_FIX,
        notes=("The agent's own SIGTERMs to ranks 0 and 1 follow; in the Failures section those ranks show -15 "
               "too, the Root Cause section names rank 2.")),
    "run19-lightning-dataloader-worker": dict(
        launcher="lightning", framework="lightning", n=3, rank=1, k=4, category="user.code_error", fault="worker:1:4",
        dec=R.format(r=1) + CORRUPT, also=[R.format(r=1) + CAUGHT], coll=[PEER.format(r=r"\d")],
        induced=LIT + "; sample 3 of rank 1's shard (its 4th batch) is corrupt: ShardDataset.__getitem__ raises "
                      "ValueError in a DataLoader worker process, re-raised in rank 1's main process",
        root=WORKER_ROOT, fix=WORKER_FIX),
    "run19-mpspawn-dataloader-worker": dict(
        launcher="mp.spawn", framework="plain", n=4, rank=3, k=3, category="user.code_error", fault="worker:3:3",
        dec=CORRUPT, also=[CAUGHT, r"-- Process 3 terminated with the following error:"], coll=[SP_TERM],
        induced=SP + "; train19.py --workers 2 (DataLoader with 2 worker processes per rank): sample 2 of rank 3's "
                     "shard (its 3rd batch) is corrupt: ShardDataset.__getitem__ raises ValueError in a worker",
        root=WORKER_ROOT, fix=WORKER_FIX,
        notes="torch.multiprocessing SIGTERMed ranks 0-2 before they reported a gloo error."),
    "run19-accelerate-ckpt-permission": dict(
        launcher="accelerate", framework="accelerate", n=3, rank=0, k=3, category="user.code_error", fault="",
        dec=R.format(r=0) + r"NotADirectoryError: \[Errno 20\] Not a directory: '/etc/hostname/ckpt'",
        also=[TR_FAIL.format(e=1, r=0)], coll=[PEER.format(r=r"\d"), CHILD],
        induced=ACC + "; --ckpt-dir /etc/hostname/ckpt (a path under a regular file): rank 0, the only rank that "
                      "saves, fails in os.makedirs at its step-3 checkpoint",
        root=("Rank 0 could not write its step-3 checkpoint: the configured --ckpt-dir /etc/hostname/ckpt lies under "
              "a regular file (NotADirectoryError); the other ranks lost their gloo peer at the checkpoint barrier."),
        fix="Point --ckpt-dir at a writable directory (check it exists and is a directory before training)."),
    "run19-srun-ckpt-permission": dict(
        launcher="srun", framework="plain", n=8, rank=7, k=3, category="user.code_error", fault="",
        dec=R.format(r=7) + r"FileExistsError: \[Errno 17\] File exists: '/home/user/job/ckpt/shard_7'",
        also=[SRUN_TASK.format(r=7, what="Exited with exit code 1")],
        coll=[PEER.format(r=r"\d"), STEP_CANCEL, SRUN_TERM],
        induced=SRUN + "; --ckpt-dir <job>/ckpt --shard-ckpt: every rank saves <dir>/shard_<rank>/step_3.pt; a stray "
                       "regular file <job>/ckpt/shard_7 exists, so rank 7's os.makedirs(..., exist_ok=True) fails",
        root=("Rank 7 could not create its checkpoint shard directory: ckpt/shard_7 already exists as a regular file "
              "(FileExistsError); the other ranks lost their gloo peer at the checkpoint barrier."),
        fix="Remove/rename the stray file ckpt/shard_7 (or write checkpoints to a fresh directory)."),
    "run19-mpirun-thread-exc": dict(
        launcher="mpirun", framework="plain", n=6, rank=5, k=4, category="user.code_error", fault="thread:5:4",
        dec=ZLIB, also=[THREAD], coll=[TOUT.format(r=r"\d"), MPI_PRIMARY],
        induced=MPI + "; record 4 of rank 5's shard is corrupt: its prefetch thread dies with zlib.error (printed by "
                      "threading.excepthook), rank 5's main loop blocks on queue.get(); PG timeout 20 s",
        root=THREAD_ROOT, fix=THREAD_FIX,
        notes=("The thread's traceback (threading.excepthook, tagged [1,5] by mpirun) has no [rankN] prefix; ranks "
               "0-4 time out 20 s later in DDP's backward all_reduce; rank 5 never exits by itself (mpirun kills it "
               "after the first timed-out rank exits 1).")),
    "run19-accelerate-thread-exc": dict(
        launcher="accelerate", framework="accelerate", n=4, rank=2, k=3, category="user.code_error",
        fault="thread:2:3", dec=ZLIB, also=[THREAD], coll=[TOUT.format(r=r"\d"), CHILD],
        induced=ACC + "; record 3 of rank 2's shard is corrupt: its prefetch thread dies with zlib.error (printed by "
                      "threading.excepthook), rank 2's main loop blocks on queue.get()",
        root=THREAD_ROOT, fix=THREAD_FIX,
        notes=("The thread's traceback (threading.excepthook) carries no rank at all; rank 2 is the only rank with no "
               "step-3 line and no gloo timeout traceback. torchrun's Root Cause names rank 1, the first rank that "
               "timed out (a victim); rank 2 was SIGTERMed by the agent.")),
    "run19-shell-init-wrong-world-size": dict(
        launcher="shell", framework="plain", n=4, rank=3, k=0, category="dist.peer_or_store_failure", fault="",
        dec=None, coll=[],
        induced=SH + "; rank 3 alone is started with WORLD_SIZE=5 (per-rank override RANK_ENV_3=WORLD_SIZE=5), "
                     "the others with WORLD_SIZE=4; init_process_group(env://, timeout 20 s)",
        root="Rank 3 was started with WORLD_SIZE=5 while the job has 4 ranks, so the process-group rendezvous "
             "could not complete.",
        fix="Start every rank with the same, correct WORLD_SIZE (4)."),
    "run19-mpirun-init-wrong-port": dict(
        launcher="mpirun", framework="plain", n=3, rank=2, k=0, category="dist.peer_or_store_failure", fault="",
        dec=None, coll=[],
        induced=MPI + "; MPMD command line: ranks 0-1 get -x MASTER_PORT=P, rank 2 (second app context) "
                      "MASTER_PORT=P+1 where nothing listens; init_process_group(env://, timeout 20 s)",
        root="Rank 2 was given a wrong MASTER_PORT (P+1 instead of P), so it could not reach the TCPStore and "
             "the process-group rendezvous timed out.",
        fix="Give every rank the same MASTER_ADDR/MASTER_PORT (fix the launcher's per-app environment)."),
}
# init failures: patterns chosen after reading the logs (no launcher names the failing rank there)
PATCH = {
    "run19-shell-init-wrong-world-size": dict(
        dec=r"torch\.distributed\.DistStoreError: wait timeout after 20000ms, keys: /default_pg/0//cpu//0/4",
        also=[SH_EXIT.format(r=3, s=1)],
        coll=[PEER.format(r=r"\d"), SH_EXIT.format(r="[012]", s=1)],
        notes=("Rank 3 (WORLD_SIZE=5) waits in ProcessGroupGloo's store rendezvous for the key of a 5th rank "
               "(.../0/4) and fails after 20 s; its traceback has no [rankN] prefix (the prefix only appears once "
               "init_process_group returned), while ranks 0-2 finished init, blocked in DDP's parameter check and "
               "failed with [rank0]/[rank1]/[rank2] gloo Read error / Connection closed by peer when rank 3 exited. "
               "launch_ranks.sh reports rank 3 exiting first.")),
    "run19-mpirun-init-wrong-port": dict(
        dec=(r"\[1,2\]<stderr>:\[E[\d. :]+socket\.cpp:\d+\] \[c10d\] The client socket has timed out after "
             r"20000ms while trying to connect to \(127\.0\.0\.1, \d+\)\."),
        also=[r"torch\.distributed\.DistStoreError: Timed out after \d+ seconds waiting for clients\. 2/3 clients joined\."],
        coll=[r"torch\.distributed\.DistStoreError: wait timeout after 20000ms, keys: /default_pg/0//cpu//0/0",
              MPI_PRIMARY, r"Process name: \[\[\d+,1\],1\]"],
        notes=("Rank 2 ([1,2] in mpirun's tags) cannot connect to MASTER_PORT+1 and keeps retrying; rank 0's TCPStore "
               "server gives up waiting for clients (2/3 joined) and rank 1 times out waiting for rank 0's gloo key; "
               "mpirun then names rank 1 ([[N,1],1]) as the first process that exited non-zero and kills rank 2. "
               "Rank 0's tagged traceback is interleaved character-wise (mpirun --tag-output on unbuffered stderr).")),
}

LEAKS = re.compile(r"run19|induced|TRAIN_FAULT|pidfile|[/'\"](?:segv|abort|exit3|sysexit|early|thread|worker)[/'\"]",
                   re.I)


def first(pattern, lines, skip=()):
    rx = re.compile(pattern)
    for ln in lines:
        m = rx.search(ln)
        if m and m.group(0).rstrip() not in skip:
            return m
    return None


def distinct(pattern, lines, limit=2, skip=()):
    rx, out = re.compile(pattern), []
    for ln in lines:
        m = rx.search(ln)
        if m and m.group(0).rstrip() not in out and m.group(0).rstrip() not in skip:
            out.append(m.group(0).rstrip())
        if len(out) >= limit:
            break
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pool", default="/work/helpers/stage19a")
    ap.add_argument("--job", default="/tmp/r19a/job")
    ap.add_argument("ids", nargs="*")
    a = ap.parse_args()
    bad = 0
    for cid, c in CASES.items():
        if a.ids and cid not in a.ids:
            continue
        c = dict(c, **PATCH.get(cid, {}))
        d = os.path.join(a.pool, cid)
        if not os.path.exists(os.path.join(d, "log.txt")):
            print(f"MISSING {cid}"); bad += 1; continue
        lines = open(os.path.join(d, "log.txt"), encoding="utf-8", errors="replace").read().split("\n")
        problems = []
        m = first(c["dec"], lines) if c["dec"] else None
        dec = m.group(0).rstrip() if m else None
        if not dec:
            problems.append("decisive pattern not found")
        pid = m.groupdict().get("pid") if m else None
        also = [x for p in c.get("also", []) for x in distinct(p.replace("{pid}", pid or r"\d+"), lines, skip=(dec,))]
        coll = [x for p in c["coll"] for x in distinct(p, lines)]
        if not coll:
            problems.append("no collateral line found")
        for s in ([dec] if dec else []) + also + coll:
            if not any(s in ln for ln in lines):
                problems.append(f"not a substring of a log line: {s!r}")
        for ln in lines:
            if LEAKS.search(ln):
                problems.append(f"scenario leak: {ln[:120]!r}"); break
        cmd, rc = "", "?"
        try:
            cmd = " ; then ".join(open(os.path.join(a.job, "out", cid + ".cmd")).read().strip().split("\n"))
            cmd = cmd.replace("TRAIN_FAULT= ", "")
            rc = open(os.path.join(a.job, "out", cid + ".rc")).read().strip()
        except OSError:
            pass
        cmd = cmd.replace(a.job, "/home/user/job")
        fmt = dict(r=c["rank"], k=c["k"], k1=c["k"] + 1, n=c["n"], m=c["n"] - 1,
                   what=(re.search(CORRUPT, "\n".join(lines)) or [""])[0].replace("ValueError: ", ""))
        label = {
            "id": cid,
            "source": (f"real run: tests/corpus/generators/launchers/round19a/run_all.sh {cid} (`{cmd}`, in the job dir), "
                       "torch 2.13.0 CPU, gloo"),
            "category": c["category"], "fatal": True, "decisive_line": dec, "also_acceptable": also,
            "initiating_rank": c["rank"], "collateral": coll, "operator": None,
            "root_cause": c["root"].format(**fmt), "fix": c["fix"].format(**fmt),
            "launcher": c["launcher"], "framework": c["framework"], "genuine": False,
            "induced_how": c["induced"].format(**fmt), "confirmed_by": "induced", "confidence": "high",
            "torch_version": "2.13.0",
            "notes": (f"World size {c['n']}; launcher exit status {rc}. " + c.get("notes", "")).strip(),
        }
        if problems:
            bad += 1
            print(f"FAIL {cid}: " + "; ".join(problems))
        else:
            print(f"ok   {cid}: {dec[:110]}")
        with open(os.path.join(d, "label.json"), "w") as f:
            json.dump(label, f, indent=2, ensure_ascii=False)
            f.write("\n")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
