"""Round 33b: torch.compile inside a multi-rank CPU (gloo) job, failing on ONE rank (most) or on every rank.

A tiny MLP is wrapped in DistributedDataParallel (or prepared by Accelerate) and then torch.compile'd; the job
trains a few steps and logs one line per step. `--fault` picks what breaks, on `--bad-rank` only unless said:
  none            healthy run
  ddpopt_bucket   every rank: DDP(bucket_cap_mb=0.0001) then torch.compile (DDPOptimizer bucket assertion)
  fullgraph_ddp   every rank: torch.compile(DDP(model), fullgraph=True)
  noisy           healthy: forward has a debug print (graph break, not fullgraph) and the last batch is smaller
                  (recompile as dynamic); meant for TORCH_LOGS=recompiles,graph_breaks
  recompile_limit bad rank gets a different batch size every step, dynamic=False and recompile_limit=2: Dynamo
                  warns it hit the limit and runs the rest eagerly (non-fatal)
  fullgraph_print bad rank turns on activation debug printing; model compiled with fullgraph=True
  fullgraph_branch bad rank's data has outliers, so its model clips on a data-dependent condition; fullgraph=True
  stance          bad rank sets torch.compiler.set_stance("fail_on_recompile") after warm-up; its last batch is
                  smaller (recompile needed)
  error_on_recompile bad rank sets torch._dynamo.config.error_on_recompile=True; its last batch is smaller
  mark_dynamic    bad rank marks the batch dim dynamic (mark_dynamic) but the model reshapes with a fixed batch
  custom_op       bad rank uses a torch.library.custom_op activation that has no fake (meta) kernel
  user_raise      bad rank's forward raises ValueError (input validation) at step --at, inside the compiled code
  no_cxx          bad rank sets CXX=/nonexistent/g++ before the first compile (with its own inductor cache dir)
  cache_ro        bad rank's TORCHINDUCTOR_CACHE_DIR is a read-only mount
  export_rank0    rank 0 alone runs torch.export.export on the model (data-dependent branch) before training
  item_guard      bad rank filters padding rows with a data-dependent count (capture_scalar_outputs, dynamic=True,
                  fullgraph=True)
Launch: torchrun --nproc-per-node 3 comp33b.py ... | python comp33b.py --spawn 3 ... | accelerate launch
--config_file multi_cpu.yaml comp33b.py --accelerate ...
"""
import argparse
import logging
import os
import sys
import time
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F

log = logging.getLogger("train")


class Net(nn.Module):
    def __init__(self, debug_print=False, clip_outliers=False, fixed_batch=None, act=None, validate=False):
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.fc2 = nn.Linear(16, 16)
        self.head = nn.Linear(16, 1)
        self.debug_print = debug_print
        self.clip_outliers = clip_outliers
        self.fixed_batch = fixed_batch
        self.act = act or F.gelu
        self.validate = validate
        self.filter_pad = False

    def forward(self, x):
        if self.validate and x.shape[1] != 8:
            raise ValueError(f"expected 8 input features per sample, got {x.shape[1]} (corrupt shard?)")
        if self.filter_pad:
            n = (x[:, 0] != 0).sum().item()   # data-dependent number of real rows
            if n < x.shape[0]:
                x = x[:n]
        if self.clip_outliers and x.abs().max() > 3.0:   # data-dependent branch
            x = x.clamp(-3.0, 3.0)
        if self.fixed_batch:
            x = x.reshape(self.fixed_batch, 8)
        h = self.act(self.fc1(x))
        if self.debug_print:
            print(f"[debug] fc1 activation mean={h.mean().item():.4f}")
        h = self.act(self.fc2(h))
        return self.head(h)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--fault", default="none")
    p.add_argument("--bad-rank", type=int, default=1)
    p.add_argument("--at", type=int, default=3)
    p.add_argument("--steps", type=int, default=6)
    p.add_argument("--spawn", type=int, default=0)
    p.add_argument("--port", type=int, default=29533)
    p.add_argument("--accelerate", action="store_true")
    p.add_argument("--backend", default="inductor")
    args = p.parse_args()
    if args.spawn:
        import torch.multiprocessing as mp
        os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
        os.environ["MASTER_PORT"] = str(args.port)
        mp.spawn(worker, args=(args.spawn, args), nprocs=args.spawn, join=True)
    else:
        worker(None, None, args)


