#!/usr/bin/env python3
"""Round 28b: a small DDP (gloo, CPU) training job whose failure is rendered by another renderer or in another shape.

Launch: `python job28b.py ...` (single process), `torchrun --nproc-per-node 3 job28b.py ...` or
`python job28b.py --spawn 3 --port P ...` (torch.multiprocessing.spawn).
--renderer  how log lines and the failure are printed:
   plain     logging + the default Python traceback (sys.excepthook)
   rich      rich.logging.RichHandler + rich.traceback.install(show_locals=False) (boxed traceback on the uncaught error)
   loguru    loguru logger; train() wrapped in @logger.catch(onerror=exit 1) (loguru's own exception format)
   structlog structlog ConsoleRenderer; failure logged with log.exception(...) then sys.exit(1)
   structjson structlog JSONRenderer + dict_tracebacks (the exception as a JSON object); then sys.exit(1)
--fault     what rank --fail-rank does at step --fail-step:
   keyerror   KeyError looking up a shard in the shard cache
   valueerror ValueError: a batch with the wrong feature width
   cause      FileNotFoundError re-raised as RuntimeError("could not load shard ...") from e (direct cause)
   context    FileNotFoundError, then in the except block raise RuntimeError("data loader failed") (implicit context)
   group      asyncio.TaskGroup prefetcher: one prefetch task raises ValueError -> ExceptionGroup
   compile    torch.compile(fullgraph=True) of a forward with a data-dependent `if` (only that rank compiles it)
   segv       faulthandler.enable(); ctypes.string_at(0) -> Fatal Python error: Segmentation fault
   hang       that rank sleeps before the all_reduce; other ranks have faulthandler.dump_traceback_later(T, exit=True)
   handled    a ValueError on that rank is caught, logged with a traceback by the renderer and skipped (job succeeds)
   none       no fault
--tqdm      a tqdm bar per rank on stderr (mininterval=0, so one \\r update per step); --tqdm-leave 0: bars are
            cleared (\\r + blanks, no newline) when closed, so the traceback starts on the bar's line
"""
import argparse, asyncio, ctypes, faulthandler, logging, os, sys, time
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn as nn

A = None      # parsed args
LOG = None    # renderer-specific logger with .info(msg) / .exception(msg)


class _Std:
    """Uniform interface over logging / loguru / structlog."""
    def __init__(self, kind, rank):
        self.kind, self.rank = kind, rank
        if kind == "plain":
            logging.basicConfig(level=logging.INFO, stream=sys.stderr,
                                format=f"%(asctime)s [rank{rank}] %(levelname)s %(name)s: %(message)s")
            self.l = logging.getLogger("train")
        elif kind == "rich":
            from rich.logging import RichHandler
            from rich.traceback import install
            install(show_locals=False)
            logging.basicConfig(level=logging.INFO, format=f"[rank{rank}] %(message)s", datefmt="[%X]",
                                handlers=[RichHandler(rich_tracebacks=True)])
            self.l = logging.getLogger("train")
        elif kind == "loguru":
            from loguru import logger
            logger.remove()
            logger.add(sys.stderr, format="<green>{time:YYYY-MM-DD HH:mm:ss.SSS}</green> | <level>{level: <8}</level> | "
                       f"rank{rank} | " + "<cyan>{name}</cyan>:<cyan>{function}</cyan>:<cyan>{line}</cyan> - <level>{message}</level>")
            self.l = logger
        elif kind in ("structlog", "structjson"):
            import structlog
            if kind == "structlog":
                procs = [structlog.processors.add_log_level, structlog.processors.TimeStamper(fmt="iso"),
                         structlog.dev.ConsoleRenderer()]
            else:
                procs = [structlog.processors.add_log_level, structlog.processors.TimeStamper(fmt="iso"),
                         structlog.processors.dict_tracebacks, structlog.processors.JSONRenderer()]
            structlog.configure(processors=procs, logger_factory=structlog.PrintLoggerFactory(sys.stderr))
            self.l = structlog.get_logger().bind(rank=rank)

    def info(self, msg, **kw):
        if self.kind in ("structlog", "structjson"):
            self.l.info(msg, **kw)
        else:
            extra = " ".join(f"{k}={v}" for k, v in kw.items())
            self.l.info(f"{msg} {extra}".rstrip())

    def exception(self, msg, **kw):
        if self.kind in ("structlog", "structjson"):
            self.l.exception(msg, **kw)
        else:
            extra = " ".join(f"{k}={v}" for k, v in kw.items())
            self.l.exception(f"{msg} {extra}".rstrip())


def load_shard(step, rank):
    """The per-step data source; the injected faults live here."""
    f = A.fault if (rank == A.fail_rank and step == A.fail_step) else "none"
    cache = {f"shard-{s:05d}": s for s in range(A.steps) if not (f == "keyerror" and s == step)}
    if f == "keyerror":
        return torch.randn(16, 8) + cache[f"shard-{step:05d}"]
    if f == "valueerror":
        x = torch.randn(16, 12)
        if x.shape[1] != 8:
            raise ValueError(f"shard-{step:05d}: expected 8 features per sample, got {x.shape[1]}")
    if f == "cause":
        path = f"/data/train/shard-{step:05d}.pt"
        try:
            return torch.load(path)
        except FileNotFoundError as e:
            raise RuntimeError(f"could not load shard {step} ({path})") from e
    if f == "context":
        path = f"/data/train/shard-{step:05d}.pt"
        try:
            return torch.load(path)
        except FileNotFoundError:
            raise RuntimeError(f"data loader failed at step {step}")
    if f == "group":
        return asyncio.run(prefetch(step))
    if f == "segv":
        faulthandler.enable()
        ctypes.string_at(0)
    if f == "hang":
        time.sleep(A.hang_s)
    return torch.randn(16, 8)


