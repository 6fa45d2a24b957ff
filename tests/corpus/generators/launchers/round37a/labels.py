"""Write label.json for every round-37a case in OUT (argv[1], default /work/helpers/stage37).
Category and initiating rank come from what run_all.sh induced; the decisive line is the first line (of log.txt, or of
the named ranks/ file) matching the given regex, kept whole, and checked to be an exact substring of that file."""
import json, re, sys
from pathlib import Path

OUT = Path(sys.argv[1] if len(sys.argv) > 1 else "/work/helpers/stage37")
SRC = "real run: tests/corpus/generators/launchers/round37a/run_all.sh {id}, torch 2.13.0 CPU, gloo"
UCE, OOM, TO, MM = "user.code_error", "mem.host_oom", "dist.collective_timeout", "dist.collective_mismatch"
IDX = r"IndexError: list index out of range"
TOUT = r"Timed out waiting 30000ms for (recv|send) operation to complete"
PEER = r"Connection closed by peer|Connection reset by peer"
TERM = "the other ranks are SIGTERMed by the launcher"
PEERC = "neighbouring ranks fail in the next collective with gloo 'Connection closed/reset by peer' (some abort, -6)"
FIX_IDX = "Fix the shard index computation in the data path so it stays within the number of shards."


def first(path, rx):
    for line in Path(path).read_text(errors="replace").splitlines():
        if re.search(rx, line):
            return line
    return None


# id -> dict(cat, rank, dec=[regex, ...] (first that matches is decisive, later matches also acceptable),
#            file=ranks/ file glob for dec or None, coll, rc, fix, how, launcher)
C = {}
def case(id, cat, rank, dec, coll, rc, fix, how, launcher, file=None, fatal=True):
    C[id] = dict(cat=cat, rank=rank, dec=dec, coll=coll, rc=rc, fix=fix, how=how, launcher=launcher, file=file, fatal=fatal)

# ---- raise
for id, r, k, w, l in [("run37a-torchrun16-raise-r9", 9, 3, 16, "torchrun"), ("run37a-spawn12-raise-r5", 5, 4, 12, "mp.spawn"),
                       ("run37a-mpirun12-raise-r5", 5, 3, 12, "mpirun"), ("run37a-torchrun2x6-raise-r9", 9, 3, 12, "torchrun")]:
    case(id, UCE, r, [IDX], [PEERC, TERM],
         f"At step {k} rank {r} (of {w}) indexes its shard list past the end in its data path and raises IndexError: list index out of range.",
         FIX_IDX, f"train.py --fault raise --bad-rank {r} --step {k}: shard index 4+rank", l)
case("run37a-torchrun-logdir12-raise-r7", UCE, 7, [IDX], [PEERC, TERM],
     "At step 2 rank 7 (of 12) indexes its shard list past the end in its data path and raises IndexError (in its own stderr.log).",
     FIX_IDX, "train.py --fault raise --bad-rank 7 --step 2; torchrun --log-dir --redirects 3", "torchrun", file="attempt_0/7/stderr.log")
# ---- sigkill / cgroup OOM kill (no traceback from the killed rank)
KILLFIX = "Find what killed the rank (kernel OOM killer / an external kill: check dmesg) and give it more memory or stop the killer."
case("run37a-torchrun12-sigkill-r7", OOM, 7, [r"exitcode  : -9 \(pid: \d+\)  \(SIGKILL\)", r"Signal 9 \(SIGKILL\) received by PID"],
     ["rank 8 (a neighbour) aborts (-6) after 'Connection reset by peer' and is the rank torchrun's first 'failed (exitcode: -6) local_rank: 8' line names", TERM],
     "Rank 7 was SIGKILLed at step 2 (no traceback); its peers lost the connection and torchrun's first error names rank 8, but the failure summary shows rank 7 with exitcode -9.",
     KILLFIX, "train.py --fault sigkill --bad-rank 7 --step 2 (os.kill(getpid(), SIGKILL))", "torchrun")
case("run37a-torchrun-logdir8-sigkill-r5", OOM, 5, [r"failed \(exitcode: -9\) local_rank: 5", r"exitcode  : -9 \(pid: \d+\)  \(SIGKILL\)"], [PEERC, TERM],
     "Rank 5 was SIGKILLed at step 3 (no traceback, its stderr.log ends mid-run); torchrun reports its exitcode -9.",
     KILLFIX, "train.py --fault sigkill --bad-rank 5 --step 3; torchrun --log-dir --redirects 3", "torchrun")
case("run37a-spawn10-sigkill-r3", OOM, 3, [r"process 3 terminated with signal SIGKILL"], [TERM],
     "Rank 3 (of 10) was SIGKILLed at step 2 with no traceback; mp.spawn reports process 3 terminated with signal SIGKILL.",
     KILLFIX, "train.py --spawn 10 --fault sigkill --bad-rank 3 --step 2", "mp.spawn")
