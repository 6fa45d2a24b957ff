"""round75b: small DDP (gloo, CPU) job whose logs carry the rank in a *field* of a real logging setup,
not in a launcher prefix.  One rank can be made to fail on purpose.

Logging styles (--log-style):
  std        stdlib logging, Filter adds record.rank: '%(asctime)s [RANK %(rank)s] %(levelname)s %(name)s: %(message)s'
  adapter    stdlib logging through a LoggerAdapter(extra={'rank': r}), format '... rank=%(rank)s ...'
  jsonlog    python-json-logger JsonFormatter, one JSON object per line with a "rank" key
  jsondumps  hand-written Formatter doing json.dumps({...,"rank":r,...}) per record
  loguru     loguru with '{time} | {level} | rank={extra[rank]} | {message}'
  structlog  structlog KeyValueRenderer (timestamp=... level=... rank=... event=...)
  rich       rich.logging.RichHandler (rich_tracebacks=True), message prefixed '[RANK r]' by a Filter
  files      stdlib logging, each rank writes only to <--log-dir>/train_rank<r>.log (console keeps stderr)

Faults (--fault, on --bad-rank at --step):
  none      healthy run (a couple of ordinary warnings)
  raise     the data loader raises (--exc keyerror|valueerror|indexerror|filenotfound); logged with
            logger.exception in the training loop, then re-raised
  sigkill   os.kill(os.getpid(), SIGKILL): no traceback
  hang      time.sleep(--hang-s) in the data path, the other ranks hit the gloo timeout (--pg-timeout)
  mismatch  the metrics all_reduce uses a tensor with one more element on the bad rank
            (--mismatch-kind size) or the bad rank calls an extra broadcast (--mismatch-kind extra-bcast)
  nan       a NaN lands in the bad rank's batch; the finite-loss check raises FloatingPointError
Launch: torchrun ... train75b.py ARGS   or   python train75b.py --spawn N ARGS   (mp.spawn).
"""
import argparse
import datetime
import json
import logging
import os
import signal
import socket
import sys
import time

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


# ----------------------------------------------------------------------------------------------------
# logging setups; each returns an object with .info/.warning/.exception(msg, **fields)
class StdLog:
    def __init__(self, logger):
        self.l = logger

    @staticmethod
    def _fmt(msg, kv):
        return msg + ("" if not kv else " " + " ".join(f"{k}={v}" for k, v in kv.items()))

    def info(self, msg, **kv):
        self.l.info(self._fmt(msg, kv), stacklevel=2)

    def warning(self, msg, **kv):
        self.l.warning(self._fmt(msg, kv), stacklevel=2)

    def exception(self, msg, **kv):
        self.l.exception(self._fmt(msg, kv), stacklevel=2)


class RankFilter(logging.Filter):
    def __init__(self, rank):
        super().__init__()
        self.rank = rank

    def filter(self, record):
        record.rank = self.rank
        return True


class JsonLinesFormatter(logging.Formatter):
    """Hand-written JSON-lines formatter (one json.dumps per record)."""

    def format(self, record):
        d = {"ts": datetime.datetime.fromtimestamp(record.created).isoformat(timespec="milliseconds"),
             "level": record.levelname, "logger": record.name, "rank": getattr(record, "rank", None),
             "msg": record.getMessage()}
        for k in ("step", "loss", "lr", "epoch"):
            if hasattr(record, k):
                d[k] = getattr(record, k)
        if record.exc_info:
            d["exc_type"] = record.exc_info[0].__name__
            d["exc"] = self.formatException(record.exc_info)
        return json.dumps(d)


class JsonLog:
    """stdlib logger whose fields go to the JSON formatter through extra=."""

    def __init__(self, logger):
        self.l = logger

    def info(self, msg, **kv):
        self.l.info(msg, extra=kv)

    def warning(self, msg, **kv):
        self.l.warning(msg, extra=kv)

    def exception(self, msg, **kv):
        self.l.exception(msg, extra=kv)


class LoguruLog:
    def __init__(self, lg):
        self.l = lg

    def info(self, msg, **kv):
        self.l.opt(depth=1).info(StdLog._fmt(msg, kv))

    def warning(self, msg, **kv):
        self.l.opt(depth=1).warning(StdLog._fmt(msg, kv))

    def exception(self, msg, **kv):
        self.l.opt(depth=1).exception(StdLog._fmt(msg, kv))


class StructLog:
    def __init__(self, lg):
        self.l = lg

    def info(self, msg, **kv):
        self.l.info(msg, **kv)

    def warning(self, msg, **kv):
        self.l.warning(msg, **kv)

    def exception(self, msg, **kv):
        self.l.exception(msg, **kv)


