"""Write label.json for every round-23c case from what was INDUCED (fault kind, rank, step: fixed below); the
decisive / also-acceptable / collateral strings are taken from the case's own log.txt (first line matching each
regex) and checked to be exact substrings of a line. Exits 1 if a pattern does not match.
usage: python mk_label.py [--out DIR] [--meta DIR] [ids...]"""
import argparse, json, os, re, sys

TRF = r"failed \(exitcode: {e}\) local_rank: {r} \(pid: \d+\) of binary: \S+"
TRSIG = r"exitcode  : {e} \(pid: \d+\)  \({sig}\)"
TRTERM = r"W\d+ [\d:.]+ \d+ torch/distributed/elastic/multiprocessing/api\.py:\d+\] Sending process \d+ closing signal SIGTERM"
CHILD = r"torch\.distributed\.elastic\.multiprocessing\.errors\.ChildFailedError:"
SPX = r"torch\.multiprocessing\.spawn\.ProcessExitedException: process {r} terminated with {what}"
SPR = r"-- Process {r} terminated with the following error:"
SPTERM = r"W\d+ [\d:.]+ \d+ torch/multiprocessing/spawn\.py:\d+\] Terminating process \d+ via signal SIGTERM"
PEER = r"RuntimeError: \[[^\]]+\] (?:Connection closed by peer \[[^\]]+\]:\d+|Read error \[[^\]]+\]:\d+: Connection reset by peer)"
TOUT = r"RuntimeError: \[[^\]]+\] Timed out waiting 15000ms for (?:recv|send) operation to complete"
KEY = r"KeyError: 'weight'"
DL = r"ValueError: sample \d+ of shard-\d+\.pt has 19 features, expected 32 \(truncated record\)"
CAUGHT = r"ValueError: Caught ValueError in DataLoader worker process \d\."
FP = r"RuntimeError: Detected mismatch between collectives on ranks\. Rank {r} is running collective: CollectiveFingerPrint\(SequenceNumber=\d+, OpType=ALLREDUCE, TensorShape=\[{n}\]"
PRE = r"op\.preamble\.length <= op\.nbytes\. \d+ vs \d+\. Received data size doesn't match expected size\. Is there a distributed collective mismatch in your code\?"
SHSEGV = r"\./launch_loop\.sh: line \d+: +\d+ Segmentation fault +RANK=\$r python train23c\.py \"\$@\""
MPISIG = r"mpirun noticed that process rank {r} with PID \d+ on node \S+ exited on signal {n} \({sig}\)\."
MPIEXIT = r"mpirun detected that one or more processes exited with non-zero status, thus causing"

TRH = "torchrun --nnodes 1 --nproc-per-node {n} --local-ranks-filter {f} (torchrun shows only local rank(s) {f} on the console; the failure summary covers all ranks), world size {n}"
TEE = "torchrun --nnodes 1 --nproc-per-node {n} --tee 3 --log-dir logs (console output AND per-rank attempt_0/<rank>/stdout.log, stderr.log copied under ranks/), world size {n}"
FKS = "spawn23c.py --mode forkserver: torch.multiprocessing.start_processes(train23c.run, nprocs={n}, join=True, start_method='forkserver'), exception uncaught in the parent, world size {n}"
SPJ = "spawn23c.py --mode spawnjoin: torch.multiprocessing.spawn(train23c.run, nprocs={n}, join=False) and the parent polls ctx.join(timeout=5) by hand with a heartbeat log line; the exception from join() is uncaught, world size {n}"
LOOP = "launch_loop.sh {n}: a bash for-loop starts {n} `python train23c.py` with RANK/WORLD_SIZE/MASTER_* set, each worker's output piped through sed 's/^/[worker R] /', its exit status echoed; world size {n}"
XARGS = "launch_xargs.sh {n}: `seq 0 {m} | xargs -P {n} -I{{}} bash -c 'RANK={{}} python train23c.py ... | sed s/^/[worker {{}}] /'`, world size {n}"
MPI = "mpirun --oversubscribe --tag-output --timestamp-output -np {n} (Open MPI 4.1.4, as root via OMPI_ALLOW_RUN_AS_ROOT), ranks from OMPI_COMM_WORLD_RANK/SIZE, env:// rendezvous (MASTER_ADDR/MASTER_PORT via -x), world size {n}"

