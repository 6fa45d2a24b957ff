"""Round 25a: write label.json for every case folder in STAGE (default /work/helpers/stage25a) and check that each
decisive_line / also_acceptable is an exact substring of a line of log.txt (or of ranks/<decisive_file>)."""
import json, os, sys

STAGE = os.environ.get("STAGE", "/work/helpers/stage25a")
SRC = "real run: tests/corpus/generators/launchers/round25a/run_all.sh {id}, torch 2.13.0 CPU, gloo"

TR_COLL = ["other ranks' 'RuntimeError: [...gloo/transport/tcp/pair.cc:553] Connection closed by peer' in the gradient all_reduce",
           "torchrun 'Sending process ... closing signal SIGTERM' and exitcode -15 entries for the surviving ranks"]
SP_COLL = ["mp.spawn 'Terminating process ... via signal SIGTERM' for the surviving ranks",
           "ProcessRaisedException wrapper '-- Process N terminated with the following error:'"]

CUSTOMOP = dict(
    category="compile.dynamo_unsupported",
    decisive_line="There was no fake impl registered for <CustomOpDef(r25a::rms_scale)>",
    also_acceptable=["torch._dynamo.exc.TorchRuntimeError: RuntimeError when making fake tensor call"],
    root_cause="After warmup rank {r} switched its model to the custom op r25a::rms_scale (torch.library.custom_op) that has no fake/meta implementation, so Dynamo could not trace it with fake tensors and the compiled forward failed.",
    fix="Register a fake implementation for the op (@rms_scale.register_fake returning torch.empty_like(x)) or keep it out of the compiled region.",
    induced="train25a.py --fault customop: at --step the bad rank sets net.fused_norm=True, so forward calls a custom_op without register_fake (recompile traces it)")
RECOMPILE = dict(
    category="compile.recompile_limit",
    decisive_line="torch._dynamo hit config.recompile_limit (2)",
    also_acceptable=["torch._dynamo.exc.FailOnRecompileLimitHit: Hard failure due to fail_on_recompile_limit_hit",
                     "torch._dynamo.exc.Unsupported: Dynamo recompile limit exceeded"],
    root_cause="Rank {r}'s data shard produced ragged batch sizes (16, 14, 12) with torch.compile(dynamic=False), so every new size recompiled forward until the recompile limit of 2 was hit, and fail_on_recompile_limit_hit=True turned that into a hard failure.",
    fix="Pad/drop the ragged batches (drop_last=True) or compile with dynamic shapes (mark the batch dim dynamic / dynamic=None), or raise the recompile limit.",
    induced="train25a.py --fault recompile: all ranks set {limit}=2 and fail_on_recompile_limit_hit=True; only the bad rank's batches shrink by 2 rows per step from --step on")
DYNSHAPE = dict(
    category="compile.dynamic_shape_guard",
    decisive_line="You marked L['batch']['features'].size()[0] as dynamic but your code specialized it to be a constant (16)",
    also_acceptable=["torch.fx.experimental.symbolic_shapes.ConstraintViolationError: Constraints violated (L['batch']['features'].size()[0])!"],
    root_cause="Rank {r} called torch._dynamo.mark_dynamic on the batch dimension, but forward reshapes with a hard-coded batch size (x.view(16, -1)), which specializes that dim to 16 and violates the dynamic constraint.",
    fix="Do not hard-code the batch size in forward (use x.view(x.shape[0], -1) / flatten), or use maybe_mark_dynamic instead of mark_dynamic.",
    induced="train25a.py --fault dynshape: the bad rank's Net has fixed_batch=16 (x.view(16, -1)); from --step on it calls torch._dynamo.mark_dynamic(batch['features'], 0)")
PRINT = dict(
    category="compile.dynamo_unsupported",
    decisive_line="Dynamo does not know how to trace builtin operator `print` with argument types ['str', 'Tensor']",
    also_acceptable=["torch._dynamo.exc.Unsupported: Failed to trace builtin operator"],
    root_cause="Rank {r} turned on activation debugging, a print() of a tensor inside the forward compiled with fullgraph=True; Dynamo cannot trace print of a Tensor, and fullgraph forbids the graph break.",
    fix="Remove the print from the compiled forward (log outside it, or add print to torch._dynamo.config.reorderable_logging_functions), or compile without fullgraph=True.",
    induced="train25a.py --fault print: all ranks compile with fullgraph=True; at --step the bad rank sets net.debug_acts=True (print('debug activations:', h[0, :4]) in forward)")
