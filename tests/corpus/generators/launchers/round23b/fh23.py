#!/usr/bin/env python3
"""DDP training run with `python -X faulthandler` and a per-step watchdog, faulthandler.dump_traceback_later(),
which dumps the stacks of every thread when a step takes longer than --watchdog seconds (gloo).
Launch: torchrun --no-python ... python -X faulthandler fh23.py ...

Batches come from a background prefetch thread through a queue.
Faults (on --bad-rank at --step):
  hang      the rank's prefetch thread stalls (sleeps --sleep s), the main thread blocks in queue.get(); the others
            wait in DDP's all_reduce until the process-group timeout (--pg-timeout)
  mismatch  after backward the bad rank all_reduces a loss tensor of another size (size) or calls broadcast instead (op)
  raise     IndexError in the rank's prefetch thread is forwarded to the main thread and re-raised
  none      healthy; --slow-save makes rank 0's checkpoint save take longer than the watchdog (stack dump, job goes on)
"""
import argparse, faulthandler, logging, os, queue, sys, threading, time
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn as nn

p = argparse.ArgumentParser()
p.add_argument("--fault", default="none")
p.add_argument("--mismatch", default="size")
p.add_argument("--bad-rank", type=int, default=1)
p.add_argument("--step", type=int, default=3)
p.add_argument("--steps", type=int, default=6)
p.add_argument("--sleep", type=float, default=120)
p.add_argument("--watchdog", type=float, default=8)
p.add_argument("--pg-timeout", type=float, default=20)
p.add_argument("--slow-save", action="store_true")
a = p.parse_args()

dist.init_process_group("gloo", timeout=timedelta(seconds=a.pg_timeout))
rank, world = dist.get_rank(), dist.get_world_size()
logging.basicConfig(level=logging.INFO, format=f"[%(asctime)s] [{rank}/{world}] %(levelname)s %(message)s", stream=sys.stdout)
log = logging.getLogger()
log.info("faulthandler enabled=%s, step watchdog %.0fs", faulthandler.is_enabled(), a.watchdog)

q = queue.Queue(maxsize=2)
def prefetch():
    for step in range(1, a.steps + 1):
        if rank == a.bad_rank and step == a.step:
            if a.fault == "hang":
                time.sleep(a.sleep)
            if a.fault == "raise":
                try:
                    idx = [4, 9, 13][3]
                except IndexError as e:
                    q.put(e); return
        g = torch.Generator().manual_seed(rank * 97 + step)
        q.put((torch.randn(32, 16, generator=g), torch.randn(32, 4, generator=g)))
threading.Thread(target=prefetch, name="prefetch", daemon=True).start()

torch.manual_seed(0)
model = nn.parallel.DistributedDataParallel(nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 4)))
opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
for step in range(1, a.steps + 1):
    faulthandler.dump_traceback_later(a.watchdog, exit=False)  # re-armed every step
    item = q.get()
    if isinstance(item, Exception):
        raise item
    x, y = item
    loss = nn.functional.mse_loss(model(x), y)
    opt.zero_grad(); loss.backward(); opt.step()
    stat = loss.detach().reshape(1)
    if a.fault == "mismatch" and rank == a.bad_rank and step == a.step:
        if a.mismatch == "size":
            dist.all_reduce(torch.cat([stat, stat, stat]))
        else:
            dist.broadcast(stat, src=rank)
    else:
        dist.all_reduce(stat)
    log.info("step %d/%d loss %.4f (mean over ranks %.4f)", step, a.steps, loss.item(), stat.item() / world)
faulthandler.dump_traceback_later(a.watchdog, exit=False)
if rank == 0:
    if a.slow_save:
        time.sleep(a.watchdog + 3)  # slow network filesystem
    torch.save(model.module.state_dict(), "fh_model.pt")
    log.info("checkpoint saved")
dist.barrier()
faulthandler.cancel_dump_traceback_later()
log.info("done")
dist.destroy_process_group()
