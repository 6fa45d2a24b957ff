"""Small gloo data-parallel training job used to produce round-44b logs (CPU, torch 2.13.0).

One program, launched by torchrun, mp.spawn (see spawn_job.py) or mpirun.  Each step: a batch is
"loaded", forward/backward on a tiny MLP, every rank publishes its loss to the rendezvous store, the
metrics rank collects all losses (store.get with a short store timeout), then gradients are averaged
with one all_reduce of a flattened tensor.  A per-step logger line with the loss is printed.

Faults (only on --fault-rank, at step --step):
  raise     ValueError in the rank's own data loading
  sigkill   os.kill(getpid(), SIGKILL), no traceback
  hang      sleep longer than the process-group timeout before the all_reduce
  mismatch  all_reduce a flattened-gradient tensor one element longer than the other ranks'
  cascade   KeyError in data loading on --fault-rank; that rank logs it and spends --linger seconds on an
            "emergency checkpoint" before exiting, so its loss for that step never reaches the store;
            the metrics rank (--metrics-rank) then fails later with its own error (store timeout)
Logging: --fmt asctime|glog, --stream stderr|stdout|print (print: lines go through print() to stdout,
which is block-buffered when redirected, so they reach the log only when the rank flushes or exits),
--hostpid-dir D adds a FileHandler D/<hostname>-<pid>.log (named by host and pid, not by rank);
--no-console drops the console handler (then only uncaught tracebacks reach the console).
--sigterm-exit installs a SIGTERM handler that exits cleanly (so buffered stdout is flushed when the
launcher terminates the rank).  --record wraps main with torch.distributed.elastic's @record.
"""
import argparse
import logging
import os
import signal
import socket
import sys
import time
from datetime import timedelta

import torch
import torch.distributed as dist

log = logging.getLogger("train")


