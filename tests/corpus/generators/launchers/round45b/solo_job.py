"""Small DDP job (gloo, CPU) in which ONE rank does solo work while the others wait.

Phase 1: a few DDP training steps on every rank (logger line per step).
Phase 2: the "solo" rank (rank 0, the last rank, or local rank 0 of each node: --who) does
         its solo work (--work) while every other rank waits at a barrier / broadcast /
         monitored_barrier (--sync).
Phase 3: a couple more steps, then a clean shutdown.

What --work does on the solo rank (this is what each case induces):
  eval          evaluate on the full validation set (--fault: last val batch has 17 features -> matmul error)
  save          torch.save a checkpoint to --path (put --path on a tiny or read-only tmpfs for the fault)
  sqlite        write metrics into a local sqlite db (--path); another process holds it locked
                (--sqlite-timeout small: raises 'database is locked'; large: the rank hangs in it)
  cache         prepare/cache the dataset from a .npy file (--path; a corrupt/truncated file for the fault)
  csv           read the dataset CSV (--path) and pick the 'label' column (missing column for the fault)
  unpack        unpack a local .tar.gz archive (--path; truncated archive for the fault)
  vocab         build a tokenizer vocabulary from a text corpus (--path; invalid UTF-8 for the fault)
  slow          a slow solo step: sleep --solo-secs (longer than --timeout for the fault)
  sigkill       SIGKILL itself in the middle of the solo step (no traceback)
--secondary: the WAITING ranks catch the failed sync and try to resume from the checkpoint / metrics
             the solo rank should have written (--resume-from) and raise their own error doing so.
"""
import argparse, csv, json, logging, os, signal, sqlite3, sys, tarfile, time
from datetime import timedelta

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn

log = logging.getLogger("train")


def parse(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("--work", required=True)
    p.add_argument("--who", default="first", choices=["first", "last", "local0"])
    p.add_argument("--sync", default="barrier", choices=["barrier", "broadcast", "monitored"])
    p.add_argument("--path", default="")
    p.add_argument("--fault", action="store_true")
    p.add_argument("--timeout", type=float, default=20)
    p.add_argument("--solo-secs", type=float, default=5)
    p.add_argument("--sqlite-timeout", type=float, default=2)
    p.add_argument("--steps", type=int, default=4)
    p.add_argument("--secondary", action="store_true")
    p.add_argument("--resume-from", default="")
    p.add_argument("--no-ddp", action="store_true",
                   help="average gradients with all_reduce instead of DDP (DDP's constructor segfaults "
                        "under TORCH_DISTRIBUTED_DEBUG=DETAIL in this torch 2.13 CPU build)")
    return p.parse_args(argv)


def make_model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(16, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 1))


def train_steps(ddp, opt, rank, start, n):
    g = torch.Generator().manual_seed(100 + rank)
    for step in range(start, start + n):
        x = torch.randn(32, 16, generator=g)
        y = x.sum(1, keepdim=True)
        loss = nn.functional.mse_loss(ddp(x), y)
        opt.zero_grad()
        loss.backward()
        if not isinstance(ddp, nn.parallel.DistributedDataParallel):
            for prm in ddp.parameters():
                dist.all_reduce(prm.grad)
                prm.grad /= dist.get_world_size()
        opt.step()
        log.info("rank %d step %d loss %.4f", rank, step, loss.item())


