"""Round 35b: input-pipeline faults inside a multi-rank DDP job (CPU, gloo), where the failing process is a
DataLoader WORKER (or helper) of ONE rank, not the rank itself.

Each rank trains a tiny DDP model on a map-style dataset (or an IterableDataset) read through a DataLoader with
--workers worker processes (DistributedSampler, shuffle off, batch 4). Faults (only on --bad-rank, at batch --at):
  ok            healthy; workers log a warning for a few "suspect" samples (category none)
  raise         __getitem__ raises ValueError on a corrupt sample (in the worker that loads batch --at)
  segv          __getitem__ reads address 0 with ctypes.string_at(0) -> the worker segfaults
  kill          __getitem__ does os.kill(os.getpid(), SIGKILL) -> the worker dies with SIGKILL
  hang          __getitem__ sleeps 60 s; with --dl-timeout 5 the DataLoader raises after 5 s, without it the rank
                stalls and the other ranks hit the process-group timeout (15 s) in DDP's all-reduce
  oom           the bad rank's workers join memory cgroup $DL_OOM_CGROUP (worker_init_fn writes its pid into
                cgroup.procs); __getitem__ of batch --at allocates+touches 64 MiB chunks until the OOM killer fires
  collate       one sample of the bad rank has 7 features instead of 8 -> default_collate (in the worker) fails
  collate_fn    a custom collate_fn raises KeyError on a batch missing its 'y' field (bad rank only)
  init          worker_init_fn of the bad rank opens a per-rank shard index file that does not exist
  sampler       the bad rank builds DistributedSampler(num_replicas=world-1) -> ValueError (invalid rank)
  sampler_len   the bad rank builds DistributedSampler(num_replicas=world+1) -> fewer batches, uneven epoch
  uneven        IterableDataset whose bad-rank shard yields half the batches: it leaves the loop early
  persist       persistent_workers=True, 2 epochs; ValueError in a worker in epoch 2 only
Usage: torchrun --nproc-per-node N dl35b.py --fault F [--bad-rank R] [--at K] [--workers W]
       python dl35b.py --spawn N --port P --fault F ...   (torch.multiprocessing.spawn)
"""
import argparse, ctypes, functools, datetime, logging, os, signal, sys, time, warnings
import multiprocessing as mp
import torch, torch.distributed as dist, torch.nn as nn
from torch.utils.data import DataLoader, Dataset, IterableDataset, DistributedSampler, get_worker_info

log = logging.getLogger("train")
FEAT, BS, N = 8, 4, 96


class Samples(Dataset):
    """N synthetic samples; the bad rank's fault fires on the first sample of its batch --at."""
    def __init__(self, a, rank, world):
        self.a, self.rank = a, rank
        # DistributedSampler(shuffle=False) gives rank r indices r, r+W, r+2W, ...: first sample of batch `at`:
        self.bad_idx = rank + a.at * BS * world if rank == a.bad_rank else -1
        self.ep = mp.Value("i", 0)                 # shared with (persistent) forked workers

    def __len__(self):
        return N

    def __getitem__(self, i):
        x = torch.full((FEAT,), float(i % 7) / 7.0)
        y = torch.tensor([float(i % 3)])
        f, w = self.a.fault, get_worker_info()
        wid = w.id if w else -1
        if self.a.fault == "ok" and i % 29 == 5:
            log.warning("rank %d worker %d (pid %d): sample %d has 2 NaN features, filled with 0", self.rank, wid, os.getpid(), i)
        if i == self.bad_idx and (f != "persist" or self.ep.value == 1):
            if f in ("raise", "persist"):
                raise ValueError(f"corrupt record {i} in shard-{self.rank:02d}.bin: expected {FEAT} float32 features, got 0 bytes")
            if f == "segv":
                ctypes.string_at(0)               # null-pointer read: SIGSEGV in this worker
            if f == "kill":
                os.kill(os.getpid(), signal.SIGKILL)
            if f == "hang":
                time.sleep(60)                    # e.g. a stuck network read
            if f == "oom":
                hog = []
                while True:                        # decode "expands" the sample: 64 MiB at a time
                    hog.append(torch.ones(16 * 1024 * 1024))
            if f == "collate":
                x = x[:FEAT - 1]                   # truncated record
            if f == "collate_fn":
                return {"x": x}
        return {"x": x, "y": y}