def setup_logging(style, rank, world, log_dir):
    name = "trainer"
    if style in ("std", "files", "adapter", "jsonlog", "jsondumps", "rich"):
        logger = logging.getLogger(name)
        logger.setLevel(logging.INFO)
        logger.propagate = False
        if style == "std":
            h = logging.StreamHandler(sys.stdout)
            h.setFormatter(logging.Formatter("%(asctime)s [RANK %(rank)s] %(levelname)s %(name)s: %(message)s"))
            h.addFilter(RankFilter(rank))
        elif style == "adapter":
            h = logging.StreamHandler(sys.stderr)
            h.setFormatter(logging.Formatter(
                "%(asctime)s %(levelname)-7s rank=%(rank)s/%(world)s %(name)s - %(message)s"))
            logger.addHandler(h)
            return StdLog(logging.LoggerAdapter(logger, {"rank": rank, "world": world}))
        elif style == "files":
            os.makedirs(log_dir, exist_ok=True)
            h = logging.FileHandler(os.path.join(log_dir, f"train_rank{rank}.log"), mode="w")
            h.setFormatter(logging.Formatter(
                "%(asctime)s | rank %(rank)s | %(levelname)s | %(name)s | %(message)s"))
            h.addFilter(RankFilter(rank))
        elif style == "jsonlog":
            from pythonjsonlogger.json import JsonFormatter
            h = logging.StreamHandler(sys.stdout)
            h.setFormatter(JsonFormatter("%(asctime)s %(levelname)s %(name)s %(rank)s %(message)s",
                                         rename_fields={"asctime": "time", "levelname": "level"}))
            h.addFilter(RankFilter(rank))
            logger.addHandler(h)
            return JsonLog(logger)
        elif style == "jsondumps":
            h = logging.StreamHandler(sys.stdout)
            h.setFormatter(JsonLinesFormatter())
            h.addFilter(RankFilter(rank))
            logger.addHandler(h)
            return JsonLog(logger)
        elif style == "rich":
            from rich.console import Console
            from rich.logging import RichHandler
            h = RichHandler(console=Console(stderr=True, width=120), rich_tracebacks=True,
                            show_path=True, log_time_format="[%X]")
            h.setFormatter(logging.Formatter("[RANK %(rank)s] %(message)s"))
            h.addFilter(RankFilter(rank))
        logger.addHandler(h)
        return StdLog(logger)
    if style == "loguru":
        from loguru import logger as lg
        lg.remove()
        lg.configure(extra={"rank": rank})
        lg.add(sys.stderr, backtrace=False, diagnose=False, colorize=False,
               format="{time:YYYY-MM-DD HH:mm:ss.SSS} | {level: <8} | rank={extra[rank]} | {name}:{function}:{line} - {message}")
        return LoguruLog(lg)
    if style == "structlog":
        import structlog
        structlog.configure(
            processors=[structlog.contextvars.merge_contextvars,
                        structlog.processors.add_log_level,
                        structlog.processors.TimeStamper(fmt="iso"),
                        structlog.processors.format_exc_info,
                        structlog.processors.KeyValueRenderer(
                            key_order=["timestamp", "level", "rank", "event"], drop_missing=True)],
            logger_factory=structlog.PrintLoggerFactory(sys.stdout))
        structlog.contextvars.bind_contextvars(rank=rank)
        return StructLog(structlog.get_logger(name))
    raise SystemExit(f"unknown --log-style {style}")


# ----------------------------------------------------------------------------------------------------
class Net(nn.Module):
    def __init__(self, d_in=32, hidden=64, n_cls=10):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(d_in, hidden), nn.ReLU(), nn.Linear(hidden, n_cls))

    def forward(self, x):
        return self.body(x)


def load_batch(args, rank, step, gen):
    """Stand-in for a sharded data loader; the raise / hang / nan faults live here."""
    bad = rank == args.bad_rank and step == args.step
    if bad and args.fault == "raise":
        shard = f"shard_{rank:02d}"
        if args.exc == "keyerror":
            index = {f"{shard}/sample_{i:06d}": i for i in range(0, 170)}
            key = f"{shard}/sample_{step * 16 + 150:06d}"
            return index[key]
        if args.exc == "valueerror":
            raise ValueError(f"record 1187 in {shard}.bin has 31 features, expected 32")
        if args.exc == "indexerror":
            offsets = list(range(0, 96, 16))
            return offsets[step + 4]
        if args.exc == "filenotfound":
            open(f"/home/user/job/data/{shard}/part-{step:05d}.npy", "rb")
    if bad and args.fault == "hang":
        time.sleep(args.hang_s)      # e.g. a stuck NFS read; the other ranks wait in the DDP all_reduce
    x = torch.randn(16, 32, generator=gen)
    y = torch.randint(0, 10, (16,), generator=gen)
    if bad and args.fault == "nan":
        x[5, 7] = float("nan")       # a corrupted sample in this rank's shard
    return x, y


