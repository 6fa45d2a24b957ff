"""Round 21: write label.json for every case in $STAGE from what run_all.sh induced, and check them.
The decisive line is taken from the case's log.txt (first line matching the case's pattern; with a carriage-return
redraw in a line, the last segment) and must be an exact substring of a log.txt line. Checks: the launcher's exit
code (0 for every non-fatal case, non-zero for the failures), 'training complete' present iff the job finished, the
quoted rank shows up in the log, and no log names what was induced.
usage: python make_labels.py --job JOB --stage STAGE [case-id ...]"""
import argparse, json, os, re, sys

GEN = "tests/corpus/generators/launchers/round21"
T = "torch 2.13.0 CPU, gloo"

# id: launcher, framework, run_all args summary, category, fatal, rank, decisive regex, root_cause, fix, induced_how, collateral
CASES = {
  # ---------------- A: healthy but noisy
  "run21-torchrun-noisy-ok": dict(
    launcher="torchrun", framework="plain", setup="torchrun --nproc-per-node 4, --noisy --tqdm (tqdm bar on rank 0)",
    category="none", fatal=False, rank=None, pat=None,
    root_cause="Healthy run: the FutureWarning/DeprecationWarning from the job's own config code, torch's "
               "lr_scheduler-order and tensor copy-construct UserWarnings and log lines such as 'validation error: 0.23' "
               "and '0 failed samples' are harmless; all ranks finish and rank 0 logs 'training complete'.",
    fix="Nothing to fix (optionally call optimizer.step() before lr_scheduler.step() and silence the deprecations).",
    how="4 ranks, 8 steps, no fault; --noisy emits Python warnings and alarming-looking words; tqdm bar on rank 0"),
  "run21-torchrun-detail-ok": dict(
    launcher="torchrun", framework="plain", setup="torchrun --nproc-per-node 6, TORCH_DISTRIBUTED_DEBUG=DETAIL TORCH_CPP_LOG_LEVEL=INFO, gradients averaged by hand (no DDP)",
    category="none", fatal=False, rank=None, pat=None,
    root_cause="Healthy run: TORCH_DISTRIBUTED_DEBUG=DETAIL with TORCH_CPP_LOG_LEVEL=INFO prints a c10d INFO line "
               "(CollectiveFingerPrint, TCPStore, socket) for every collective; nothing failed and the job completed.",
    fix="Nothing to fix; unset TORCH_DISTRIBUTED_DEBUG / TORCH_CPP_LOG_LEVEL to quiet the log.",
    how="6 ranks, 6 steps, no fault; debug env only (no DDP: per-parameter all_reduce of the gradients)"),
  "run21-mpspawn-badbatch-ok": dict(
    launcher="mp.spawn", framework="plain", setup="torch.multiprocessing.spawn nprocs=3, --noisy",
    category="none", fatal=False, rank=None, pat=None,
    root_cause="Healthy run: rank 1 hit one truncated record (zlib.error), logged it with logger.exception and skipped "
               "that batch; training continued on all ranks and completed.",
    fix="Nothing required; optionally re-write the truncated record of shard 1.",
    how="rank 1's record 3 is cut in half in memory; the loop catches the zlib.error, logs it with a traceback "
        "(logger.exception) and trains on the next record; 3 ranks, 8 steps",
    collateral=["rank 1: ERROR 'could not decode record 3 of shard 1; skipping this batch' + zlib.error traceback (handled)"]),
  "run21-mpirun-retry-ok": dict(
    launcher="mpirun", framework="plain", setup="mpirun --tag-output --oversubscribe -np 4",
    category="none", fatal=False, rank=None, pat=None,
    root_cause="Healthy run: rank 2's first fetch from the local feature cache was refused (ConnectionRefusedError, "
               "logged as a warning) and the retry 1.5 s later succeeded; the job completed.",
    fix="Nothing to fix (the cache server was still starting).",
    how="at step 4 rank 2 fetches its batch from a local TCP server that starts listening 1 s later: attempt 1 "
        "ConnectionRefusedError (warning), attempt 2 succeeds; 4 ranks, 8 steps",
    collateral=["rank 2: WARNING 'feature cache fetch failed (attempt 1/3): [Errno 111] Connection refused; retrying'"]),
  "run21-mpirun-detail-ok": dict(
    launcher="mpirun", framework="plain", setup="mpirun --tag-output -np 2, TORCH_DISTRIBUTED_DEBUG=INFO TORCH_CPP_LOG_LEVEL=INFO, --noisy",
    category="none", fatal=False, rank=None, pat=None,
    root_cause="Healthy run: TORCH_CPP_LOG_LEVEL=INFO c10d/TCPStore trace chatter, Python warnings, and one refused "
               "feature-cache fetch on rank 1 that succeeded on retry; the job completed.",
    fix="Nothing to fix; unset TORCH_CPP_LOG_LEVEL / TORCH_DISTRIBUTED_DEBUG to quiet the log.",
    how="2 ranks, 6 steps, DDP; rank 1 retries one fetch at step 2 (ConnectionRefusedError then success); debug env",
    collateral=["rank 1: WARNING 'feature cache fetch failed (attempt 1/3): [Errno 111] Connection refused; retrying'"]),
  "run21-accelerate-noisy-ok": dict(
    launcher="accelerate", framework="accelerate", setup="accelerate launch --config_file acc_cpu.yaml --num_processes 4, --noisy --tqdm",
    category="none", fatal=False, rank=None, pat=None,
    root_cause="Healthy run: Python warnings and one truncated record on rank 3 that was logged with a traceback "
               "(logger.exception) and skipped; all 4 processes finished and 'training complete' was logged.",
    fix="Nothing required; optionally re-write the truncated record of shard 3.",
    how="Accelerator(cpu=True), 4 processes, 8 steps; rank 3's record 5 truncated and skipped (handled zlib.error)",
    collateral=["rank 3: ERROR 'could not decode record 5 of shard 3; skipping this batch' + zlib.error traceback (handled)"]),
  "run21-lightning-noisy-ok": dict(
    launcher="python", framework="lightning", setup="python train_lightning21.py --devices 3 --epochs 2 (Lightning DDP, CPU, progress bar)",
    category="none", fatal=False, rank=None, pat=None,
    root_cause="Healthy run: Lightning's usual warnings (few DataLoader workers, ...), progress bar and 'val_error' "
               "metrics look alarming but both epochs completed ('Trainer.fit stopped: max_epochs=2 reached').",
    fix="Nothing to fix (optionally raise num_workers).",
    how="Lightning Trainer(accelerator='cpu', devices=3, DDPStrategy gloo), 2 epochs, no fault"),
  "run21-torchrun-compile-print-ok": dict(
    launcher="torchrun", framework="plain", setup="torchrun --nproc-per-node 2, TORCH_LOGS=graph_breaks,recompiles, torch.compile(DDP(model)) with a print() in forward",
    category="none", fatal=False, rank=None, pat=None,
    root_cause="Healthy run: TORCH_LOGS=graph_breaks,recompiles reports DDP-internal graph breaks, a graph break at "
               "a debug print() and a recompile for the shorter last batch; the compiled model trained to the end.",
    fix="Nothing to fix (optionally remove the print from forward).",
    how="2 ranks, 6 steps; print() in forward on every rank, last batch half size; fullgraph off"),
  # ---------------- B: non-fatal warnings
  "run21-torchrun-graphbreak-item": dict(
    launcher="torchrun", framework="plain", setup="torchrun --nproc-per-node 3 --log-dir D --tee 3, TORCH_LOGS=graph_breaks, torch.compile(DDP(model))",
    category="compile.graph_break_data_dependent", fatal=False, rank=1,
    pat=r"Graph break from `Tensor\.item\(\)`, consider setting:",
    root_cause="Rank 1's activation clipping calls h.abs().max().item() inside the compiled forward; Dynamo graph-breaks "
               "there (warning) and the job runs on to the end.",
    fix="Nothing needed to finish; to keep one graph, clamp without .item() (torch.clamp / torch.where) or set "
        "torch._dynamo.config.capture_scalar_outputs=True.",
    how="only rank 1's config enables clipping (x.abs().max().item() + Python branch) in forward; fullgraph=False; 3 ranks, 6 steps",
    collateral=["every rank: V-level [__graph_breaks] blocks for DDP internals (set_runtime_stats_and_log, _inside_ddp_forward)"]),
  "run21-mpspawn-graphbreak-item": dict(
    launcher="mp.spawn", framework="plain", setup="torch.multiprocessing.spawn nprocs=2, torch.compile(DDP(model)), no TORCH_LOGS",
    category="compile.graph_break_data_dependent", fatal=False, rank=0,
    pat=r"Graph break from `Tensor\.item\(\)`, consider setting:",
    root_cause="Rank 0's activation clipping calls .item() inside the compiled forward; Dynamo graph-breaks there "
               "(W-level warning) and training completes.",
    fix="Nothing needed to finish; avoid .item() in forward or set torch._dynamo.config.capture_scalar_outputs=True.",
    how="only rank 0's config enables clipping (.item() + branch) in forward; fullgraph=False; 2 ranks, 6 steps"),
  "run21-mpirun-recompile-limit": dict(
    launcher="mpirun", framework="plain", setup="mpirun --tag-output -np 3, TORCH_LOGS=recompiles, torch.compile(DDP(model), dynamic=False), recompile_limit=3",
    category="compile.recompile_limit", fatal=False, rank=2,
    pat=r"hit config\.recompile_limit",
    root_cause="Rank 2's batches change size every step; with dynamic=False each new shape fails the size guard and "
               "recompiles until torch._dynamo.config.recompile_limit (3) is hit, then the forward runs in eager; the "
               "job completes.",
    fix="Do not force dynamic=False (or mark the batch dim dynamic), or pad/bucket rank 2's batches to few sizes.",
    how="rank 2's shard has batch sizes 16, 20, 24, ...; dynamic=False; torch._dynamo.config.recompile_limit=3; 3 ranks, 7 steps",
    collateral=["rank 2: [__recompiles] 'Recompiling function' blocks with 'size mismatch at index 0' guard failures"]),
  "run21-accelerate-recompile-limit": dict(
    launcher="accelerate", framework="accelerate", setup="accelerate launch --num_processes 2, torch.compile(prepared model, dynamic=False), recompile_limit=2, tqdm bar on rank 0, no TORCH_LOGS",
    category="compile.recompile_limit", fatal=False, rank=1,
    pat=r"hit config\.recompile_limit",
    root_cause="Rank 1's batches change size every step; with dynamic=False every new shape recompiles until "
               "torch._dynamo.config.recompile_limit (2) is hit and the forward falls back to eager; training completes.",
    fix="Do not force dynamic=False (or mark the batch dim dynamic), or bucket rank 1's batch sizes.",
    how="rank 1's shard has batch sizes 16, 20, 24, ...; dynamic=False; recompile_limit=2; Accelerator(cpu=True), 2 processes, 6 steps"),
  # ---------------- C: recovered by torchrun --max-restarts 1
  "run21-torchrun-restart-recovered": dict(
    launcher="torchrun", framework="plain", setup="torchrun --nproc-per-node 4 --max-restarts 1",
    category="user.code_error", fatal=False, rank=2,
    pat=r"KeyError: 'shard_02\.idx'",
    root_cause="Attempt 0 failed on rank 2's KeyError in data loading; torchrun restarted the workers "
               "(--max-restarts 1) and attempt 1 trained to the end, so the job recovered (exit 0).",
    fix="Add the missing index entry for shard 2 (the restart only succeeded because the lookup did not fail again).",
    how="rank 2 raises KeyError at step 3 only when TORCHELASTIC_RESTART_COUNT is 0; --max-restarts 1; each attempt "
        "joins through its own PrefixStore('attempt<n>') of torchrun's store",
    collateral=["attempt 0: torchrun SIGTERMs ranks 0,1,3 and restarts the group"]),
  "run21-torchrun-restart-recovered-logdir": dict(
    launcher="torchrun", framework="plain", setup="torchrun --nproc-per-node 3 --max-restarts 1 --log-dir D --tee 3, --noisy",
    category="user.code_error", fatal=False, rank=1,
    pat=r"KeyError: 'shard_01\.idx'",
    root_cause="Attempt 0 failed on rank 1's KeyError in data loading; torchrun restarted the workers and attempt 1 "
               "completed, so the job recovered (exit 0).",
    fix="Add the missing index entry for shard 1.",
    how="rank 1 raises KeyError at step 2 only in attempt 0; --max-restarts 1 --log-dir --tee 3; PrefixStore per attempt",
    collateral=["attempt 0: torchrun SIGTERMs ranks 0 and 2 and restarts the group"]),
  "run21-torchrun-restart-sigkill-recovered": dict(
    launcher="torchrun", framework="plain", setup="torchrun --nproc-per-node 5 --max-restarts 1",
    category="mem.host_oom", fatal=False, rank=3,
    pat=r"failed \(exitcode: -9\) local_rank: 3",
    root_cause="Attempt 0 lost rank 3 to SIGKILL (no traceback); torchrun restarted the workers and attempt 1 "
               "completed, so the job recovered (exit 0).",
    fix="Find what killed rank 3 (kernel OOM killer / dmesg) and give it headroom; the restart masked it this time.",
    how="rank 3 SIGKILLs itself after step 3's log line only when TORCHELASTIC_RESTART_COUNT is 0; --max-restarts 1; PrefixStore per attempt",
    collateral=["attempt 0: torchrun SIGTERMs the other ranks and restarts the group"]),
  # ---------------- D: ordinary failures
  "run21-torchrun-noisy-raise": dict(
    launcher="torchrun", framework="plain", setup="torchrun --nproc-per-node 4, --noisy --tqdm",
    category="user.code_error", fatal=True, rank=3,
    pat=r"KeyError: 'shard_03\.idx'",
    root_cause="Rank 3 raised KeyError looking up its shard index at step 5; torchrun tore the job down. The Python "
               "warnings before it are harmless noise.",
    fix="Add the missing 'shard_03.idx' entry to the shard table (or derive it from the shard files).",
    how="rank 3 raises KeyError at step 4 (0-based) in data loading; same noisy warnings as run21-torchrun-noisy-ok; 4 ranks",
    collateral=["ranks 0,1,2: SIGTERMed by torchrun"]),
  "run21-mpspawn-sigkill": dict(
    launcher="mp.spawn", framework="plain", setup="torch.multiprocessing.spawn nprocs=3, --noisy",
    category="mem.host_oom", fatal=True, rank=2,
    pat=r"process 2 terminated with signal SIGKILL",
    root_cause="Rank 2 was SIGKILLed (no traceback) after step 4, as the kernel OOM killer does; mp.spawn then "
               "terminated the other processes.",
    fix="Reduce rank 2's host memory use or raise the memory limit; check dmesg for the OOM killer.",
    how="rank 2 os.kill(getpid(), SIGKILL) after its step-4 log line; 3 ranks; noisy warnings as in the healthy runs",
    collateral=["ranks 0,1: terminated by mp.spawn"]),
  "run21-mpirun-raise": dict(
    launcher="mpirun", framework="plain", setup="mpirun --tag-output --oversubscribe -np 5",
    category="user.code_error", fatal=True, rank=1,
    pat=r"KeyError: 'shard_01\.idx'",
    root_cause="Rank 1 raised KeyError looking up its shard index at step 3; mpirun aborted the job.",
    fix="Add the missing 'shard_01.idx' entry to the shard table.",
    how="rank 1 raises KeyError at step 2 (0-based) in data loading; 5 ranks",
    collateral=["other ranks: killed by mpirun"]),
  "run21-lightning-raise": dict(
    launcher="python", framework="lightning", setup="python train_lightning21.py --devices 2 --epochs 1",
    category="user.code_error", fatal=True, rank=1,
    pat=r"^(\[rank1\]: )?KeyError: 3$",
    root_cause="training_step on rank 1 raised KeyError: 3 (batch 3 missing from its per-shard stats table); the "
               "Lightning DDP job failed.",
    fix="Fill the stats table for every batch index (or use .get with a default).",
    how="rank 1's stats table lacks key 3; training_step looks it up at batch 3; 2 devices",
    collateral=["rank 0: stopped by Lightning/DDP teardown"]),
}

