# Labels for round 35b (read by mk_label.py). rc: expected launcher exit code. rank: initiating GLOBAL rank.
# worker: DataLoader worker id whose failure starts it; mk_label.py replaces {wpid} in decisive/also/root_cause by that
# worker's pid, read from the log line "worker W of rank R started (pid N)" (worker pids are not ranks).
# decisive: exact substring of one log line. also: other acceptable decisive substrings.
TR = "torchrun dl35b.py"
SP = "python dl35b.py --spawn N"
SIGTERM = "torchrun SIGTERMs the surviving ranks (exitcode -15) and prints ChildFailedError naming the failed rank"
CLOSED = "the other ranks fail in DDP's gradient all-reduce with gloo 'Connection closed by peer' ('This is typically caused by a remote worker crashing')"
SPAWN = "mp.spawn SIGTERMs the other ranks ('Terminating process N via signal SIGTERM') and re-raises the failed rank's exception"
EXITED = "the rank's DataLoader then raises 'RuntimeError: DataLoader worker (pid(s) {wpid}) exited unexpectedly' (chained)"
OOMFIX = "Find why that DataLoader worker was SIGKILLed (kernel OOM killer / cgroup memory limit, external kill): reduce per-worker memory (fewer workers, smaller samples/prefetch) or raise the limit; the other ranks' errors are collateral."
HEALTHY_FIX = "Nothing required (warnings only)."

def caught(exc, w):
    return f"Caught {exc} in DataLoader worker process {w}"

# ---------------- healthy ----------------
C["run35b-torchrun-healthy-warn"] = dict(launcher="torchrun", category="none", rc=0, collateral=[],
    root_cause="Healthy run: 3 DDP ranks (gloo) with 2 DataLoader workers each train one epoch; workers log WARNING lines about NaN features filled with 0; exit 0.",
    fix=HEALTHY_FIX, how=f"{TR} (3 ranks) --fault ok")
C["run35b-spawn-healthy-pin"] = dict(launcher="mp.spawn", category="none", rc=0, collateral=[],
    root_cause="Healthy run: 4 spawned DDP ranks with 3 DataLoader workers each; UserWarnings about 3 workers exceeding the suggested max of 2 and about pin_memory=True without an accelerator, plus worker NaN warnings; exit 0.",
    fix=HEALTHY_FIX, how=f"{SP} 4 --fault ok --workers 3 --pin-memory")
C["run35b-torchrun-healthy-persist"] = dict(launcher="torchrun", category="none", rc=0, collateral=[],
    root_cause="Healthy run: 4 DDP ranks, 3 persistent DataLoader workers each, 2 epochs; worker-count UserWarning and worker NaN warnings only; exit 0.",
    fix=HEALTHY_FIX, how=f"{TR} (4 ranks) --fault ok --workers 3 --persistent --epochs 2")

# ---------------- worker raises ----------------
C["run35b-torchrun-worker-raise"] = dict(launcher="torchrun", category="user.code_error", rc=1, rank=1, worker=1,
    decisive="ValueError: corrupt record 37 in shard-01.bin: expected 8 float32 features, got 0 bytes",
    also=[caught("ValueError", 1)],
    collateral=["rank 1 re-raises it as 'ValueError: Caught ValueError in DataLoader worker process 1.'", CLOSED, SIGTERM],
    root_cause="DataLoader worker 1 (pid {wpid}) of rank 1 raises ValueError in the dataset's __getitem__ on corrupt record 37 (batch 3); rank 1 re-raises it and exits, so ranks 0 and 2 lose their gloo peer.",
    fix="Fix or skip the corrupt record 37 in shard-01.bin (validate records in __getitem__); the other ranks' errors are collateral.",
    how=f"{TR} (3 ranks) --fault raise --bad-rank 1 --at 3 (ValueError raised in __getitem__ of the worker loading batch 3)")
