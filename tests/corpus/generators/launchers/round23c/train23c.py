"""Small DDP (gloo, CPU) training job for round 23c.

Rank/world come from RANK/WORLD_SIZE (torchrun, shell loop, xargs), OMPI_COMM_WORLD_* (mpirun), or from
run(rank, world) when called by spawn23c.py (mp.spawn / start_processes).

Fault injection: TRAIN_FAULT=<kind>:<rank>:<step>
  raise    -> that rank raises KeyError while building its batch at step k (own code)
  sigkill  -> that rank SIGKILLs itself after its step-k optimizer step (no traceback)
  segv     -> that rank calls ctypes.string_at(0) after step k (SIGSEGV, no Python traceback)
  hang     -> that rank sleeps HANG_SECS (default 45) before step k; others hit the gloo timeout (PG_TIMEOUT, 15s)
  mismatch -> at step k that rank all_reduces a metrics tensor of MISMATCH_N (default 4) floats, the others of 2
  exit2    -> that rank calls sys.exit(2) after step k, printing nothing
  dlraise  -> that rank's Dataset.__getitem__ raises ValueError for sample k*BS+3 inside a DataLoader worker
Options: --steps N, --workers K (DataLoader num_workers), --manual-sync (no DDP: all_reduce grads by hand;
used with TORCH_DISTRIBUTED_DEBUG=DETAIL, which segfaults with DDP on 2.13.0+cpu).
"""
import argparse, ctypes, datetime, logging, os, signal, sys, time

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.distributed.elastic.multiprocessing.errors import record
from torch.utils.data import DataLoader, Dataset

BS = 16
log = logging.getLogger("train")


def fault():
    f = os.environ.get("TRAIN_FAULT", "")
    if not f:
        return None, -1, -1
    kind, r, s = f.split(":")
    return kind, int(r), int(s)


class ShardDataset(Dataset):
    """Synthetic regression shard; one per rank."""

    def __init__(self, rank, n, bad_index=None):
        g = torch.Generator().manual_seed(1234 + rank)
        self.x = torch.randn(n, 32, generator=g)
        self.y = self.x[:, :4].sum(1, keepdim=True) + 0.1 * torch.randn(n, 1, generator=g)
        self.rank, self.bad = rank, bad_index

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        if i == self.bad:  # dlraise: a truncated record in this rank's shard
            raise ValueError(f"sample {i} of shard-{self.rank:05d}.pt has 19 features, expected 32 (truncated record)")
        return self.x[i], self.y[i]


def run(rank, world, args):
    kind, frank, fstep = fault()
    mine = rank == frank
    logging.basicConfig(level=logging.INFO, format=f"%(asctime)s %(levelname)s [rank{rank}] %(message)s",
                        stream=sys.stdout, force=True)
    timeout = datetime.timedelta(seconds=float(os.environ.get("PG_TIMEOUT", "15")))
    dist.init_process_group("gloo", rank=rank, world_size=world, timeout=timeout)
    log.info("initialized process group: backend=gloo rank=%d world_size=%d timeout=%s", rank, world, timeout)
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 1))
    if not args.manual_sync:
        model = nn.parallel.DistributedDataParallel(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    bad = fstep * BS + 3 if (kind == "dlraise" and mine) else None
    ds = ShardDataset(rank, BS * (args.steps + 1), bad)
    loader = DataLoader(ds, batch_size=BS, shuffle=False, num_workers=args.workers)
    log.info("dataset: %d samples, %d batches, num_workers=%d", len(ds), len(loader), args.workers)
    meta = {i: {"weight": 1.0} for i in range(args.steps + 1)}
    for step, (x, y) in enumerate(loader):
        if step >= args.steps:
            break
        if mine and kind == "hang" and step == fstep:
            time.sleep(float(os.environ.get("HANG_SECS", "45")))  # silent stall (e.g. stuck I/O)
        if mine and kind == "raise" and step == fstep:
            meta[step].pop("weight")  # bug: weight removed before it is read
        w = meta[step]["weight"]
        loss = w * nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        if args.manual_sync:
            for p in model.parameters():
                dist.all_reduce(p.grad)
                p.grad /= world
        opt.step()
        n = int(os.environ.get("MISMATCH_N", "4")) if (mine and kind == "mismatch" and step == fstep) else 2
        stats = torch.tensor([loss.item(), float(len(x))] + [0.0] * (n - 2))
        dist.all_reduce(stats)
        log.info("step %d/%d loss %.4f global_loss %.4f", step + 1, args.steps, loss.item(), stats[0].item() / world)
        if mine and step == fstep:
            if kind == "sigkill":
                os.kill(os.getpid(), signal.SIGKILL)
            if kind == "segv":
                ctypes.string_at(0)
            if kind == "exit2":
                sys.exit(2)
        time.sleep(0.2)
    dist.barrier()
    log.info("training done")
    dist.destroy_process_group()


def parse(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=8)
    p.add_argument("--workers", type=int, default=0)
    p.add_argument("--manual-sync", action="store_true")
    return p.parse_args(argv)


@record
def main():
    args = parse()
    rank = int(os.environ.get("RANK", os.environ.get("OMPI_COMM_WORLD_RANK", "0")))
    world = int(os.environ.get("WORLD_SIZE", os.environ.get("OMPI_COMM_WORLD_SIZE", "1")))
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    run(rank, world, args)


if __name__ == "__main__":
    main()