case("run37a-torchrun2x6-sigkill-r3", OOM, 3, [r"failed \(exitcode: -9\) local_rank: 3", r"exitcode  : -9 \(pid: \d+\)  \(SIGKILL\)"], [PEERC, "node 1's agent: its ranks fail on the lost peers and it is torn down"],
     "Global rank 3 (node 0, local rank 3) was SIGKILLed at step 2 with no traceback; node 0's torchrun agent reports its exitcode -9.",
     KILLFIX, "two torchrun agents 2x6; train.py --fault sigkill --bad-rank 3 --step 2", "torchrun")
case("run37a-torchrun12-hostoom-r9", OOM, 9, [r"failed \(exitcode: -9\) local_rank: 9", r"exitcode  : -9 \(pid: \d+\)  \(SIGKILL\)"], [PEERC, TERM],
     "Rank 9 runs in a 1 GiB memory cgroup and preloads a feature cache in 256 MiB chunks; the kernel OOM killer SIGKILLs it (cgroup oom_kill 1) and torchrun reports exitcode -9.",
     "Give rank 9 more memory (raise the cgroup/container limit) or preload a smaller feature cache.",
     "train.py --fault hostoom --bad-rank 9: rank 9 joins a cgroup v1 memory cgroup (limit 1G, memsw 1G) and allocates 256 MiB chunks", "torchrun")
case("run37a-mpirun8-hostoom-r3", OOM, 3, [r"exited on signal 9"], ["mpirun aborts the other ranks"],
     "Rank 3 runs in a 1 GiB memory cgroup and preloads a feature cache in 256 MiB chunks; the kernel OOM killer SIGKILLs it and mpirun reports it exited on signal 9.",
     "Give rank 3 more memory (raise the cgroup/container limit) or preload a smaller feature cache.",
     "train.py --fault hostoom --bad-rank 3 under mpirun -np 8: rank 3 joins a 1G cgroup v1 memory cgroup and allocates 256 MiB chunks", "mpirun")
# ---- segv (the existing corpus labels a rank's own segfault user.code_error, decisive the launcher's -11 line)
SEGFIX = "Fix the invalid memory access in the rank's code (here a ctypes read of address 0)."
case("run37a-torchrun8-segv-r3", UCE, 3, [r"failed \(exitcode: -11\) local_rank: 3"], [PEERC, TERM],
     "Rank 3 dereferences a NULL pointer (ctypes.string_at(0)) at step 2 and dies of SIGSEGV; torchrun reports exitcode -11 for local_rank 3.",
     SEGFIX, "train.py --fault segv --bad-rank 3 --step 2", "torchrun")
case("run37a-mpirun8-segv-r5", UCE, 5, [r"exited on signal 11"], ["mpirun aborts the other ranks"],
     "Rank 5 dereferences a NULL pointer (ctypes.string_at(0)) at step 3 and dies of SIGSEGV; mpirun reports it exited on signal 11.",
     SEGFIX, "train.py --fault segv --bad-rank 5 --step 3 under mpirun -np 8", "mpirun")
# ---- hang: the silent rank sleeps before the step's metric all_reduce; the others time out after 30 s
for id, r, k, w, l, f in [("run37a-torchrun12-hang-r5", 5, 2, 12, "torchrun", None), ("run37a-spawn12-hang-r9", 9, 2, 12, "mp.spawn", None),
                          ("run37a-torchrun-logdir16-hang-r11", 11, 3, 16, "torchrun", "attempt_0/0/stderr.log")]:
    case(id, TO, r, [TOUT], ["every other rank times out in the same all_reduce", TERM],
         f"At step {k} rank {r} (of {w}) stalls ('refreshing shard index from remote storage') before the loss all_reduce, so the other ranks time out after 30 s waiting for it.",
         "Find why that rank stalls (remote storage access) and bound it, or raise the process-group timeout.",
         f"train.py --fault hang --bad-rank {r} --step {k} --pg-timeout 30 --hang-s 150", l, file=f)
# ---- mismatch
case("run37a-torchrun16-size-r11", MM, 11, [TOUT], ["all ranks time out in the mismatched all_reduce", TERM],
     "At step 2 rank 11 all_reduces a 3-element metric tensor where the other 15 ranks all_reduce 2 elements; gloo does not detect the size mismatch and the ranks time out after 30 s.",
     "Make every rank all_reduce the same tensor shape (rank 11 adds an extra element).", "train.py --fault size --bad-rank 11 --step 2", "torchrun")
case("run37a-torchrun12-size-detail-r7", MM, 7, [r"Detected mismatch between collectives on ranks"], ["every other rank reports the same fingerprint mismatch against rank 7", TERM],
     "At step 2 rank 7 all_reduces a 3-element metric tensor where the other 11 ranks all_reduce 2 elements; with TORCH_DISTRIBUTED_DEBUG=DETAIL the collective fingerprint check reports the mismatch (Rank 7 TensorShape=[3]).",
     "Make every rank all_reduce the same tensor shape (rank 7 adds an extra element).",
     "TORCH_DISTRIBUTED_DEBUG=DETAIL; train.py --no-ddp --fault size --bad-rank 7 --step 2 (DDP's constructor segfaults under DETAIL in this build, so gradients are averaged by hand)", "torchrun")
