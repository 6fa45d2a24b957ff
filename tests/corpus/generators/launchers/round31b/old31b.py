#!/usr/bin/env python3
"""Round 31b part 1: idioms written for older PyTorch releases, run on torch 2.13 (CPU).
Usage: old31b.py --case CASE [--steps N]   (under torchrun --nproc-per-node 3, or as a single process)
Cases:
  localrank  torch.distributed.launch-era argparse: '--local_rank' required=True; torchrun passes no such argument
  six        'from torch._six import inf' (private module removed in torch 2.0), single process
  cudaamp    torch.cuda.amp.GradScaler()/torch.cuda.amp.autocast() on a CPU-only machine (deprecated: warnings only)
  oldckpt    torch.load of a full-pickle checkpoint (a custom class) with the 2.6+ default weights_only=True, single process
  dynconf    sets torch._dynamo.config.dynamic_shapes (removed option) before torch.compile
  unused     DDP(find_unused_parameters=False) with a head that is never used in forward
  nccl       dist.init_process_group(backend="nccl") on a CPU-only build/machine
"""
import argparse, logging, os, sys, time

p = argparse.ArgumentParser()
p.add_argument("--case", required=True)
p.add_argument("--steps", type=int, default=10)
p.add_argument("--ckpt", default="old_ckpt.pt")
args, rest = p.parse_known_args()

logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s [rank%(rank)s] %(message)s")
RANK = int(os.environ.get("RANK", "0"))
log = logging.LoggerAdapter(logging.getLogger("train"), {"rank": RANK})

if args.case == "localrank":
    # old launch-script argument parsing: python -m torch.distributed.launch passed --local_rank=N
    lp = argparse.ArgumentParser(description="train.py (written for torch.distributed.launch)")
    lp.add_argument("--local_rank", type=int, required=True)
    lp.add_argument("--case"); lp.add_argument("--steps", type=int)
    largs = lp.parse_args()
    log.info("local_rank %d", largs.local_rank)

if args.case == "six":
    log.info("importing utilities")
    from torch._six import inf  # worked in torch <= 1.13

import torch
import torch.distributed as dist
import torch.nn as nn

log.info("torch %s", torch.__version__)

if args.case == "oldckpt":
    class TrainState:  # a checkpoint saved as a whole object by an old training script
        def __init__(self):
            self.epoch = 3; self.model = nn.Linear(8, 4).state_dict(); self.best = 0.12
    if not os.path.exists(args.ckpt):
        torch.save(TrainState(), args.ckpt)   # like torch.save(self) in the old code
        log.info("wrote legacy checkpoint %s", args.ckpt)
    log.info("resuming from %s", args.ckpt)
    st = torch.load(args.ckpt)  # pre-2.6 default was weights_only=False
    log.info("resumed at epoch %d", st.epoch)
    sys.exit(0)

backend = "nccl" if args.case == "nccl" else "gloo"
distributed = "WORLD_SIZE" in os.environ
if distributed:
    log.info("init_process_group backend=%s", backend)
    dist.init_process_group(backend=backend)

torch.manual_seed(0)
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))
        if args.case == "unused":
            self.aux_head = nn.Linear(32, 2)   # left over from an older experiment, never called in forward
    def forward(self, x):
        return self.body(x)

model = Net()
if args.case == "dynconf":
    torch._dynamo.config.dynamic_shapes = True   # option removed in torch 2.1 (dynamic=True is the argument now)
    torch._dynamo.config.suppress_errors = True
if distributed:
    model = nn.parallel.DistributedDataParallel(model, find_unused_parameters=False)
if args.case == "dynconf":
    model = torch.compile(model, backend="eager")
opt = torch.optim.SGD(model.parameters(), lr=0.05)

scaler = None
if args.case == "cudaamp":
    scaler = torch.cuda.amp.GradScaler()   # old mixed-precision recipe

g = torch.Generator().manual_seed(RANK)
for step in range(args.steps):
    x = torch.randn(32, 16, generator=g); y = torch.randint(0, 4, (32,), generator=g)
    opt.zero_grad()
    if scaler is not None:
        with torch.cuda.amp.autocast():
            loss = nn.functional.cross_entropy(model(x), y)
        scaler.scale(loss).backward(); scaler.step(opt); scaler.update()
    else:
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward(); opt.step()
    log.info("step %d loss %.4f", step, loss.item())
    time.sleep(0.05)
if distributed:
    dist.barrier(); dist.destroy_process_group()
log.info("training complete")
