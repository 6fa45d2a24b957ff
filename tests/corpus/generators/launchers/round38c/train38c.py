"""Tiny gloo DDP training loop shared by every round38c launcher.

Rank/world come from the caller (submitit) or from RANK/WORLD_SIZE (bash launchers).
The induced fault is chosen by env vars, and happens only on FAIL_RANK at step FAIL_STEP:
  FAULT=none      healthy run
  FAULT=raise     the rank's data loader raises KeyError('input_ids') on a bad record
  FAULT=sigkill   the rank SIGKILLs itself (no traceback)
  FAULT=hang      the rank sleeps HANG_S seconds before its forward; others hit the gloo timeout (PG_TIMEOUT)
  FAULT=mismatch  the rank all_reduces a metric tensor of size 2 where the others use size 1
  FAULT=hostoom   the rank joins the memory cgroup OOM_CGROUP at start, then allocates 256 MiB blocks
"""
import datetime
import logging
import os
import signal
import sys
import time

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def load_batch(rank, step, bad):
    """Synthetic 'dataset' of dict records; a bad record lacks 'input_ids'."""
    g = torch.Generator().manual_seed(rank * 1000 + step)
    record = {"input_ids": torch.randn(16, 32, generator=g), "target": torch.randn(16, 1, generator=g)}
    if bad:
        del record["input_ids"]
    return record["input_ids"], record["target"]


def train(rank, world, init_method):
    fault = os.environ.get("FAULT", "none")
    frank = int(os.environ.get("FAIL_RANK", "1"))
    fstep = int(os.environ.get("FAIL_STEP", "3"))
    steps = int(os.environ.get("STEPS", "6"))
    logging.basicConfig(level=logging.INFO, stream=sys.stdout, force=True,
                        format=f"%(asctime)s [rank{rank}] %(levelname)s %(name)s: %(message)s")
    log = logging.getLogger("train")
    mine = fault != "none" and rank == frank

    if mine and fault == "hostoom":  # put only this rank into the memory-limited cgroup
        with open(os.path.join(os.environ["OOM_CGROUP"], "cgroup.procs"), "w") as f:
            f.write(str(os.getpid()))

    timeout = datetime.timedelta(seconds=int(os.environ.get("PG_TIMEOUT", "20")))
    dist.init_process_group("gloo", init_method=init_method, rank=rank, world_size=world, timeout=timeout)
    log.info("process group ready: backend=gloo world_size=%d pid=%d", world, os.getpid())
    torch.manual_seed(0)
    model = DDP(nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 1)))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    cache = []
    for step in range(1, steps + 1):
        trigger = mine and step == fstep
        if trigger and fault == "sigkill":
            os.kill(os.getpid(), signal.SIGKILL)
        if trigger and fault == "hang":
            time.sleep(float(os.environ.get("HANG_S", "45")))
        if trigger and fault == "hostoom":
            while True:  # "prefetch cache" that grows until the cgroup OOM killer fires
                block = torch.empty(64 * 1024 * 1024, dtype=torch.float32)
                block.fill_(1.0)
                cache.append(block)
                log.info("prefetch cache now %d MiB", 256 * len(cache))
        x, y = load_batch(rank, step, bad=trigger and fault == "raise")
        loss = nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        metric = torch.tensor([loss.item()])
        if trigger and fault == "mismatch":
            metric = torch.tensor([loss.item(), float(x.shape[0])])  # extra field on this rank only
        dist.all_reduce(metric)
        log.info("step %d/%d loss %.4f mean_loss %.4f", step, steps, loss.item(), metric[0].item() / world)
    dist.barrier()
    log.info("training finished")
    dist.destroy_process_group()
    return round(loss.item(), 4)


if __name__ == "__main__":
    train(int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]), "env://")