FAULT = {
    "raise": ("user.code_error", "rank {r} pops the 'weight' key of its per-step batch metadata at step index {k} and then reads it (KeyError in its own code)",
              "Rank {r}'s own training code raised KeyError: 'weight' in its {s}th step (the batch metadata entry was popped before it was read); the other ranks lost their gloo peer or were stopped by the launcher.",
              "Fix the batch-metadata handling in the training loop (do not pop 'weight' before it is read, or use .get with a default)."),
    "sigkill": ("mem.host_oom", "rank {r} sends itself SIGKILL (os.kill(os.getpid(), SIGKILL)) right after its step-{s} optimizer step; no traceback",
                "Rank {r} was SIGKILLed (exit -9, no traceback) after step {s}, as the kernel OOM killer does; the other ranks lost their gloo peer or were stopped by the launcher.",
                "Find what killed rank {r} (check dmesg / the memory cgroup for the OOM killer) and reduce its host memory use or raise the limit."),
    "segv": ("user.code_error", "rank {r} calls ctypes.string_at(0) (reads address 0) right after its step-{s} optimizer step",
             "Rank {r} died of a segmentation fault (SIGSEGV, no Python exception) in the job's own native call after step {s}; the other ranks lost their gloo peer or were stopped by the launcher.",
             "Find and fix the native crash in rank {r}'s own code (faulthandler already shows ctypes.string_at in train23c.py run())."),
    "hang": ("dist.collective_timeout", "rank {r} sleeps {h} s (silently) before its step index {k}; init_process_group(timeout=15 s)",
             "Rank {r} stalled silently before step {s} and never joined that step's gloo all_reduce, so the other ranks timed out after 15 s.",
             "Find why rank {r} stalls before step {s} (stack-dump it with py-spy while it hangs) and fix it; the timeout on the other ranks is only the symptom."),
    "mismatch": ("dist.collective_mismatch", "at step index {k} rank {r} all_reduces a metrics tensor of {mn} floats while the other ranks all_reduce 2 floats",
                 "At step {s} rank {r} called all_reduce on a {mn}-element metrics tensor while the other ranks used 2 elements, a collective size mismatch.",
                 "Make every rank all_reduce the same metrics tensor shape (build the metrics vector identically on all ranks)."),
    "exit2": ("user.code_error", "rank {r} calls sys.exit(2) right after its step-{s} optimizer step, printing nothing",
              "Rank {r} exited silently with sys.exit(2) after step {s} (no traceback); the other ranks lost their gloo peer or were stopped by the launcher.",
              "Find the code path in rank {r} that calls sys.exit(2) mid-training and make it raise a proper error (or not exit)."),
    "dlraise": ("user.code_error", "DataLoader(num_workers=2) on every rank; rank {r}'s Dataset.__getitem__ raises ValueError for sample {bad} (a truncated record) in a worker process",
                "Sample {bad} of rank {r}'s shard (shard-{r:05d}.pt) is truncated (19 of 32 features), so its Dataset.__getitem__ raised ValueError in a DataLoader worker and the main process re-raised it; the other ranks lost their gloo peer or were stopped.",
                "Repair or regenerate shard-{r:05d}.pt (or validate/skip truncated records when loading)."),
}

