"""Round 33a training job: tiny DDP model on CPU/gloo whose ONLY rank marker is the job's own log format.

The launchers used (plain torchrun without --tee/--log-dir, torch.multiprocessing.spawn, mpirun without
--tag-output) add no per-line prefix, so a line's rank is whatever the logging setup chosen by --fmt prints.

Usage (rank/world come from the launcher):
  torchrun --nproc-per-node 4 job.py --fmt logfmt --scenario raise --fault-rank 2 --step 4
  mpirun -np 4 -x MASTER_ADDR -x MASTER_PORT python job.py ...      (rank from OMPI_COMM_WORLD_RANK)
  spawn_main.py calls run(rank, world, argv) through torch.multiprocessing.spawn

--fmt     (see FORMATS below)            --exc   torch | plain | logexc | logexc-plain | hook
  torch : leave torch's own excepthook (init_process_group wraps sys.excepthook: traceback lines get "[rankN]: ")
  plain : after init the job reinstalls Python's default sys.excepthook (as a crash-reporter setup would), so an
          uncaught exception gives a bare Python traceback with no prefix
  logexc: try/except around main() logs it with logger.exception(...) and re-raises (torch's hook then prints it)
  logexc-plain: logexc + plain
  hook  : sys.excepthook (installed before init) sends every traceback line through the logger, so each line
          carries the log prefix; torch's wrapper finds nothing on stderr to prefix
--scenario  none | raise | sigkill | hang | mismatch
  raise   : fault rank raises KeyError in its data loading at step k
  sigkill : fault rank SIGKILLs itself at step k (no traceback)
  hang    : fault rank sleeps 120 s before step k's forward/backward -> the others time out in DDP's allreduce
  mismatch: fault rank all_reduces a metrics tensor of 60 elements while the others use 64, at step k
  none    : healthy but noisy (UserWarning, a caught+logged optional-import error, a slow-step warning)
"""
import argparse
import json
import logging
import multiprocessing
import os
import signal
import sys
import time
import traceback
import warnings
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn as nn

STEPS = 8
PG_TIMEOUT_S = 20
FORMATS = ["asctime_r", "logfmt", "json", "structlog", "loguru", "rank_slash", "worker", "frac", "hostrank",
           "loggername", "procname", "rank0only", "accelerate", "angle", "gpu"]


class PerLineFormatter(logging.Formatter):
    """Formatter that repeats the prefix on every line of a multi-line message (used by --exc hook formats)."""

    def format(self, record):
        s = super().format(record)
        first, *rest = s.split("\n")
        if not rest:
            return s
        prefix = first[: len(first) - len(record.getMessage().split("\n")[0])]
        return "\n".join([first] + [prefix + line for line in rest])


class LogfmtFormatter(logging.Formatter):
    def format(self, record):
        msg = record.getMessage().replace('"', '\\"')
        s = f'ts={self.formatTime(record, "%Y-%m-%dT%H:%M:%S")} rank={record.rank} level={record.levelname.lower()} ' \
            f'logger={record.name} msg="{msg}"'
        if record.exc_info:
            exc = self.formatException(record.exc_info).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
            s += f' exc="{exc}"'
        return s


class JsonFormatter(logging.Formatter):
    def format(self, record):
        d = {"time": self.formatTime(record), "level": record.levelname, "rank": record.rank,
             "world_size": record.world, "logger": record.name, "message": record.getMessage()}
        if record.exc_info:
            d["exc_info"] = self.formatException(record.exc_info)
        return json.dumps(d)