CACHEDIR = dict(
    category="compile.cache_corruption",
    decisive_line="NotADirectoryError: [Errno 20] Not a directory: '/home/user/job/rank_cache/rank{r}/inductor'",
    also_acceptable=[],
    root_cause="Rank {r}'s TORCHINDUCTOR_CACHE_DIR (/home/user/job/rank_cache/rank{r}/inductor) lies under rank_cache/rank{r}, a stale regular file, so Inductor could not create its cache directory when torch.compile was first called.",
    fix="Remove the stale file rank_cache/rank{r} (or point TORCHINDUCTOR_CACHE_DIR at a writable directory) and restart.",
    induced="train25a.py --fault cachedir --per-rank-cache JOB/rank_cache: every rank sets TORCHINDUCTOR_CACHE_DIR=rank_cache/rank<r>/inductor; run_all.sh made rank_cache/rank<bad> a regular file")
CACHEDIR_RO = dict(
    category="compile.cache_corruption",
    decisive_line="OSError: [Errno 30] Read-only file system: '/home/user/job/rank_cache/rank{r}/inductor'",
    also_acceptable=[],
    root_cause="Rank {r}'s TORCHINDUCTOR_CACHE_DIR (/home/user/job/rank_cache/rank{r}/inductor) lies in a directory mounted read-only, so Inductor could not create its cache directory when torch.compile was first called.",
    fix="Point TORCHINDUCTOR_CACHE_DIR at a writable location for that rank (or mount its cache directory read-write) and restart.",
    induced="train25a.py --fault cachedir --per-rank-cache JOB/rank_cache: every rank sets TORCHINDUCTOR_CACHE_DIR=rank_cache/rank<r>/inductor; run_all.sh bind-mounted rank_cache/rank<bad> read-only (mount --bind -o ro)")
USERERR = dict(
    category="user.code_error",
    decisive_line="KeyError: 'features'",
    also_acceptable=[],
    root_cause="At step {s} rank {r}'s data loader produced a batch with key 'feats' instead of 'features', and the compiled forward's batch['features'] raised KeyError (shown through Dynamo's eval_frame frames).",
    fix="Fix the data pipeline of that shard so every batch carries the 'features' key (or validate batch schemas before the model).",
    induced="train25a.py --fault usererror: at --step the bad rank's loader names the input tensor 'feats'; forward does batch['features'] under torch.compile")

def ok(desc, extra):
    return dict(category="none", fatal=False, decisive_line=None, also_acceptable=[], initiating_rank=None,
                root_cause="Healthy run: " + desc, fix="None needed.", induced=extra)