LEAKS = [r"R21_", r"R21TAG", r"raise0", r"sigkill0", r"badbatch", r"induce", r"\bfault"]


def lines_of(path):
    out = []
    with open(path, errors="replace") as f:
        for ln in f:
            ln = ln.rstrip("\n").rstrip("\r")
            out.append(ln.split("\r")[-1] if "\r" in ln else ln)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--job", required=True)
    ap.add_argument("--stage", required=True)
    ap.add_argument("ids", nargs="*")
    a = ap.parse_args()
    bad = 0
    for cid, c in CASES.items():
        if a.ids and cid not in a.ids:
            continue
        d = os.path.join(a.stage, cid)
        logp = os.path.join(d, "log.txt")
        if not os.path.exists(logp):
            print(f"{cid}: no log.txt"); bad += 1; continue
        rc = int(open(os.path.join(a.job, "out", cid, "rc")).read().strip())
        cmd = open(os.path.join(a.job, "out", cid, "cmd")).read().strip()
        raw = open(logp, errors="replace").read()
        L = lines_of(logp)
        problems = []
        if c["fatal"] and rc == 0:
            problems.append("fatal case but launcher exit 0")
        if not c["fatal"] and rc != 0:
            problems.append(f"non-fatal case but launcher exit {rc}")
        done = "training complete" in raw or "`Trainer.fit` stopped" in raw
        if done == c["fatal"]:
            problems.append(f"completion marker present={done} does not fit fatal={c['fatal']}")
        for w in LEAKS + [re.escape(cid)]:
            if re.search(w, raw):
                problems.append(f"log names {w!r}")
        decisive = None
        if c["pat"]:
            for ln in L:
                m = re.search(c["pat"], ln)
                if m:
                    decisive = ln.strip() if len(ln.strip()) < 400 else m.group(0)
                    k = ln.rfind("[rank", 0, m.start())
                    if k > 0 and "%|" in ln[:k]:      # a tqdm bar drawn on the same line: quote from the rank prefix
                        decisive = ln[k:].strip()
                    break
            if decisive is None:
                problems.append("decisive pattern not found")
            elif not any(decisive in ln for ln in L):
                problems.append("decisive not an exact substring")
        if c["rank"] is not None and f"[rank {c['rank']}]" not in raw and f"[rank{c['rank']}]" not in raw:
            problems.append("rank not visible in log")
        label = {
            "id": cid,
            "source": f"real run: {GEN}/run_all.sh {cid} ({c['setup']}), {T}",
            "category": c["category"], "fatal": c["fatal"], "decisive_line": decisive, "also_acceptable": [],
            "initiating_rank": c["rank"], "collateral": c.get("collateral", []), "operator": None,
            "root_cause": c["root_cause"], "fix": c["fix"], "launcher": c["launcher"], "framework": c["framework"],
            "torch_version": "2.13.0", "genuine": False,
            "induced_how": f"{c['how']}; launcher exit code {rc}",
            "confirmed_by": "induced", "confidence": "high",
        }
        if c["launcher"] == "torchrun" and "--log-dir" in cmd:
            label["notes"] = "ranks/ holds torchrun's --log-dir tree (none_<run id>/attempt_<n>/<local_rank>/stdout.log, stderr.log)"
        with open(os.path.join(d, "label.json"), "w") as f:
            json.dump(label, f, indent=2); f.write("\n")
        print(f"{cid}: rc={rc} cat={c['category']} fatal={c['fatal']} rank={c['rank']} "
              f"decisive={decisive!r} {'OK' if not problems else 'PROBLEMS: ' + '; '.join(problems)}")
        bad += bool(problems)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
