"""Round 39b: numerical and model-state failures in a small DDP/gloo training job (CPU).

Run under torchrun (RANK/WORLD_SIZE in env), under mp.spawn (--spawn N) or as one process (--single).
--fault picks what is induced on rank --bad-rank (rank 0 for --single) at step --step:
  anomaly     detect_anomaly on; that rank feeds a NaN input -> "Function 'XBackward0' returned nan values"
  anomaly_sqrt detect_anomaly on; sqrt(0) under torch.where -> SqrtBackward0 returns nan
  nanguard    the job's own guard raises FloatingPointError("loss is nan at step k")
  clipnorm    inf gradient, clip_grad_norm_(error_if_nonfinite=True) raises
  unused      that rank skips a layer in forward, DDP find_unused_parameters=False
  ready_twice that rank runs a layer twice in a reentrant checkpoint, DDP find_unused_parameters=True
  shape       that rank builds a Linear with another width -> DDP param shape check at construction
  layers      that rank builds the model with another layer count -> DDP model check at construction
  pil         that rank's shard holds a corrupt PNG -> PIL.UnidentifiedImageError in the Dataset
  collate     that rank's shard holds a record whose label is a string -> default_collate fails
  target      that rank's shard holds label 12 for a 10-class CrossEntropyLoss
  optim       that rank resumes optimizer state saved from another (wider) model -> size mismatch in step
  optim_groups single: optimizer state with a different number of params -> load_state_dict ValueError
Healthy (no failure, category none):
  ok_nanskip  the job skips a step whose loss is NaN and logs it
  ok_scaler   a GradScaler-like loss scaler skips steps with inf grads and lowers the scale
  ok_anomaly  detect_anomaly on, no NaN
  ok_nonfinite clip_grad_norm_ returns inf once, the job warns and skips that step
"""
import argparse, io, logging, os, sys, time, warnings
from datetime import timedelta
import torch, torch.nn as nn, torch.nn.functional as F
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import Dataset, DataLoader

p = argparse.ArgumentParser()
p.add_argument("--fault", default="none")
p.add_argument("--bad-rank", type=int, default=1)
p.add_argument("--step", type=int, default=5)
p.add_argument("--steps", type=int, default=10)
p.add_argument("--spawn", type=int, default=0)
p.add_argument("--single", action="store_true")
p.add_argument("--workers", type=int, default=0)
p.add_argument("--data", default=os.path.join(os.getcwd(), "data39b"))
args = p.parse_args()

NCLS = 10

def make_logger(rank):
    log = logging.getLogger("train")
    h = logging.StreamHandler(sys.stdout)
    h.setFormatter(logging.Formatter(f"%(asctime)s [rank{rank}] %(levelname)s %(message)s"))
    log.handlers[:] = [h]; log.setLevel(logging.INFO); log.propagate = False
    return log

class Net(nn.Module):
    def __init__(self, width=32, layers=3, skip=False, twice=False):
        super().__init__()
        self.inp = nn.Linear(16, width)
        self.hidden = nn.ModuleList(nn.Linear(width, width) for _ in range(layers))
        self.out = nn.Linear(width, NCLS)
        self.skip, self.twice, self.step = skip, twice, 0
    def forward(self, x):
        h = F.relu(self.inp(x))
        for i, l in enumerate(self.hidden):
            if self.skip and i == 1 and self.step >= args.step:
                continue                       # fault 'unused': this rank skips hidden[1]
            if self.twice and i == 1 and self.step >= args.step:
                from torch.utils.checkpoint import checkpoint
                h = checkpoint(lambda t: l(F.relu(l(t))), h, use_reentrant=True)  # fault 'ready_twice'
                continue
            h = F.relu(l(h))
        return self.out(h)

class Records(Dataset):
    """16 features + label; for the pil fault features come from PNG files on disk."""
    def __init__(self, rank, bad):
        g = torch.Generator().manual_seed(rank)
        self.x = torch.randn(64, 16, generator=g); self.y = torch.randint(0, NCLS, (64,), generator=g).tolist()
        self.files = None
        if bad and args.fault == "target":
            self.y[args.step * 8 + 3] = 12            # label out of range for 10 classes
        if bad and args.fault == "collate":
            self.y[args.step * 8 + 3] = "7 "          # label read from a CSV as a string
        if args.fault == "pil":
            from PIL import Image
            d = os.path.join(args.data, f"rank{rank}"); os.makedirs(d, exist_ok=True)
            self.files = []
            for i in range(64):
                f = os.path.join(d, f"img_{i:04d}.png")
                if bad and i == args.step * 8 + 5:
                    open(f, "wb").write(b"\x00" * 37 + b"truncated upload")   # corrupt image file
                else:
                    Image.fromarray((torch.rand(4, 4) * 255).byte().numpy()).save(f)
                self.files.append(f)
    def __len__(self): return 64
    def __getitem__(self, i):
        if self.files is not None:
            from PIL import Image
            img = Image.open(self.files[i]).convert("L")
            import numpy as np
            x = torch.from_numpy(np.asarray(img, dtype=np.float32).reshape(-1)) / 255.0
        else:
            x = self.x[i]
        return {"x": x, "y": self.y[i]}