class Log:
    """Uniform facade over stdlib logging / structlog / loguru / accelerate."""

    def __init__(self, fmt, rank, world):
        self.fmt, self.rank, self.world = fmt, rank, world
        self.kind = "std"
        handler = logging.StreamHandler(sys.stdout if fmt not in ("json", "logfmt") else sys.stderr)
        extra_filter = logging.Filter()
        extra_filter.filter = lambda r: setattr(r, "rank", rank) or setattr(r, "world", world) or True
        handler.addFilter(extra_filter)
        name = "train"
        level = logging.INFO
        if fmt == "asctime_r":
            f = logging.Formatter(f"%(asctime)s [R{rank}] %(levelname)s %(message)s")
        elif fmt == "logfmt":
            f = LogfmtFormatter()
        elif fmt == "json":
            f = JsonFormatter()
        elif fmt == "rank_slash":
            f = PerLineFormatter(f"[Rank {rank}/{world}] %(asctime)s %(levelname)-7s %(message)s")
        elif fmt == "worker":
            f = PerLineFormatter(f"[worker-{rank}] %(levelname)s %(message)s")
        elif fmt == "gpu":
            f = logging.Formatter(f"%(asctime)s [GPU{rank}] %(message)s", "%H:%M:%S")
        elif fmt == "angle":
            f = logging.Formatter(f"<{rank}> %(message)s")
        elif fmt == "frac":
            f = PerLineFormatter(f"{rank}/{world} | %(asctime)s | %(levelname)s | %(message)s", "%H:%M:%S")
        elif fmt == "hostrank":
            f = logging.Formatter(f"host-a:{rank} | %(levelname).1s %(asctime)s %(message)s", "%m%d %H:%M:%S")
        elif fmt == "loggername":
            name = f"train.rank{rank}"
            f = logging.Formatter("%(asctime)s %(name)s %(levelname)s: %(message)s")
        elif fmt == "procname":
            multiprocessing.current_process().name = f"Worker-{rank}"
            f = logging.Formatter("%(asctime)s %(processName)s %(levelname)s %(message)s")
        elif fmt == "rank0only":
            # rank 0 logs; the other ranks only show WARNING+ (in practice: nothing but their tracebacks)
            f = logging.Formatter("%(asctime)s | %(levelname)s | %(message)s")
            level = logging.INFO if rank == 0 else logging.ERROR
        elif fmt == "accelerate":
            f = logging.Formatter("%(asctime)s - %(levelname)s - %(name)s - %(message)s",
                                  "%m/%d/%Y %H:%M:%S")
        elif fmt in ("structlog", "loguru"):
            f = None
        else:
            raise SystemExit(f"unknown --fmt {fmt}")
        if f is not None:
            handler.setFormatter(f)
            root = logging.getLogger()
            root.handlers[:] = [handler]
            root.setLevel(level)
        self.std = logging.getLogger(name)
        if fmt == "structlog":
            import structlog
            self.kind = "structlog"
            structlog.configure(processors=[structlog.processors.add_log_level,
                                            structlog.processors.TimeStamper(fmt="iso"),
                                            structlog.processors.format_exc_info,
                                            structlog.processors.KeyValueRenderer(
                                                key_order=["timestamp", "level", "rank", "event"])],
                                logger_factory=structlog.PrintLoggerFactory(sys.stdout))
            self.sl = structlog.get_logger().bind(rank=rank)
        elif fmt == "loguru":
            from loguru import logger
            self.kind = "loguru"
            logger.remove()
            logger.add(sys.stderr, colorize=False, backtrace=False, diagnose=False,
                       format="{time:YYYY-MM-DD HH:mm:ss.SSS} | {level: <8} | rank{extra[rank]} | {message}")
            self.lg = logger.bind(rank=rank)
        elif fmt == "accelerate":
            from accelerate.logging import get_logger
            self.kind = "accelerate"
            self.acc = get_logger("train")

    def _emit(self, level, msg, exc=False, **kv):
        text = msg + "".join(f" {k}={v}" for k, v in kv.items())
        if self.kind == "structlog":
            getattr(self.sl, level)(msg, exc_info=exc, **kv)
        elif self.kind == "loguru":
            (self.lg.opt(exception=True) if exc else self.lg).log(level.upper(), text)
        elif self.kind == "accelerate":
            getattr(self.acc, level)(text, main_process_only=False, exc_info=exc)
        else:
            getattr(self.std, level)(text, exc_info=exc)

    def info(self, msg, **kv):
        self._emit("info", msg, **kv)

    def warning(self, msg, **kv):
        self._emit("warning", msg, **kv)

    def error(self, msg, **kv):
        self._emit("error", msg, **kv)

    def exception(self, msg):
        self._emit("error", msg, exc=True)


