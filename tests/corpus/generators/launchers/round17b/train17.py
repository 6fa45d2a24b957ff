"""Plain PyTorch DDP job (gloo, CPU) for round 17b: started either by torchrun (inside `srun`, ranks from torchrun's
RANK / WORLD_SIZE / LOCAL_RANK, rendezvous env:// set by torchrun) or directly by srun (--rank-from slurm: ranks from
SLURM_PROCID / SLURM_NTASKS, MASTER_ADDR / MASTER_PORT exported by the caller). Small MLP, one logging line per step.

Every mode injects ONE fault on ONE rank (--bad-rank, a GLOBAL rank) at step --step:
  raise     : the bad rank's data loader looks a sample id up in its shard index, which lacks it -> KeyError.
  sigkill   : the bad rank SIGKILLs itself after logging the step (no traceback).
  hang      : the bad rank sleeps --sleep s before the per-step loss all_reduce (process-group timeout --timeout s).
  mismatch  : the bad rank all_reduces a grad-norm stats tensor of --stats-n floats, the others of 4 floats.
--log-local logs each step line (own loss) before the loss all_reduce, so a rank stalled before it is the only one
without that step's line (used by the time-limit cases, where no timeout ever reports the stall).
--no-ddp averages gradients by hand (DDP's constructor segfaults under TORCH_DISTRIBUTED_DEBUG=DETAIL in torch
2.13.0 CPU, see round14/README.md).
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
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

p = argparse.ArgumentParser()
p.add_argument("--mode", required=True, choices=["raise", "sigkill", "hang", "mismatch", "none"])
p.add_argument("--bad-rank", type=int, required=True)
p.add_argument("--step", type=int, default=3)
p.add_argument("--steps", type=int, default=8)
p.add_argument("--timeout", type=int, default=20, help="process-group timeout (s)")
p.add_argument("--sleep", type=float, default=60, help="hang: how long the bad rank stalls (s)")
p.add_argument("--stats-n", type=int, default=8, help="mismatch: number of stats the bad rank all_reduces (others 4)")
p.add_argument("--no-ddp", action="store_true")
p.add_argument("--log-local", action="store_true",
               help="log the step line with the rank's own loss BEFORE the loss all_reduce (no avg_loss)")
p.add_argument("--rank-from", choices=["torchrun", "slurm"], default="torchrun")
args = p.parse_args()

if args.rank_from == "torchrun":
    RANK, WORLD = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    LOCAL = int(os.environ["LOCAL_RANK"])
else:
    RANK, WORLD = int(os.environ["SLURM_PROCID"]), int(os.environ["SLURM_NTASKS"])
    LOCAL = int(os.environ.get("SLURM_LOCALID", "0"))
BAD = RANK == args.bad_rank

logging.basicConfig(level=logging.INFO, stream=sys.stdout,
                    format=f"%(asctime)s %(levelname)s train [rank{RANK}] %(message)s")
log = logging.getLogger("train")


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU())
        self.head = nn.Linear(32, 1)

    def forward(self, x):
        return self.head(self.body(x))


SHARD_INDEX = {f"sample-{i:05d}": i for i in range(0, 4096)}


def load_batch(step):
    g = torch.Generator().manual_seed(1000 * RANK + step)
    ids = [f"sample-{(RANK * 512 + step * 32 + j):05d}" for j in range(32)]
    if args.mode == "raise" and BAD and step == args.step:
        ids[11] = "sample-7c2e9"                     # induced: a corrupt id in this rank's shard manifest
    offs = torch.tensor([SHARD_INDEX[i] for i in ids], dtype=torch.float32)
    x = torch.randn(32, 16, generator=g) + 0.0 * offs[:, None]
    return x, x.sum(1, keepdim=True) * 0.1


def main():
    dist.init_process_group("gloo", rank=RANK, world_size=WORLD, timeout=timedelta(seconds=args.timeout))
    log.info("process group ready (gloo, world_size=%d, local_rank=%d, host=%s, slurm_task=%s, job=%s, timeout=%ds)",
             WORLD, LOCAL, socket.gethostname(), os.environ.get("SLURM_PROCID", "?"),
             os.environ.get("SLURM_JOB_ID", "?"), args.timeout)
    torch.manual_seed(0)
    net = Net()
    model = net if args.no_ddp else DDP(net)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    for step in range(args.steps):
        t0 = time.time()
        x, y = load_batch(step)
        loss = nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        if args.no_ddp:
            for prm in model.parameters():           # manual gradient averaging
                dist.all_reduce(prm.grad)
                prm.grad /= WORLD
        opt.step()
        avg = loss.detach().clone()
        if args.mode == "hang" and BAD and step == args.step:
            time.sleep(args.sleep)                   # induced: a silent stall before the collective
        if args.log_local:
            log.info("step %d/%d loss=%.4f step_time=%.2fs", step, args.steps, loss.item(), time.time() - t0)
        dist.all_reduce(avg)
        avg /= WORLD
        if args.mode == "mismatch" and step == args.step:
            n = args.stats_n if BAD else 4           # induced: this rank packs --stats-n grad-norm stats, others 4
            stats = torch.ones(n)
            dist.all_reduce(stats)
            log.info("grad-norm stats synced (%d values)", n)
        if not args.log_local:
            log.info("step %d/%d loss=%.4f avg_loss=%.4f step_time=%.2fs", step, args.steps, loss.item(), avg.item(),
                     time.time() - t0)
        if args.mode == "sigkill" and BAD and step == args.step:
            os.kill(os.getpid(), signal.SIGKILL)     # induced: killed, no traceback
        time.sleep(0.3)
    dist.barrier()
    log.info("training done")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