C["run35b-spawn-worker-raise"] = dict(launcher="mp.spawn", category="user.code_error", rc=1, rank=2, worker=2,
    decisive="ValueError: corrupt record 34 in shard-02.bin: expected 8 float32 features, got 0 bytes",
    also=[caught("ValueError", 2)],
    collateral=["rank 2 re-raises it as 'ValueError: Caught ValueError in DataLoader worker process 2.'", SPAWN],
    root_cause="DataLoader worker 2 (pid {wpid}) of rank 2 raises ValueError in __getitem__ on corrupt record 34 (batch 2); rank 2 re-raises it and mp.spawn tears the job down.",
    fix="Fix or skip the corrupt record 34 in shard-02.bin; the other ranks are only terminated.",
    how=f"{SP} 4 --fault raise --bad-rank 2 --at 2 --workers 3")
C["run35b-torchrun-persist-epoch2"] = dict(launcher="torchrun", category="user.code_error", rc=1, rank=1, worker=1,
    decisive="ValueError: corrupt record 37 in shard-01.bin: expected 8 float32 features, got 0 bytes",
    also=[caught("ValueError", 1)],
    collateral=["rank 1 re-raises it as 'ValueError: Caught ValueError in DataLoader worker process 1.' in epoch 1 (the second epoch)", CLOSED, SIGTERM],
    root_cause="With persistent_workers=True, DataLoader worker 1 (pid {wpid}) of rank 1 completes epoch 0 and then raises ValueError on record 37 in the second epoch; rank 1 exits and ranks 0 and 2 lose their gloo peer.",
    fix="Fix the record / the epoch-dependent decoding path in __getitem__ (it only fails in epoch 2); the other ranks' errors are collateral.",
    how=f"{TR} (3 ranks) --fault persist --bad-rank 1 --at 3 (persistent workers, 2 epochs, ValueError only in epoch 2)")

# ---------------- worker dies ----------------
C["run35b-torchrun-worker-segv"] = dict(launcher="torchrun", category="user.code_error", rc=1, rank=2, worker=1,
    decisive="RuntimeError: DataLoader worker (pid {wpid}) is killed by signal: Segmentation fault.",
    also=["ERROR: Unexpected segmentation fault encountered in worker."],
    collateral=[EXITED, CLOSED, SIGTERM],
    root_cause="DataLoader worker 1 (pid {wpid}) of rank 2 segfaults in the job's own __getitem__ (ctypes.string_at(0), a null-pointer read); rank 2 raises and exits, the others lose their gloo peer.",
    fix="Fix the native/ctypes code in the dataset's __getitem__ that dereferences a null pointer (run with num_workers=0 + faulthandler to get the stack).",
    how=f"{TR} (3 ranks) --fault segv --bad-rank 2 --at 3 (ctypes.string_at(0) in the worker loading batch 3)")
C["run35b-spawn-worker-segv"] = dict(launcher="mp.spawn", category="user.code_error", rc=1, rank=1, worker=1,
    decisive="RuntimeError: DataLoader worker (pid {wpid}) is killed by signal: Segmentation fault.",
    also=["ERROR: Unexpected segmentation fault encountered in worker."],
    collateral=[EXITED, SPAWN],
    root_cause="DataLoader worker 1 (pid {wpid}) of rank 1 segfaults in the job's own __getitem__ (ctypes.string_at(0)); rank 1 raises and mp.spawn tears the job down.",
    fix="Fix the native/ctypes code in __getitem__ that dereferences a null pointer.",
    how=f"{SP} 3 --fault segv --bad-rank 1 --at 1 --workers 3")
