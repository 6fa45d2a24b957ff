"""Writes label.json into each round91b case folder (OUT, default /tmp/h91b/stage) and checks them.

Decisive lines are picked from the log by pattern (which waiting rank prints its timeout first varies between
runs), then checked to be an exact substring of a line of log.txt. Long lines are cut to a prefix."""
import json, os, re, sys

OUT = os.environ.get("OUT", "/tmp/h91b/stage")
SRC = "real run: tests/corpus/generators/launchers/round91b/run_all.sh {id} ({what}), torch 2.13.0 CPU, gloo"
CATS = {"user.code_error", "mem.host_oom", "dist.collective_timeout", "dist.collective_mismatch", "none"}
TR_SUM = "torchrun SIGTERM to the surviving ranks and ChildFailedError summary"
SPAWN_SUM = "mp.spawn 'Terminating process ... via signal SIGTERM' and ProcessRaisedException for the first failed process only"
TIMEOUT_PATS = ("Timed out waiting", "Application timeout caused pair closure")


def rank_of(line):
    m = re.search(r"\[(?:rank|default)(\d+)\]", line)
    return int(m.group(1)) if m else None


def cut(line, n=260):
    line = line.rstrip("\n").strip()
    return line if len(line) <= n else line[:n]


def lines_with(log, pats, ranks=None):
    out = []
    for l in log:
        if any(p in l for p in pats) and (ranks is None or rank_of(l) in ranks):
            c = cut(l)
            if c not in out:
                out.append(c)
    return out


def C(id, launcher, framework, category, rank, collateral, root, fix, how, what, decisive=None, pats=None,
      waiting=None, also_pats=None, fatal=True):
    """decisive: fixed substring; or pats (+ waiting: ranks whose line is preferred) -> first matching line."""
    return dict(id=id, launcher=launcher, framework=framework, category=category, rank=rank,
                collateral=collateral, root=root, fix=fix, how=how, what=what, decisive=decisive, pats=pats,
                waiting=waiting, also_pats=also_pats, fatal=fatal)


UNEVEN_FIX = ("Shard the validation set evenly (DistributedSampler pads to equal length) or reduce the metric once "
              "after the loop (sum and count), not once per batch; use Join or padding for truly uneven shards.")
TM = "torchrun --nproc-per-node {n} --tee 3 tm_job.py"
EJ = "torchrun --nproc-per-node {n} --tee 3 eval_job.py"
SP = "mp.spawn nprocs={n} (spawn_eval.py -> eval_job.py)"
ACC = "accelerate launch --multi_gpu --num_processes {n} (CPU, gloo) acc_eval.py"
LT = "python lt_job.py: Lightning Trainer(accelerator='cpu', devices=3, strategy=DDPStrategy(gloo, timeout 20 s))"

