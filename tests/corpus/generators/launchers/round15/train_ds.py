"""Plain PyTorch DDP job (gloo, CPU) started by DeepSpeed's launcher (`deepspeed --num_gpus N train_ds.py ...`),
NOT a DeepSpeed engine: ranks come from RANK/LOCAL_RANK/WORLD_SIZE set by deepspeed.launcher.launch (which also
appends --local_rank=N to the arguments). ONE induced fault on ONE rank.

The fault is chosen by the environment variable R15_FAULT="<mode>:<rank>:<step>" (not by arguments: the launcher
prints every rank's command line, which would give the answer away in the log). Modes:
  ok        no fault
  raise     the rank's label parsing hits a malformed label ('7?') -> ValueError from int() (uncaught)
  sigkill   the rank SIGKILLs itself (os.kill(os.getpid(), SIGKILL)) after its optimizer step, no traceback
  hang      the rank sleeps 90 s before the per-step loss all_reduce; the others time out (gloo, 20 s)
  mismatch  the rank all_reduces 8 grad-norm stats where the others all_reduce 4
  hostoom   the rank moves itself into a memory cgroup (path in $HOSTOOM_CGROUP) at start-up and, from step
            --step, caches 256 MiB host buffers (allocated and touched) until the kernel OOM killer SIGKILLs it

usage: R15_FAULT=raise:1:3 DS_ACCELERATOR=cpu deepspeed --num_gpus 3 train_ds.py --steps 6 --lr 0.05
"""
import argparse
import logging
import os
import signal
import time
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=6)
    ap.add_argument("--lr", type=float, default=0.05)
    ap.add_argument("--local_rank", type=int, default=int(os.environ.get("LOCAL_RANK", 0)))  # added by the launcher
    a = ap.parse_args()
    mode, bad_rank, kstep = (os.environ.get("R15_FAULT") or "ok:-1:0").split(":")
    a.mode, a.bad_rank, a.step = mode, int(bad_rank), int(kstep)

    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    logging.basicConfig(level=logging.INFO,
                        format=f"%(asctime)s %(levelname)s [rank{rank}] %(name)s: %(message)s")
    log = logging.getLogger("train")
    dist.init_process_group("gloo", timeout=timedelta(seconds=20))
    log.info("process group ready: world_size=%d local_rank=%d", world, a.local_rank)
    me_bad = rank == a.bad_rank
    if a.mode == "hostoom" and me_bad:
        # only this rank's process joins the memory cgroup prepared by run_all.sh
        with open(os.path.join(os.environ["HOSTOOM_CGROUP"], "cgroup.procs"), "w") as f:
            f.write(str(os.getpid()))

    torch.manual_seed(0)
    model = DDP(nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 4)))
    opt = torch.optim.SGD(model.parameters(), lr=a.lr)
    g = torch.Generator().manual_seed(100 + rank)

    def load_batch(step):
        labels = [str((step * 7 + j) % 4) for j in range(16)]
        if a.mode == "raise" and me_bad and step == a.step:
            # a malformed label in this rank's shard
            labels[11] = "7?"
        y = torch.tensor([int(s) for s in labels])
        return torch.randn(16, 32, generator=g), y

    cache = []
    for step in range(1, a.steps + 1):
        x, y = load_batch(step)
        loss = nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if a.mode == "sigkill" and me_bad and step == a.step:
            os.kill(os.getpid(), signal.SIGKILL)
        if a.mode == "hostoom" and me_bad and step >= a.step:
            for _ in range(64):
                cache.append(torch.ones(64 * 1024 * 1024))
                log.info("feature cache: %d MiB", 256 * len(cache))
        if a.mode == "hang" and me_bad and step == a.step:
            # stalls (e.g. a stuck filesystem read) before the loss all_reduce
            time.sleep(90)
        avg = loss.detach().clone()
        dist.all_reduce(avg)
        avg /= world
        if a.mode == "mismatch" and step == a.step:
            # grad-norm stats: the bad rank packs 8 values, the others 4
            stats = torch.full((8 if me_bad else 4,), float(rank))
            dist.all_reduce(stats)
        log.info("step %d/%d loss %.4f avg_loss %.4f", step, a.steps, loss.item(), avg.item())
    log.info("training done")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