CASES = {
    "run25a-torchrun-customop": (CUSTOMOP, 1, 3, "torchrun"),
    "run25a-torchrun-recompile": (RECOMPILE, 2, 3, "torchrun"),
    "run25a-torchrun-dynshape": (DYNSHAPE, 1, 4, "torchrun"),
    "run25a-torchrun-fullgraph-print": (PRINT, 0, 3, "torchrun"),
    "run25a-torchrun-cachedir": (CACHEDIR, 2, 1, "torchrun"),
    "run25a-torchrun-cachedir-readonly": (CACHEDIR_RO, 0, 1, "torchrun"),
    "run25a-torchrun-usererror": (USERERR, 1, 4, "torchrun"),
    "run25a-torchrun-logdir-dynshape": (DYNSHAPE, 2, 3, "torchrun"),
    "run25a-spawn-customop": (CUSTOMOP, 0, 3, "mp.spawn"),
    "run25a-spawn-recompile": (RECOMPILE, 1, 3, "mp.spawn"),
    "run25a-spawn-dynshape": (DYNSHAPE, 1, 3, "mp.spawn"),
    "run25a-spawn-fullgraph-print": (PRINT, 2, 4, "mp.spawn"),
    "run25a-spawn-cachedir": (CACHEDIR, 1, 1, "mp.spawn"),
    "run25a-spawn-usererror": (USERERR, 0, 3, "mp.spawn"),
    "run25a-torchrun-ok-graphbreak": (ok(
        "3 ranks train 6 steps; forward logs a .item() of the activations, which causes graph breaks (reported by "
        "TORCH_LOGS=graph_breaks) without fullgraph, so compile splits the graph and training finishes.",
        "train25a.py --graph-break (log.debug('mean activation %.4f', h.mean().item()) in forward), TORCH_LOGS=graph_breaks"),
        None, None, "torchrun"),
    "run25a-spawn-ok-recompile": (ok(
        "rank 1's batches shrink from step 5 on, so with dynamic=False forward recompiles twice (TORCH_LOGS=recompiles) "
        "under the default recompile limit of 8, and training finishes.",
        "train25a.py --ragged-ranks 1 --step 4, TORCH_LOGS=recompiles"), None, None, "mp.spawn"),
    "run25a-torchrun-ok-dynamic": (ok(
        "rank 0's batches shrink from step 4 on; with automatic dynamic shapes forward (and the resume function after its graph break) recompiles once with a dynamic "
        "batch dim, and the .item() in forward graph-breaks (TORCH_LOGS=recompiles,graph_breaks); training finishes.",
        "train25a.py --dynamic auto --ragged-ranks 0 --step 3 --graph-break, TORCH_LOGS=recompiles,graph_breaks"),
        None, None, "torchrun"),
}

def lines_of(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read().splitlines()

bad = 0
for cid, (meta, rank, step, launcher) in CASES.items():
    d = os.path.join(STAGE, cid)
    if not os.path.isdir(d):
        print("missing", cid); bad += 1; continue
    cmd = open(os.path.join(os.environ.get("JOB", "/work/helpers/w25a/job"), "out", cid + ".cmd")).read().strip()
    cmd = cmd.replace(os.environ.get("JOB", "/work/helpers/w25a/job"), "/home/user/job")
    limit = "cache_size_limit" if "cache_size_limit" in cmd else "recompile_limit"
    fmt = lambda s: s.format(r=rank, s=step, limit=limit) if isinstance(s, str) else s
    fatal = meta.get("fatal", True)
    lab = {"id": cid, "source": SRC.format(id=cid), "category": meta["category"], "fatal": fatal,
           "decisive_line": fmt(meta["decisive_line"]), "also_acceptable": [fmt(a) for a in meta["also_acceptable"]],
           "initiating_rank": rank,
           "collateral": [] if not fatal else (TR_COLL if launcher == "torchrun" else SP_COLL),
           "operator": None, "root_cause": fmt(meta["root_cause"]), "fix": fmt(meta["fix"]),
           "launcher": launcher, "framework": "plain", "torch_version": "2.13.0", "genuine": False,
           "induced_how": fmt(meta["induced"]) + "; command: " + cmd,
           "confirmed_by": "induced", "confidence": "high"}
    if cid == "run25a-torchrun-logdir-dynshape":
        lab["decisive_file"] = "attempt_0/2/stderr.log"
    if "cachedir" in cid:
        lab["collateral"] = lab["collateral"] + ["surviving ranks were still compiling (no steps logged) when torn down"]
    # check
    files = [os.path.join(d, "log.txt")] + ([os.path.join(d, "ranks", lab["decisive_file"])] if "decisive_file" in lab else [])
    for f in files:
        L = lines_of(f)
        for s in ([lab["decisive_line"]] if lab["decisive_line"] else []) + lab["also_acceptable"]:
            n = sum(s in l for l in L)
            if n == 0:
                print(f"NOT FOUND in {f}: {s}"); bad += 1
    with open(os.path.join(d, "label.json"), "w") as f:
        json.dump(lab, f, indent=2, ensure_ascii=False); f.write("\n")
    print("ok", cid, lab["category"], rank)
sys.exit(1 if bad else 0)
