"""DDP job started by torch.multiprocessing.spawn (gloo, CPU, env:// with MASTER_ADDR/PORT set by the parent),
logging structured JSON lines (one object per line with "ts", "level", "logger", "rank", "msg", like
python-json-logger / structlog setups print). Uncaught tracebacks are NOT converted: they reach stderr as
Python prints them (mp.spawn then re-raises the failing worker's traceback in the parent).

  raise : rank --bad-rank's augmentation lookup hits an unknown policy name at step --step -> KeyError
          (caught by the job's step wrapper, logged as a JSON "error" record with "exc", then re-raised).
  hang  : rank --bad-rank sleeps --sleep s before the per-step loss all_reduce at step --step (PG timeout
          --timeout s); the others time out.
"""
import argparse
import json
import logging
import os
import sys
import time
import traceback
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

p = argparse.ArgumentParser()
p.add_argument("--mode", required=True, choices=["raise", "hang"])
p.add_argument("--world", type=int, default=4)
p.add_argument("--bad-rank", type=int, required=True)
p.add_argument("--step", type=int, default=3)
p.add_argument("--steps", type=int, default=8)
p.add_argument("--port", type=int, default=29854)
p.add_argument("--timeout", type=int, default=20)
p.add_argument("--sleep", type=float, default=60)


class JsonFormatter(logging.Formatter):
    def __init__(self, rank):
        super().__init__()
        self.rank = rank

    def format(self, record):
        d = {"ts": self.formatTime(record, "%Y-%m-%dT%H:%M:%S") + f".{int(record.msecs):03d}",
             "level": record.levelname.lower(), "logger": record.name, "rank": self.rank,
             "msg": record.getMessage()}
        d.update(getattr(record, "fields", {}))
        if record.exc_info:
            d["exc"] = "".join(traceback.format_exception(*record.exc_info)).rstrip()
        return json.dumps(d)


AUGMENT = {"flip": lambda x: x.flip(1), "noise": lambda x: x + 0.01, "none": lambda x: x}


def worker(rank, args):
    h = logging.StreamHandler(sys.stdout)
    h.setFormatter(JsonFormatter(rank))
    logging.basicConfig(level=logging.INFO, handlers=[h])
    log = logging.getLogger("trainer")
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(args.port))
    dist.init_process_group("gloo", rank=rank, world_size=args.world, timeout=timedelta(seconds=args.timeout))
    log.info("process group ready", extra={"fields": {"world_size": args.world, "backend": "gloo"}})
    torch.manual_seed(0)
    model = DDP(nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 1)))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    for step in range(args.steps):
        t0 = time.time()
        g = torch.Generator().manual_seed(100 * rank + step)
        x = torch.randn(32, 16, generator=g)
        y = x.sum(1, keepdim=True) * 0.1
        policy = "flip" if step % 2 else "noise"
        if args.mode == "raise" and rank == args.bad_rank and step == args.step:
            policy = "randaug"                        # induced: a policy name this rank's config has but AUGMENT lacks
        try:
            x = AUGMENT[policy](x)
        except Exception:
            log.error("augmentation failed", exc_info=True, extra={"fields": {"step": step, "policy": policy}})
            raise
        loss = nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        avg = loss.detach().clone()
        if args.mode == "hang" and rank == args.bad_rank and step == args.step:
            time.sleep(args.sleep)                    # induced: a silent stall before the collective
        dist.all_reduce(avg)
        avg /= args.world
        log.info("step done", extra={"fields": {"step": step, "loss": round(loss.item(), 4),
                                                "avg_loss": round(avg.item(), 4),
                                                "step_time_s": round(time.time() - t0, 3)}})
        time.sleep(0.3)
    dist.barrier()
    log.info("training done")
    dist.destroy_process_group()


if __name__ == "__main__":
    a = p.parse_args()
    mp.spawn(worker, args=(a,), nprocs=a.world, join=True)
