"""round59b job: a small DDP model trained on CPU by 4 gloo ranks; one rank (CULPRIT, never 0) fails at step STEP.
What the LOG loses is chosen by the launcher command (run_all.sh) and by these switches:

  OUT=print        step lines via print() on stdout (block-buffered unless PYTHONUNBUFFERED is set, so a
                   SIGKILLed / os._exit()ed / SIGTERMed rank loses its last lines)
  OUT=rotate       step lines via logging to LOGDIR/rank<r>.log, RotatingFileHandler(maxBytes=MAXBYTES,
                   backupCount=BACKUPS) -> rank2.log, rank2.log.1, rank2.log.2 ...
  OUT=file         step lines via logging to LOGDIR/rank<r>.log (FileHandler)
  GZIP_AT_EXIT=1   an atexit hook gzips the rank's own log (rank<r>.log -> rank<r>.log.gz); it does not run
                   when the rank is SIGKILLed or SIGTERMed by the launcher, so those logs stay plain
  PRINT_RANKS=0    only rank 0 prints/logs its step lines (the usual "if rank == 0: print" pattern)
  ON_ERROR=os_exit the rank's top-level handler prints the traceback to stderr and calls os._exit(1)
                   (so buffered stdout is never flushed)
  EXTRA=n          n extra detail lines per step (data / timing), to make the logs longer
  GRAD_SYNC=manual gradients averaged by hand (all_reduce of every .grad) instead of DDP; used with
                   TORCH_DISTRIBUTED_DEBUG=DETAIL, which crashes (SIGSEGV) with DDP in this CPU build

Faults (FAULT): keyerror | valueerror (in the culprit's data loading), sigkill (os.kill(getpid(), SIGKILL), no
traceback), hang (the culprit's data fetch sleeps HANG_S > PG_TIMEOUT before the step's collectives),
sizemismatch (the culprit's per-step metrics all_reduce has 65 elements instead of 64), none.
"""
import atexit
import gzip
import logging
import logging.handlers
import os
import shutil
import signal
import sys
import time
import traceback
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

E = os.environ.get
FAULT = E("FAULT", "none")
CULPRIT = int(E("CULPRIT", "-1"))
STEP = int(E("STEP", "-1"))
NSTEPS = int(E("NSTEPS", "8"))
PG_TIMEOUT = int(E("PG_TIMEOUT", "15"))
HANG_S = float(E("HANG_S", "35"))
OUT = E("OUT", "print")
LOGDIR = E("LOGDIR", "logs")
MAXBYTES = int(E("MAXBYTES", "2048"))
BACKUPS = int(E("BACKUPS", "5"))
GZIP_AT_EXIT = E("GZIP_AT_EXIT") == "1"
PRINT_RANKS = E("PRINT_RANKS", "all")
ON_ERROR = E("ON_ERROR", "raise")
EXTRA = int(E("EXTRA", "0"))
STEP_SLEEP = float(E("STEP_SLEEP", "0.2"))
GRAD_SYNC = E("GRAD_SYNC", "ddp")     # ddp | manual (all_reduce of every .grad after backward)
BATCH, FEAT = 32, 16

log = logging.getLogger("train")


def setup_output(rank):
    """-> out(msg): how this rank reports its progress."""
    quiet = PRINT_RANKS != "all" and str(rank) not in PRINT_RANKS.split(",")
    if OUT == "print":
        def out(msg, level="INFO"):
            if not quiet:
                print(f"{time.strftime('%Y-%m-%d %H:%M:%S')} [rank{rank}] {level} {msg}")
        return out
    os.makedirs(LOGDIR, exist_ok=True)
    path = os.path.join(LOGDIR, f"rank{rank}.log")
    if OUT == "rotate":
        h = logging.handlers.RotatingFileHandler(path, maxBytes=MAXBYTES, backupCount=BACKUPS)
    else:
        h = logging.FileHandler(path)
    h.setFormatter(logging.Formatter(f"%(asctime)s [rank{rank}] %(levelname)s %(name)s: %(message)s"))
    log.addHandler(h)
    log.setLevel(logging.INFO)
    if quiet:
        log.disabled = True
    if GZIP_AT_EXIT:
        def compress():
            h.close()
            log.removeHandler(h)
            if os.path.exists(path):
                with open(path, "rb") as f, gzip.open(path + ".gz", "wb") as g:
                    shutil.copyfileobj(f, g)
                os.remove(path)
        atexit.register(compress)

    def out(msg, level="INFO"):
        log.log(getattr(logging, level), msg)
    return out


