"""Small DDP (gloo, CPU) training job whose ranks write their OWN log files with Python's logging.

Rank/world come from the environment (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT) as set by torchrun,
by spawn_launch.py (mp.spawn) or by shell_launch.sh (a shell loop of `python` processes).

--layout picks how each rank's log files look (all under --log-dir):
  rotating   rank{r}.log + RotatingFileHandler backups rank{r}.log.1, .2 ... (small maxBytes)
  gzip       like rotating, but a namer/rotator gzips the backups: rank{r}.log.1.gz ...
  timed      TimedRotatingFileHandler(when='S'): rank{r}.log + rank{r}.log.YYYY-mm-dd_HH-MM-SS
  perdir     one directory per rank: rank_{r}/train.log
  hostrank   per-host-and-rank names: node{n}-rank{r}.log (n = NODE_RANK or r // LOCAL_WORLD)
  jsonl      python-json-logger, one file per process named <host>-<pid>.jsonl, rank only as a field
  jsonl-hand hand-written json.dumps formatter, every rank appends to one shared events.jsonl
  alllog     rank{r}.log per rank plus a shared all.log written by every rank
  tqdm       rank{r}.log with a tqdm progress bar written into the same file

--scenario picks the fault induced on --fail-rank at --fail-step:
  raise       KeyError (or ValueError with --exc value) in the data loading code
  sigkill     os.kill(own pid, SIGKILL)
  hang        sleeps before the metric all_reduce for much longer than the process-group timeout
  mismatch    all_reduces a metric tensor of a different size than the other ranks
  extra       calls an extra broadcast the other ranks do not call
  compile-cxx sets torch._inductor.config.cpp.cxx to a missing compiler before torch.compile runs
  compile-fg  compiles with fullgraph=True a forward that branches on data only on that rank
  hostoom     joins the memory cgroup named by $H91A_CGROUP, then allocates and touches host memory
"""
import argparse
import gzip
import json
import logging
import logging.handlers
import os
import shutil
import signal
import socket
import sys
import time
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn as nn

LAYOUTS = ["rotating", "gzip", "timed", "perdir", "hostrank", "jsonl", "jsonl-hand", "alllog", "tqdm"]
SCENARIOS = ["none", "raise", "sigkill", "hang", "mismatch", "extra", "compile-cxx", "compile-fg", "hostoom"]