case("run37a-spawn8-op-r5", MM, 5, [TOUT], ["the other ranks time out in the all_reduce", TERM],
     "At step 2 rank 5 calls dist.broadcast where the other ranks call dist.all_reduce, so the collective sequences diverge and gloo times out after 30 s.",
     "Make every rank issue the same collective in the same order.", "train.py --spawn 8 --fault op --bad-rank 5 --step 2", "mp.spawn")
case("run37a-mpirun10-dtype-r7", MM, 7, [r"op.preamble.length <= op.nbytes. 8 vs 4"],
     ["rank 6 (a neighbour) aborts on gloo's enforce ('Received data size doesn't match expected size') and is the rank mpirun names (signal 6)",
      "the other ranks fail with 'Connection closed by peer'"],
     "At step 2 rank 7 all_reduces a float64 metric tensor where the other ranks use float32; its neighbour rank 6 receives 8-byte elements where it expects 4 and aborts on gloo's size enforce.",
     "Make every rank all_reduce tensors of the same dtype.", "train.py --fault dtype --bad-rank 7 --step 2 under mpirun -np 10", "mpirun")
# ---- early exit: the rank leaves the loop; its peers find it gone in the next collective (corpus precedent: mismatch)
case("run37a-torchrun8-exit0-r5", MM, 5, [r"\[rank5\] INFO train: no more batches in my shard, leaving the training loop", PEER],
     ["ranks 3/4/6 fail with 'Connection closed by peer'; torchrun names rank 4 (-6) first", TERM],
     "At step 3 rank 5 leaves the training loop and exits 0 (sys.exit(0)) while the other 7 ranks go on into the next collective, which fails because the peer is gone; rank 5 never shows as failed.",
     "Give every rank the same number of steps (even shards) or use a join/uneven-inputs context, instead of one rank exiting early.",
     "train.py --fault exit --bad-rank 5 --step 3 (sys.exit(0))", "torchrun")
case("run37a-spawn8-return-r3", MM, 3, [r"\[rank3\] INFO train: no more batches in my shard, leaving the training loop", PEER, TOUT], [TERM],
     "At step 3 rank 3 returns from its training function early while the other ranks go on into the next collective, which fails without it.",
     "Give every rank the same number of steps (even shards) or use a join/uneven-inputs context, instead of one rank returning early.",
     "train.py --spawn 8 --fault exit --exit-return --bad-rank 3 --step 3", "mp.spawn")
# ---- healthy, noisy
for id, w, l in [("run37a-torchrun16-healthy-noisy", 16, "torchrun"), ("run37a-spawn10-healthy-noisy", 10, "mp.spawn"),
                 ("run37a-mpirun12-healthy-noisy", 12, "mpirun"), ("run37a-torchrun2x6-healthy-noisy", 12, "torchrun")]:
    case(id, "none", None, [], [], None, None,
         f"healthy {w}-rank run with --noisy: a UserWarning on every rank, one rank logs a caught ConnectionResetError (metrics push) with traceback, progress lines",
         l, fatal=False)

bad = 0
for id, c in C.items():
    d = OUT / id
    if not (d / "log.txt").exists():
        print("MISSING", id); bad += 1; continue
    lab = {"id": id, "source": SRC.format(id=id), "category": c["cat"], "fatal": c["fatal"]}
    dec, also = None, []
    if c["dec"]:
        hits = []
        for rx in c["dec"]:
            f = (next((d / "ranks").glob("*/" + c["file"])) if c["file"] and rx == c["dec"][0] else d / "log.txt")
            h = first(f, rx)
            if h:
                assert h in Path(f).read_text(errors="replace")
                hits.append(h)
        if not hits:
            print("NO DECISIVE LINE", id); bad += 1; continue
        dec, also = hits[0], [h for h in hits[1:] if h != hits[0]]
    lab.update({"decisive_line": dec, "also_acceptable": also, "initiating_rank": c["rank"], "collateral": c["coll"],
                "operator": None, "root_cause": c["rc"], "fix": c["fix"], "launcher": c["launcher"], "framework": "plain",
                "genuine": False, "induced_how": c["how"], "confirmed_by": "induced", "confidence": "high"})
    if c["file"] and dec is not None:
        lab["decisive_file"] = str(next((d / "ranks").glob("*/" + c["file"])).relative_to(d / "ranks"))
    (d / "label.json").write_text(json.dumps(lab, indent=1, ensure_ascii=False) + "\n")
    print(id, c["cat"], c["rank"], (dec or "")[:110])
print("problems:", bad)
