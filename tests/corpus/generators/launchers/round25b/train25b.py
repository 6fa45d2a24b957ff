"""Round 25b: a tiny DDP (gloo, CPU) training job with six different logging set-ups and one induced fault.

  --logging absl    absl.logging glog-style lines (I1206 21:00:00.123456 140 train25b.py:12] msg), rank only in the message
  --logging pid     Python logging with %(process)d; the rank appears once, in a start-up line "rank R has pid P"
  --logging print   plain print() without flush (run with PYTHONUNBUFFERED unset: block-buffered when not a tty)
  --logging shared  every rank appends to one shared file (FileHandler(..., mode="a")), path in --shared-file
  --logging plain   Python logging to stdout (used under `ts` and under `nohup`)

  --fault raise     bad rank raises KeyError in its batch preparation at --step
  --fault sigkill   bad rank SIGKILLs itself at --step (no traceback)
  --fault hang      bad rank sleeps 90 s before the backward all-reduce at --step (pg timeout --pg-timeout s)
  --fault mismatch  bad rank all-reduces a metrics tensor of another size (1024 vs 2) at --step
  --fault hostoom   bad rank joins the memory cgroup named in $HOSTOOM_CGROUP, then grows a host buffer at --step
  --fault dlworker  bad rank's dataset raises ValueError inside a DataLoader worker process at --step
  --fault none      healthy run

Launch with torchrun (RANK/WORLD_SIZE from env) or --spawn N (torch.multiprocessing.spawn, MASTER_ADDR/PORT env).
"""
import argparse
import datetime
import os
import signal
import sys
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset, DistributedSampler

STEPS = 6
BATCH = 8


def get_args():
    p = argparse.ArgumentParser()
    p.add_argument("--logging", default="plain", choices=["absl", "pid", "print", "shared", "plain"])
    p.add_argument("--fault", default="none",
                   choices=["none", "raise", "sigkill", "hang", "mismatch", "hostoom", "dlworker"])
    p.add_argument("--bad-rank", type=int, default=1)
    p.add_argument("--step", type=int, default=2)
    p.add_argument("--pg-timeout", type=int, default=15)
    p.add_argument("--spawn", type=int, default=0, help="world size for mp.spawn; 0 = env (torchrun)")
    p.add_argument("--shared-file", default="train.log")
    p.add_argument("--grad-sync", default="ddp", choices=["ddp", "manual"],
                   help="manual: plain model, gradients averaged with one dist.all_reduce per parameter "
                        "(DDP segfaulted at its first step under TORCH_DISTRIBUTED_DEBUG=DETAIL here)")
    return p.parse_args()


class Logger:
    """One small facade over the logging set-ups, so the training loop is the same for all."""

    def __init__(self, kind, rank, shared_file):
        self.kind, self.rank = kind, rank
        if kind == "absl":
            from absl import logging as alog
            alog.use_absl_handler()   # glog-style prefix, to stderr
            alog.set_verbosity(alog.INFO)
            self.info = lambda msg, *a: alog.info("rank %d: " + msg, rank, *a)
            self.warn = lambda msg, *a: alog.warning("rank %d: " + msg, rank, *a)
        elif kind == "print":
            self.info = lambda msg, *a: print(f"[rank {rank}] " + (msg % a))   # no flush on purpose
            self.warn = self.info
        else:
            import logging
            if kind == "pid":
                logging.basicConfig(level=logging.INFO,
                                    format="%(asctime)s %(process)d %(levelname)s %(name)s: %(message)s")
                log = logging.getLogger("trainer")
                log.info("rank %d has pid %d", rank, os.getpid())      # the only line that names the rank
                self.info, self.warn = log.info, log.warning
                return
            if kind == "shared":
                h = logging.FileHandler(shared_file, mode="a")
                fmt = "%(asctime)s %(levelname)s [%(hostname)s:%(process)d] %(message)s"
                h.setFormatter(logging.Formatter(fmt.replace("%(hostname)s", os.uname().nodename)))
                logging.basicConfig(level=logging.INFO, handlers=[h])
            else:   # plain: stdout, used under ts / nohup
                logging.basicConfig(level=logging.INFO, stream=sys.stdout,
                                    format="%(asctime)s - %(levelname)s - %(message)s")
            log = logging.getLogger("train")
            self.info = lambda msg, *a: log.info("[rank %d] " + msg, rank, *a)
            self.warn = lambda msg, *a: log.warning("[rank %d] " + msg, rank, *a)