class Stream(IterableDataset):
    """Per-rank stream; each worker yields a slice. The bad rank's shard is shorter (half the records)."""
    def __init__(self, a, rank, world):
        self.a, self.rank = a, rank
        self.n = N // world - (N // world // 2 if rank == a.bad_rank else 0)   # bad rank: half a shard

    def __iter__(self):
        w = get_worker_info()
        wid, nw = (w.id, w.num_workers) if w else (0, 1)
        for j in range(wid, self.n, nw):
            yield {"x": torch.full((FEAT,), float(j % 5) / 5.0), "y": torch.tensor([float(j % 3)])}


def strict_collate(batch):
    for s in batch:
        if "y" not in s:
            raise KeyError("y")
    return {"x": torch.stack([s["x"] for s in batch]), "y": torch.stack([s["y"] for s in batch])}


def worker_init(wid, a, rank):
    """worker_init_fn (module-level + functools.partial so spawn-started workers can unpickle it)."""
    logging.basicConfig(level=logging.INFO, format=f"%(asctime)s [rank{rank}] %(levelname)s %(name)s: %(message)s", force=True)
    torch.set_num_threads(1)
    if rank == a.bad_rank and a.fault == "oom":
        with open(os.path.join(os.environ["DL_OOM_CGROUP"], "cgroup.procs"), "w") as f:
            f.write(str(os.getpid()))
    if rank == a.bad_rank and a.fault == "init":
        idx = os.path.join(os.getcwd(), "data", f"shard-{rank:02d}.idx")
        open(idx).close()                      # missing index file for this rank
    log.info("worker %d of rank %d started (pid %d)", wid, rank, os.getpid())


def main(local_rank, a):
    rank = int(os.environ.get("RANK", local_rank))
    world = int(os.environ.get("WORLD_SIZE", a.spawn or 1))
    logging.basicConfig(level=logging.INFO, format=f"%(asctime)s [rank{rank}] %(levelname)s %(name)s: %(message)s")
    if a.spawn:
        os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(a.port))
    dist.init_process_group("gloo", rank=rank, world_size=world, timeout=datetime.timedelta(seconds=a.pg_timeout))
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = nn.parallel.DistributedDataParallel(nn.Sequential(nn.Linear(FEAT, 16), nn.ReLU(), nn.Linear(16, 1)))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    kw = dict(batch_size=BS, num_workers=a.workers, worker_init_fn=functools.partial(worker_init, a=a, rank=rank), timeout=a.dl_timeout,
              pin_memory=a.pin_memory, persistent_workers=a.fault == "persist" or a.persistent)
    if a.fault == "uneven":
        ds = Stream(a, rank, world); loader = DataLoader(ds, **kw)
    else:
        ds = Samples(a, rank, world)
        reps = world
        if rank == a.bad_rank and a.fault == "sampler":
            reps = world - 1                       # stale config: world size of a previous run
        if rank == a.bad_rank and a.fault == "sampler_len":
            reps = world + 1
        sampler = DistributedSampler(ds, num_replicas=reps, rank=rank, shuffle=False)
        loader = DataLoader(ds, sampler=sampler, collate_fn=strict_collate if a.fault == "collate_fn" else None, **kw)
    log.info("dataset ready: %s, %d workers, world %d", type(ds).__name__, a.workers, world)
    epochs = 2 if a.fault == "persist" else a.epochs
    for ep in range(epochs):
        if isinstance(ds, Samples):
            ds.ep.value = ep
            loader.sampler.set_epoch(ep)
        n = 0
        for step, b in enumerate(loader):
            loss = nn.functional.mse_loss(model(b["x"]), b["y"])
            opt.zero_grad(); loss.backward(); opt.step()
            l = loss.detach().clone(); dist.all_reduce(l); n += 1
            if rank == 0 or step % 4 == 0:
                log.info("epoch %d step %d loss %.4f (mean over ranks %.4f)", ep, step, loss.item(), l.item() / world)
        log.info("epoch %d done: %d batches", ep, n)
    dist.barrier()
    if rank == 0:
        log.info("training complete")
    dist.destroy_process_group()


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--fault", default="ok")
    p.add_argument("--bad-rank", type=int, default=-1)
    p.add_argument("--at", type=int, default=3)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--dl-timeout", type=float, default=0)
    p.add_argument("--pg-timeout", type=int, default=15)
    p.add_argument("--pin-memory", action="store_true")
    p.add_argument("--persistent", action="store_true")
    p.add_argument("--spawn", type=int, default=0)
    p.add_argument("--port", type=int, default=29500)
    a = p.parse_args()
    if a.spawn:
        torch.multiprocessing.spawn(main, args=(a,), nprocs=a.spawn)
    else:
        main(int(os.environ["LOCAL_RANK"]), a)