cases = [
 C("run91-torchrun-uneven-val-timeout", "torchrun", "plain", "dist.collective_timeout", 3,
   ["rank 3 itself times out in its extra per-batch all_reduce", TR_SUM],
   "From epoch 2 the last rank's validation file holds one batch more and the eval loop all_reduces the loss of every batch, so rank 3 made one all_reduce more while ranks 0-2 already waited in the post-validation barrier; nothing matched and all ranks hit the 20 s gloo timeout.",
   UNEVEN_FIX, "--fault uneven --who last --after barrier --fault-epoch 2 --timeout 20", EJ.format(n=4),
   pats=TIMEOUT_PATS, waiting=[0, 1, 2]),
 C("run91-torchrun-uneven-val-detail", "torchrun", "plain", "dist.collective_mismatch", 1,
   ["ranks 0, 2, 3 report the mismatch from their barrier", TR_SUM],
   "From epoch 1 rank 1's validation file holds one batch more; its extra per-batch loss all_reduce met the other ranks' post-validation barrier, and TORCH_DISTRIBUTED_DEBUG=DETAIL's fingerprint check reported ALLREDUCE vs BARRIER.",
   UNEVEN_FIX, "--fault uneven --who 1 --after barrier --fault-epoch 1 --no-ddp (manual grad all_reduce: DDP segfaults under DETAIL in this build); TORCH_DISTRIBUTED_DEBUG=DETAIL",
   "TORCH_DISTRIBUTED_DEBUG=DETAIL " + EJ.format(n=4), pats=["Detected mismatch between collectives on ranks"]),
 C("run91-spawn-uneven-val-metric-timeout", "mp.spawn", "plain", "dist.collective_timeout", 2,
   [SPAWN_SUM],
   "From epoch 1 the last rank's validation file holds one batch more; its extra per-batch 1-element loss all_reduce ran against the other ranks' 2-element [correct, total] all_reduce, gloo did not flag the size difference, the ranks blocked and the 20 s timeout fired.",
   UNEVEN_FIX, "--fault uneven --who last --after metric --fault-epoch 1 --timeout 20", SP.format(n=3),
   pats=TIMEOUT_PATS),
 C("run91-spawn-gather-object-unpicklable", "mp.spawn", "plain", "user.code_error", 1,
   [SPAWN_SUM],
   "In epoch 1 rank 1's prediction records carry a lambda (a lazy file opener kept by its shard reader); all_gather_object could not pickle them and rank 1 raised while the others waited in the gather.",
   "Gather only plain data (ids, predictions, targets): drop callables / open handles from the records before all_gather_object.",
   "--fault unpicklable --who 1 --fault-epoch 1", SP.format(n=4), decisive="AttributeError: Can't pickle local object 'run.<locals>.<lambda>'"),
 C("run91-torchrun-gather-object-unpicklable-last", "torchrun", "plain", "user.code_error", 2,
   ["ranks 0-1: gloo 'Connection closed by peer' in all_gather_object", TR_SUM],
   "In the first validation the last rank's prediction records carry a lambda (lazy file opener); all_gather_object could not pickle them and rank 2 raised, dropping its peers.",
   "Gather only plain data (ids, predictions, targets): drop callables / open handles from the records before all_gather_object.",
   "--fault unpicklable --who last --fault-epoch 0", EJ.format(n=3),
   decisive="[default2]:[rank2]: AttributeError: Can't pickle local object 'run.<locals>.<lambda>'"),
 C("run91-torchrun-gather-object-huge-oom", "torchrun", "plain", "mem.host_oom", 2,
   ["ranks 1, 3: gloo 'Connection closed by peer' (rank 0 SIGTERMed in gather_object)", TR_SUM],
   "In epoch 1 rank 2 built a raw float64 score table of 5000x4000 Python floats for gather_object; pickling it pushed the process past its 1 GiB memory cgroup and the kernel OOM killer SIGKILLed it (no traceback).",
   "Do not gather raw per-sample score tables as Python objects: reduce on each rank or write shards to disk; give the job more memory.",
   "--fault huge --who 2 --fault-epoch 1 --timeout 30; rank 2 moved itself into memory cgroup r91b (limit 1 GiB, memsw 1 GiB); dmesg: 'Memory cgroup out of memory: Killed process'",
   "torchrun --nproc-per-node 4 --log-dir --tee 3 eval_job.py", decisive="failed (exitcode: -9) local_rank: 2",
   also_pats=["exitcode  : -9 (pid:", "traceback : Signal 9 (SIGKILL) received by PID"]),
 C("run91-torchrun-rank0-eval-timeout", "torchrun", "plain", "dist.collective_timeout", 0,
   ["torchrun SIGTERMs rank 0 (still evaluating) and the others"],
   "In epoch 1 rank 0 alone evaluated the full validation set (about 48 s) while ranks 1-3 waited at a barrier with a 20 s process-group timeout, so their barrier timed out.",
   "Evaluate sharded on all ranks (and reduce), or keep rank-0-only evaluation shorter than the process-group timeout.",
   "--fault rank0_eval --fault-epoch 1 --slow 0.75 --timeout 20", EJ.format(n=4), pats=TIMEOUT_PATS, waiting=[1, 2, 3]),
 C("run91-torchrun-allreduce-one-rank", "torchrun", "plain", "dist.collective_mismatch", 2,
   ["other ranks: gloo 'Connection closed by peer' / 'Connection reset by peer'", TR_SUM + " (rank 2 exitcode -6, SIGABRT)"],
   "In epoch 1 only rank 2 saw its local accuracy improve and all_reduced its best accuracy (1 float); the others went on to the next epoch's DDP gradient all_reduce, so rank 2 received a 676-byte bucket for its 4-byte tensor and gloo aborted.",
   "Decide on the all-reduced metric (or all_reduce the improvement flag first) so that every rank calls the same collectives.",
   "--fault allreduce_one --who 2 --fault-epoch 1", EJ.format(n=4), pats=["op.preamble.length <= op.nbytes"]),
 C("run91-spawn-allreduce-one-rank-detail", "mp.spawn", "plain", "dist.collective_mismatch", 1,
   [SPAWN_SUM],
   "In the last epoch only rank 1 saw its local accuracy improve and all_reduced its best accuracy while ranks 0 and 2 went to the final barrier; TORCH_DISTRIBUTED_DEBUG=DETAIL's fingerprint check reported the mismatch.",
   "Decide on the all-reduced metric (or all_reduce the improvement flag first) so that every rank calls the same collectives.",
   "--fault allreduce_one --who 1 --fault-epoch 2 --no-ddp; TORCH_DISTRIBUTED_DEBUG=DETAIL",
   "TORCH_DISTRIBUTED_DEBUG=DETAIL " + SP.format(n=3), pats=["Detected mismatch between collectives on ranks"]),
 C("run91-torchrun-early-stop-one-rank", "torchrun", "plain", "dist.collective_timeout", 1,
   ["rank 1 times out in the final barrier", TR_SUM],
   "Early stopping was decided from each rank's local val loss: in epoch 1 only rank 1 stopped and went to the final barrier while ranks 0 and 2 started the next epoch's DDP gradient all_reduce; all timed out after 20 s.",
   "Decide early stopping on the all-reduced val loss (or broadcast rank 0's decision) so all ranks stop together.",
   "--fault early_stop --who 1 --fault-epoch 1 --epochs 4", EJ.format(n=3), pats=TIMEOUT_PATS, waiting=[0, 2]),
 C("run91-torchrun-eval-empty-shard", "torchrun", "plain", "user.code_error", 3,
   ["ranks 0-2: gloo 'Connection closed by peer' in the metric all_reduce", TR_SUM],
   "In epoch 2 the last rank's validation shard was empty, so the mean val loss divided by a zero sample count and rank 3 raised ZeroDivisionError.",
   "Make sure every rank gets validation data (shard by sample, not by file) or reduce sums and counts before dividing.",
   "--fault zero_div --who last --fault-epoch 2", EJ.format(n=4), decisive="[default3]:[rank3]: ZeroDivisionError: float division by zero"),
 C("run91-spawn-eval-sigkill", "mp.spawn", "plain", "mem.host_oom", 2,
   ["mp.spawn 'Terminating process ... via signal SIGTERM' for the survivors"],
   "Rank 2 was SIGKILLed in validation batch 2 of epoch 1 (no traceback).",
   "Find what killed rank 2 (kernel OOM killer: dmesg / cgroup memory limit) and give it the memory it needs.",
   "--fault sigkill --who 2 --fault-epoch 1 --fault-step 2: the rank sends itself SIGKILL", SP.format(n=3),
   decisive="process 2 terminated with signal SIGKILL"),
 C("run91-torchrun-join-manual-allreduce", "torchrun", "plain", "dist.collective_mismatch", 3,
   ["other ranks: gloo 'Connection closed by peer' in Join's all_reduce", TR_SUM + " (gloo abort: exitcode -6)"],
   "Rank 3's training shard holds one batch more; DDP's Join shadows DDP's gradient all_reduce for the ranks that finished, but not the loop's manual loss all_reduce, so rank 3's extra manual all_reduce met Join's own all_reduce and gloo saw mismatched sizes.",
   "Inside Join use only joinable collectives (DDP's), or pass a Joinable for the extra collective / reduce the loss after the loop.",
   "--fault join_wrong --who 3", EJ.format(n=4), pats=["op.preamble.length <= op.nbytes"]),
 C("run91-torchrun-torchmetrics-state-shape", "torchrun", "torchmetrics", "dist.collective_mismatch", 2,
   ["the same stack error on every rank", TR_SUM],
   "A custom torchmetrics LabelHistogram sizes its state by the largest label seen locally; in epoch 1 rank 2's shard contains the rare class 4, so its state has 5 entries and the others 3, and compute()'s sync could not stack them.",
   "Give metric states a fixed shape (pass num_classes from the config, not from each rank's data).",
   "tm_job.py --fault shape --who 2 --fault-epoch 1", TM.format(n=4),
   pats=["stack expects each tensor to be equal size, but got [3] at entry 0 and [5] at entry 2"]),
 C("run91-torchrun-torchmetrics-state-dtype", "torchrun", "torchmetrics", "dist.collective_mismatch", 2,
   ["ranks 1-2: gloo 'Connection reset by peer'", TR_SUM + " (rank 0 exitcode -6, SIGABRT)"],
   "In epoch 2 the last rank's targets came from a float64 numpy cache, so the custom MeanAbsError's `sum_abs` state became float64 there (float32 elsewhere); torchmetrics' all_gather in compute() got mismatched byte sizes and gloo aborted.",
   "Keep metric states in a fixed dtype (cast inputs to float32, update states in place).",
   "tm_job.py --fault dtype --who last --fault-epoch 2", TM.format(n=3), pats=["op.preamble.length <= op.nbytes"]),
 C("run91-torchrun-torchmetrics-compute-rank0", "torchrun", "torchmetrics", "dist.collective_timeout", 0,
   ["rank 0: 'Connection closed by peer' in compute()'s sync after the others gave up", TR_SUM],
   "From epoch 1 only rank 0 called metric.compute() (to log it); compute() syncs the states with collectives, while ranks 1-3 went on to the next epoch's DDP gradient all_reduce and timed out after 20 s.",
   "Call compute() on every rank (log on rank 0 only), or use dist_sync_on_step/sync_on_compute=False for rank-0-only logging.",
   "tm_job.py --fault rank0_compute --fault-epoch 1", TM.format(n=4), pats=TIMEOUT_PATS, waiting=[1, 2, 3]),
 C("run91-accelerate-gather-uneven-debug", "accelerate", "accelerate", "dist.collective_mismatch", 2,
   ["the same DistributedOperationException on every process", TR_SUM],
   "The eval shards are built by hand; in epoch 1 the last process's shard holds 5 samples fewer, so its last batch has 3 items and accelerator.gather() (which does not pad) saw shapes [8], [8], [3]; ACCELERATE_DEBUG_MODE reported it.",
   "Use accelerator.prepare() on the eval DataLoader and gather_for_metrics(), or pad_across_processes() before gather().",
   "acc_eval.py --fault gather --who last --fault-epoch 1; ACCELERATE_DEBUG_MODE=1", "ACCELERATE_DEBUG_MODE=1 " + ACC.format(n=3),
   pats=["DistributedOperationException: Cannot apply desired operation due to shape mismatches"], also_pats=["- Process 2: [3]"]),
 C("run91-accelerate-gather-uneven", "accelerate", "accelerate", "dist.collective_mismatch", 1,
   ["other processes: gloo 'Connection reset by peer'", TR_SUM + " (local_rank 1 exitcode -6, SIGABRT)"],
   "The eval shards are built by hand; in epoch 2 process 1's shard holds 5 samples fewer, so its last batch is smaller and accelerator.gather() (no padding) all_gathered tensors of different sizes; gloo aborted on process 1.",
   "Use accelerator.prepare() on the eval DataLoader and gather_for_metrics(), or pad_across_processes() before gather().",
   "acc_eval.py --fault gather --who 1 --fault-epoch 2", ACC.format(n=4), pats=["op.preamble.length <= op.nbytes"]),
 C("run91-accelerate-gather-for-metrics-extra-batch", "accelerate", "accelerate", "dist.collective_timeout", 1,
   ["process 1 times out in its extra gather", TR_SUM],
   "The eval shards are built by hand (not prepared); in epoch 1 process 1's shard holds one batch more, so it called gather_for_metrics once more while the others waited in wait_for_everyone(); all timed out after 20 s.",
   "Prepare the eval DataLoader with accelerator.prepare() (even_batches) so all processes run the same number of gathers.",
   "acc_eval.py --fault extra --who 1 --fault-epoch 1", ACC.format(n=3), pats=TIMEOUT_PATS, waiting=[0, 2]),
 C("run91-lightning-sync-dist-one-rank", "lightning", "lightning", "dist.collective_timeout", 1,
   ["rank 1 times out in its sync barrier; rank 0: 'Application timeout caused pair closure'", "Lightning re-raises on every rank"],
   "In epoch 1 only rank 1 logged an extra metric ('val_hard_frac') with sync_dist=True; at validation epoch end only it synced that metric (barrier + all_reduce) while the others started training (DDP gradient all_reduce); all timed out after 20 s.",
   "Log every sync_dist metric on all ranks (log a 0 where it does not apply) or log it with rank_zero_only / without sync_dist.",
   "lt_job.py --fault sync_dist --who 1 --fault-epoch 1", LT, pats=TIMEOUT_PATS, waiting=[0, 2]),
 C("run91-lightning-early-stop-one-rank", "lightning", "lightning", "dist.collective_timeout", 2,
   ["rank 2 times out in save_checkpoint's barrier", "Lightning re-raises on every rank"],
   "A hand-written callback set trainer.should_stop from the local val loss; in epoch 1 only rank 2 stopped, finished fit() and waited in save_checkpoint()'s barrier while ranks 0-1 went on training (DDP gradient all_reduce); all timed out after 20 s.",
   "Decide stopping on the synced metric (EarlyStopping on a sync_dist metric) or reduce the decision across ranks (strategy.reduce_boolean_decision).",
   "lt_job.py --fault stop --who last --fault-epoch 1", LT, pats=TIMEOUT_PATS, waiting=[0, 1]),
]
HEALTHY = [
 ("run91-torchrun-healthy-join", "torchrun", "plain", "--fault join_ok --who 1", EJ.format(n=4),
  "Healthy run: rank 1's training shard holds one batch more each epoch; DDP Join shadows the gradient all_reduce for the ranks that finished; all ranks finished."),
 ("run91-spawn-healthy-padded-gather", "mp.spawn", "plain", "--fault padded --who last", SP.format(n=3),
  "Healthy run: from epoch 1 the last rank's validation shard holds one batch more; predictions are padded to the max length, all_gathered and trimmed; all ranks finished."),
 ("run91-accelerate-healthy-gather-for-metrics", "accelerate", "accelerate", "acc_eval.py --fault none", ACC.format(n=3),
  "Healthy run: 101 validation samples over 3 processes (uneven); the prepared DataLoader evens the batches and gather_for_metrics drops the duplicates, giving exactly 101 predictions; all processes finished."),
]