def worker(rank, world, args):
    torch.set_num_threads(1)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s [%(name)s] %(message)s", force=True)
    accel = None
    if args.accelerate:
        from accelerate import Accelerator, InitProcessGroupKwargs
        accel = Accelerator(cpu=True, kwargs_handlers=[InitProcessGroupKwargs(timeout=timedelta(seconds=30))])
        rank, world = accel.process_index, accel.num_processes
    else:
        if rank is None:
            rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
        dist.init_process_group("gloo", rank=rank, world_size=world, timeout=timedelta(seconds=30))
    bad = rank == args.bad_rank
    f = args.fault
    log.info("rank %d/%d started (torch %s, fault=%s, bad_rank=%d)", rank, world, torch.__version__, f, args.bad_rank)

    if f == "no_cxx" and bad:
        os.environ["CXX"] = "/nonexistent/g++"   # this rank's toolchain setting points nowhere
        if os.environ.get("TORCHINDUCTOR_CACHE_DIR"):   # its own cache dir: no cache hit on its peers' kernels
            os.environ["TORCHINDUCTOR_CACHE_DIR"] += f"_rank{rank}"
    if f == "cache_ro" and bad:
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = os.environ.get("RO_CACHE_DIR", "/tmp/ro33b/inductor")
        log.info("rank %d: inductor cache dir %s", rank, os.environ["TORCHINDUCTOR_CACHE_DIR"])

    torch.manual_seed(0)
    model = Net(debug_print=(f in ("fullgraph_print", "noisy") and bad),
                clip_outliers=(f == "fullgraph_branch" and bad),
                fixed_batch=(8 if f == "mark_dynamic" else None),
                validate=(f == "user_raise"))
    if f == "custom_op" and bad:
        @torch.library.custom_op("fastact::gelu_approx", mutates_args=())
        def gelu_approx(x: torch.Tensor) -> torch.Tensor:   # no register_fake: cannot be traced with fake tensors
            return 0.5 * x * (1.0 + torch.tanh(0.7978845608 * (x + 0.044715 * x ** 3)))
        model.act = gelu_approx
        log.info("rank %d: using fastact::gelu_approx custom op", rank)
    if f == "item_guard" and bad:
        torch._dynamo.config.capture_scalar_outputs = True
        model.filter_pad = True

    if f == "export_rank0" and rank == 0:
        log.info("rank 0: exporting the model with torch.export for serving before training")
        model.clip_outliers = True
        ep = torch.export.export(model, (torch.randn(8, 8),))
        model.clip_outliers = False
        log.info("rank 0: exported %d nodes", len(ep.graph.nodes))

    ckw = dict(backend=args.backend)
    if f in ("fullgraph_print", "fullgraph_branch", "item_guard", "fullgraph_ddp"):
        ckw["fullgraph"] = True
    if f == "recompile_limit":
        ckw["dynamic"] = False
        torch._dynamo.config.recompile_limit = 2
    if f == "item_guard":
        ckw["dynamic"] = True
    # default: DDP(model) then torch.compile(ddp_model) (DDPOptimizer splits the graph at bucket boundaries);
    # the one-rank fullgraph faults compile the inner module first (fullgraph over DDP's own Python fails)
    inner = f in ("fullgraph_print", "fullgraph_branch", "item_guard")
    if inner:
        model = torch.compile(model, **ckw)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    if accel is not None:
        model, opt = accel.prepare(model, opt)
    else:
        bucket = 0.0001 if f == "ddpopt_bucket" else 25   # ddpopt_bucket: tiny buckets (every rank)
        model = nn.parallel.DistributedDataParallel(model, bucket_cap_mb=bucket)
    cmodel = model if inner else torch.compile(model, **ckw)
    log.info("rank %d: model compiled lazily with %s (%s)", rank, ckw, "module, then DDP" if inner else "DDP, then compile")

    g = torch.Generator().manual_seed(100 + rank)
    for step in range(1, args.steps + 1):
        bs = 8
        if f in ("noisy", "stance", "error_on_recompile") and bad and step == args.steps:
            bs = 5   # last partial batch
        if f == "recompile_limit" and bad:
            bs = 9 - step   # variable-length batches
        x = torch.randn(bs, 8, generator=g)
        y = x.sum(1, keepdim=True) * 0.1
        if f == "fullgraph_branch" and bad:
            x[0, 0] = 7.5   # outlier
        if f == "item_guard" and bad:
            x[-2:] = 0.0    # padding rows
            y = y[:6]
        if f == "user_raise" and bad and step == args.at:
            x = torch.randn(bs, 9, generator=g)   # a corrupt record
        if f == "mark_dynamic" and bad:
            torch._dynamo.mark_dynamic(x, 0)
        if f == "stance" and bad and step == 3:
            torch.compiler.set_stance("fail_on_recompile")
            log.info("rank %d: warm-up done, set_stance('fail_on_recompile')", rank)
        if f == "error_on_recompile" and bad and step == 3:
            torch._dynamo.config.error_on_recompile = True
        t0 = time.time()
        out = cmodel(x)
        loss = F.mse_loss(out, y)
        opt.zero_grad()
        if accel is not None:
            accel.backward(loss)
        else:
            loss.backward()
        opt.step()
        log.info("rank %d step %d/%d loss %.4f (%.1fs)", rank, step, args.steps, loss.item(), time.time() - t0)
    if accel is not None:
        accel.wait_for_everyone()
    else:
        dist.barrier()
    log.info("rank %d: training complete (%d steps)", rank, args.steps)
    if accel is None:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
