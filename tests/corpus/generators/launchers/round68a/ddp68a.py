#!/usr/bin/env python3
"""Round 68a: DistributedDataParallel's own errors on ONE rank (torchrun, gloo, CPU).

A small regression job (encoder MLP + main head + aux head, a BatchNorm and a plain buffer) trained for a few
steps under DDP. `--fault F --bad-rank R --at K` breaks rank R (from step K where it matters):

  none            healthy run (see --find-unused / --static-graph / --compile for the usual DDP warnings)
  unused          rank R skips the aux head from step K (find_unused_parameters=False)
                  -> "Expected to have finished reduction in the prior iteration ..."
  output_unused   find_unused_parameters=True, rank R leaves the aux OUTPUT out of its loss from step K
                  (torch 2.13: no error, training completes -- not used in run_all.sh)
  ckpt_reentrant  find_unused_parameters=True, rank R runs its norm2 block under reentrant activation checkpointing
                  from step K -> "Expected to mark a variable ready only once"
  extra_param     rank R's model has an extra nn.Parameter (a learnable temperature) -> DDP constructor check
  shape           rank R builds the encoder with another hidden width -> "params[N] ... appears not to match"
  extra_buffer    rank R's model registers one extra buffer -> DDP's construction-time state broadcast mismatch
  buffer_shape    rank R's "feature_mean" buffer has another length (gloo: no error, silently overwritten --
                  not used in run_all.sh)
  static_graph    DDP(static_graph=True), rank R skips the aux head at step K
  no_sync         rank R alone runs step K inside model.no_sync() (grad accumulation only on that rank)
  backward_twice  rank R calls loss.backward() twice at step K (second time without retain_graph)
  backward_twice_retain  rank R calls backward(retain_graph=True) and then backward() again at step K
                  (torch 2.13: no error, the second backward's hooks are ignored -- not used in run_all.sh)
  compile_cxx     torch.compile(inductor) of the DDP model; rank R alone has CXX=/nonexistent/g++
  compile_recompile  torch.compile(aot_eager) with recompile_limit=1 and fail_on_recompile_limit_hit; rank R
                  gets a short (ragged) last batch at step K -> recompile limit error on that rank
  compile_fullgraph  model.compile(fullgraph=True) before DDP; rank R has a data-dependent NaN check in its forward
  compile_unused  torch.compile(aot_eager) of the DDP model (DDPOptimizer); rank R skips the aux head from step K
                  (its guard on use_aux fails -> it recompiles alone, then DDP's reducer error)
  buffer_dtype    rank R's "feature_mean" buffer is float64 -> DDP's construction-time state broadcast mismatch

--loss-sync N: all_reduce the loss every N steps for the log line (0 = never). --nosync-all: no_sync from step K on.
--no-bcast-buffers: DDP(broadcast_buffers=False). --hidden, --bucket-mb: model width, DDP bucket_cap_mb.
"""
import argparse
import contextlib
import datetime
import logging
import os
import sys
import time

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP

p = argparse.ArgumentParser()
p.add_argument("--fault", default="none")
p.add_argument("--bad-rank", type=int, default=1)
p.add_argument("--at", type=int, default=3)
p.add_argument("--steps", type=int, default=8)
p.add_argument("--find-unused", action="store_true")
p.add_argument("--static-graph", action="store_true")
p.add_argument("--compile", default="")  # "", "inductor", "aot_eager"
p.add_argument("--bucket-mb", type=float, default=25.0)
p.add_argument("--hidden", type=int, default=32)
p.add_argument("--loss-sync", type=int, default=0)
p.add_argument("--nosync-all", action="store_true")
p.add_argument("--no-bcast-buffers", action="store_true")  # DDP(broadcast_buffers=False)
p.add_argument("--timeout", type=int, default=30)
args = p.parse_args()

rank = int(os.environ["RANK"])
world = int(os.environ["WORLD_SIZE"])
bad = rank == args.bad_rank and args.fault != "none"
logging.basicConfig(level=logging.INFO, format=f"%(asctime)s [rank{rank}] %(levelname)s %(name)s: %(message)s",
                    stream=sys.stdout)
log = logging.getLogger("train")

# compile_cxx: that rank alone points inductor's C++ build at a compiler that does not exist (before torch.compile)
if args.fault == "compile_cxx" and bad:
    os.environ["CXX"] = "/nonexistent/g++"

torch.manual_seed(0)
torch.set_num_threads(1)


