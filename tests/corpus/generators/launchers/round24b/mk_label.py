"""Write label.json for every round-24b case from what was INDUCED (fault, rank, step: fixed in the table below); the
decisive / also-acceptable / collateral strings are taken from the case's own log.txt (first line matching each
regex) and checked to be exact substrings of a line of log.txt (decisive also of ranks/<decisive_file> if any).
Exits 1 if a required pattern does not match.   usage: python mk_label.py [--out DIR] [--meta DIR] [ids...]"""
import argparse, json, os, re, sys

TRF = r"failed \(exitcode: {e}\) local_rank: {r} \(pid: \d+\) of binary: \S+"
CHILD = r"torch\.distributed\.elastic\.multiprocessing\.errors\.ChildFailedError:"
TRTERM = r"W\d+ [\d:.]+ \d+ torch/distributed/elastic/multiprocessing/api\.py:\d+\] Sending process \d+ closing signal SIGTERM"
SPR = r"-- Process {r} terminated with the following error:"
SPX = r"torch\.multiprocessing\.spawn\.ProcessExitedException: process {r} terminated with exit code 1"
SPTERM = r"W\d+ [\d:.]+ \d+ torch/multiprocessing/spawn\.py:\d+\] Terminating process \d+ via signal SIGTERM"
PEER = r"RuntimeError: \[[^\]]+\] Connection closed by peer \[[^\]]+\]:\d+\. This is typically caused by a remote worker crashing\."
SHX = r"\[rank {r}\] exit status {s}"
FNF = r"FileNotFoundError: \[Errno 2\] No such file or directory: 'ckpt/step_100/rank_{r}\.pt'"
ZIP = r"RuntimeError: PytorchStreamReader failed reading zip archive: failed finding central directory\."
RED = r"RuntimeError: Expected to have finished reduction in the prior iteration before starting a new one\."
IDX = r"Parameter indices which did not receive grad for rank {r}: 4 5"
SHP = r"RuntimeError: \[{p}\]: params\[0\] in this process with sizes \[{n}, 16\] appears not to match sizes of the same param in process 0\."
EARLY = r"INFO \[rank{r}\] train: early stopping: local validation loss [\d.]+ has not improved for 3 evals \(patience 3\), stopping training at step \d+"
OSX = r"ERROR \[rank{r}\] train: gradient health check failed at step \d+: grad norm [\d.]+ above limit 0\.10 on this rank; aborting worker"
AG = r"RuntimeError: The size of tensor a \(32\) must match the size of tensor b \(31\) at non-singleton dimension 1"
AGF = r'File "\S+train24b\.py", line \d+, in backward'
DYN = r"torch\._dynamo\.exc\.Unsupported: Data-dependent branching"
DYNX = r"Explanation: Detected data-dependent branching \(e\.g\. `if my_tensor\.sum\(\) > 0:`\)\. Dynamo does not support tracing dynamic control flow\."
TS = r"[\d-]+ [\d:,]+ "            # logging asctime
TERM = r"terminate called without an active exception"
p = lambda r: rf"\[rank{r}\]: "          # torchrun / DDP per-rank traceback prefix
s = lambda r: rf"\[rank {r}\] "          # launch24b.sh's sed prefix
d = lambda r: rf"\[default{r}\]:"        # torchrun --tee prefix

TR = "torchrun --nnodes 1 --nproc-per-node {n} (console output), world size {n}"
TRL = ("torchrun --nnodes 1 --nproc-per-node {n} --log-dir logs --tee 3 (console output AND per-rank "
       "attempt_0/<rank>/stdout.log, stderr.log copied under ranks/), world size {n}")
SP = "train24b.py --spawn {n}: torch.multiprocessing.spawn(run, nprocs={n}, join=True), exception uncaught in the parent, world size {n}"
SH = ("launch24b.sh {n}: a bash for-loop starts {n} `python train24b.py` with RANK/WORLD_SIZE/MASTER_* set, each rank's "
      "output piped through sed 's/^/[rank R] /', its exit status echoed; world size {n}")
LN = {"torchrun": TR, "torchrun-logdir": TRL, "mp.spawn": SP, "shell loop": SH}

