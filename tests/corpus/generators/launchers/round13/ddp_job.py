"""Plain DDP job for torchrun (gloo, CPU): a small MLP, one logging line per step with the loss.

Every mode injects ONE fault on ONE rank (--bad-rank) at step --step:
  eval_barrier : after step --step rank --bad-rank alone runs a long "evaluation" (eval progress lines, 1.5 s per
                 batch, ~45 s) while the other ranks wait in dist.barrier(); PG timeout --timeout s.
  raise_value  : load_batch() on the bad rank parses a CSV field 'n/a' -> ValueError.
  raise_runtime: load_batch() on the bad rank reshapes a short record -> RuntimeError (shape ... is invalid).
  raise_key    : tokenize() on the bad rank looks up a missing special token -> KeyError (with --logfield the
                 log format carries the rank in a field '[RANK n]' and the traceback is left uncaught).
  unused       : from step --step on, the bad rank skips the 'aux' submodule in forward; DDP runs with
                 find_unused_parameters=False, so its reduction never finishes.
  extra_bcast  : after step --step the bad rank alone calls dist.broadcast of a 1000-element metrics tensor.
  compile      : eager warm-up, then from step --step the torch.compile'd model; the bad rank sets
                 CXX=/nonexistent/g++ before importing torch (inductor finds no working C++ compiler).
  sigkill      : the bad rank SIGKILLs itself at step --step (no traceback).
  hang         : the bad rank sleeps --sleep s before the per-step loss all_reduce at step --step.
Flags: --no-ddp averages gradients by hand (DDP's constructor segfaults under TORCH_DISTRIBUTED_DEBUG=DETAIL in
torch 2.13.0 CPU); --no-loss-sync drops the per-step loss all_reduce.
"""
import argparse
import logging
import os
import signal
import sys
import time

p = argparse.ArgumentParser()
p.add_argument("--mode", required=True, choices=["eval_barrier", "raise_value", "raise_runtime", "raise_key",
                                                  "unused", "extra_bcast", "compile", "sigkill", "hang"])
p.add_argument("--bad-rank", type=int, required=True)
p.add_argument("--step", type=int, default=3)
p.add_argument("--steps", type=int, default=8)
p.add_argument("--timeout", type=int, default=20)
p.add_argument("--sleep", type=float, default=60)
p.add_argument("--logfield", action="store_true", help="put the rank in a logging field, '[RANK n]'")
p.add_argument("--no-ddp", action="store_true",
               help="average gradients by hand (all_reduce per parameter) instead of wrapping the model in DDP: "
                    "torch 2.13.0 CPU segfaults in DDP's constructor when TORCH_DISTRIBUTED_DEBUG=DETAIL")
p.add_argument("--no-loss-sync", action="store_true", help="skip the per-step all_reduce of the loss")
args = p.parse_args()
RANK = int(os.environ["RANK"])

if args.mode == "compile":
    # private inductor cache per rank, no FX/AOT graph cache: every rank really compiles (no cache hit)
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = f"/tmp/r13_inductor_{os.getpid()}_rank{RANK}"
    os.environ["TORCHINDUCTOR_FX_GRAPH_CACHE"] = "0"
    os.environ["TORCHINDUCTOR_AUTOGRAD_CACHE"] = "0"
    if args.bad_rank == RANK:
        os.environ["CXX"] = "/nonexistent/g++"   # induced: this rank's environment names a missing compiler

from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

if args.logfield:
    class RankFilter(logging.Filter):
        def filter(self, record):
            record.rank = RANK
            return True
    h = logging.StreamHandler(sys.stdout)
    h.addFilter(RankFilter())
    h.setFormatter(logging.Formatter("%(asctime)s [RANK %(rank)s] %(levelname)s %(name)s: %(message)s"))
    logging.basicConfig(level=logging.INFO, handlers=[h])
else:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
log = logging.getLogger("train")
tag = "" if args.logfield else f"[rank {RANK}] "


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(16, 32), nn.ReLU())
        self.aux = nn.Linear(32, 32)
        self.head = nn.Linear(32, 1)

    def forward(self, x, use_aux=True):
        h = self.body(x)
        if use_aux:
            h = h + torch.relu(self.aux(h))
        return self.head(h)


def load_batch(step, rank):
    g = torch.Generator().manual_seed(1000 * rank + step)
    x = torch.randn(32, 16, generator=g)
    if rank == args.bad_rank and step == args.step:
        if args.mode == "raise_value":
            row = ["0.12", "0.53", "n/a", "0.98"]          # induced: a missing value in this rank's shard
            x[0, :4] = torch.tensor([float(v) for v in row])
        elif args.mode == "raise_runtime":
            rec = torch.randn(31 * 16, generator=g)          # induced: a truncated record
            x = rec.view(32, 16)
    return x, x.sum(1, keepdim=True) * 0.1


def tokenize(step, rank):
    vocab = {"<pad>": 0, "<s>": 1, "</s>": 2}
    if args.mode == "raise_key" and rank == args.bad_rank and step == args.step:
        vocab = {"<pad>": 0, "<s>": 1}                       # induced: this shard's vocab lacks '</s>'
    return vocab["</s>"]


def evaluate():
    for i in range(30):
        time.sleep(1.5)
        log.info("%seval batch %d/30 running_acc=%.3f", tag, i + 1, 0.5 + 0.01 * i)


def main():
    dist.init_process_group("gloo", timeout=timedelta(seconds=args.timeout))
    rank, world = dist.get_rank(), dist.get_world_size()
    log.info("%sprocess group ready (gloo, world_size=%d, timeout=%ds)", tag, world, args.timeout)
    torch.manual_seed(0)
    model = Net() if args.no_ddp else DDP(Net())
    compiled = torch.compile(model) if args.mode == "compile" else None
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    for step in range(args.steps):
        t0 = time.time()
        x, y = load_batch(step, rank)
        x = x + 0.0 * tokenize(step, rank)
        # compile mode: eager warm-up steps, the compiled model from step --step on (compiles on its first call)
        step_fn = compiled if (compiled is not None and step >= args.step) else model
        if compiled is not None and step == args.step:
            log.info("%swarm-up done, switching to torch.compile'd model", tag)
        use_aux = not (args.mode == "unused" and rank == args.bad_rank and step >= args.step)
        out = step_fn(x) if use_aux else step_fn(x, use_aux=False)
        loss = nn.functional.mse_loss(out, y)
        opt.zero_grad()
        loss.backward()
        if args.no_ddp:
            for prm in model.parameters():                  # manual gradient averaging
                dist.all_reduce(prm.grad)
                prm.grad /= world
        opt.step()
        avg = loss.detach().clone()
        if args.mode == "hang" and rank == args.bad_rank and step == args.step:
            time.sleep(args.sleep)                          # induced: a silent stall before the collective
        if not args.no_loss_sync:
            dist.all_reduce(avg)
            avg /= world
        log.info("%sstep %d loss=%.4f avg_loss=%.4f step_time=%.2fs", tag, step, loss.item(), avg.item(),
                 time.time() - t0)
        if args.mode == "sigkill" and rank == args.bad_rank and step == args.step:
            os.kill(os.getpid(), signal.SIGKILL)           # induced: killed, no traceback
        if args.mode == "extra_bcast" and rank == args.bad_rank and step == args.step:
            metrics = torch.arange(1000, dtype=torch.float32)   # induced: metrics sync on this rank only
            dist.broadcast(metrics, src=rank)
            log.info("%ssynced metrics buffer (%d values)", tag, metrics.numel())
        if args.mode == "eval_barrier" and step == args.step:
            if rank == args.bad_rank:                        # induced: evaluation on one rank only...
                log.info("%sstarting evaluation on this rank", tag)
                evaluate()
            dist.barrier()                                   # ...while the others wait here
        time.sleep(0.3)
    dist.barrier()
    log.info("%straining done", tag)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