C["run35b-torchrun-logdir-worker-segv"] = dict(launcher="torchrun", category="user.code_error", rc=1, rank=3, worker=0,
    file="attempt_0/3/stderr.log",
    decisive="RuntimeError: DataLoader worker (pid {wpid}) is killed by signal: Segmentation fault.",
    also=[], in_ranks=True,
    collateral=[EXITED, "ranks 0-2 fail with gloo 'Connection closed by peer' (in their own stderr.log)", SIGTERM,
                "the console (log.txt) only shows ChildFailedError naming local_rank 3 exitcode 1"],
    root_cause="DataLoader worker 0 (pid {wpid}) of rank 3 segfaults in the job's own __getitem__ (ctypes.string_at(0)); rank 3 raises and exits; the per-rank logs (--log-dir, --redirects 3) hold the tracebacks.",
    fix="Fix the native/ctypes code in __getitem__ that dereferences a null pointer.",
    how="torchrun --log-dir ... --redirects 3 (4 ranks) dl35b.py --fault segv --bad-rank 3 --at 2")
C["run35b-torchrun-worker-sigkill"] = dict(launcher="torchrun", category="mem.host_oom", rc=1, rank=3, worker=1,
    decisive="RuntimeError: DataLoader worker (pid {wpid}) is killed by signal: Killed.",
    collateral=[EXITED, CLOSED, SIGTERM],
    root_cause="DataLoader worker 1 (pid {wpid}) of rank 3 is SIGKILLed while loading batch 3 (no traceback from the worker); rank 3 raises and exits, the other ranks lose their gloo peer.",
    fix=OOMFIX, how=f"{TR} (4 ranks) --fault kill --bad-rank 3 --at 3 (os.kill(os.getpid(), SIGKILL) in the worker)")
C["run35b-spawn-worker-sigkill"] = dict(launcher="mp.spawn", category="mem.host_oom", rc=1, rank=1, worker=0,
    decisive="RuntimeError: DataLoader worker (pid {wpid}) is killed by signal: Killed.",
    collateral=[EXITED, SPAWN],
    root_cause="DataLoader worker 0 (pid {wpid}) of rank 1 is SIGKILLed while loading batch 2; rank 1 raises and mp.spawn tears the job down.",
    fix=OOMFIX, how=f"{SP} 3 --fault kill --bad-rank 1 --at 2 (os.kill(os.getpid(), SIGKILL) in the worker)")
C["run35b-torchrun-worker-oom"] = dict(launcher="torchrun", category="mem.host_oom", rc=1, rank=1, worker=1,
    decisive="RuntimeError: DataLoader worker (pid {wpid}) is killed by signal: Killed.",
    collateral=[EXITED, CLOSED, SIGTERM],
    root_cause="DataLoader worker 1 (pid {wpid}) of rank 1, in a 1 GiB memory cgroup, allocates memory while decoding batch 3 and is killed by the kernel OOM killer (dmesg: 'Memory cgroup out of memory: Killed process {wpid} (pt_data_worker)'); rank 1 raises and exits.",
    fix=OOMFIX, how=f"{TR} (3 ranks) --fault oom --bad-rank 1 --at 3; rank 1's workers in memory cgroup r35b_oom (1 GiB), kernel OOM kill")
C["run35b-spawn-worker-oom"] = dict(launcher="mp.spawn", category="mem.host_oom", rc=1, rank=2, worker=2,
    decisive="RuntimeError: DataLoader worker (pid {wpid}) is killed by signal: Killed.",
    collateral=[EXITED, SPAWN],
    root_cause="DataLoader worker 2 (pid {wpid}) of rank 2, in a 1 GiB memory cgroup, allocates memory while decoding batch 2 and is killed by the kernel OOM killer; rank 2 raises and mp.spawn tears the job down.",
    fix=OOMFIX, how=f"{SP} 4 --fault oom --bad-rank 2 --at 2 --workers 3; rank 2's workers in memory cgroup r35b_oom (1 GiB), kernel OOM kill")