# kind: (category, induced how, root cause, fix)
FAULT = {
 "ckptmissing": ("user.code_error",
   "train24b.py --make-ckpt writes per-rank resume shards ckpt/step_100/rank_<r>.pt for all {n} ranks, then rank {r}'s shard is deleted (rm) before the job starts with --resume ckpt/step_100",
   "Rank {r} could not resume: its checkpoint shard ckpt/step_100/rank_{r}.pt does not exist (FileNotFoundError in torch.load) while the other ranks' shards loaded; the other ranks then lost their gloo peer in DDP construction or were stopped by the launcher. (Category: user.code_error; a storage/checkpoint-I/O category would fit too, the brief's list has none.)",
   "Make sure every rank's checkpoint shard exists where that rank reads it (shared storage or copy rank_{r}.pt to its node) before resuming, or resume from a complete checkpoint."),
 "ckptcorrupt": ("user.code_error",
   "train24b.py --make-ckpt writes per-rank resume shards ckpt/step_100/rank_<r>.pt for all {n} ranks, then rank {r}'s shard is truncated to 1500 bytes (truncate -s 1500) before the job starts with --resume ckpt/step_100",
   "Rank {r}'s checkpoint shard ckpt/step_100/rank_{r}.pt is truncated/corrupted, so torch.load failed with 'PytorchStreamReader failed reading zip archive: failed finding central directory'; the other ranks lost their gloo peer or were stopped by the launcher. (Category: user.code_error; a corrupted-checkpoint/storage category would fit too, the brief's list has none.)",
   "Re-write or restore rank {r}'s shard (the save was interrupted or the copy truncated it) and write checkpoints atomically (save to a temp file, then rename)."),
 "unused": ("user.code_error",
   "DDP(find_unused_parameters=False); from step index {k} on, rank {r} alone stops using the model's aux head (use_aux=False), so its aux parameters get no gradient",
   "Rank {r} stopped using the aux head's parameters from step {s} (only on that rank), so its DDP reducer never finished that iteration's gradient reduction and its next forward raised 'Expected to have finished reduction in the prior iteration' (parameter indices 4 5); the other ranks were blocked in the gradient all_reduce and lost their gloo peer. (Category: user.code_error; unsure vs dist.collective_mismatch, since that rank skipped the all_reduce the others made.)",
   "Use the same parameters on every rank every step (always compute the aux loss, e.g. with a zero weight) or construct DDP with find_unused_parameters=True."),
 "shape": ("dist.collective_mismatch",
   "rank {r} alone builds its model with hidden=48 (the others 32), so fc1.weight is [48, 16] on that rank; DDP's constructor verifies parameter shapes across ranks",
   "Rank {r} built a different model (hidden=48, fc1.weight [48, 16] instead of [32, 16]), so DDP's parameter-shape verification at construction failed{how_shape}. (Category: dist.collective_mismatch, the ranks disagree on the DDP model; unsure vs user.code_error, the per-rank model config is the bug.)",
   "Build the same model on every rank (make the hidden size come from the same config on all ranks)."),
 "earlyexit": ("dist.collective_mismatch",
   "at step index {k} rank {r}'s rank-local early-stopping check fires: it logs the early stop, leaves the training loop, calls dist.destroy_process_group() and returns (the other ranks go on to the next step's DDP all_reduce)",
   "Rank {r} decided to stop early on its own local validation loss at step {s}, left the loop and destroyed its process group while the other ranks continued into the next step's gradient all_reduce, which then failed for lack of that rank{how_early}. (Category: dist.collective_mismatch, the ranks no longer make the same collectives; unsure vs user.code_error, the rank-local stopping decision is the bug.)",
   "Make the early-stopping decision collectively (all_reduce the stop flag or the validation loss and stop on every rank together)."),
 "osexit": ("user.code_error",
   "at step index {k} rank {r}'s gradient health check (limit 0.1) fails: it logs an ERROR record and calls os._exit(1) in a finally block (no exception, no traceback)",
   "Rank {r}'s own gradient health check failed at step {s} (grad norm above the 0.1 limit): it logged the error and hard-exited with os._exit(1) without a traceback; the other ranks lost their gloo peer or were stopped by the launcher.",
   "Fix or relax rank {r}'s gradient health check (limit 0.1 is below normal grad norms) and raise an exception instead of os._exit(1) so the failure carries a traceback."),
 "autograd": ("user.code_error",
   "custom torch.autograd.Function MaskedScale: at step index {k} rank {r}'s mask width is off by one (hidden-1), so its backward multiplies a [32, 32] grad by a 31-element mask",
   "Rank {r}'s custom autograd.Function MaskedScale.backward (train24b.py) raised 'The size of tensor a (32) must match the size of tensor b (31)' at step {s} because its mask was built one element short; the other ranks lost their gloo peer in the gradient all_reduce or were stopped by the launcher.",
   "Fix MaskedScale.backward / the mask width so the saved mask matches the hidden size (32)."),
 "compile": ("compile.graph_break_data_dependent",
   "every rank runs torch.compile(model, fullgraph=True) before DDP; only rank {r} has range_checks=True, which adds `if h.abs().max() > 50.0:` (a data-dependent branch) to forward",
   "Rank {r} alone had range checks on, whose data-dependent `if h.abs().max() > 50.0:` in forward cannot be traced by Dynamo under fullgraph=True (torch._dynamo.exc.Unsupported: Data-dependent branching); the other ranks were stopped by the launcher. (Category: compile.graph_break_data_dependent; compile.dynamo_unsupported also fits, the exception class is Unsupported.)",
   "Make the range check branchless (always clamp, or torch.where / torch.cond) or compile without fullgraph=True; keep the compile config the same on all ranks."),
}
OK = {
 "ok_metrics": "at step index {k} rank {r}'s metrics push to 127.0.0.1:9 fails with ConnectionRefusedError, caught and logged with logger.exception (traceback printed), training continues",
 "ok_sample": "at step index {k} rank {r} hits a truncated JSON record, json.JSONDecodeError is caught and logged with logger.exception (traceback printed), the record is skipped and training continues",
}