def parse(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("--fault", default="none",
                   choices=["none", "raise", "sigkill", "hang", "mismatch", "cascade"])
    p.add_argument("--fault-rank", type=int, default=2)
    p.add_argument("--step", type=int, default=3)
    p.add_argument("--steps", type=int, default=6)
    p.add_argument("--metrics-rank", type=int, default=1)
    p.add_argument("--linger", type=float, default=0.0)
    p.add_argument("--store-timeout", type=float, default=4.0)
    p.add_argument("--pg-timeout", type=float, default=15.0)
    p.add_argument("--step-sleep", type=float, default=0.3)
    p.add_argument("--fmt", default="asctime", choices=["asctime", "glog"])
    p.add_argument("--stream", default="stderr", choices=["stderr", "stdout", "print"])
    p.add_argument("--hostpid-dir", default=None)
    p.add_argument("--no-console", action="store_true")
    p.add_argument("--sigterm-exit", action="store_true")
    p.add_argument("--record", action="store_true")
    return p.parse_args(argv)


def setup_logging(args, rank):
    if args.fmt == "asctime":
        fmt = logging.Formatter(f"%(asctime)s %(levelname)s [rank{rank}] %(name)s: %(message)s")
    else:  # glog / absl style: I0102 15:04:05.123456 <pid> file.py:line] msg
        class Glog(logging.Formatter):
            def format(self, r):
                t = time.localtime(r.created)
                us = int((r.created % 1) * 1e6)
                head = f"{r.levelname[0]}{time.strftime('%m%d %H:%M:%S', t)}.{us:06d} {r.process} " \
                       f"{r.filename}:{r.lineno}]"
                msg = r.getMessage()
                if r.exc_info:
                    msg += "\n" + self.formatException(r.exc_info)
                return f"{head} [rank{rank}] {msg}"
        fmt = Glog()
    if args.no_console:
        pass
    elif args.stream == "print":  # print()-style logging to stdout: no flush per line (block-buffered)
        class PrintHandler(logging.Handler):
            def emit(self, r):
                print(self.format(r))
        h = PrintHandler()
        h.setFormatter(fmt)
        log.addHandler(h)
    else:
        h = logging.StreamHandler(sys.stdout if args.stream == "stdout" else sys.stderr)
        h.setFormatter(fmt)
        log.addHandler(h)
    if args.hostpid_dir:
        os.makedirs(args.hostpid_dir, exist_ok=True)
        fh = logging.FileHandler(os.path.join(args.hostpid_dir,
                                              f"{socket.gethostname()}-{os.getpid()}.log"))
        fh.setFormatter(fmt)
        log.addHandler(fh)
    log.setLevel(logging.INFO)
    log.propagate = False


def load_batch(rank, step, args):
    if args.fault == "raise" and rank == args.fault_rank and step == args.step:
        raise ValueError(f"corrupt sample in shard-{rank:05d}.bin at offset 4096: expected 17 fields, got 9")
    if args.fault == "cascade" and rank == args.fault_rank and step == args.step:
        sample = {"input_ids": [1, 2, 3]}
        return sample["labels"]  # KeyError: 'labels'
    g = torch.Generator().manual_seed(1000 * rank + step)
    return torch.randn(8, 16, generator=g), torch.randn(8, 1, generator=g)


def train(rank, world, args):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    store = dist.distributed_c10d._get_default_store()
    log.info("starting training: world_size=%d steps=%d pid=%d host=%s", world, args.steps,
             os.getpid(), socket.gethostname())
    for step in range(1, args.steps + 1):
        x, y = load_batch(rank, step, args)
        loss = torch.nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        # metrics: every rank publishes its loss, the metrics rank collects them all
        store.set(f"loss/{step}/{rank}", f"{loss.item():.6f}")
        if rank == args.metrics_rank:
            store.set_timeout(timedelta(seconds=args.store_timeout))
            losses = [float(store.get(f"loss/{step}/{r}")) for r in range(world)]
            log.info("step %d mean loss over %d ranks: %.4f", step, world, sum(losses) / world)
        if args.fault == "sigkill" and rank == args.fault_rank and step == args.step:
            os.kill(os.getpid(), signal.SIGKILL)
        if args.fault == "hang" and rank == args.fault_rank and step == args.step:
            time.sleep(args.pg_timeout + 40)
        flat = torch.cat([p.grad.reshape(-1) for p in model.parameters()])
        if args.fault == "mismatch" and rank == args.fault_rank and step == args.step:
            flat = torch.cat([flat, torch.zeros(1)])
        dist.all_reduce(flat)
        flat /= world
        off = 0
        for p in model.parameters():
            n = p.numel()
            p.grad.copy_(flat[off:off + n].view_as(p))
            off += n
        opt.step()
        log.info("step %d/%d loss %.4f", step, args.steps, loss.item())
        time.sleep(args.step_sleep)
    dist.barrier()
    log.info("training finished")


def main(rank=None, world=None, argv=None):
    args = parse(argv)
    if rank is None:  # torchrun or mpirun
        rank = int(os.environ.get("RANK", os.environ.get("OMPI_COMM_WORLD_RANK", "0")))
        world = int(os.environ.get("WORLD_SIZE", os.environ.get("OMPI_COMM_WORLD_SIZE", "1")))
    setup_logging(args, rank)
    if args.sigterm_exit:
        signal.signal(signal.SIGTERM, lambda s, f: sys.exit(128 + s))
    dist.init_process_group("gloo", init_method="env://", rank=rank, world_size=world,
                            timeout=timedelta(seconds=args.pg_timeout))
    try:
        train(rank, world, args)
    except Exception:
        log.exception("training failed on rank %d", rank)
        if args.linger and rank == args.fault_rank:
            log.info("saving emergency checkpoint to ckpt/emergency-rank%d.pt", rank)
            time.sleep(args.linger)
        raise
    dist.destroy_process_group()


if __name__ == "__main__":
    if "--record" in sys.argv:
        from torch.distributed.elastic.multiprocessing.errors import record
        main = record(main)
    main()
