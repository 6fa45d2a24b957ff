#!/usr/bin/env python3
"""Tiny data-parallel training job (gloo, CPU) used by the round98a output-plumbing cases.

One rank (--fault-rank) can be made to fail at step --fault-step:
  raise     the rank raises an exception in its own data-loading code (--exc picks KeyError/ValueError/IndexError)
  sigkill   the rank SIGKILLs itself (no traceback)
  hang      the rank sleeps --hang-s seconds before the loss all_reduce (> process-group --timeout)
  mismatch  the rank all_reduces a tensor of another size (2 instead of 1) for the loss
  compile   the rank's model has a data-dependent branch and is torch.compile'd with fullgraph=True
The launcher decides where stdout/stderr go; this script only chooses how it writes:
  --emit print|logging  per-step lines via print() or a logging.StreamHandler(sys.stdout)
                        (a logging formatter colours the level name when stdout is a TTY)
  --tqdm                rank 0 draws a tqdm bar (stderr)
  --shared-file PATH    each rank opens PATH with O_APPEND itself, unbuffered, and points its fds 1 and 2 there
  --catch               exceptions are caught and logged with logger.exception() (to stdout) then exit(1)
Works under torchrun / a shell loop (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT in env) or mp.spawn (worker()).
"""
import argparse, datetime, io, logging, os, signal, sys, time

import torch
import torch.distributed as dist
import torch.nn as nn


def parse(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("--world", type=int, default=int(os.environ.get("WORLD_SIZE", 3)))
    p.add_argument("--steps", type=int, default=8)
    p.add_argument("--fault", default="none",
                   choices=["none", "raise", "sigkill", "hang", "mismatch", "compile"])
    p.add_argument("--fault-rank", type=int, default=1)
    p.add_argument("--fault-step", type=int, default=3)
    p.add_argument("--exc", default="KeyError", choices=["KeyError", "ValueError", "IndexError"])
    p.add_argument("--timeout", type=int, default=15)
    p.add_argument("--hang-s", type=float, default=35.0)
    p.add_argument("--emit", default="logging", choices=["print", "logging"])
    p.add_argument("--tqdm", action="store_true")
    p.add_argument("--shared-file", default=None)
    p.add_argument("--catch", action="store_true")
    p.add_argument("--step-sleep", type=float, default=0.3)
    return p.parse_args(argv)


class ColorFormatter(logging.Formatter):
    COLORS = {"DEBUG": "\033[36m", "INFO": "\033[32m", "WARNING": "\033[33m", "ERROR": "\033[31m"}

    def format(self, record):
        s = super().format(record)
        c = self.COLORS.get(record.levelname)
        return s.replace(record.levelname, f"{c}{record.levelname}\033[0m", 1) if c else s


class Net(nn.Module):
    def __init__(self, guard=False):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(16, 32), nn.Linear(32, 1)
        self.guard = guard  # only the faulty rank of the 'compile' fault gets guard=True

    def forward(self, x):
        h = self.fc1(x).relu()
        if self.guard and h.abs().max() > 100.0:  # data-dependent branch: fullgraph=True cannot trace it
            h = h.clamp(-100.0, 100.0)
        return self.fc2(h)


class ShardIndex:
    """Per-rank sample index; the faulty rank's lookup fails at the fault step (the 'raise' fault)."""

    def __init__(self, rank, args):
        self.rank, self.args = rank, args
        self.keys = {f"shard{rank:02d}-{i:05d}": i for i in range(64)}

    def batch(self, step):
        a = self.args
        key = f"shard{self.rank:02d}-{step * 8:05d}"
        if a.fault == "raise" and self.rank == a.fault_rank and step == a.fault_step:
            if a.exc == "KeyError":
                key = f"shard{self.rank:02d}-{step * 8 + 4096:05d}"
                _ = self.keys[key]
            elif a.exc == "ValueError":
                raise ValueError(f"could not parse record {key!r}: expected 16 features, got 15")
            else:
                rows = list(range(64))
                _ = rows[step * 8 + 100]
        g = torch.Generator().manual_seed(self.keys[key] + 1000 * self.rank)
        return torch.randn(8, 16, generator=g), torch.randn(8, 1, generator=g)


def setup_output(rank, args):
    if args.shared_file:
        fd = os.open(args.shared_file, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        os.close(fd)
        # unbuffered: every print() piece and every traceback piece is its own write(2)
        sys.stdout = io.TextIOWrapper(open(1, "wb", buffering=0, closefd=False), write_through=True)
        sys.stderr = io.TextIOWrapper(open(2, "wb", buffering=0, closefd=False), write_through=True)
    log = logging.getLogger("train")
    log.handlers.clear()
    h = logging.StreamHandler(sys.stdout)
    fmt = f"%(asctime)s [rank{rank}] %(levelname)s %(message)s"
    h.setFormatter(ColorFormatter(fmt) if sys.stdout.isatty() else logging.Formatter(fmt))
    log.addHandler(h)
    log.setLevel(logging.INFO)
    log.propagate = False
    return log


def worker(rank, args):
    log = setup_output(rank, args)
    world = args.world

    def out(msg):
        if args.emit == "logging":
            log.info(msg)
        else:
            print(f"[rank{rank}]", msg)

    try:
        run(rank, world, args, log, out)
    except Exception:
        if not args.catch:
            raise
        log.exception(f"rank {rank} failed, exiting")
        sys.stdout.flush()
        sys.exit(1)


def run(rank, world, args, log, out):
    dist.init_process_group("gloo", rank=rank, world_size=world,
                            timeout=datetime.timedelta(seconds=args.timeout))
    out(f"initialized process group: backend=gloo world_size={world} pid={os.getpid()}")
    torch.manual_seed(0)
    guard = args.fault == "compile" and rank == args.fault_rank
    model = Net(guard=guard)
    for prm in model.parameters():
        dist.broadcast(prm.data, src=0)
    fwd = model
    if args.fault == "compile":
        fwd = torch.compile(model, fullgraph=True, backend="eager")
        out("model compiled with torch.compile(fullgraph=True)")
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    data = ShardIndex(rank, args)
    steps = range(args.steps)
    if args.tqdm and rank == 0:
        from tqdm import tqdm
        steps = tqdm(steps, desc="train", ncols=80)
    for step in steps:
        x, y = data.batch(step)
        loss = nn.functional.mse_loss(fwd(x), y)
        opt.zero_grad()
        loss.backward()
        for prm in model.parameters():
            dist.all_reduce(prm.grad)
            prm.grad /= world
        opt.step()
        if args.fault == "sigkill" and rank == args.fault_rank and step == args.fault_step:
            os.kill(os.getpid(), signal.SIGKILL)
        if args.fault == "hang" and rank == args.fault_rank and step == args.fault_step:
            time.sleep(args.hang_s)  # e.g. a stuck filesystem read; peers wait in the all_reduce below
        lt = torch.tensor([loss.item()])
        if args.fault == "mismatch" and rank == args.fault_rank and step == args.fault_step:
            lt = torch.tensor([loss.item(), float(step)])  # this rank reduces 2 elements, the others 1
        dist.all_reduce(lt)
        out(f"step {step + 1}/{args.steps} loss={lt[0].item() / world:.4f} local_loss={loss.item():.4f}")
        time.sleep(args.step_sleep)
    dist.barrier()
    out("training finished")
    dist.destroy_process_group()


if __name__ == "__main__":
    a = parse()
    worker(int(os.environ["RANK"]), a)