# id: (launcher, how-template, fault kind, rank, step index, world, decisive regex, also regexes, collateral regexes, extra fmt)
C = {
 "run23c-torchrun-filter-raise": ("torchrun", TRH, "raise", 2, 3, 3, KEY, [TRF.format(e=1, r=2)], [PEER, TRTERM, CHILD], dict(f="0")),
 "run23c-torchrun-filter-sigkill": ("torchrun", TRH, "sigkill", 3, 4, 4, TRF.format(e=-9, r=3), [TRSIG.format(e=-9, sig="SIGKILL")], [TRTERM, CHILD], dict(f="0,1")),
 "run23c-torchrun-filter-hang": ("torchrun", TRH, "hang", 1, 2, 3, r"\[rank0\]: " + TOUT, [], [TRF.format(e=1, r=0), r"exitcode  : -15 \(pid: \d+\)  \(SIGTERM\)", CHILD], dict(f="0", h=45)),
 "run23c-torchrun-filter-dlraise-shown": ("torchrun", TRH, "dlraise", 1, 2, 3, r"\[rank1\]: " + DL, [r"\[rank1\]: " + CAUGHT, TRF.format(e=1, r=1)], [TRTERM, CHILD], dict(f="1")),
 "run23c-torchrun-tee-segv": ("torchrun", TEE, "segv", 1, 3, 4, TRF.format(e=-11, r=1), [TRSIG.format(e=-11, sig="SIGSEGV"), r"\[default1\]:Fatal Python error: Segmentation fault"], [TRTERM, CHILD], {}),
 "run23c-torchrun-tee-dlraise": ("torchrun", TEE, "dlraise", 3, 2, 4, r"\[default3\]:\[rank3\]: " + DL, [r"\[default3\]:\[rank3\]: " + CAUGHT, TRF.format(e=1, r=3)], [PEER, TRTERM, CHILD], {}),
 "run23c-torchrun-tee-mismatch-detail": ("torchrun", TEE, "mismatch", 0, 3, 3, r"\[rank0\]: " + FP.format(r=0, n=4), [], [r"\[rank1\]: " + FP.format(r=1, n=2), r"\[rank2\]: " + FP.format(r=2, n=2), CHILD], dict(detail=1, mn=4)),
 "run23c-forkserver-raise": ("torch.multiprocessing.start_processes", FKS, "raise", 3, 4, 4, KEY, [SPR.format(r=3)], [SPTERM], {}),
 "run23c-forkserver-exit2": ("torch.multiprocessing.start_processes", FKS, "exit2", 1, 3, 3, SPX.format(r=1, what="exit code 2"), [], [SPTERM], {}),
 "run23c-forkserver-ok": ("torch.multiprocessing.start_processes", FKS, None, None, None, 3, None, [], [], dict(workers=2)),
 "run23c-spawnjoin-sigkill": ("mp.spawn", SPJ, "sigkill", 0, 3, 3, SPX.format(r=0, what="signal SIGKILL"), [], [SPTERM], {}),
 "run23c-spawnjoin-mismatch": ("mp.spawn", SPJ, "mismatch", 2, 2, 4, PRE, [], [r"torch\.multiprocessing\.spawn\.ProcessExitedException: process \d terminated with signal SIGABRT", SPTERM], dict(mn=64)),
 "run23c-spawnjoin-dlraise": ("mp.spawn", SPJ, "dlraise", 0, 1, 3, DL, [CAUGHT, SPR.format(r=0)], [SPTERM], {}),
 "run23c-shloop-segv": ("shell loop", LOOP, "segv", 3, 3, 4, SHSEGV, [r"\[worker 3\] exited with status 139", r"\[worker 3\] Fatal Python error: Segmentation fault"], [r"\[worker \d\] \[rank\d\]: " + PEER], {}),
 "run23c-shloop-exit2": ("shell loop", LOOP, "exit2", 0, 2, 3, r"\[worker 0\] exited with status 2", [], [r"\[worker \d\] \[rank\d\]: " + PEER, r"\[worker \d\] exited with status 1"], {}),
 "run23c-shloop-hang": ("shell loop", LOOP, "hang", 2, 2, 3, r"\[worker [01]\] \[rank[01]\]: " + TOUT, [], [r"\[worker \d\] exited with status 1"], dict(h=30)),
 "run23c-xargs-raise": ("xargs", XARGS, "raise", 1, 2, 3, r"\[worker 1\] \[rank1\]: " + KEY, [], [r"\[worker \d\] \[rank\d\]: " + PEER], {}),
 "run23c-mpirun-sigkill": ("mpirun", MPI, "sigkill", 1, 3, 4, MPISIG.format(r=1, n=9, sig="Killed"), [], [PEER], {}),
 "run23c-mpirun-mismatch-detail": ("mpirun", MPI, "mismatch", 3, 2, 4, r"\[rank3\]: " + FP.format(r=3, n=4), [], [MPIEXIT], dict(detail=1, mn=4)),
 "run23c-mpirun-dlraise": ("mpirun", MPI, "dlraise", 2, 2, 3, r"\[rank2\]: " + DL, [r"\[rank2\]: " + CAUGHT], [PEER, MPIEXIT], {}),
 "run23c-mpirun-ok": ("mpirun", MPI, None, None, None, 4, None, [], [], {}),
}


