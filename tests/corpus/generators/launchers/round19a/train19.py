"""Round 19a: small DDP job (MLP regression on synthetic, zlib-compressed record shards), gloo, a logger line per step.

Ranks come from the launcher's environment: RANK/WORLD_SIZE (torchrun, accelerate, a shell loop),
OMPI_COMM_WORLD_RANK/SIZE (mpirun), SLURM_PROCID/SLURM_NTASKS (srun); spawn_job19.py calls run(rank, world, argv)
from torch.multiprocessing.spawn. MASTER_ADDR/MASTER_PORT must be set (env://).
--accelerate: use accelerate.Accelerator(cpu=True) (+ InitProcessGroupKwargs timeout) instead of plain DDP.

Data path: a background "prefetch" thread decompresses records of the rank's shard into a queue (default), or,
with --workers N, a torch DataLoader with N worker processes over the same shard.

ONE fault on ONE rank, from env TRAIN_FAULT=<mode>:<rank>:<step> (never on the command line, so the log does not
name it; the raising source lines below look like ordinary job code on purpose, since tracebacks print them):
  segv     the rank reads address 0 through ctypes after step k's optimizer step (SIGSEGV, no Python traceback)
  abort    os.abort() after step k (SIGABRT, no traceback)
  exit3    os._exit(3) after step k (silent exit code 3)
  sysexit  the rank re-validates its (per-rank) config at step k and finds a negative lr: sys.exit("bad config: ...")
  early    the rank's shard holds only k batches: it leaves the loop after step k, runs a slow local evaluation
           (~45 s, no collectives) and returns normally (exit 0) while the others block in step k+1's collectives
  thread   record k of the rank's shard is corrupt: the prefetch thread dies on zlib.error ("Exception in thread
           prefetch"), the main thread keeps waiting on the queue, the others time out
  worker   (with --workers N) sample at batch k of the rank's shard is corrupt: ValueError in Dataset.__getitem__
           inside a DataLoader worker
  pidfile  nothing in the job; the rank writes its pid to $TRAIN_PIDDIR/rank<r>.pid so run_all.sh can kill -TERM it
           from outside after it logged step k
Checkpoints (--ckpt-dir, every --save-every steps): rank 0 writes <dir>/step_<k>.pt (default), or with
--shard-ckpt every rank writes <dir>/shard_<rank>/step_<k>.pt; a bad --ckpt-dir (a path under a regular file) or
a stray file named shard_<rank> makes that rank's save fail with an OSError.
"""
import argparse, ctypes, datetime, logging, os, queue, sys, threading, time, zlib

import torch
import torch.distributed as dist
import torch.nn as nn

log = logging.getLogger("train")


def env_rank():
    for r, w in (("RANK", "WORLD_SIZE"), ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"),
                 ("SLURM_PROCID", "SLURM_NTASKS")):
        if r in os.environ and w in os.environ:
            return int(os.environ[r]), int(os.environ[w])
    raise SystemExit("no rank in environment")


def fault():
    f = os.environ.get("TRAIN_FAULT", "")
    if not f:
        return None, -1, -1
    m, r, s = f.split(":")
    return m, int(r), int(s)


def make_shard(rank, n_batches, bs, corrupt_at=None):
    """Records of one rank's shard: zlib-compressed float32 rows (16 features + 1 target)."""
    g = torch.Generator().manual_seed(1234 + rank)
    recs = []
    for i in range(n_batches):
        x = torch.randn(bs, 17, generator=g)
        blob = zlib.compress(x.numpy().tobytes())
        if i == corrupt_at:
            blob = b"\x78\x9c" + bytes(reversed(blob[2:]))
        recs.append(blob)
    return recs


def decode(blob, bs):
    t = torch.frombuffer(bytearray(zlib.decompress(blob)), dtype=torch.float32).view(bs, 17)
    return t[:, :16], t[:, 16:]


class ShardDataset(torch.utils.data.Dataset):
    def __init__(self, shard, rank, n, bs, bad=()):
        self.shard, self.n, self.bs, self.bad = shard, n, bs, set(bad)
        self.recs = make_shard(rank, n, bs)

    def __len__(self):
        return self.n

    def __getitem__(self, idx):
        if idx in self.bad:
            raise ValueError(f"corrupt sample {idx} in {self.shard}: record header checksum mismatch")
        return decode(self.recs[idx], self.bs)


def prefetch(recs, bs, q):
    for blob in recs:
        x, y = decode(blob, bs)
        q.put((x, y))
    q.put(None)


def save_checkpoint(model, opt, step, path):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    torch.save({"step": step, "model": model.state_dict(), "opt": opt.state_dict()}, path)


