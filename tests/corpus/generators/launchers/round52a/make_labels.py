"""Writes label.json for every round52a case in POOL (labels from what was induced; decisive_line checked
against log.txt / the ranks/ file)."""
import json, os, sys
POOL = sys.argv[1] if len(sys.argv) > 1 else "/tmp/h52a/pool"
SRC = "real run: tests/corpus/generators/launchers/round52a/run_all.sh {id}, torch 2.13.0 CPU, gloo"
SHM = "unable to allocate shared memory(shm) for file"
C = {
 "run-r52a-torchrun-shm-small": dict(cat="mem.cpu_alloc_failure", rank=2, dec=SHM, launcher="torchrun",
   how="rank 2 re-execs itself under `unshare -m` and mounts a 1 MiB tmpfs on /dev/shm; from batch 3 its DataLoader workers return 8 MiB batches",
   rc="Rank 2's /dev/shm is only 1 MiB, so its DataLoader workers cannot allocate shared memory for 8 MiB batches (ENOSPC); the rank stalls and its DataLoader times out while the other ranks fail in all_reduce.",
   fix="Give the container/rank a larger /dev/shm (e.g. --shm-size) or reduce batch size / num_workers."),
 "run-r52a-shell-shm-small": dict(cat="mem.cpu_alloc_failure", rank=1, dec=SHM, launcher="shell",
   how="shell loop starts rank 1 under `unshare -m` with a 1 MiB tmpfs on /dev/shm; from batch 2 its DataLoader workers return 8 MiB batches",
   rc="Rank 1's /dev/shm is only 1 MiB, so its DataLoader workers fail to allocate shared memory for their batches (ENOSPC); its DataLoader times out and the peers see the connection close.",
   fix="Enlarge /dev/shm for that process (e.g. --shm-size) or reduce batch size / num_workers."),
 "run-r52a-torchrun-nproc-workers": dict(cat="user.code_error", rank=3, dec="[rank3]: BlockingIOError: [Errno 11] Resource temporarily unavailable", launcher="torchrun",
   how="at epoch 1 rank 3 drops to uid nobody and sets RLIMIT_NPROC=1, then creates a DataLoader iterator (2 workers)",
   rc="Rank 3 hit its RLIMIT_NPROC process limit, so fork() of its DataLoader workers failed with EAGAIN.",
   fix="Raise the process/thread limit (ulimit -u) for the job user or use fewer DataLoader workers."),
 "run-r52a-spawn-nproc-thread": dict(cat="user.code_error", rank=2, dec="RuntimeError: can't start new thread", launcher="mp.spawn",
   how="at epoch 1 rank 2 drops to uid nobody, sets RLIMIT_NPROC=1 and starts a threading.Thread",
   rc="Rank 2 hit its RLIMIT_NPROC limit, so starting a background thread failed.",
   fix="Raise the process/thread limit (ulimit -u) for the job user."),
 "run-r52a-torchrun-logdir-nofile-workers": dict(cat="user.code_error", rank=1, dec="[rank1]: OSError: [Errno 24] Too many open files", launcher="torchrun",
   dfile="attempt_0/1/stderr.log", ddec="[rank1]: OSError: [Errno 24] Too many open files",
   how="at epoch 1 rank 1 sets RLIMIT_NOFILE to its current fd count, then creates a DataLoader iterator (2 workers)",
   rc="Rank 1 ran out of file descriptors (EMFILE) when its DataLoader created the pipes/locks for its workers.",
   fix="Raise the open-files limit (ulimit -n) for the job or close leaked descriptors."),
 "run-r52a-spawn-nofile-after-ckpt": dict(cat="user.code_error", rank=3, dec="OSError: [Errno 24] Too many open files", launcher="mp.spawn",
   how="at epoch 1 rank 3 sets RLIMIT_NOFILE to its current fd count, saves a checkpoint (still succeeded) and then creates a DataLoader iterator",
   rc="Rank 3 ran out of file descriptors (EMFILE) creating its DataLoader worker queues; mp.spawn's error file could not be written either.",
   fix="Raise the open-files limit (ulimit -n) for the job or close leaked descriptors."),
 "run-r52a-shell-nofile-workers": dict(cat="user.code_error", rank=2, dec="[rank2]: OSError: [Errno 24] Too many open files", launcher="shell",
   how="at epoch 1 rank 2 sets RLIMIT_NOFILE to its current fd count, then creates a DataLoader iterator (2 workers)",
   rc="Rank 2 ran out of file descriptors (EMFILE) when its DataLoader created its worker queues.",
   fix="Raise the open-files limit (ulimit -n) for the job or close leaked descriptors."),
 "run-r52a-shell-cpu-ulimit": dict(cat="user.code_error", rank=2, dec="13047 CPU time limit exceeded", launcher="shell", also=["rank 2 (pid 13047) was killed by signal 24 (SIGXCPU)"],
   how="shell loop starts rank 2 after `ulimit -S -t 8`; that rank does extra matmul work every step",
   rc="Rank 2 exceeded its RLIMIT_CPU soft limit of 8 CPU-seconds and was killed by SIGXCPU; the peers then lost their connection in all_reduce.",
   fix="Remove or raise the CPU-time limit (ulimit -t) imposed on the job."),
 "run-r52a-torchrun-cpu-setrlimit": dict(cat="user.code_error", rank=1, dec="failed (exitcode: -24) local_rank: 1", launcher="torchrun",
   how="at step 4 rank 1 sets RLIMIT_CPU (soft) to its used CPU time + 3 s and keeps doing extra matmul work",
   rc="Rank 1 exceeded its RLIMIT_CPU soft limit and was killed by SIGXCPU (exit -24) with no traceback.",
   fix="Remove or raise the CPU-time limit (ulimit -t / RLIMIT_CPU) on the job."),
 "run-r52a-spawn-cpu-setrlimit": dict(cat="user.code_error", rank=3, dec="process 3 terminated with signal SIGXCPU", launcher="mp.spawn",
   how="at step 3 rank 3 sets RLIMIT_CPU (soft) to its used CPU time + 3 s and keeps doing extra matmul work",
   rc="Rank 3 exceeded its RLIMIT_CPU soft limit and was killed by SIGXCPU with no traceback.",
   fix="Remove or raise the CPU-time limit (ulimit -t / RLIMIT_CPU) on the job."),
 "run-r52a-torchrun-ckpt-enospc": dict(cat="user.code_error", rank=2, dec="[rank2]: RuntimeError: basic_ios::clear: iostream error", launcher="torchrun",
   also=["[rank2]: RuntimeError: [enforce fail at inline_container.cc:672] . unexpected pos"],
   how="rank 2's checkpoint directory is a 1 MiB tmpfs mounted for the job; every rank saves model+Adam state (~2 MiB) after epoch 0",
   rc="Rank 2's checkpoint directory (1 MiB tmpfs) filled up during torch.save (ENOSPC), which torch reports as an iostream error / unexpected pos.",
   fix="Write checkpoints to a filesystem with enough free space."),
 "run-r52a-spawn-ckpt-enospc": dict(cat="user.code_error", rank=1, dec="RuntimeError: basic_ios::clear: iostream error", launcher="mp.spawn",
   also=["RuntimeError: [enforce fail at inline_container.cc:672] . unexpected pos"],
   how="rank 1's checkpoint directory is a 1 MiB tmpfs mounted for the job; every rank saves model+Adam state (~2 MiB) after epoch 0",
   rc="Rank 1's checkpoint directory (1 MiB tmpfs) filled up during torch.save (ENOSPC), reported as an iostream error / unexpected pos.",
   fix="Write checkpoints to a filesystem with enough free space."),
 "run-r52a-shell-stack-main": dict(cat="user.code_error", rank=2, dec="Segmentation fault      ( export RANK=$r", launcher="shell",
   also=["rank 2 (pid"],
   how="shell loop starts rank 2 after `ulimit -s 256`; at epoch 1 it recursively walks a 200000-deep nested record (recursion through C builtins, recursion limit raised)",
   rc="Rank 2's deep recursion in its data code overflowed its 256 KiB stack and the process died of SIGSEGV without a traceback.",
   fix="Replace the recursion with iteration (or raise the stack limit)."),
 "run-r52a-torchrun-logdir-stack-worker": dict(cat="user.code_error", rank=3, dec="DataLoader worker (pid 12178) is killed by signal: Segmentation fault.", launcher="torchrun",
   dfile="attempt_0/3/stderr.log", ddec="DataLoader worker (pid 12178) is killed by signal: Segmentation fault.",
   how="at epoch 1 rank 3 sets RLIMIT_STACK to 256 KiB; its Dataset.__getitem__ (in the DataLoader workers) recursively walks a 200000-deep nested record",
   rc="Rank 3's DataLoader worker overflowed its 256 KiB stack in deep recursive data code and was killed by SIGSEGV.",
   fix="Replace the recursion with iteration (or raise the stack limit)."),
 "run-r52a-spawn-stack-main": dict(cat="user.code_error", rank=1, dec="process 1 terminated with signal SIGSEGV", launcher="mp.spawn",
   how="at epoch 1 rank 1 sets RLIMIT_STACK to 256 KiB and recursively walks a 200000-deep nested record in its main process",
   rc="Rank 1's deep recursion overflowed its 256 KiB stack and the process died of SIGSEGV without a traceback.",
   fix="Replace the recursion with iteration (or raise the stack limit)."),
}
for lch in ("torchrun", "spawn", "shell"):
    C[f"run-r52a-{lch}-healthy-noisy"] = dict(cat="none", rank=None, dec=None,
        launcher={"spawn": "mp.spawn"}.get(lch, lch), how="no fault; NOISY=1 adds harmless warnings",
        rc="Healthy run: training finished on all ranks.", fix="Nothing to fix.")