bad = 0
labels = []
for c in cases:
    folder = os.path.join(OUT, c["id"])
    log = open(os.path.join(folder, "log.txt"), encoding="utf-8", errors="replace").read().splitlines()
    also = []
    if c["decisive"]:
        dec = c["decisive"]
    else:
        pref = lines_with(log, c["pats"], c["waiting"]) if c["waiting"] else []
        anyl = lines_with(log, c["pats"])
        cand = pref or anyl
        if not cand:
            print("NO DECISIVE", c["id"]); bad += 1; continue
        dec = cand[0]
        also = [l for l in anyl if l != dec][:4]
    if c["also_pats"]:
        also += lines_with(log, c["also_pats"])[:2]
    d = {"id": c["id"], "source": SRC.format(id=c["id"], what=c["what"]), "category": c["category"], "fatal": c["fatal"],
         "decisive_line": dec, "also_acceptable": also, "initiating_rank": c["rank"], "collateral": c["collateral"],
         "operator": None, "root_cause": c["root"], "fix": c["fix"], "launcher": c["launcher"],
         "framework": c["framework"], "genuine": False, "induced_how": c["how"], "confirmed_by": "induced",
         "confidence": "high"}
    labels.append(d)
for cid, launcher, fw, how, what, root in HEALTHY:
    labels.append({"id": cid, "source": SRC.format(id=cid, what=what), "category": "none", "fatal": False,
                   "decisive_line": None, "also_acceptable": [], "initiating_rank": None, "collateral": [],
                   "operator": None, "root_cause": root, "fix": "None needed.", "launcher": launcher,
                   "framework": fw, "genuine": False, "induced_how": how, "confirmed_by": "induced",
                   "confidence": "high"})

for d in labels:
    folder = os.path.join(OUT, d["id"])
    log = open(os.path.join(folder, "log.txt"), encoding="utf-8", errors="replace").read().splitlines()
    assert d["category"] in CATS
    for s in ([d["decisive_line"]] if d["decisive_line"] else []) + d["also_acceptable"]:
        if not any(s in l for l in log):
            print("NOT IN LOG", d["id"], s); bad += 1
    if d["category"] == "none" and any("Traceback" in l or "Error" in l for l in log):
        print("ERROR IN HEALTHY", d["id"]); bad += 1
    with open(os.path.join(folder, "label.json"), "w", encoding="utf-8") as fh:
        json.dump(d, fh, indent=1, ensure_ascii=False); fh.write("\n")
print(len(labels), "labels,", bad, "problems")
sys.exit(1 if bad else 0)