def evaluate(model, rank, n=30):
    g = torch.Generator().manual_seed(99 + rank)
    tot = 0.0
    with torch.no_grad():
        for i in range(n):
            x = torch.randn(64, 16, generator=g)
            tot += model(x).pow(2).mean().item()
            time.sleep(1.5)  # a slow local metric (stands in for a big validation set)
            if i % 10 == 9:
                log.info("eval batch %d/%d", i + 1, n)
    return tot / n


def run(rank, world, argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=8)
    ap.add_argument("--bs", type=int, default=32)
    ap.add_argument("--lr", type=float, default=0.05)
    ap.add_argument("--pg-timeout", type=int, default=20)
    ap.add_argument("--workers", type=int, default=0)
    ap.add_argument("--ckpt-dir", default=None)
    ap.add_argument("--save-every", type=int, default=3)
    ap.add_argument("--shard-ckpt", action="store_true")
    ap.add_argument("--step-time", type=float, default=0.3)
    ap.add_argument("--accelerate", action="store_true")
    a = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, stream=sys.stdout,
                        format=f"%(asctime)s [rank {rank}] %(levelname)s %(name)s: %(message)s")
    mode, frank, fstep = fault()
    mine = rank == frank
    if mine and mode == "pidfile" and os.environ.get("TRAIN_PIDDIR"):
        with open(os.path.join(os.environ["TRAIN_PIDDIR"], f"rank{rank}.pid"), "w") as f:
            f.write(str(os.getpid()))

    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 1))
    if a.accelerate:
        from accelerate import Accelerator, InitProcessGroupKwargs
        acc = Accelerator(cpu=True, kwargs_handlers=[
            InitProcessGroupKwargs(timeout=datetime.timedelta(seconds=a.pg_timeout))])
        rank, world = acc.process_index, acc.num_processes
        opt = torch.optim.SGD(model.parameters(), lr=a.lr)
        model, opt = acc.prepare(model, opt)
    else:
        acc = None
        dist.init_process_group("gloo", rank=rank, world_size=world,
                                timeout=datetime.timedelta(seconds=a.pg_timeout))
        model = nn.parallel.DistributedDataParallel(model)
        opt = torch.optim.SGD(model.parameters(), lr=a.lr)
    log.info("initialized process group: world_size=%d backend=gloo", world)
    shard = f"shard-{rank:03d}.rec"
    lr_table = {s: a.lr for s in range(1, a.steps + 1)}
    if mine and mode == "sysexit":
        lr_table[fstep] = -a.lr  # this rank's schedule file carries a sign error

    n_batches = fstep if (mine and mode == "early") else a.steps
    if a.workers:
        ds = ShardDataset(shard, rank, n_batches, a.bs, bad=[fstep - 1] if (mine and mode == "worker") else [])
        batches = iter(torch.utils.data.DataLoader(ds, batch_size=None, num_workers=a.workers))
    else:
        q = queue.Queue(maxsize=4)
        recs = make_shard(rank, n_batches, a.bs, corrupt_at=fstep - 1 if (mine and mode == "thread") else None)
        threading.Thread(target=prefetch, args=(recs, a.bs, q), name="prefetch", daemon=True).start()
        batches = iter(q.get, None)
    log.info("loading %s (%d batches of %d)", shard, n_batches, a.bs)

    step = 0
    for x, y in batches:
        step += 1
        lr = lr_table[step]
        if lr <= 0:
            sys.exit("bad config: lr must be positive")
        for gr in opt.param_groups:
            gr["lr"] = lr
        loss = nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        if acc is not None:
            acc.backward(loss)
        else:
            loss.backward()
        opt.step()
        avg = loss.detach().clone()
        dist.all_reduce(avg)
        avg /= world
        log.info("step %d/%d loss %.4f (global %.4f) lr %.3g", step, a.steps, loss.item(), avg.item(), lr)
        time.sleep(a.step_time)
        if a.ckpt_dir and step % a.save_every == 0:
            if a.shard_ckpt:
                save_checkpoint(model, opt, step, os.path.join(a.ckpt_dir, f"shard_{rank}", f"step_{step}.pt"))
            elif rank == 0:
                save_checkpoint(model, opt, step, os.path.join(a.ckpt_dir, f"step_{step}.pt"))
            dist.barrier()
            log.info("checkpoint step %d saved", step)
        if mine and step == fstep:
            if mode == "segv":
                ctypes.string_at(0)
            elif mode == "abort":
                os.abort()
            elif mode == "exit3":
                os._exit(3)
    log.info("epoch finished after %d steps", step)
    score = evaluate(model, rank) if step < a.steps else 0.0
    if step < a.steps:
        log.info("eval loss %.4f", score)
    if step == a.steps:
        dist.barrier()
    dist.destroy_process_group()
    log.info("done")


if __name__ == "__main__":
    r, w = env_rank()
    run(r, w)