def train(rank, world, args):
    log = setup_logging(args.log_style, rank, world, args.log_dir)
    dist.init_process_group("gloo", rank=rank, world_size=world,
                            timeout=datetime.timedelta(seconds=args.pg_timeout))
    log.info("process group ready", backend="gloo", world_size=world, timeout_s=args.pg_timeout)
    torch.manual_seed(0)
    # DDP by default; --manual-grads averages gradients with explicit all_reduce calls instead
    # (needed with TORCH_DISTRIBUTED_DEBUG=DETAIL: DDP + DETAIL segfaults on this torch 2.13 CPU build)
    model = Net() if args.manual_grads else DDP(Net())
    if args.manual_grads:
        for prm in model.parameters():
            dist.broadcast(prm.data, src=0)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=4, gamma=0.5)
    gen = torch.Generator().manual_seed(1000 + rank)
    # --amp: the job was written for GPUs; on CPU the scaler warns and disables itself (an ordinary warning)
    scaler = torch.amp.GradScaler("cuda", enabled=args.amp)
    if args.fault == "none" and rank == 0:
        log.warning("dataset has 1000 samples, not divisible by world_size*batch; last 40 samples dropped",
                    world_size=world)
    try:
        for step in range(1, args.steps + 1):
            if args.fault == "sigkill" and rank == args.bad_rank and step == args.step:
                log.info("loading batch", step=step)
                sys.stdout.flush(); sys.stderr.flush()
                os.kill(os.getpid(), signal.SIGKILL)
            x, y = load_batch(args, rank, step, gen)
            out = model(x)
            loss = nn.functional.cross_entropy(out, y)
            if not torch.isfinite(loss):
                raise FloatingPointError(
                    f"non-finite loss ({loss.item()}) at step {step} on rank {rank}; aborting before backward")
            opt.zero_grad()
            scaler.scale(loss).backward()
            if args.manual_grads:
                for prm in model.parameters():
                    dist.all_reduce(prm.grad)
                    prm.grad /= world
            scaler.step(opt)
            scaler.update()
            sched.step()
            # metrics: per-class counts summed over ranks
            n_cls = 10
            if args.fault == "mismatch" and rank == args.bad_rank and step == args.step:
                if args.mismatch_kind == "size":
                    n_cls = 11           # this rank's label map has one extra class
                else:
                    flag = torch.zeros(1)
                    dist.broadcast(flag, src=rank)   # extra collective only this rank calls
            counts = torch.bincount(y, minlength=n_cls).float()
            stats = torch.cat([loss.detach().reshape(1), counts])
            dist.all_reduce(stats)
            avg = stats[0].item() / world
            if step % args.log_every == 0 or step == args.steps:
                log.info("train step", step=f"{step}/{args.steps}", loss=f"{avg:.4f}",
                         lr=f"{sched.get_last_lr()[0]:.4g}")
            time.sleep(args.step_sleep)
    except Exception:
        log.exception(f"training failed on rank {rank}", step=step)
        raise
    dist.barrier()
    log.info("training finished", steps=args.steps)
    dist.destroy_process_group()


def spawn_worker(rank, world, args):
    os.environ["RANK"] = str(rank)
    train(rank, world, args)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--log-style", default="std")
    p.add_argument("--log-dir", default="logs")
    p.add_argument("--fault", default="none", choices=["none", "raise", "sigkill", "hang", "mismatch", "nan"])
    p.add_argument("--exc", default="keyerror")
    p.add_argument("--mismatch-kind", default="size", choices=["size", "extra-bcast"])
    p.add_argument("--bad-rank", type=int, default=1)
    p.add_argument("--step", type=int, default=3)
    p.add_argument("--steps", type=int, default=8)
    p.add_argument("--log-every", type=int, default=1)
    p.add_argument("--step-sleep", type=float, default=0.2)
    p.add_argument("--hang-s", type=float, default=120)
    p.add_argument("--pg-timeout", type=float, default=25)
    p.add_argument("--manual-grads", action="store_true", help="no DDP: all_reduce the gradients by hand")
    p.add_argument("--amp", action="store_true", help="create a (CUDA) GradScaler; warns on CPU")
    p.add_argument("--spawn", type=int, default=0, help="use torch.multiprocessing.spawn with N processes")
    args = p.parse_args()
    if args.spawn:
        import torch.multiprocessing as mp
        s = socket.socket(); s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]; s.close()
        os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
        os.environ.setdefault("MASTER_PORT", str(port))
        mp.spawn(spawn_worker, args=(args.spawn, args), nprocs=args.spawn, join=True)
    else:
        train(int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]), args)


if __name__ == "__main__":
    main()
