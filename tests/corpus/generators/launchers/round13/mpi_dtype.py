"""DDP-style job launched by Open MPI's mpirun (rank/size from OMPI_COMM_WORLD_*), gloo backend, env://
(MASTER_ADDR/MASTER_PORT passed with mpirun -x). Manual gradient averaging plus a per-step metrics all_reduce.

Induced: at step --step, rank --bad-rank builds its metrics tensor as float64 while the others use float32,
then all_reduces it (run with TORCH_DISTRIBUTED_DEBUG=DETAIL).
"""
import argparse
import logging
import os
import time
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn as nn

p = argparse.ArgumentParser()
p.add_argument("--bad-rank", type=int, default=2)
p.add_argument("--step", type=int, default=2)
p.add_argument("--steps", type=int, default=8)
args = p.parse_args()

logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
log = logging.getLogger("train")
rank = int(os.environ["OMPI_COMM_WORLD_RANK"])
world = int(os.environ["OMPI_COMM_WORLD_SIZE"])
dist.init_process_group("gloo", init_method="env://", rank=rank, world_size=world, timeout=timedelta(seconds=20))
log.info("[rank %d] gloo process group up (world_size=%d)", rank, world)

torch.manual_seed(0)
w = nn.Linear(8, 1)
for step in range(args.steps):
    x = torch.randn(16, 8, generator=torch.Generator().manual_seed(100 * rank + step))  # this rank's shard
    loss = w(x).pow(2).mean()
    loss.backward()
    for prm in w.parameters():                      # manual gradient averaging
        dist.all_reduce(prm.grad)
        prm.grad /= world
    with torch.no_grad():
        for prm in w.parameters():
            prm -= 0.1 * prm.grad
            prm.grad = None
    dtype = torch.float64 if (rank == args.bad_rank and step == args.step) else torch.float32  # induced
    metrics = torch.tensor([loss.item(), x.abs().mean().item(), float(step), 1.0], dtype=dtype)
    dist.all_reduce(metrics)
    log.info("[rank %d] step %d loss=%.4f mean_loss=%.4f", rank, step, loss.item(), metrics[0].item() / world)
    time.sleep(0.3)
dist.barrier()
dist.destroy_process_group()
log.info("[rank %d] done", rank)