# ---------------- worker hangs ----------------
C["run35b-torchrun-worker-hang-dltimeout"] = dict(launcher="torchrun", category="user.code_error", rc=1, rank=1, worker=1,
    decisive="RuntimeError: DataLoader timed out after 5.0 seconds",
    collateral=[CLOSED, SIGTERM],
    root_cause="DataLoader worker 1 (pid {wpid}) of rank 1 blocks for 60 s inside __getitem__ (batch 3); with DataLoader(timeout=5) rank 1 raises 'DataLoader timed out after 5.0 seconds' before the 15 s PG timeout and exits; ranks 0 and 2 lose their gloo peer.",
    fix="Find what blocks in that worker's __getitem__ (stuck read/lock; py-spy dump the worker pid); raising the DataLoader timeout only hides it.",
    how=f"{TR} (3 ranks) --fault hang --bad-rank 1 --at 3 --dl-timeout 5 (time.sleep(60) in the worker)")
C["run35b-spawn-worker-hang-dltimeout"] = dict(launcher="mp.spawn", category="user.code_error", rc=1, rank=2, worker=2,
    decisive="RuntimeError: DataLoader timed out after 5.0 seconds",
    collateral=[SPAWN],
    root_cause="DataLoader worker 2 (pid {wpid}) of rank 2 blocks for 60 s inside __getitem__ (batch 2); DataLoader(timeout=5) makes rank 2 raise after 5 s and mp.spawn tears the job down.",
    fix="Find what blocks in that worker's __getitem__ (stuck read/lock); raising the DataLoader timeout only hides it.",
    how=f"{SP} 4 --fault hang --bad-rank 2 --at 2 --workers 3 --dl-timeout 5")
C["run35b-torchrun-worker-hang-pgtimeout"] = dict(launcher="torchrun", category="dist.collective_timeout", rc=1, rank=2, worker=1,
    decisive="Timed out waiting 15000ms for",
    collateral=["ranks 0 and 1 time out in DDP's gradient all-reduce (gloo send/recv, 15 s PG timeout)",
                "torchrun then SIGTERMs rank 2, which is still waiting on its worker and prints nothing"],
    root_cause="DataLoader worker 1 (pid {wpid}) of rank 2 blocks for 60 s inside __getitem__ (batch 3) and the DataLoader has no timeout, so rank 2 stops calling collectives; ranks 0 and 1 hit the 15 s gloo timeout. Rank 2 itself is silent.",
    fix="Find what blocks in rank 2's DataLoader worker (py-spy dump it); set DataLoader(timeout=...) to surface such stalls; raising the PG timeout only hides it.",
    how=f"{TR} (3 ranks) --fault hang --bad-rank 2 --at 3 (time.sleep(60) in the worker, no DataLoader timeout, PG timeout 15 s)")

# ---------------- collate / worker_init_fn / sampler / uneven ----------------
C["run35b-torchrun-collate-shape"] = dict(launcher="torchrun", category="user.code_error", rc=1, rank=2, worker=1,
    decisive="RuntimeError: stack expects each tensor to be equal size, but got [7] at entry 0 and [8] at entry 1",
    also=[caught("RuntimeError", 1)],
    collateral=["rank 2 re-raises it as 'RuntimeError: Caught RuntimeError in DataLoader worker process 1.'", CLOSED, SIGTERM],
    root_cause="Rank 2's dataset returns a truncated 7-feature sample (record 26) so default_collate in DataLoader worker 1 (pid {wpid}) fails to stack batch 3; rank 2 exits and the others lose their gloo peer.",
    fix="Fix/validate the truncated record (every sample needs 8 features) or pad in a custom collate_fn.",
    how=f"{TR} (3 ranks) --fault collate --bad-rank 2 --at 3 (one 7-feature sample in batch 3)")
C["run35b-spawn-collate-fn"] = dict(launcher="mp.spawn", category="user.code_error", rc=1, rank=1, worker=0,
    decisive="KeyError: 'y'",
    also=[caught("KeyError", 0)],
    collateral=["rank 1 re-raises it as \"KeyError: 'Caught KeyError in DataLoader worker process 0.\"", SPAWN],
    root_cause="The job's custom collate_fn (strict_collate) raises KeyError 'y' in DataLoader worker 0 (pid {wpid}) of rank 1 on a sample without its label (batch 2); rank 1 exits and mp.spawn tears the job down.",
    fix="Fix the sample that lacks its 'y' field or make the collate_fn handle/skip unlabeled samples.",
    how=f"{SP} 3 --fault collate_fn --bad-rank 1 --at 2")
