"""Tiny data-parallel training loop for torchrun (gloo on CPU) with one injected fault on one rank.

Launched by tests/test_real_torchrun.py as
    python -m torch.distributed.run --standalone --nproc-per-node 4 train_ddp.py --fault F --fault-rank R

  --fault none       clean run
  --fault keyerror   the fault rank's shard index lacks the sample of --fault-step: a KeyError in the data path
  --fault sigkill    the fault rank SIGKILLs itself (what the kernel OOM killer does to a process)
  --fault straggler  the fault rank sleeps far past the collective timeout; the others wait in all_reduce
  --fault mismatch   the fault rank all_reduces an extra tensor of another size; the others all_reduce a gradient
  --fault alloc      the fault rank asks the CPU allocator for an absurd buffer
  --timeout S        process-group (collective) timeout in seconds
  --record           decorate main() with torch.distributed.elastic's @record (torchrun then keeps error.json)
"""

import argparse
import datetime
import logging
import os
import signal
import sys
import time

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.distributed.elastic.multiprocessing.errors import record

parser = argparse.ArgumentParser()
FAULTS = ["none", "keyerror", "sigkill", "straggler", "mismatch", "alloc"]
parser.add_argument("--fault", default="none", choices=FAULTS)
parser.add_argument("--fault-rank", type=int, default=2)
parser.add_argument("--fault-step", type=int, default=2)
parser.add_argument("--steps", type=int, default=4)
parser.add_argument("--timeout", type=float, default=15.0)
parser.add_argument("--record", action="store_true")
args = parser.parse_args()

RANK = int(os.environ["RANK"])
logging.basicConfig(
    level=logging.INFO, stream=sys.stdout, format=f"%(asctime)s [rank{RANK}] %(levelname)s %(name)s: %(message)s"
)
log = logging.getLogger("train").info


class Shard:
    """Samples of one rank, looked up by key through an index (as a sharded dataset on disk would be)."""

    def __init__(self, rank: int, n: int) -> None:
        self.rank = rank
        self.index = {f"shard{rank}/sample{i:04d}": i for i in range(n)}
        if args.fault == "keyerror" and rank == args.fault_rank:
            del self.index[f"shard{rank}/sample{args.fault_step:04d}"]  # a sample missing from this shard

    def batch(self, i: int) -> tuple[torch.Tensor, torch.Tensor]:
        seed = self.index[f"shard{self.rank}/sample{i:04d}"]
        g = torch.Generator().manual_seed(100 * self.rank + seed)
        return torch.randn(8, 16, generator=g), torch.randn(8, 4, generator=g)


def inject(step: int, rank: int) -> None:
    if step != args.fault_step or rank != args.fault_rank:
        return
    if args.fault == "sigkill":
        os.kill(os.getpid(), signal.SIGKILL)
    elif args.fault == "straggler":
        time.sleep(10 * args.timeout)  # torchrun SIGTERMs this rank once the others have timed out
    elif args.fault == "mismatch":
        dist.all_reduce(torch.ones(1000))  # the other ranks are all_reducing a gradient of another size
    elif args.fault == "alloc":
        scratch = torch.empty(10**13)  # 40 TB of float32
        del scratch


def with_record(fn):
    """@record when --record is given (it is what torchrun's docs ask for on the entry point)."""
    return record(fn) if args.record else fn


@with_record
def main() -> None:
    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=args.timeout))
    rank, world = dist.get_rank(), dist.get_world_size()
    log(f"process group ready: backend={dist.get_backend()} world_size={world}")
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    data = Shard(rank, args.steps)
    for step in range(args.steps):
        x, y = data.batch(step)
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        inject(step, rank)
        for p in model.parameters():
            dist.all_reduce(p.grad)
            p.grad /= world
        opt.step()
        opt.zero_grad()
        log(f"step {step} loss {loss.item():.4f}")
    dist.barrier()
    log("done")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
