"""Writes label.json for each round-39b case folder and checks decisive lines against log.txt.
Usage: python3 labels.py /work/helpers/stage39"""
import json, os, re, sys
OUT = sys.argv[1] if len(sys.argv) > 1 else "/work/helpers/stage39"
GLOO = "gloo 'Connection closed by peer ... remote worker crashing' on the surviving ranks"
TR = "torchrun"   # replaced by what the log shows (see launcher_collateral)
SP = "mp.spawn"
CASES = {
 "run39b-torchrun-anomaly-nan": dict(cat="user.code_error", rank=2, dec="[rank2]: RuntimeError: Function 'LogSoftmaxBackward0' returned nan values in its 0th output.",
   col=["UserWarning: Error detected in LogSoftmaxBackward0 (forward traceback at F.cross_entropy)", GLOO, TR],
   rc="A NaN feature in one batch on rank 2 made the loss NaN, and with set_detect_anomaly(True) autograd raised because LogSoftmaxBackward0 returned nan values.",
   fix="Find and drop or sanitise the bad sample (or guard the input with torch.nan_to_num / an isfinite check) before the forward.",
   how="rank 2 sets one input feature to NaN at step 4 with anomaly detection on"),
 "run39b-mpspawn-anomaly-sqrt": dict(cat="user.code_error", rank=1, dec="RuntimeError: Function 'SqrtBackward0' returned nan values in its 0th output.",
   col=["UserWarning: Error detected in SqrtBackward0 (forward traceback at torch.sqrt)", GLOO, SP],
   rc="On rank 1 torch.where(r > 0, torch.sqrt(r), 0) was evaluated at r == 0, so the backward of sqrt computed 0/0 and anomaly mode raised because SqrtBackward0 returned nan values.",
   fix="Make the masked branch safe (e.g. torch.sqrt(r.clamp_min(eps)) or compute sqrt on r where r > 0 only) so the unselected branch has a finite gradient.",
   how="rank 1 adds torch.where(r>0, sqrt(r), 0) with r == 0 at step 3, anomaly detection on"),
 "run39b-python-anomaly-nan": dict(cat="user.code_error", rank=None, dec="RuntimeError: Function 'LogSoftmaxBackward0' returned nan values in its 0th output.",
   col=["UserWarning: Error detected in LogSoftmaxBackward0 (forward traceback at F.cross_entropy)"],
   rc="A NaN input feature at step 6 made the loss NaN and anomaly detection raised because LogSoftmaxBackward0 returned nan values.",
   fix="Drop or sanitise the sample with a non-finite feature before the forward.",
   how="single process sets one input feature to NaN at step 6 with anomaly detection on"),
 "run39b-torchrun-nanguard": dict(cat="user.code_error", rank=3, dec="[rank3]: FloatingPointError: loss is nan at step 7",
   col=[GLOO, TR], rc="The loss on rank 3 became NaN at step 7 and the job's own non-finite-loss guard raised FloatingPointError.",
   fix="Find why rank 3's loss diverged at step 7 (bad batch, too high LR, overflow) and fix it, or skip such steps consistently on all ranks.",
   how="rank 3 multiplies its loss by NaN at step 7; the job's isfinite guard raises"),
 "run39b-mpspawn-nanguard": dict(cat="user.code_error", rank=2, dec="FloatingPointError: loss is nan at step 4",
   col=[GLOO, SP], rc="The loss on rank 2 became NaN at step 4 and the job's own non-finite-loss guard raised FloatingPointError.",
   fix="Find why rank 2's loss diverged at step 4 and fix it, or skip such steps consistently on all ranks.",
   how="rank 2 multiplies its loss by NaN at step 4; the job's isfinite guard raises"),
 "run39b-mpspawn-clipnorm": dict(cat="user.code_error", rank=1, dec="RuntimeError: The total norm of order 2.0 for gradients from `parameters` is non-finite, so it cannot be clipped.",
   col=[GLOO, SP], rc="A gradient on rank 1 became inf at step 3 and clip_grad_norm_(..., error_if_nonfinite=True) raised because the total gradient norm was non-finite.",
   fix="Find the source of the inf gradient (overflow, bad batch) or skip the step when the norm is non-finite instead of raising.",
   how="rank 1 writes inf into one gradient at step 3 before clip_grad_norm_(error_if_nonfinite=True)"),
 "run39b-python-clipnorm": dict(cat="user.code_error", rank=None, dec="RuntimeError: The total norm of order 2.0 for gradients from `parameters` is non-finite, so it cannot be clipped.",
   col=[], rc="A gradient became inf at step 2 and clip_grad_norm_(..., error_if_nonfinite=True) raised because the total gradient norm was non-finite.",
   fix="Find the source of the inf gradient or skip the step when the norm is non-finite instead of raising.",
   how="single process writes inf into one gradient at step 2 before clip_grad_norm_(error_if_nonfinite=True)"),
 "run39b-torchrun-ddp-unused": dict(cat="dist.collective_mismatch", rank=1, dec="[rank1]: RuntimeError: Expected to have finished reduction in the prior iteration before starting a new one.",
   col=[GLOO, TR], rc="From step 3 rank 1's forward skipped hidden[1], so with find_unused_parameters=False its DDP reducer never finished the gradient reduction and raised at the next forward.",
   fix="Use every parameter on every rank in each step, or pass find_unused_parameters=True to DDP.",
   how="rank 1 skips model.hidden[1] in forward from step 3; DDP(find_unused_parameters=False)"),
 "run39b-mpspawn-ddp-ready-twice": dict(cat="dist.collective_mismatch", rank=2, dec="RuntimeError: Expected to mark a variable ready only once.",
   col=["reducer.cpp Warning: find_unused_parameters=True was specified in DDP constructor, but did not find any unused parameters", GLOO, SP],
   rc="From step 2 rank 2 applied hidden[1] twice inside a reentrant torch.utils.checkpoint under DDP(find_unused_parameters=True), so the reducer's autograd hook fired twice for the same parameter and DDP raised 'Expected to mark a variable ready only once'.",
   fix="Do not reuse a layer inside a reentrant checkpoint under DDP: use use_reentrant=False, or model._set_static_graph() / static_graph=True if the graph is fixed.",
   how="rank 2 runs checkpoint(lambda t: l(relu(l(t))), use_reentrant=True) on hidden[1] from step 2; find_unused_parameters=True"),
 "run39b-mpspawn-ddp-shape": dict(cat="dist.collective_mismatch", rank=2, dec="RuntimeError: [2]: params[0] in this process with sizes [48, 16] appears not to match sizes of the same param in process 0.",
   col=[GLOO, SP], rc="Rank 2 built its first Linear 48 wide while the other ranks built it 32 wide, so DDP's parameter-shape check at construction failed.",
   fix="Build the same model (same width config) on every rank before wrapping it in DDP.",
   how="rank 2 constructs Net(width=48), the others Net(width=32)"),
 "run39b-torchrun-ddp-layers": dict(cat="dist.collective_mismatch", rank=1, dec="[rank1]: RuntimeError: DDP expects same model across all ranks, but Rank 1 has 8 params, while rank 0 has inconsistent 10 params.",
   also=["while rank 1 has inconsistent 8 params."], col=["the same DDP check on ranks 0, 2 and 3 naming rank 1", TR],
   rc="Rank 1 built the model with 2 hidden layers instead of 3 (8 parameters vs 10), so DDP's model-consistency check at construction failed on every rank.",
   fix="Give every rank the same model config (layer count) before wrapping the model in DDP.",
   how="rank 1 constructs Net(layers=2), the others Net(layers=3)"),
 "run39b-torchrun-pil-corrupt": dict(cat="user.code_error", rank=2, dec="[rank2]: PIL.UnidentifiedImageError: cannot identify image file '/home/user/job/data39b/rank2/img_0029.png'",
   also=["[rank2]: PIL.UnidentifiedImageError: Caught UnidentifiedImageError in DataLoader worker process 1."], col=[GLOO, TR],
   rc="Rank 2's dataset shard holds a corrupt PNG (img_0029.png) that PIL cannot decode, so the DataLoader worker raised UnidentifiedImageError.",
   fix="Remove or re-export the corrupt image, or validate files / skip unreadable samples in the Dataset.",
   how="rank 2's shard has img_0029.png overwritten with junk bytes; DataLoader num_workers=2"),
 "run39b-python-pil-corrupt": dict(cat="user.code_error", rank=None, dec="PIL.UnidentifiedImageError: cannot identify image file '/home/user/job/data39b/rank0/img_0021.png'",
   col=[], rc="The dataset holds a corrupt PNG (img_0021.png) that PIL cannot decode, so the Dataset raised UnidentifiedImageError.",
   fix="Remove or re-export the corrupt image, or validate files / skip unreadable samples in the Dataset.",
   how="img_0021.png overwritten with junk bytes; DataLoader num_workers=0"),
 "run39b-mpspawn-collate-str": dict(cat="user.code_error", rank=1, dec="TypeError: new(): invalid data type 'str'",
   col=[GLOO, SP], rc="One record in rank 1's shard has its label as the string '7 ' instead of an int, so default_collate's torch.tensor(batch) failed.",
   fix="Parse labels to int when reading the data (or in a custom collate_fn) and clean the bad record.",
   how="rank 1's record 35 has label '7 ' (a string); default_collate"),
 "run39b-torchrun-target-oob": dict(cat="user.code_error", rank=2, dec="[rank2]: IndexError: Target 12 is out of bounds.",
   col=[GLOO, TR],
   rc="Rank 2's shard holds label 12 for a 10-class CrossEntropyLoss, so nll_loss raised 'Target 12 is out of bounds'.",
   fix="Fix the label (or num_classes) so every target is in [0, num_classes).",
   how="rank 2's record 43 has label 12 with 10 classes"),
 "run39b-python-target-oob": dict(cat="user.code_error", rank=None, dec="IndexError: Target 12 is out of bounds.",
   col=[], rc="A record holds label 12 for a 10-class CrossEntropyLoss, so nll_loss raised 'Target 12 is out of bounds'.",
   fix="Fix the label (or num_classes) so every target is in [0, num_classes).", how="record 27 has label 12 with 10 classes"),
 "run39b-mpspawn-optim-size": dict(cat="user.code_error", rank=1, dec="RuntimeError: The size of tensor a (64) must match the size of tensor b (32) at non-singleton dimension 0",
   col=[GLOO, SP], rc="Rank 1 loaded Adam state saved from a wider (64) model into a 32-wide model's optimizer, so the first optimizer.step() failed on a size mismatch.",
   fix="Resume the optimizer only from a checkpoint of the same model architecture (or rebuild the optimizer state).",
   how="rank 1 loads an Adam state_dict made for Net(width=64) before training"),
 "run39b-python-optim-groups": dict(cat="user.code_error", rank=None, dec="ValueError: loaded state dict contains a parameter group that doesn't match the size of optimizer's group",
   col=[], rc="The optimizer state loaded at resume came from a model with another layer count, so Optimizer.load_state_dict rejected the parameter group size.",
   fix="Resume the optimizer from a checkpoint of the same model, or skip loading optimizer state when the model changed.",
   how="loads an Adam state_dict made for Net(layers=4) into a Net(layers=3) optimizer"),
}
HEALTHY = {
 "run39b-torchrun-healthy-nanskip": "rank 1's loss is NaN at step 4; the job all-reduces a skip flag and every rank skips the batch with a WARNING; training finishes",
 "run39b-python-healthy-nanskip": "loss is NaN at step 3; the job logs a WARNING and skips the batch; training finishes",
 "run39b-mpspawn-healthy-scaler": "rank 2's gradients overflow at step 3; a GradScaler-like loss scaler skips the step on all ranks and halves the scale; training finishes",
 "run39b-python-healthy-anomaly": "anomaly detection on, no NaN anywhere; training finishes",
 "run39b-torchrun-healthy-nonfinite": "rank 1's grad norm is inf at step 5; clip_grad_norm_ returns inf, the job warns (UserWarning) and skips the step; training finishes",
}
def cmd_of(cid):
    for l in open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "run_all.sh")):
        m = re.match(r'C\[%s\]="(.*)"' % re.escape(cid), l.strip())
        if m: return m.group(1).replace("$TRUN", "torchrun --nnodes=1 --master_port=29638").replace("$PY ", "python ")