# id: (launcher key, kind, bad rank, step index, world, decisive rx, also rxs, collateral rxs, extra)
C = {
 "run24b-torchrun-ckptmissing": ("torchrun", "ckptmissing", 2, None, 3, p(2) + FNF.format(r=2), [TRF.format(e=1, r=2)], [TRTERM, CHILD], {}),
 "run24b-spawn-ckptmissing": ("mp.spawn", "ckptmissing", 0, None, 4, FNF.format(r=0), [SPR.format(r=0)], [SPTERM], {}),
 "run24b-shloop-ckptmissing": ("shell loop", "ckptmissing", 1, None, 3, s(1) + p(1) + FNF.format(r=1), [SHX.format(r=1, s=1)], [s(0) + p(0) + PEER, s(2) + p(2) + PEER], {}),
 "run24b-torchrun-ckptcorrupt": ("torchrun", "ckptcorrupt", 1, None, 4, p(1) + ZIP, [TRF.format(e=1, r=1)], [TRTERM, CHILD], {}),
 "run24b-spawn-ckptcorrupt": ("mp.spawn", "ckptcorrupt", 2, None, 3, ZIP, [SPR.format(r=2)], [SPTERM], {}),
 "run24b-torchrun-unused": ("torchrun", "unused", 0, 2, 3, p(0) + RED, [p(0) + IDX.format(r=0), TRF.format(e=1, r=0)], [p(1) + PEER, p(2) + PEER, TRTERM, CHILD], {}),
 "run24b-shloop-unused": ("shell loop", "unused", 2, 3, 4, s(2) + p(2) + RED, [s(2) + p(2) + IDX.format(r=2)], [s(0) + p(0) + PEER, s(1) + p(1) + PEER, s(3) + p(3) + PEER], {}),
 "run24b-torchrun-shape": ("torchrun", "shape", 0, None, 3, p(1) + SHP.format(p=1, n=32), [p(2) + SHP.format(p=2, n=32)], [p(0) + PEER, TRF.format(e=1, r=1), CHILD],
   dict(how_shape=": ranks 1 and 2 report that their [32, 16] params[0] does not match process 0 (rank {r} itself only lost its peers in the following broadcast, and torchrun names local_rank 1 as the first failure)")),
 "run24b-spawn-shape": ("mp.spawn", "shape", 3, None, 4, SHP.format(p=3, n=48), [SPR.format(r=3)], [SPTERM],
   dict(how_shape=" on rank {r} ('params[0] in this process with sizes [48, 16] appears not to match ... process 0')")),
 "run24b-torchrun-earlyexit": ("torchrun", "earlyexit", 1, 2, 3, EARLY.format(r=1), ["?" + TRF.format(e=r"-?\d+", r=1)], [TERM, TRTERM, CHILD], {}),
 "run24b-shloop-earlyexit": ("shell loop", "earlyexit", 2, 3, 3, s(2) + TS + EARLY.format(r=2), [], [s(0) + p(0) + PEER, s(1) + p(1) + PEER], {}),
 "run24b-spawn-earlyexit": ("mp.spawn", "earlyexit", 0, 1, 3, EARLY.format(r=0), [], [PEER, SPR.format(r=r"[12]"), SPTERM], {}),
 "run24b-torchrun-osexit": ("torchrun", "osexit", 0, 2, 4, OSX.format(r=0), [TRF.format(e=1, r=0)], [TRTERM, CHILD], {}),
 "run24b-shloop-osexit": ("shell loop", "osexit", 3, 1, 4, s(3) + TS + OSX.format(r=3), [SHX.format(r=3, s=1)], [s(0) + p(0) + PEER, s(1) + p(1) + PEER, s(2) + p(2) + PEER], {}),
 "run24b-spawn-osexit": ("mp.spawn", "osexit", 1, 3, 3, OSX.format(r=1), [SPX.format(r=1)], [SPTERM], {}),
 "run24b-torchrun-logdir-autograd": ("torchrun-logdir", "autograd", 1, 2, 3, p(1) + AG, [d(1) + p(1) + r"\s+" + AGF, TRF.format(e=1, r=1)], [d(0) + p(0) + PEER, d(2) + p(2) + PEER, TRTERM, CHILD], dict(dfile="attempt_0/1/stderr.log")),
 "run24b-spawn-autograd": ("mp.spawn", "autograd", 2, 3, 4, AG, [SPR.format(r=2), AGF], [SPTERM], {}),
 "run24b-torchrun-compile": ("torchrun", "compile", 2, None, 3, p(2) + DYN, [p(2) + r"\s+" + DYNX, TRF.format(e=1, r=2)], [TRTERM, CHILD], {}),
 "run24b-spawn-compile": ("mp.spawn", "compile", 0, None, 3, DYN, [DYNX, SPR.format(r=0)], [SPTERM], {}),
 "run24b-torchrun-ok-metrics": ("torchrun", "ok_metrics", 1, 2, 4, None, [], [], {}),
 "run24b-shloop-ok-sample": ("shell loop", "ok_sample", 2, 1, 3, None, [], [], {}),
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
    ap.add_argument("--out", default="/work/helpers/stage24b")
    ap.add_argument("--meta", default="/work/helpers/stage24b.meta")
    ap.add_argument("ids", nargs="*")
    a = ap.parse_args()
    bad = 0
    for cid in a.ids or C:
        lk, kind, r, k, n, drx, also, coll, x = C[cid]
        launcher = "torchrun" if lk.startswith("torchrun") else lk
        dd = os.path.join(a.out, cid)
        if not os.path.exists(os.path.join(dd, "log.txt")):
            print("missing", cid); bad = 1; continue
        text = open(os.path.join(dd, "log.txt"), errors="replace").read()
        lines = text.splitlines()
        meta = json.load(open(os.path.join(a.meta, cid + ".json")))
        f = dict(n=n, r=r, k=k, s=(k or 0) + 1)
        howl = LN[lk].format(**f)
        src = (f"real run: tests/corpus/generators/launchers/round24b/run_all.sh {cid} (`{meta['cmd']}`, in the job dir), "
               "torch 2.13.0 CPU, gloo")
        notes = f"World size {n}; launcher exit status {meta['rc']}."
        if kind in OK:
            assert meta["rc"] == 0 and text.count("training done") == n, cid
            lab = dict(id=cid, source=src, category="none", fatal=False, decisive_line=None, also_acceptable=[],
                       initiating_rank=None, collateral=[], operator=None,
                       root_cause=f"Healthy run: rank {r}'s exception was caught and logged with its traceback (logger.exception) and training went on; every rank logged 'training done' and the launcher exited 0.",
                       fix="Nothing to fix.", launcher=launcher, framework="plain", genuine=False,
                       induced_how=howl + "; " + OK[kind].format(**f), confirmed_by="induced", confidence="high")
        else:
            cat, ind, root, fix = FAULT[kind]
            try:
                dl = find(lines, drx)
                al = [c for c in (find(lines, q.lstrip("?"), need=not q.startswith("?")) for q in also) if c]   # "?": optional
                if lk.startswith("torchrun"):   # the other ranks' own lost-peer errors and their torchrun exit lines
                    pre = (lambda q: d(q) + p(q)) if lk == "torchrun-logdir" else p
                    coll = coll + [pre(q) + PEER for q in range(n) if q != r] + [TRF.format(e=r"-?\d+", r=q) for q in range(n) if q != r]
                co = []
                for c in (find(lines, q, need=False) for q in coll):
                    if c and c not in co and c != dl and c not in al:
                        co.append(c)
            except SystemExit as e:
                print(cid, e); bad = 1; continue
            extra = {kk: v.format(**f) for kk, v in x.items() if kk.startswith("how_")}
            if kind == "earlyexit":
                if launcher == "torchrun":
                    m = re.search(TRF.format(e=r"(-?\d+)", r=r), text)
                    code = m.group(1) if m else "0"
                    extra["how_early"] = (f"; rank {r}'s own process then ended with exit code {code}" +
                                          (" (SIGABRT: 'terminate called without an active exception' while exiting after destroy_process_group), which torchrun reports as the first failure" if code == "-6" else
                                           ", so torchrun does not list rank {r} at all and names a collateral rank as the first failure".format(r=r) if code == "0" else ""))
                elif launcher == "shell loop":
                    code = re.search(SHX.format(r=r, s=r"(\d+)"), text).group(1)
                    extra["how_early"] = f"; rank {r} itself exited with status {code}"
                else:
                    extra["how_early"] = f"; rank {r} itself exited 0, so mp.spawn reports a surviving rank's 'Connection closed by peer' instead"
                notes += f" Rank {r} exit: {code if launcher != 'mp.spawn' else '0 (not reported by mp.spawn)'}."
            lab = dict(id=cid, source=src, category=cat, fatal=True, decisive_line=dl, also_acceptable=al,
                       initiating_rank=r, collateral=co, operator=None, root_cause=root.format(**f, **extra),
                       fix=fix.format(**f), launcher=launcher, framework="plain", genuine=False,
                       induced_how=howl + "; " + ind.format(**f), confirmed_by="induced", confidence="high")
        if x.get("dfile"):
            lab["decisive_file"] = x["dfile"]
            rl = open(os.path.join(dd, "ranks", x["dfile"]), errors="replace").read().splitlines()
            if not any(lab["decisive_line"] in ln for ln in rl):
                print(cid, "decisive line NOT IN", x["dfile"]); bad = 1
        lab["torch_version"] = "2.13.0"
        if os.path.isdir(os.path.join(dd, "ranks")):
            notes += " ranks/ holds the per-rank files torchrun --log-dir/--tee wrote (attempt_0/<rank>/stdout.log, stderr.log)."
        lab["notes"] = notes
        for q in [lab["decisive_line"]] + lab["also_acceptable"] + lab["collateral"]:
            if q is not None and not any(q in ln for ln in lines):
                print(cid, "NOT IN LOG:", q); bad = 1
        with open(os.path.join(dd, "label.json"), "w") as fh:
            json.dump(lab, fh, indent=2, ensure_ascii=False); fh.write("\n")
        print("ok", cid, lab["category"], lab["initiating_rank"], (lab["decisive_line"] or "")[:100])
    sys.exit(bad)


if __name__ == "__main__":
    main()
