"""DDP job started by torch.multiprocessing.spawn (gloo, CPU, env:// with MASTER_ADDR/PORT set by the parent).

  sigkill : rank --bad-rank SIGKILLs itself at step --step (no traceback).
  hostoom : rank --bad-rank writes its pid into the cgroup-v1 memory cgroup named by $R13_OOM_CGROUP at start,
            then at step --step caches 128 MiB feature blocks (allocated and touched) until the kernel OOM
            killer SIGKILLs it.
  raise_type: rank --bad-rank computes its loss with a loss weight that is None at step --step -> TypeError.
"""
import argparse
import logging
import os
import signal
import time
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

p = argparse.ArgumentParser()
p.add_argument("--mode", required=True, choices=["sigkill", "hostoom", "raise_type"])
p.add_argument("--world", type=int, default=4)
p.add_argument("--bad-rank", type=int, required=True)
p.add_argument("--step", type=int, default=3)
p.add_argument("--steps", type=int, default=8)
p.add_argument("--port", type=int, default=29731)
p.add_argument("--no-ddp", action="store_true",
               help="average gradients by hand instead of DDP (DDP's constructor segfaults under "
                    "TORCH_DISTRIBUTED_DEBUG=DETAIL in torch 2.13.0 CPU)")


def worker(rank, args):
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    log = logging.getLogger("train")
    if args.mode == "hostoom" and rank == args.bad_rank:
        with open(os.path.join(os.environ["R13_OOM_CGROUP"], "cgroup.procs"), "w") as f:
            f.write(str(os.getpid()))                     # only this rank goes into the limited cgroup
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(args.port))
    dist.init_process_group("gloo", rank=rank, world_size=args.world, timeout=timedelta(seconds=20))
    log.info("[rank %d] process group ready (world_size=%d)", rank, args.world)
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 1))
    if not args.no_ddp:
        model = DDP(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    cfg = {"loss_weight": 1.0}
    cache = []
    for step in range(args.steps):
        g = torch.Generator().manual_seed(100 * rank + step)
        x = torch.randn(32, 16, generator=g)
        y = x.sum(1, keepdim=True) * 0.1
        if rank == args.bad_rank and step == args.step:
            if args.mode == "sigkill":
                os.kill(os.getpid(), signal.SIGKILL)      # induced
            elif args.mode == "hostoom":
                log.info("[rank %d] building feature cache", rank)
                while True:                                 # induced: unbounded host-memory cache
                    blk = torch.empty(128 * 2**20, dtype=torch.uint8)
                    blk.fill_(1)
                    cache.append(blk)
                    log.info("[rank %d] feature cache: %d MiB", rank, 128 * len(cache))
                    time.sleep(0.05)
            elif args.mode == "raise_type":
                cfg["loss_weight"] = None                   # induced: a config value that was never filled in
        loss = nn.functional.mse_loss(model(x), y) * cfg["loss_weight"]
        opt.zero_grad()
        loss.backward()
        if args.no_ddp:
            for prm in model.parameters():                  # manual gradient averaging
                dist.all_reduce(prm.grad)
                prm.grad /= args.world
        opt.step()
        log.info("[rank %d] step %d loss=%.4f", rank, step, loss.item())
        time.sleep(0.3)
    dist.barrier()
    log.info("[rank %d] training done", rank)
    dist.destroy_process_group()


if __name__ == "__main__":
    a = p.parse_args()
    mp.spawn(worker, args=(a,), nprocs=a.world, join=True)
