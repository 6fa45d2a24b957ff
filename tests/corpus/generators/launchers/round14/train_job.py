"""Plain PyTorch job for `srun` (or torchrun with --torchrun) (gloo, CPU): rank/world come from SLURM_PROCID / SLURM_NTASKS, rendezvous via
init_method="env://" with MASTER_ADDR / MASTER_PORT exported by the caller. A small MLP; one logging line per
step with the loss (format '%(asctime)s %(levelname)s [rank%(rank)s] %(message)s', or plain print() with --print).

Every mode injects ONE fault on ONE rank (--bad-rank) at step --step:
  raise_key   : load_batch() on the bad rank looks a sample id up in its shard index, which lacks it -> KeyError.
  raise_value : load_batch() on the bad rank parses a CSV field 'n/a' -> ValueError.
  sigkill     : the bad rank SIGKILLs itself (no traceback).
  hang        : the bad rank sleeps --sleep s before the per-step loss all_reduce (PG timeout --timeout s).
  mismatch    : the bad rank all_reduces a gradient-norm stats tensor of 8 floats, the others of 4 floats.
  extra_bcast : after the step the bad rank alone calls dist.broadcast of a 1000-element metrics tensor.
  compile     : eager warm-up, then the torch.compile'd model from --step on; the bad rank sets
                CXX=/nonexistent/g++ before importing torch (inductor finds no working C++ compiler).
  fullgraph   : the model is torch.compile(fullgraph=True)'d from --step on; on the bad rank alone the forward
                runs an input sanity check `if x.abs().max() > 50:` (a data-dependent branch) -> dynamo error.
  hostoom     : if $R14_OOM_CGROUP is set, the bad rank writes its pid into that cgroup-v1 memory cgroup at start
                (otherwise Slurm's own task/cgroup memory limit, srun --mem, applies to the whole step); at --step
                it caches 128 MiB blocks (allocated and touched) until the kernel OOM killer kills it.
--no-ddp averages gradients by hand (DDP's constructor segfaults under TORCH_DISTRIBUTED_DEBUG=DETAIL in torch
2.13.0 CPU).
"""
import argparse
import logging
import os
import signal
import sys
import time

p = argparse.ArgumentParser()
p.add_argument("--mode", required=True, choices=["raise_key", "raise_value", "sigkill", "hang", "mismatch",
                                                  "extra_bcast", "compile", "fullgraph", "hostoom"])
p.add_argument("--bad-rank", type=int, required=True)
p.add_argument("--step", type=int, default=3)
p.add_argument("--steps", type=int, default=8)
p.add_argument("--timeout", type=int, default=20)
p.add_argument("--sleep", type=float, default=60)
p.add_argument("--no-ddp", action="store_true")
p.add_argument("--print", action="store_true", help="plain print() per step instead of logging")
p.add_argument("--torchrun", action="store_true", help="rank/world from torchrun's RANK / WORLD_SIZE")
args = p.parse_args()

RANK = int(os.environ["RANK" if args.torchrun else "SLURM_PROCID"])
WORLD = int(os.environ["WORLD_SIZE" if args.torchrun else "SLURM_NTASKS"])
BAD = RANK == args.bad_rank

if args.mode in ("compile", "fullgraph"):
    # private inductor cache per rank and no FX/AOT graph cache: every rank really compiles
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = f"/tmp/r14_inductor_{os.getpid()}_rank{RANK}"
    os.environ["TORCHINDUCTOR_FX_GRAPH_CACHE"] = "0"
    os.environ["TORCHINDUCTOR_AUTOGRAD_CACHE"] = "0"
    if args.mode == "compile" and BAD:
        os.environ["CXX"] = "/nonexistent/g++"      # induced: this rank's environment names a missing compiler

if args.mode == "hostoom" and BAD and os.environ.get("R14_OOM_CGROUP"):
    with open(os.path.join(os.environ["R14_OOM_CGROUP"], "cgroup.procs"), "w") as f:
        f.write(str(os.getpid()))                    # only this rank goes into the memory-limited cgroup

from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


class RankFilter(logging.Filter):
    def filter(self, record):
        record.rank = RANK
        return True


h = logging.StreamHandler(sys.stdout)
h.addFilter(RankFilter())
h.setFormatter(logging.Formatter("%(asctime)s %(levelname)s [rank%(rank)s] %(message)s"))
logging.basicConfig(level=logging.INFO, handlers=[h])
log = logging.getLogger("train")