async def prefetch(step):
    async def fetch(i):
        await asyncio.sleep(0.05 * i)
        if i == 2:
            raise ValueError(f"corrupt record in shard-{step:05d} part {i}: bad magic number 0x00000000")
        return torch.randn(16 // 4, 8)
    async with asyncio.TaskGroup() as tg:
        tasks = [tg.create_task(fetch(i)) for i in range(4)]
    return torch.cat([t.result() for t in tasks])


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.l1, self.l2 = nn.Linear(8, 16), nn.Linear(16, 1)

    def forward(self, x):
        h = torch.relu(self.l1(x))
        if h.mean() > 0.0:          # data-dependent branch: fullgraph=True cannot trace this
            h = h * 2
        return self.l2(h)


def train(rank, world):
    torch.manual_seed(0)
    model = Net()
    if A.fault == "compile" and rank == A.fail_rank:
        model = torch.compile(model, fullgraph=True)
    ddp = nn.parallel.DistributedDataParallel(model) if world > 1 else model
    opt = torch.optim.SGD(ddp.parameters(), lr=0.05)
    if A.fault == "hang" and rank != A.fail_rank:
        faulthandler.dump_traceback_later(A.watchdog_s, exit=True)
    it = range(A.steps)
    if A.tqdm:
        from tqdm import tqdm
        it = tqdm(it, desc=f"rank{rank} train", file=sys.stderr, mininterval=0, position=rank, leave=A.tqdm_leave)
    for step in it:
        x = load_shard(step, rank)
        if A.fault == "handled" and rank == A.fail_rank and step == A.fail_step:
            # handled: the shard is bad, logged with its traceback, replaced by a fallback batch (every rank still
            # runs the same collectives, so the job goes on and succeeds)
            try:
                raise ValueError(f"shard-{step:05d}: expected 8 features per sample, got 12")
            except ValueError:
                LOG.exception("bad shard, using a fallback batch", step=step)
                x = torch.randn(16, 8)
        y = x.sum(1, keepdim=True)
        loss = nn.functional.mse_loss(ddp(x), y)
        opt.zero_grad(); loss.backward(); opt.step()
        if world > 1:
            t = loss.detach().clone(); dist.all_reduce(t); lv = t.item() / world
        else:
            lv = loss.item()
        if not A.tqdm or rank == 0:
            LOG.info("train step", step=step, loss=f"{lv:.4f}")
        time.sleep(A.sleep)
    if A.fault == "hang":
        faulthandler.cancel_dump_traceback_later()
    LOG.info("training complete", steps=A.steps)


def run(rank, world):
    """Per-rank entry: renderer-specific failure handling around train()."""
    global LOG
    LOG = _Std(A.renderer, rank)
    if world > 1 and not dist.is_initialized():
        dist.init_process_group("gloo", rank=rank, world_size=world, timeout=timedelta(seconds=A.pg_timeout))
    LOG.info("starting", rank=rank, world_size=world, renderer=A.renderer, torch=torch.__version__)
    if A.renderer == "loguru":
        from loguru import logger
        logger.catch(onerror=lambda _e: sys.exit(1))(train)(rank, world)
    elif A.renderer in ("structlog", "structjson"):
        try:
            train(rank, world)
        except Exception:
            LOG.exception("training failed")
            sys.exit(1)
    else:
        train(rank, world)
    if world > 1:
        dist.destroy_process_group()


def spawn_entry(rank, world, args):
    global A
    A = args
    os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"] = "127.0.0.1", str(args.port)
    run(rank, world)


def main():
    global A
    p = argparse.ArgumentParser()
    p.add_argument("--renderer", default="plain")
    p.add_argument("--fault", default="none")
    p.add_argument("--fail-rank", type=int, default=1)
    p.add_argument("--fail-step", type=int, default=3)
    p.add_argument("--steps", type=int, default=8)
    p.add_argument("--sleep", type=float, default=0.2)
    p.add_argument("--tqdm", action="store_true")
    p.add_argument("--tqdm-leave", type=int, default=1)
    p.add_argument("--spawn", type=int, default=0)
    p.add_argument("--port", type=int, default=29600)
    p.add_argument("--pg-timeout", type=int, default=60)
    p.add_argument("--hang-s", type=float, default=120)
    p.add_argument("--watchdog-s", type=float, default=15)
    A = p.parse_args()
    if A.spawn:
        import torch.multiprocessing as mp
        mp.spawn(spawn_entry, args=(A.spawn, A), nprocs=A.spawn, join=True)
    elif "RANK" in os.environ:
        run(int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]))
    else:
        run(0, 1)


if __name__ == "__main__":
    main()