C["run35b-torchrun-worker-init"] = dict(launcher="torchrun", category="user.code_error", rc=1, rank=2, worker=0,
    decisive="FileNotFoundError: [Errno 2] No such file or directory: '/home/user/job/data/shard-02.idx'",
    also=[caught("FileNotFoundError", 0)],
    collateral=["rank 2 re-raises it as 'FileNotFoundError: Caught FileNotFoundError in DataLoader worker process 0.'", CLOSED, SIGTERM],
    root_cause="worker_init_fn of rank 2's DataLoader workers opens the per-rank index data/shard-02.idx, which does not exist; worker 0 fails at startup and rank 2 exits before its first batch.",
    fix="Create/ship data/shard-02.idx (or fix the shard path/world-size mapping in worker_init_fn); the other ranks' errors are collateral.",
    how=f"{TR} (4 ranks) --fault init --bad-rank 2 --workers 3")
C["run35b-torchrun-sampler-replicas"] = dict(launcher="torchrun", category="user.code_error", rc=1, rank=3,
    decisive="ValueError: Invalid rank 3, rank should be in the interval [0, 2]",
    collateral=[CLOSED.replace("in DDP's gradient all-reduce ", ""), SIGTERM],
    root_cause="Rank 3 builds its DistributedSampler with num_replicas=3 (stale world size) in a 4-rank job, so the sampler raises ValueError for rank 3 and it exits; the others lose their gloo peer.",
    fix="Build DistributedSampler with num_replicas=dist.get_world_size() (or omit it) on every rank.",
    how=f"{TR} (4 ranks) --fault sampler --bad-rank 3 (DistributedSampler(num_replicas=world-1) on rank 3)")
C["run35b-torchrun-sampler-len"] = dict(launcher="torchrun", category="dist.collective_timeout", rc=1, rank=1,
    decisive="Timed out waiting 15000ms for",
    collateral=["all three ranks time out (15 s gloo): ranks 0 and 2 in DDP's all-reduce of step 6, rank 1 in the final barrier",
                "rank 1 logs 'epoch 0 done: 6 batches' while the others are still training", SIGTERM],
    root_cause="Rank 1 builds DistributedSampler with num_replicas=4 in a 3-rank job, so it has 6 batches instead of 8, leaves the training loop early and waits in the final barrier while ranks 0 and 2 wait in DDP's all-reduce: all hit the 15 s timeout.",
    fix="Build DistributedSampler with num_replicas=dist.get_world_size() on every rank (equal batch counts); or use DDP's join() for genuinely uneven inputs.",
    how=f"{TR} (3 ranks) --fault sampler_len --bad-rank 1 (DistributedSampler(num_replicas=world+1) on rank 1)")
C["run35b-torchrun-iterable-uneven"] = dict(launcher="torchrun", category="dist.collective_timeout", rc=1, rank=2,
    decisive="Timed out waiting 15000ms for",
    collateral=["all three ranks time out (15 s gloo): ranks 0 and 1 in DDP's all-reduce, rank 2 in the final barrier",
                "rank 2 logs 'epoch 0 done: 4 batches' while the others do 8", SIGTERM],
    root_cause="Rank 2's IterableDataset shard yields fewer samples (4 batches instead of 8 over its 2 workers), so rank 2 leaves the training loop early and the ranks' collectives no longer line up: all hit the 15 s gloo timeout.",
    fix="Give every rank the same number of batches from the IterableDataset (pad/truncate shards, drop the remainder) or wrap training in DDP's join() context.",
    how=f"{TR} (3 ranks) --fault uneven --bad-rank 2 (IterableDataset shard of rank 2 is half as long: 16 of 32 samples)")