def info(msg, *a):
    if args.print:
        print(f"rank {RANK}/{WORLD}: " + (msg % a), flush=True)
    else:
        log.info(msg, *a)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU())
        self.head = nn.Linear(32, 1)
        self.check_inputs = args.mode == "fullgraph" and BAD   # induced: input check enabled on this rank only

    def forward(self, x):
        if self.check_inputs:
            if x.abs().max() > 50:                   # data-dependent branch -> cannot be captured with fullgraph
                x = x.clamp(-50, 50)
        return self.head(self.body(x))


SHARD_INDEX = {f"sample-{i:05d}": i for i in range(0, 4096)}


def load_batch(step):
    g = torch.Generator().manual_seed(1000 * RANK + step)
    ids = [f"sample-{(RANK * 512 + step * 32 + j):05d}" for j in range(32)]
    if BAD and step == args.step:
        if args.mode == "raise_key":
            ids[7] = "sample-9f3a1"                  # induced: a corrupt id in this rank's manifest
        elif args.mode == "raise_value":
            row = "0.12,0.53,n/a,0.98".split(",")     # induced: a missing value in this rank's CSV shard
            _ = [float(v) for v in row]
    offs = torch.tensor([SHARD_INDEX[i] for i in ids], dtype=torch.float32)
    x = torch.randn(32, 16, generator=g) + 0.0 * offs[:, None]
    return x, x.sum(1, keepdim=True) * 0.1


def main():
    dist.init_process_group("gloo", init_method="env://", rank=RANK, world_size=WORLD,
                            timeout=timedelta(seconds=args.timeout))
    info("process group ready (gloo, world_size=%d, timeout=%ds, host=%s, job=%s)", WORLD, args.timeout,
         os.environ.get("SLURMD_NODENAME", "?"), os.environ.get("SLURM_JOB_ID", "?"))
    torch.manual_seed(0)
    net = Net()
    model = net if args.no_ddp else DDP(net)
    compiled = None
    if args.mode in ("compile", "fullgraph"):
        compiled = torch.compile(model, fullgraph=(args.mode == "fullgraph"))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    cache = []
    for step in range(args.steps):
        t0 = time.time()
        x, y = load_batch(step)
        if compiled is not None and step == args.step:
            info("warm-up done, switching to torch.compile'd model")
        fn = compiled if (compiled is not None and step >= args.step) else model
        if args.mode == "hostoom" and BAD and step == args.step:
            info("building feature cache")
            while True:                               # induced: unbounded host-memory cache
                blk = torch.empty(128 * 2**20, dtype=torch.uint8)
                blk.fill_(1)
                cache.append(blk)
                info("feature cache: %d MiB", 128 * len(cache))
                time.sleep(0.05)
        loss = nn.functional.mse_loss(fn(x), y)
        opt.zero_grad()
        loss.backward()
        if args.no_ddp:
            for prm in model.parameters():            # manual gradient averaging
                dist.all_reduce(prm.grad)
                prm.grad /= WORLD
        opt.step()
        avg = loss.detach().clone()
        if args.mode == "hang" and BAD and step == args.step:
            time.sleep(args.sleep)                    # induced: a silent stall before the collective
        dist.all_reduce(avg)
        avg /= WORLD
        if args.mode == "mismatch" and step == args.step:
            n = 8 if BAD else 4                       # induced: this rank packs 8 grad-norm stats, others 4
            stats = torch.ones(n)
            dist.all_reduce(stats)
            info("grad-norm stats synced (%d values)", n)
        info("step %d loss=%.4f avg_loss=%.4f step_time=%.2fs", step, loss.item(), avg.item(), time.time() - t0)
        if args.mode == "sigkill" and BAD and step == args.step:
            os.kill(os.getpid(), signal.SIGKILL)      # induced: killed, no traceback
        if args.mode == "extra_bcast" and BAD and step == args.step:
            metrics = torch.arange(1000, dtype=torch.float32)   # induced: metrics sync on this rank only
            dist.broadcast(metrics, src=RANK)
            info("synced metrics buffer (%d values)", metrics.numel())
        time.sleep(0.3)
    dist.barrier()
    info("training done")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