def find(lines, rx, need=True):
    for ln in lines:
        m = re.search(rx, ln)
        if m:
            return m.group(0)
    if need:
        raise SystemExit(f"pattern not found: {rx}")
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="/work/helpers/stage23c")
    ap.add_argument("--meta", default="/work/helpers/stage23c.meta")
    ap.add_argument("ids", nargs="*")
    a = ap.parse_args()
    bad = 0
    for cid in a.ids or C:
        launcher, how, kind, r, k, n, drx, also, coll, x = C[cid]
        d = os.path.join(a.out, cid)
        if not os.path.exists(os.path.join(d, "log.txt")):
            print("missing", cid); bad = 1; continue
        lines = open(os.path.join(d, "log.txt"), errors="replace").read().splitlines()
        meta = json.load(open(os.path.join(a.meta, cid + ".json")))
        f = dict(n=n, m=n - 1, r=r, k=k, s=(k or 0) + 1, bad=(k or 0) * 16 + 3, **x)
        howl = how.format(**f)
        src = (f"real run: tests/corpus/generators/launchers/round23c/run_all.sh {cid} (`{meta['cmd']}`, in the job dir), "
               "torch 2.13.0 CPU, gloo")
        if kind is None:
            lab = dict(id=cid, source=src, category="none", fatal=False, decisive_line=None, also_acceptable=[],
                       initiating_rank=None, collateral=[], operator=None,
                       root_cause="Healthy run: every rank finished its steps ('training done') and the launcher exited 0.",
                       fix="Nothing to fix.", launcher=launcher, framework="plain", genuine=False,
                       induced_how=howl + (f"; DataLoader num_workers={x['workers']}" if x.get("workers") else "") +
                       "; no fault injected", confirmed_by="induced", confidence="high")
        else:
            cat, ind, root, fix = FAULT[kind]
            try:
                dl = find(lines, drx)
                al = [find(lines, p) for p in also]
                co = [c for c in (find(lines, p, need=False) for p in coll) if c]
            except SystemExit as e:
                print(cid, e); bad = 1; continue
            lab = dict(id=cid, source=src, category=cat, fatal=True, decisive_line=dl, also_acceptable=al,
                       initiating_rank=r, collateral=co, operator=None, root_cause=root.format(**f),
                       fix=fix.format(**f), launcher=launcher, framework="plain", genuine=False,
                       induced_how=howl + "; " + ind.format(**f) +
                       ("; TORCH_DISTRIBUTED_DEBUG=DETAIL, gradients all_reduced by hand (no DDP)" if x.get("detail") else ""),
                       confirmed_by="induced", confidence="high")
        lab["torch_version"] = "2.13.0"
        lab["notes"] = f"World size {n}; launcher exit status {meta['rc']}."
        if os.path.isdir(os.path.join(d, "ranks")):
            lab["notes"] += " ranks/ holds the per-rank files torchrun --tee/--log-dir wrote (attempt_0/<rank>/stdout.log, stderr.log); the decisive line is from log.txt (the console)."
        if "filter" in cid:
            lab["notes"] += f" --local-ranks-filter {x['f']}: the other ranks' own output is not on the console."
        for s in [lab["decisive_line"]] + lab["also_acceptable"] + lab["collateral"]:
            if s is not None and not any(s in ln for ln in lines):
                print(cid, "NOT IN LOG:", s); bad = 1
        json.dump(lab, open(os.path.join(d, "label.json"), "w"), indent=2, ensure_ascii=False)
        open(os.path.join(d, "label.json"), "a").write("\n")
        print("ok", cid, lab["category"], lab["initiating_rank"], (lab["decisive_line"] or "")[:110])
    sys.exit(bad)


if __name__ == "__main__":
    main()