def load_batch(step, rank, args, table):
    """Data loading; the raise scenario looks up a shard key that is missing from this rank's index."""
    key = f"shard-{step:04d}/sample-{(step * 131 + 17) % 1000:05d}"
    if args.scenario == "raise" and rank == args.fault_rank and step == args.step:
        key += ".partial"
    return table[key] if key.endswith(".partial") else torch.randn(16, 32)


def train(rank, world, args, log):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 1))
    ddp = nn.parallel.DistributedDataParallel(model)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.01)
    table = {}
    log.info("model ready", params=sum(p.numel() for p in model.parameters()), world_size=world)
    if args.scenario == "none":
        warnings.warn("torch.utils.data: num_workers=0 with persistent_workers=True is ignored", UserWarning)
        try:
            import tensorboardX  # noqa: F401  (optional)
        except ImportError:
            log.exception("optional tensorboard writer unavailable, continuing without it")
    for step in range(1, STEPS + 1):
        t0 = time.time()
        if rank == args.fault_rank and step == args.step:
            if args.scenario == "sigkill":
                os.kill(os.getpid(), signal.SIGKILL)
            if args.scenario == "hang":
                time.sleep(120)  # silent stall before the collective (e.g. a stuck filesystem read)
        x = load_batch(step, rank, args, table)
        loss = ddp(x).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        # metrics = 4 scalars + a 60-bin activation histogram; the mismatch rank builds a 56-bin histogram
        bins = 56 if (args.scenario == "mismatch" and rank == args.fault_rank and step == args.step) else 60
        metrics = torch.cat([torch.tensor([loss.item(), 1.0, float(step), 0.0]), torch.zeros(bins)])
        dist.all_reduce(metrics)
        log.info(f"step {step}/{STEPS}", loss=f"{loss.item():.4f}", avg_loss=f"{metrics[0].item() / world:.4f}",
                 lr=0.01, step_time_s=f"{time.time() - t0:.3f}")
        if args.scenario == "none" and step == 5:
            log.warning("step time above 2x median, possible straggler", step=step)
        time.sleep(0.3)
    dist.barrier()
    log.info("training finished")


def run(rank, world, argv):
    args = parse(argv)
    log = Log(args.fmt, rank, world)
    if args.exc == "hook":
        def hook(t, v, tb):
            for line in "".join(traceback.format_exception(t, v, tb)).rstrip("\n").split("\n"):
                log.error(line)
        sys.excepthook = hook

    def body():
        if args.fmt == "accelerate":
            from accelerate import PartialState
            PartialState(cpu=True, backend="gloo", timeout=timedelta(seconds=PG_TIMEOUT_S))
        else:
            dist.init_process_group("gloo", rank=rank, world_size=world, timeout=timedelta(seconds=PG_TIMEOUT_S))
        if args.exc in ("plain", "logexc-plain"):
            sys.excepthook = sys.__excepthook__
        train(rank, world, args, log)
        dist.destroy_process_group()

    if args.exc.startswith("logexc"):
        try:
            body()
        except BaseException:
            log.exception("fatal error in training loop")
            raise
    else:
        body()


def parse(argv):
    p = argparse.ArgumentParser()
    p.add_argument("--fmt", required=True, choices=FORMATS)
    p.add_argument("--exc", default="torch", choices=["torch", "plain", "logexc", "logexc-plain", "hook"])
    p.add_argument("--scenario", default="none", choices=["none", "raise", "sigkill", "hang", "mismatch"])
    p.add_argument("--fault-rank", type=int, default=-1)
    p.add_argument("--step", type=int, default=4)
    return p.parse_args(argv)


if __name__ == "__main__":
    if "OMPI_COMM_WORLD_RANK" in os.environ:      # mpirun
        r, w = int(os.environ["OMPI_COMM_WORLD_RANK"]), int(os.environ["OMPI_COMM_WORLD_SIZE"])
    else:                                          # torchrun
        r, w = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    run(r, w, sys.argv[1:])
