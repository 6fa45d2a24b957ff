#!/usr/bin/env python3
"""DDP training that synchronises ranks with dist.monitored_barrier(timeout=...) after every epoch (gloo).

Fault: --missing R makes rank R stall fetching its validation data (sleeps --sleep s) after epoch --epoch, so it never
reaches that epoch's monitored barrier; rank 0 reports the rank(s) that failed to pass it.
--wait-all uses monitored_barrier(wait_all_ranks=True).  --missing -1: healthy.
"""
import argparse, logging, os, time
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn as nn

p = argparse.ArgumentParser()
p.add_argument("--missing", type=int, default=-1)
p.add_argument("--epoch", type=int, default=2)
p.add_argument("--epochs", type=int, default=3)
p.add_argument("--sleep", type=float, default=90)
p.add_argument("--barrier-timeout", type=float, default=10)
p.add_argument("--wait-all", action="store_true")
a = p.parse_args()

dist.init_process_group("gloo", timeout=timedelta(seconds=60))
rank, world = dist.get_rank(), dist.get_world_size()
logging.basicConfig(level=logging.INFO, format=f"%(asctime)s %(levelname)-7s rank={rank} %(message)s")
log = logging.getLogger()

torch.manual_seed(0)
model = nn.parallel.DistributedDataParallel(nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 2)))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(1, a.epochs + 1):
    for it in range(4):
        x = torch.randn(8, 10)
        y = torch.randint(0, 2, (8,))
        loss = nn.functional.cross_entropy(model(x), y)
        opt.zero_grad(); loss.backward(); opt.step()
    log.info("epoch %d done, last loss %.4f", epoch, loss.item())
    if rank == a.missing and epoch == a.epoch:
        log.info("epoch %d: fetching validation shard from the data service", epoch)
        time.sleep(a.sleep)  # stalls: this rank never reaches the barrier in time
    log.info("entering monitored barrier (timeout %.0fs)", a.barrier_timeout)
    dist.monitored_barrier(timeout=timedelta(seconds=a.barrier_timeout), wait_all_ranks=a.wait_all)
log.info("all epochs done")
dist.destroy_process_group()