def launcher_collateral(text, rank):
    out = []
    m = re.search(r"failed \(exitcode: (-?\d+)\) local_rank: (\d+)", text)
    if m:
        note = "" if int(m.group(2)) == rank else " (a collateral rank, not the initiating one)"
        out.append(f"torchrun SIGTERMs the other ranks; its 'failed (exitcode: {m.group(1)}) local_rank: {m.group(2)}' line and Root Cause name rank {m.group(2)}{note}; ChildFailedError")
    m = re.search(r"-- Process (\d+) terminated with the following error", text)
    if m:
        note = "" if int(m.group(1)) == rank else " (a collateral gloo error, not the initiating rank)"
        out.append(f"mp.spawn terminates the other processes and raises ProcessRaisedException for process {m.group(1)}{note}")
    if "terminate called without an active exception" in text:
        out.append("terminate called without an active exception (a rank aborts at exit while gloo work is pending)")
    return out
def launcher(cid): return cid.split("-")[1].replace("mpspawn", "mp.spawn")
bad = 0
for cid in sorted(list(CASES) + list(HEALTHY)):
    d = os.path.join(OUT, cid); log = open(os.path.join(d, "log.txt")).read().splitlines()
    src = f"real run: tests/corpus/generators/launchers/round39b/nm_job.py via `{cmd_of(cid)}`, torch 2.13.0 CPU, gloo"
    if cid in CASES:
        c = CASES[cid]
        lab = {"id": cid, "source": src, "category": c["cat"], "fatal": True, "decisive_line": c["dec"],
               "also_acceptable": c.get("also", []), "initiating_rank": c["rank"],
               "collateral": [x for x in c["col"] if x not in (TR, SP)] + launcher_collateral("\n".join(log), c["rank"]), "operator": None,
               "root_cause": c["rc"], "fix": c["fix"], "launcher": launcher(cid), "framework": "plain", "genuine": False,
               "induced_how": c["how"], "confirmed_by": "induced", "confidence": "high"}
        for s in [c["dec"]] + c.get("also", []):
            if not any(s in l for l in log): print("NOT FOUND", cid, s); bad += 1
    else:
        lab = {"id": cid, "source": src, "category": "none", "fatal": False, "decisive_line": None, "also_acceptable": [],
               "initiating_rank": None, "collateral": [], "operator": None, "root_cause": None, "fix": None,
               "launcher": launcher(cid), "framework": "plain", "genuine": False, "induced_how": HEALTHY[cid],
               "confirmed_by": "induced", "confidence": "high"}
        if "Traceback" in "\n".join(log) or not any("training finished" in l for l in log): print("HEALTHY FAILED", cid); bad += 1
    json.dump(lab, open(os.path.join(d, "label.json"), "w"), indent=2, ensure_ascii=False)
    print(f"{cid:40s} {lab['launcher']:9s} {lab['category']:26s} {lab['initiating_rank']}")
print("problems:", bad)