def parse_args(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("--layout", choices=LAYOUTS, default="rotating")
    p.add_argument("--scenario", choices=SCENARIOS, default="none")
    p.add_argument("--fail-rank", type=int, default=1)
    p.add_argument("--fail-step", type=int, default=5)
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--log-dir", default="logs")
    p.add_argument("--max-bytes", type=int, default=4096)
    p.add_argument("--timed-backups", type=int, default=0, help="backupCount of the timed layout (0: keep all)")
    p.add_argument("--pg-timeout", type=int, default=20)
    p.add_argument("--step-sleep", type=float, default=0.0)
    p.add_argument("--exc", choices=["key", "value"], default="key")
    p.add_argument("--no-log-exc", action="store_true", help="do not log the traceback into the rank's file")
    p.add_argument("--console", action="store_true", help="also log INFO to the console on rank 0")
    p.add_argument("--no-ddp", action="store_true", help="average gradients by hand instead of DDP")
    return p.parse_args(argv)


class RankFilter(logging.Filter):
    def __init__(self, rank):
        super().__init__()
        self.rank = rank

    def filter(self, record):
        record.rank = self.rank
        return True


class HandJsonFormatter(logging.Formatter):
    """json.dumps formatter written by hand: one JSON object per line."""

    def format(self, record):
        d = {"ts": self.formatTime(record, "%Y-%m-%dT%H:%M:%S"), "level": record.levelname,
             "logger": record.name, "rank": getattr(record, "rank", None), "pid": record.process,
             "msg": record.getMessage()}
        if record.exc_info:
            d["exc_info"] = self.formatException(record.exc_info)
        return json.dumps(d)


def gz_namer(name):
    return name + ".gz"


def gz_rotator(source, dest):
    with open(source, "rb") as fs, gzip.open(dest, "wb") as fd:
        shutil.copyfileobj(fs, fd)
    os.remove(source)


def setup_logging(args, rank, world):
    d = args.log_dir
    os.makedirs(d, exist_ok=True)
    log = logging.getLogger("train")
    log.setLevel(logging.INFO)
    log.propagate = False
    log.addFilter(RankFilter(rank))
    fmt = logging.Formatter("%(asctime)s %(levelname)s [rank%(rank)d] %(name)s: %(message)s")
    handlers = []
    stream = None
    if args.layout == "rotating":
        handlers.append(logging.handlers.RotatingFileHandler(f"{d}/rank{rank}.log", maxBytes=args.max_bytes,
                                                             backupCount=6))
    elif args.layout == "gzip":
        h = logging.handlers.RotatingFileHandler(f"{d}/rank{rank}.log", maxBytes=args.max_bytes, backupCount=6)
        h.namer, h.rotator = gz_namer, gz_rotator
        handlers.append(h)
    elif args.layout == "timed":
        handlers.append(logging.handlers.TimedRotatingFileHandler(f"{d}/rank{rank}.log", when="S", interval=2,
                                                                  backupCount=args.timed_backups))
    elif args.layout == "perdir":
        os.makedirs(f"{d}/rank_{rank}", exist_ok=True)
        handlers.append(logging.FileHandler(f"{d}/rank_{rank}/train.log"))
    elif args.layout == "hostrank":
        local_world = int(os.environ.get("LOCAL_WORLD_SIZE", "2"))
        node = int(os.environ.get("NODE_RANK", rank // local_world))
        handlers.append(logging.FileHandler(f"{d}/node{node}-rank{rank}.log"))
    elif args.layout == "jsonl":
        from pythonjsonlogger import jsonlogger
        h = logging.FileHandler(f"{d}/{socket.gethostname()}-{os.getpid()}.jsonl")
        h.setFormatter(jsonlogger.JsonFormatter("%(asctime)s %(levelname)s %(name)s %(rank)s %(message)s"))
        handlers.append(h)
    elif args.layout == "jsonl-hand":
        h = logging.FileHandler(f"{d}/events.jsonl")
        h.setFormatter(HandJsonFormatter())
        handlers.append(h)
    elif args.layout == "alllog":
        handlers.append(logging.FileHandler(f"{d}/rank{rank}.log"))
        handlers.append(logging.FileHandler(f"{d}/all.log"))
    elif args.layout == "tqdm":
        stream = open(f"{d}/rank{rank}.log", "a", buffering=1)
        handlers.append(logging.StreamHandler(stream))
    for h in handlers:
        if h.formatter is None:
            h.setFormatter(fmt)
        log.addHandler(h)
    if args.console and rank == 0:
        c = logging.StreamHandler(sys.stdout)
        c.setFormatter(fmt)
        log.addHandler(c)
    return log, stream


class Net(nn.Module):
    def __init__(self, data_dependent=False):
        super().__init__()
        self.fc1 = nn.Linear(32, 64)
        self.fc2 = nn.Linear(64, 8)
        self.data_dependent = data_dependent

    def forward(self, x):
        h = torch.relu(self.fc1(x))
        if self.data_dependent and h.mean() > 0.1:  # branch on a tensor value: a graph break
            h = h * 0.5
        return self.fc2(h)


class ShardedDataset:
    """Maps sample keys to tensors; the failing rank gets a key that is not in its index."""

    def __init__(self, rank, n=4096):
        g = torch.Generator().manual_seed(rank)
        self.x = torch.randn(n, 32, generator=g)
        self.y = torch.randint(0, 8, (n,), generator=g)
        self.index = {f"shard_{rank:02d}/sample_{i:05d}": i for i in range(n)}

    def get(self, key):
        i = self.index[key]
        return self.x[i], self.y[i]


def load_batch(ds, rank, step, bs, args, failing):
    keys = [f"shard_{rank:02d}/sample_{(step * bs + j) % 4096:05d}" for j in range(bs)]
    if failing and args.scenario == "raise":
        if args.exc == "key":
            keys[3] = f"shard_{rank:02d}/sample_{4096 + step:05d}"  # a stale manifest entry
        else:
            raise ValueError(f"corrupt record in shard_{rank:02d}: expected 32 features, got 31")
    xs, ys = zip(*(ds.get(k) for k in keys))
    return torch.stack(xs), torch.stack(ys)


def join_cgroup(log):
    cg = os.environ["H91A_CGROUP"]
    with open(os.path.join(cg, "cgroup.procs"), "w") as f:
        f.write(str(os.getpid()))
    with open(os.path.join(cg, "memory.limit_in_bytes")) as f:
        lim = int(f.read())
    log.info("joined memory cgroup %s (limit %d MiB)", cg, lim >> 20)


def main(argv=None):
    args = parse_args(argv)
    rank = int(os.environ["RANK"])
    world = int(os.environ["WORLD_SIZE"])
    log, stream = setup_logging(args, rank, world)
    failing = rank == args.fail_rank
    log.info("starting rank %d/%d pid=%d host=%s layout=%s", rank, world, os.getpid(), socket.gethostname(),
             args.layout)
    if failing and args.scenario == "hostoom":
        join_cgroup(log)
    dist.init_process_group("gloo", timeout=timedelta(seconds=args.pg_timeout))
    log.info("process group initialised (backend=gloo, timeout=%ds)", args.pg_timeout)
    torch.manual_seed(0)
    net = Net(data_dependent=failing and args.scenario == "compile-fg")
    cnet = net
    if args.scenario in ("compile-cxx", "compile-fg"):
        # a fresh per-rank inductor cache, so no rank reuses another rank's compiled artifacts
        os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", os.path.abspath(f".inductor_cache/rank{rank}"))
        import torch._inductor.config as icfg
        if failing and args.scenario == "compile-cxx":
            icfg.cpp.cxx = ("/nonexistent/g++",)  # this node's toolchain path is wrong
        log.info("compiling model with torch.compile (fullgraph=%s)", args.scenario == "compile-fg")
        cnet = torch.compile(net, fullgraph=args.scenario == "compile-fg")
    else:
        cnet = net
    if args.no_ddp:
        for prm in net.parameters():
            dist.broadcast(prm.data, src=0)
        model = cnet
    else:
        model = nn.parallel.DistributedDataParallel(cnet)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    ds = ShardedDataset(rank)
    bar = None
    if stream is not None:
        from tqdm import tqdm
        bar = tqdm(total=args.steps, desc=f"rank{rank} train", file=stream, mininterval=0, ascii=True)
    hog = []
    step = 0
    try:
        for step in range(1, args.steps + 1):
            x, y = load_batch(ds, rank, step, 16, args, failing and step == args.fail_step)
            if failing and step == args.fail_step and args.scenario == "sigkill":
                os.kill(os.getpid(), signal.SIGKILL)
            if failing and args.scenario == "hostoom" and step >= args.fail_step:
                # a cache that grows without bound: 256 MiB more every step, touched
                hog.append(torch.ones(64 * 1024 * 1024, dtype=torch.float32))
                log.info("feature cache now %d MiB", len(hog) * 256)
            out = model(x)
            loss = nn.functional.cross_entropy(out, y)
            opt.zero_grad()
            loss.backward()
            if args.no_ddp:
                for prm in net.parameters():
                    dist.all_reduce(prm.grad)
                    prm.grad /= world
            opt.step()
            metric = torch.tensor([loss.item(), float(y.numel())])
            if failing and step == args.fail_step and args.scenario == "hang":
                log.info("refreshing data manifest")
                time.sleep(args.pg_timeout * 4)
            if failing and step == args.fail_step and args.scenario == "mismatch":
                metric = torch.tensor([loss.item(), float(y.numel()), 0.0])  # extra field only here
            if failing and step == args.fail_step and args.scenario == "extra":
                dist.broadcast(torch.zeros(4), src=rank)
            dist.all_reduce(metric)
            log.info("step %d/%d loss %.4f global_loss %.4f", step, args.steps, loss.item(), metric[0].item() / world)
            if bar is not None:
                bar.update(1)
                bar.set_postfix(loss=f"{loss.item():.3f}")
            if args.step_sleep:
                time.sleep(args.step_sleep)
    except Exception:
        if not args.no_log_exc:
            log.exception("training failed at step %d", step)
        raise
    finally:
        if bar is not None:
            bar.close()
    log.info("training finished")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