def solo_work(a, model, rank):
    """Returns a float that the solo rank shares with the others (broadcast sync)."""
    w = a.work
    if w == "eval":
        log.info("rank %d: evaluating on the full validation set (%d batches)", rank, 20)
        total = 0.0
        with torch.no_grad():
            for i in range(20):
                feats = 17 if (a.fault and i == 19) else 16   # last shard written with an extra feature
                x = torch.randn(13 if i == 19 else 64, feats)
                total += model(x).pow(2).mean().item()
        log.info("rank %d: val_loss %.4f", rank, total / 20)
        return total / 20
    if w == "save":
        log.info("rank %d: saving checkpoint to %s", rank, a.path)
        state = {"model": model.state_dict(), "extra": torch.randn(512, 1024)}  # ~2.3 MB
        torch.save(state, a.path)
        log.info("rank %d: checkpoint saved", rank)
        return 1.0
    if w == "sqlite":
        log.info("rank %d: writing metrics to %s", rank, a.path)
        con = sqlite3.connect(a.path, timeout=a.sqlite_timeout)
        con.execute("CREATE TABLE IF NOT EXISTS metrics (step INTEGER, name TEXT, value REAL)")
        con.execute("INSERT INTO metrics VALUES (?, ?, ?)", (a.steps, "train_loss", 0.5))
        con.commit()
        con.close()
        log.info("rank %d: metrics written", rank)
        return 1.0
    if w == "cache":
        log.info("rank %d: preparing dataset cache from %s", rank, a.path)
        arr = np.load(a.path)
        arr = arr.reshape(-1, 17)
        torch.save(torch.from_numpy(arr), a.path + ".pt")
        log.info("rank %d: cached %d rows", rank, arr.shape[0])
        return float(arr.shape[0])
    if w == "csv":
        log.info("rank %d: reading dataset %s", rank, a.path)
        with open(a.path, newline="") as f:
            rows = list(csv.DictReader(f))
        labels = [int(r["label"]) for r in rows]
        log.info("rank %d: %d rows, %d positive", rank, len(rows), sum(labels))
        return float(len(rows))
    if w == "unpack":
        dest = a.path + ".d"
        log.info("rank %d: unpacking %s to %s", rank, a.path, dest)
        with tarfile.open(a.path, "r:gz") as tf:
            tf.extractall(dest, filter="data")
        log.info("rank %d: unpacked %d files", rank, len(os.listdir(dest)))
        return 1.0
    if w == "vocab":
        log.info("rank %d: building tokenizer vocabulary from %s", rank, a.path)
        vocab = {}
        with open(a.path, encoding="utf-8") as f:
            for line in f:
                for tok in line.split():
                    vocab[tok] = vocab.get(tok, 0) + 1
        log.info("rank %d: vocabulary size %d", rank, len(vocab))
        return float(len(vocab))
    if w == "slow":
        log.info("rank %d: solo step (compacting shards), ~%.0fs", rank, a.solo_secs)
        t0 = time.time()
        while time.time() - t0 < a.solo_secs:
            time.sleep(1)
        log.info("rank %d: solo step done in %.1fs", rank, time.time() - t0)
        return 1.0
    if w == "sigkill":
        log.info("rank %d: saving checkpoint to %s", rank, a.path)
        time.sleep(1)
        os.kill(os.getpid(), signal.SIGKILL)
    raise SystemExit("unknown work " + w)


def run(rank, world, local_rank, a):
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s",
                        stream=sys.stdout, force=True)
    dist.init_process_group("gloo", rank=rank, world_size=world, timeout=timedelta(seconds=a.timeout))
    model = make_model()
    ddp = model if a.no_ddp else nn.parallel.DistributedDataParallel(model)
    opt = torch.optim.SGD(ddp.parameters(), lr=1e-3)
    train_steps(ddp, opt, rank, 0, a.steps)

    solo = {"first": rank == 0, "last": rank == world - 1, "local0": local_rank == 0}[a.who]
    root = 0 if a.who != "last" else world - 1
    val = torch.zeros(1)
    if solo:
        val[0] = solo_work(a, model, rank)
    else:
        log.info("rank %d: waiting for the solo step on rank %s", rank, "local 0" if a.who == "local0" else root)
    try:
        if a.sync == "barrier":
            dist.barrier()
        elif a.sync == "broadcast":
            dist.broadcast(val, src=root)
        else:
            dist.monitored_barrier(timeout=timedelta(seconds=a.timeout), wait_all_ranks=True)
    except Exception:
        if a.secondary and not solo:
            log.warning("rank %d: sync failed, resuming from %s", rank, a.resume_from)
            if a.resume_from.endswith(".json"):
                with open(a.resume_from) as f:
                    val[0] = json.load(f)["val_loss"]
            else:
                torch.load(a.resume_from)
        raise
    log.info("rank %d: solo result %.4f", rank, val.item())
    train_steps(ddp, opt, rank, a.steps, 2)
    dist.barrier()
    log.info("rank %d: done", rank)
    dist.destroy_process_group()


if __name__ == "__main__":
    a = parse()
    if "OMPI_COMM_WORLD_RANK" in os.environ:      # mpirun
        r, w, l = (int(os.environ[k]) for k in ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE",
                                               "OMPI_COMM_WORLD_LOCAL_RANK"))
    else:                                          # torchrun / accelerate launch
        r, w, l = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]), int(os.environ["LOCAL_RANK"])
    run(r, w, l, a)