class Regressor(nn.Module):
    def __init__(self, hidden=32, extra_param=False, extra_buffer=False, mean_len=16, nan_check=False, mean_dtype=torch.float32):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(16, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU())
        self.norm = nn.BatchNorm1d(hidden)
        self.norm2 = nn.Sequential(nn.Linear(hidden, hidden), nn.Tanh())  # post-norm projection
        self.head = nn.Linear(hidden, 4)
        self.aux = nn.Linear(hidden, 4)
        self.register_buffer("feature_mean", torch.zeros(mean_len, dtype=mean_dtype))
        if extra_param:
            self.temperature = nn.Parameter(torch.ones(1))
        if extra_buffer:
            self.register_buffer("ema_count", torch.zeros(1))
        self.nan_check = nan_check
        self.use_aux = True
        self.ckpt = False

    def forward(self, x):
        x = x - self.feature_mean[: x.shape[1]]
        if self.ckpt:
            h = self.norm(self.encoder(x))
            h = torch.utils.checkpoint.checkpoint(self.norm2, h, use_reentrant=True)
        else:
            h = self.norm2(self.norm(self.encoder(x)))
        if self.nan_check and not torch.isfinite(h).all():  # data-dependent branch
            raise FloatingPointError("non-finite activations")
        out = self.head(h)
        if hasattr(self, "temperature"):
            out = out / self.temperature
        aux = self.aux(h) if self.use_aux else None
        return out, aux


def main():
    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=args.timeout))
    log.info("initialized process group: world_size=%d backend=%s", world, dist.get_backend())
    model = Regressor(
        hidden=args.hidden + 16 if (args.fault == "shape" and bad) else args.hidden,
        extra_param=args.fault == "extra_param" and bad,
        extra_buffer=args.fault == "extra_buffer" and bad,
        mean_len=20 if (args.fault == "buffer_shape" and bad) else 16,
        mean_dtype=torch.float64 if (args.fault == "buffer_dtype" and bad) else torch.float32,
        nan_check=args.fault == "compile_fullgraph" and bad,
    )
    n_params = sum(p.numel() for p in model.parameters())
    log.info("model built: %d parameters", n_params)
    find_unused = args.find_unused or args.fault in ("output_unused", "ckpt_reentrant")
    static = args.static_graph or args.fault == "static_graph"
    if args.fault == "compile_fullgraph":
        # compile the inner module in place (fullgraph=True), then wrap it in DDP
        model.compile(backend="aot_eager", fullgraph=True)
        log.info("model.compile(backend=aot_eager, fullgraph=True)")
    ddp = DDP(model, find_unused_parameters=find_unused, static_graph=static, bucket_cap_mb=args.bucket_mb,
              broadcast_buffers=not args.no_bcast_buffers)
    log.info("wrapped in DDP (find_unused_parameters=%s, static_graph=%s)", find_unused, static)
    net = ddp
    if args.fault in ("compile_cxx", "compile_recompile", "compile_unused") or args.compile:
        backend = args.compile or {"compile_cxx": "inductor", "compile_recompile": "aot_eager",
                                   "compile_unused": "aot_eager"}[args.fault]
        if args.fault == "compile_recompile":
            torch._dynamo.config.recompile_limit = 1
            torch._dynamo.config.fail_on_recompile_limit_hit = True
            torch._dynamo.config.automatic_dynamic_shapes = False
        net = torch.compile(ddp, backend=backend)
        log.info("torch.compile(backend=%s) on the DDP model", backend)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.05, momentum=0.9)
    g = torch.Generator().manual_seed(1234 + rank)
    t0 = time.time()
    for step in range(args.steps):
        bs = 16
        if args.fault == "compile_recompile" and bad and step >= args.at:
            bs = 11  # this rank's shard is shorter: ragged last batch
        x = torch.randn(bs, 16, generator=g)
        y = torch.randn(bs, 4, generator=g)
        if bad and step >= args.at:
            if args.fault in ("unused", "static_graph", "compile_unused"):
                model.use_aux = False
            if args.fault == "ckpt_reentrant":
                model.ckpt = True
        if args.fault == "static_graph" and bad and step > args.at:
            model.use_aux = True
        # no_sync: this rank alone skips the gradient all-reduce (forward AND backward inside ddp.no_sync())
        skip_sync = args.fault == "no_sync" and bad and (step == args.at or (args.nosync_all and step >= args.at))
        if skip_sync:
            log.info("accumulating gradients locally for this step")
        ctx = ddp.no_sync() if skip_sync else contextlib.nullcontext()
        with ctx:
            out, aux = net(x)
            loss = F.mse_loss(out, y)
            if aux is not None and not (args.fault == "output_unused" and bad and step >= args.at):
                loss = loss + 0.1 * F.mse_loss(aux, y)
            opt.zero_grad(set_to_none=True)
            if skip_sync:
                loss.backward()
        if skip_sync:
            pass
        elif args.fault == "backward_twice" and bad and step == args.at:
            loss.backward()
            loss.backward()  # e.g. a leftover from an older loss-scaling code path
        elif args.fault == "backward_twice_retain" and bad and step == args.at:
            loss.backward(retain_graph=True)
            loss.backward()
        else:
            loss.backward()
        opt.step()
        shown = loss.detach().clone()
        if args.loss_sync and step % args.loss_sync == 0:
            dist.all_reduce(shown)
            shown /= world
        log.info("step %d/%d loss %.4f (%.2fs)", step + 1, args.steps, shown.item(), time.time() - t0)
    dist.barrier()
    log.info("training complete")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
