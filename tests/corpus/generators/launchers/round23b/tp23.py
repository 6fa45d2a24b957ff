#!/usr/bin/env python3
"""Tensor-parallel (DTensor) MLP on a CPU DeviceMesh, torch.distributed.tensor.parallel.parallelize_module,
gloo backend, launched by torchrun.

Faults (one per run), on --bad-rank at --step:
  raise     KeyError in the rank's batch lookup (a missing shard key)
  sigkill   os.kill(os.getpid(), SIGKILL)
  mismatch  after the step's backward, every rank all_reduces its grad-norm tensor for logging; the bad rank
            sends a tensor of another size (--mismatch size) or calls all_gather instead (--mismatch op)
  none      healthy
"""
import argparse, logging, os, signal, sys, time
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel, parallelize_module

p = argparse.ArgumentParser()
p.add_argument("--fault", default="none")
p.add_argument("--mismatch", default="size")
p.add_argument("--bad-rank", type=int, default=1)
p.add_argument("--step", type=int, default=3)
p.add_argument("--steps", type=int, default=6)
p.add_argument("--pg-timeout", type=float, default=30)
a = p.parse_args()

rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
logging.basicConfig(level=logging.INFO, format=f"%(asctime)s %(levelname)s [tp rank {rank}/{world}] %(message)s")
log = logging.getLogger("tp")

class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.w1 = nn.Linear(24, 96)
        self.act = nn.GELU()
        self.w2 = nn.Linear(96, 24)
    def forward(self, x):
        return self.w2(self.act(self.w1(x)))

dist.init_process_group("gloo", timeout=timedelta(seconds=a.pg_timeout))
mesh = init_device_mesh("cpu", (world,), mesh_dim_names=("tp",))
torch.manual_seed(0)
model = parallelize_module(MLP(), mesh, {"w1": ColwiseParallel(), "w2": RowwiseParallel()})
opt = torch.optim.SGD(model.parameters(), lr=0.05)
log.info("parallelized MLP over mesh %s", mesh)

shards = {f"shard-{s:03d}": s for s in range(1, a.steps + 1)}
for step in range(1, a.steps + 1):
    key = f"shard-{step:03d}"
    if a.fault == "raise" and rank == a.bad_rank and step == a.step:
        key = f"shard-{step:03d}.tmp"
    if a.fault == "sigkill" and rank == a.bad_rank and step == a.step:
        os.kill(os.getpid(), signal.SIGKILL)
    g = torch.Generator().manual_seed(shards[key])  # same input on every TP rank
    x = torch.randn(8, 24, generator=g)
    loss = (model(x) - x).pow(2).mean()
    loss.backward()
    gn = torch.stack([p.grad.to_local().norm() for p in model.parameters()])
    if a.fault == "mismatch" and rank == a.bad_rank and step == a.step:
        if a.mismatch == "size":
            gn = torch.cat([gn, gn])
            dist.all_reduce(gn)
        else:
            out = [torch.zeros_like(gn) for _ in range(world)]
            dist.all_gather(out, gn)
    else:
        dist.all_reduce(gn)
    opt.step(); opt.zero_grad()
    log.info("step %d loss %.5f grad-norm-sum %.4f", step, loss.item(), gn.sum().item())
dist.barrier()
log.info("done")
dist.destroy_process_group()