def train(rank, world):
    log = make_logger(rank)
    distributed = world > 1
    if distributed:
        dist.init_process_group("gloo", rank=rank, world_size=world, timeout=timedelta(seconds=30))
    bad = rank == args.bad_rank
    f = args.fault
    torch.manual_seed(0)
    width = 48 if (bad and f == "shape") else 32
    layers = 2 if (bad and f == "layers") else 3
    model = Net(width, layers, skip=(bad and f == "unused"), twice=(bad and f == "ready_twice"))
    log.info("model built: width=%d layers=%d params=%d", width, layers, sum(p.numel() for p in model.parameters()))
    core = model
    if distributed:
        model = DDP(model, find_unused_parameters=(f == "ready_twice"))
        log.info("DDP wrapped (world_size=%d)", world)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    if f == "optim" and bad:
        other = Net(64, 3); o2 = torch.optim.Adam(other.parameters(), lr=1e-3)
        other(torch.randn(2, 16)).sum().backward(); o2.step()
        buf = io.BytesIO(); torch.save(o2.state_dict(), buf); buf.seek(0)
        log.info("resuming optimizer from checkpoint ckpt/optim_step1200.pt")
        opt.load_state_dict(torch.load(buf))
    if f == "optim_groups":
        other = Net(32, 4); o2 = torch.optim.Adam(other.parameters(), lr=1e-3)
        log.info("resuming optimizer from checkpoint ckpt/optim_step1200.pt")
        opt.load_state_dict(o2.state_dict())
    if f in ("anomaly", "anomaly_sqrt", "ok_anomaly"):
        torch.autograd.set_detect_anomaly(True)
        log.info("anomaly detection enabled")
    scale = 2.0 ** 16
    dl = DataLoader(Records(rank, bad), batch_size=8, shuffle=False, num_workers=args.workers)
    for step, batch in enumerate(dl):
        if step >= args.steps: break
        core.step = step
        x, y = batch["x"], batch["y"]
        if bad and f == "anomaly" and step == args.step:
            x = x.clone(); x[0, 3] = float("nan")        # one NaN feature from a bad sample
        logits = model(x)
        if bad and f == "anomaly_sqrt" and step == args.step:
            r = logits.sum(1, keepdim=True) * 0           # a zero-variance batch on this rank
            # forward is finite; backward of sqrt at 0 gets grad 0 -> 0/0 -> SqrtBackward0 returns nan
            logits = logits + torch.where(r > 0, torch.sqrt(r), torch.zeros_like(r))
        if f == "ok_nanskip" and bad and step == args.step:
            logits = logits * float("nan")                 # a NaN batch the job is built to skip
        loss = F.cross_entropy(logits, y)
        if f == "nanguard" and bad and step == args.step:
            loss = loss * float("nan")                     # a diverging step on this rank
        if f == "nanguard" and not torch.isfinite(loss):
            raise FloatingPointError(f"loss is {loss.item()} at step {step}")
        if f == "ok_nanskip":
            bad_step = torch.tensor(0.0 if torch.isfinite(loss) else 1.0)
            if distributed: dist.all_reduce(bad_step)      # all ranks skip together
            if bad_step.item() > 0:
                log.warning("loss is %s at step %d on %d rank(s), skipping this batch", loss.item() if not torch.isfinite(loss) else "finite here", step, int(bad_step.item()))
                continue
        opt.zero_grad(set_to_none=True)
        if f == "ok_scaler":
            (loss * scale).backward()
        else:
            loss.backward()
        if f in ("clipnorm", "ok_nonfinite") and bad and step == args.step:
            with torch.no_grad():
                next(core.parameters()).grad[0, 0] = float("inf")
        if f == "clipnorm":
            gn = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0, error_if_nonfinite=True)
        elif f == "ok_nonfinite":
            gn = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            if not torch.isfinite(gn):
                warnings.warn(f"non-finite gradient norm ({gn.item()}) at step {step}; skipping optimizer step")
                opt.zero_grad(set_to_none=True); continue
        elif f == "ok_scaler":
            if bad and step == args.step:
                with torch.no_grad(): next(core.parameters()).grad.mul_(float("inf"))
            found = torch.tensor(0.0)
            for p_ in model.parameters():
                p_.grad.div_(scale); found += (~torch.isfinite(p_.grad)).any().float()
            if distributed: dist.all_reduce(found)
            if found.item() > 0:
                scale /= 2
                log.info("gradient overflow at step %d, skipping step; reducing loss scale to %.1f", step, scale)
                continue
        opt.step()
        log.info("step %d loss %.4f", step, loss.item())
    if distributed:
        dist.barrier(); dist.destroy_process_group()
    log.info("training finished")

def spawn_main(rank, world):
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1"); os.environ.setdefault("MASTER_PORT", "29639")
    try:
        train(rank, world)
    except Exception:
        logging.getLogger("train").exception("rank %d: training failed", rank)   # job logs its own failure
        raise

if __name__ == "__main__":
    if args.single:
        args.bad_rank = 0
        train(0, 1)
    elif args.spawn:
        import torch.multiprocessing as mp
        mp.spawn(spawn_main, args=(args.spawn,), nprocs=args.spawn, join=True)
    else:
        train(int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]))