for cid, c in C.items():
    d = os.path.join(POOL, cid)
    if not os.path.isdir(d):
        print("MISSING", cid); continue
    log = open(os.path.join(d, "log.txt"), errors="replace").read().splitlines()
    for s in [c["dec"]] + c.get("also", []):
        if s is not None and not any(s in l for l in log):
            print("DECISIVE NOT FOUND", cid, repr(s))
    healthy = c["cat"] == "none"
    lab = {"id": cid, "source": SRC.format(id=cid), "category": c["cat"], "fatal": not healthy,
           "decisive_line": c["dec"], "also_acceptable": c.get("also", []), "initiating_rank": c["rank"],
           "collateral": [] if healthy else ["other ranks fail in all_reduce (connection closed / timeout) or are terminated by the launcher"],
           "operator": None, "root_cause": c["rc"], "fix": c["fix"], "launcher": c["launcher"], "framework": "plain",
           "genuine": False, "induced_how": c["how"], "confirmed_by": "induced", "confidence": "high"}
    if "dfile" in c:
        f = os.path.join(d, "ranks", c["dfile"])
        if not any(c["ddec"] in l for l in open(f, errors="replace")):
            print("RANK DECISIVE NOT FOUND", cid)
        lab["decisive_file"] = c["dfile"]
    json.dump(lab, open(os.path.join(d, "label.json"), "w"), indent=1, ensure_ascii=False)
print("done", len(C))
