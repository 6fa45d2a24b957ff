"""job.py - a small DDP training job (gloo, CPU) with CARELESS output handling, on purpose.

Nothing here flushes or tags output with the rank:
  * the rank is printed once, in a startup banner, and never again;
  * per-step progress is print(..., end="") with a leading '\r' on stdout, which is block-buffered when
    stdout is a file or a pipe (no PYTHONUNBUFFERED), so it shows up late, after tracebacks, or never
    (a rank killed by a signal loses its buffer);
  * the per-step loss goes through logging to stderr (unbuffered), without any rank in the format.

Launch modes:
  python job.py --spawn N          mp.spawn N ranks from this process
  RANK=r WORLD_SIZE=N ... job.py   a shell loop or torchrun sets the env

Faults (env, all on ONE rank FAIL_RANK at step FAIL_STEP):
  FAULT=raise     load_batch() looks up a key that the shard record lacks -> KeyError
  FAULT=sigkill   the rank SIGKILLs itself (no traceback, stdout buffer lost)
  FAULT=hang      the rank sleeps 3x the process-group timeout before the metrics all_reduce
  FAULT=mismatch  the rank all_reduces a metrics tensor of 3+EXTRA elements (EXTRA=2 default) instead of 3
  NO_DDP=1        average gradients by hand instead of DDP (used with TORCH_DISTRIBUTED_DEBUG=DETAIL)
  FAULT=none      healthy run
  RECORD=1        (env launch only) wrap train() in torch.distributed.elastic's @record
"""
import datetime
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

FAULT = os.environ.get("FAULT", "none")
FAIL_RANK = int(os.environ.get("FAIL_RANK", "-1"))
FAIL_STEP = int(os.environ.get("FAIL_STEP", "3"))
STEPS = int(os.environ.get("STEPS", "8"))
EXTRA = int(os.environ.get("EXTRA", "2"))
NO_DDP = os.environ.get("NO_DDP") == "1"
PG_TIMEOUT = int(os.environ.get("PG_TIMEOUT", "15"))

logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
log = logging.getLogger("trainer")


def load_batch(rank, step):
    """Pretend data loading: every record has input/target, except the one we break."""
    g = torch.Generator().manual_seed(1000 * rank + step)
    record = {"input": torch.randn(32, 16, generator=g), "target": torch.randn(32, 4, generator=g)}
    if FAULT == "raise" and rank == FAIL_RANK and step == FAIL_STEP:
        record = {"input": record["input"], "label": record["target"]}  # shard written with an old schema
    return record["input"], record["target"]


def train(rank, world):
    dist.init_process_group("gloo", rank=rank, world_size=world,
                            timeout=datetime.timedelta(seconds=PG_TIMEOUT))
    # the ONLY line that names the rank
    print(f"==> worker up: rank {rank} of {world}, pid {os.getpid()}, host {socket.gethostname()}, "
          f"torch {torch.__version__}")
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))
    if not NO_DDP:
        model = DDP(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    log.info("model ready, %d params, %d steps", sum(p.numel() for p in model.parameters()), STEPS)
    for step in range(STEPS):
        x, y = load_batch(rank, step)
        if FAULT == "sigkill" and rank == FAIL_RANK and step == FAIL_STEP:
            os.kill(os.getpid(), signal.SIGKILL)
        loss = nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        if NO_DDP:  # hand-rolled gradient averaging (DDP under TORCH_DISTRIBUTED_DEBUG=DETAIL segfaults on this build)
            for p in model.parameters():
                dist.all_reduce(p.grad)
                p.grad /= world
        opt.step()
        # metrics all_reduce: [loss, n_samples, step]
        metrics = torch.tensor([loss.item(), float(x.shape[0]), float(step)])
        if FAULT == "mismatch" and rank == FAIL_RANK and step == FAIL_STEP:
            # this rank also packs a per-class histogram into the metrics tensor (3 + EXTRA elements instead of 3)
            metrics = torch.cat([metrics, torch.zeros(EXTRA)])
        if FAULT == "hang" and rank == FAIL_RANK and step == FAIL_STEP:
            time.sleep(3 * PG_TIMEOUT)
        dist.all_reduce(metrics)
        bar = "#" * (step + 1) + "." * (STEPS - step - 1)
        print(f"\rtrain [{bar}] {step + 1}/{STEPS}", end="")
        time.sleep(0.3)
        log.info("step %d loss %.4f mean_loss %.4f", step, loss.item(), metrics[0].item() / world)
    print()
    print("training finished")
    dist.barrier()
    dist.destroy_process_group()


def _spawned(rank, world):
    train(rank, world)


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--spawn":
        import torch.multiprocessing as mp
        n = int(sys.argv[2])
        os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
        os.environ.setdefault("MASTER_PORT", "29641")
        log.info("spawning %d workers", n)
        mp.spawn(_spawned, args=(n,), nprocs=n)
    elif os.environ.get("RECORD") == "1":
        # torchrun runs with --redirects: wrap in @record so the launcher's summary carries the traceback
        from torch.distributed.elastic.multiprocessing.errors import record
        record(train)(int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]))
    else:
        train(int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]))