def load_batch(rank, step, out):
    """Synthetic shard reader; the culprit's fault is induced here (or in the metrics all_reduce)."""
    g = torch.Generator().manual_seed(1000 * rank + step)
    x = torch.randn(BATCH, FEAT, generator=g)
    rec = {"input": x, "target": (x.sum(1) > 0).long()}   # records of this shard use the new key 'target'
    if rank == CULPRIT and step == STEP:
        if FAULT == "keyerror":
            rec = {"input": x, "label_v1": rec["target"]}       # an old-schema record
            y = rec["target"]                                   # -> KeyError: 'target'
        elif FAULT == "valueerror":
            raise ValueError(f"shard-{rank:03d}.bin: record {step * BATCH + 7} has 15 features, expected {FEAT}")
        elif FAULT == "sigkill":
            os.kill(os.getpid(), signal.SIGKILL)
        elif FAULT == "hang":
            time.sleep(HANG_S)                                  # a stalled fetch; nothing is printed
    if EXTRA:
        out(f"data: shard-{rank:03d}.bin offset {step * BATCH} batch {tuple(x.shape)} pos_frac {rec['target'].float().mean():.3f}")
    return rec["input"], rec["target"]


def train(rank, world):
    out = setup_output(rank)
    dist.init_process_group("gloo", rank=rank, world_size=world, timeout=timedelta(seconds=PG_TIMEOUT))
    out(f"initialized gloo process group: rank {rank}/{world}, timeout {PG_TIMEOUT}s")
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(FEAT, 64), nn.ReLU(), nn.Linear(64, 2))
    if GRAD_SYNC == "ddp":
        model = DDP(model)
    else:                        # manual gradient averaging (DDP + TORCH_DISTRIBUTED_DEBUG=DETAIL segfaults here)
        for p in model.parameters():
            dist.broadcast(p.data, 0)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    lossf = nn.CrossEntropyLoss()
    out(f"model params {sum(p.numel() for p in model.parameters())}, steps {NSTEPS}, batch {BATCH}")
    for step in range(NSTEPS):
        t0 = time.time()
        x, y = load_batch(rank, step, out)
        logits = model(x)
        loss = lossf(logits, y)
        opt.zero_grad()
        loss.backward()
        if GRAD_SYNC != "ddp":
            for p in model.parameters():
                dist.all_reduce(p.grad)
                p.grad /= world
        gn = torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0)
        opt.step()
        acc = (logits.argmax(1) == y).float().mean()
        # per-step metrics averaged over ranks: loss, acc, feature means/stds, margin histogram (64 values)
        margin = (logits[:, 1] - logits[:, 0]).detach()
        m = torch.cat([torch.stack([loss.detach(), acc]), x.mean(0), x.std(0),
                       torch.histc(margin, bins=30, min=-3, max=3) / BATCH])
        if FAULT == "sizemismatch" and rank == CULPRIT and step == STEP:
            m = torch.cat([m, gn.reshape(1)])                 # one extra value (65) in the metrics all_reduce
        dist.all_reduce(m)
        m /= world
        dt = time.time() - t0
        out(f"epoch 0 step {step}/{NSTEPS} loss {loss.item():.4f} acc {acc.item():.3f} "
            f"mean_loss {m[0].item():.4f} grad_norm {gn.item():.3f} lr 5.0e-02 {BATCH / dt:.0f} samples/s")
        for i in range(max(0, EXTRA - 1)):
            out(f"timing: step {step} fwd {dt * 300:.2f}ms bwd {dt * 500:.2f}ms allreduce {dt * 200:.2f}ms (probe {i})")
        time.sleep(STEP_SLEEP)
    dist.barrier()
    out("training done, saving checkpoint ckpt/last.pt")
    dist.destroy_process_group()


def main(rank=None, world=None):
    rank = int(E("RANK")) if rank is None else rank
    world = int(E("WORLD_SIZE")) if world is None else world
    try:
        train(rank, world)
    except Exception:
        if OUT != "print":
            log.exception("rank %d: training failed", rank)
        if ON_ERROR == "os_exit":
            traceback.print_exc()
            sys.stderr.flush()
            os._exit(1)
        raise


if __name__ == "__main__":
    if E("RECORD") == "1":      # torchrun: torch.distributed.elastic's @record writes the error file
        from torch.distributed.elastic.multiprocessing.errors import record
        main = record(main)
    main()