class Synthetic(Dataset):
    def __init__(self, n, bad_index=None):
        g = torch.Generator().manual_seed(0)
        self.x = torch.randn(n, 16, generator=g)
        self.y = torch.randn(n, 1, generator=g)
        self.bad_index = bad_index

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        if self.bad_index is not None and i == self.bad_index:
            # induced: a corrupt record, seen only by the worker of the bad rank
            raise ValueError(f"sample {i}: could not decode record (expected 16 features, got 0)")
        return self.x[i], self.y[i]


def prepare_batch(batch, rank, step, args):
    meta = {"inputs": batch[0], "targets": batch[1]}
    if args.fault == "raise" and rank == args.bad_rank and step == args.step:
        del meta["targets"]          # induced: a field missing from this rank's batch
    return meta["inputs"], meta["targets"]


def train(rank, world, args):
    log = Logger(args.logging, rank, args.shared_file)
    if args.fault == "hostoom" and rank == args.bad_rank:
        # move only this rank into the memory-limited cgroup (cgroup v1, created by run_all.sh)
        with open(os.path.join(os.environ["HOSTOOM_CGROUP"], "cgroup.procs"), "w") as f:
            f.write(str(os.getpid()))
    dist.init_process_group("gloo", rank=rank, world_size=world,
                            timeout=datetime.timedelta(seconds=args.pg_timeout))
    log.info("process group ready: world_size=%d backend=gloo", world)
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 1))
    if args.grad_sync == "ddp":
        model = DDP(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)

    n = BATCH * STEPS * world
    bad_index = None
    if args.fault == "dlworker" and rank == args.bad_rank:
        sampler_idx = list(DistributedSampler(range(n), num_replicas=world, rank=rank, shuffle=False))
        bad_index = sampler_idx[args.step * BATCH + 3]
    ds = Synthetic(n, bad_index)
    sampler = DistributedSampler(ds, num_replicas=world, rank=rank, shuffle=False)
    loader = DataLoader(ds, batch_size=BATCH, sampler=sampler,
                        num_workers=1 if args.fault == "dlworker" else 0)
    cache = []
    for step, batch in enumerate(loader):
        x, y = prepare_batch(batch, rank, step, args)
        if rank == args.bad_rank and step == args.step:
            if args.fault == "sigkill":
                os.kill(os.getpid(), signal.SIGKILL)
            if args.fault == "hostoom":
                while True:   # induced: an unbounded host-side cache, 64 MiB at a time, every page touched
                    cache.append(torch.ones(16 * 1024 * 1024))
            if args.fault == "hang":
                time.sleep(90)   # induced: this rank stalls; the others wait in the all-reduce
        loss = nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        if args.grad_sync == "manual":
            for p in model.parameters():
                dist.all_reduce(p.grad)
                p.grad /= world
        opt.step()
        metrics = torch.tensor([loss.item(), float(len(x))])
        if args.fault == "mismatch" and rank == args.bad_rank and step == args.step:
            # induced: this rank alone appends a 1022-bin histogram of its predictions to the metrics
            hist = torch.histc(model(x).detach(), bins=1022)
            metrics = torch.cat([metrics, hist])
        dist.all_reduce(metrics)
        log.info("step %d/%d loss %.4f mean_loss %.4f", step + 1, STEPS, loss.item(),
                 metrics[0].item() / world)
    log.info("training done")
    dist.barrier()
    dist.destroy_process_group()


def spawn_entry(rank, world, args):
    train(rank, world, args)


if __name__ == "__main__":
    args = get_args()
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    if args.spawn:
        mp.spawn(spawn_entry, args=(args.spawn, args), nprocs=args.spawn, join=True)
    else:
        train(int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]), args)
