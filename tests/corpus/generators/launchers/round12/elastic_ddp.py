"""Plain DDP job (gloo, CPU) for torchrun elastic restarts (--max-restarts N).

The attempt number is TORCHELASTIC_RESTART_COUNT. --mode chooses what is induced:
  same   : rank --rank-a raises ValueError at step --step in every attempt (restart does not help)
  switch : attempt 0: rank --rank-a raises ValueError (bad shard); attempt 1: a DIFFERENT rank --rank-b raises
           FileNotFoundError (missing checkpoint file on resume)
  recover: attempt 0: rank --rank-a raises ValueError at step --step; attempt 1 trains to the end, exit 0
"""
import argparse, os, sys, time, logging
from datetime import timedelta
import torch, torch.nn as nn, torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

p = argparse.ArgumentParser()
p.add_argument("--mode", required=True, choices=["same", "switch", "recover"])
p.add_argument("--rank-a", type=int, default=1)
p.add_argument("--rank-b", type=int, default=2)
p.add_argument("--step", type=int, default=3)
p.add_argument("--steps", type=int, default=6)
args = p.parse_args()

attempt = int(os.environ.get("TORCHELASTIC_RESTART_COUNT", "0"))
logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s train: %(message)s")
log = logging.getLogger("train")

# torch 2.13 + gloo: on a restart the agent's store still holds attempt 0's gloo addresses, and attempt 1's
# connectFullMesh dials the dead workers ("Connect timeout"). Namespace the store per attempt to avoid that.
store, _, _ = next(dist.rendezvous("env://", timeout=timedelta(seconds=20)))
dist.init_process_group("gloo", store=dist.PrefixStore(f"attempt_{attempt}/", store),
                        rank=int(os.environ["RANK"]), world_size=int(os.environ["WORLD_SIZE"]),
                        timeout=timedelta(seconds=20))
rank, world = dist.get_rank(), dist.get_world_size()
log.info("attempt %d: rank %d/%d initialized", attempt, rank, world)

torch.manual_seed(0)
model = DDP(nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 1)))
opt = torch.optim.SGD(model.parameters(), lr=0.05)
g = torch.Generator().manual_seed(rank)


def load_shard(step):
    """Fetch this rank's batch; the induced faults live here."""
    if args.mode in ("same", "recover", "switch") and rank == args.rank_a and step == args.step:
        if args.mode == "same" or attempt == 0:
            raise ValueError(f"shard_{rank:02d}.bin: record {step * 64} has 15 features, expected 16")
    if args.mode == "switch" and attempt >= 1 and rank == args.rank_b and step == args.step:
        raise FileNotFoundError(f"[Errno 2] No such file or directory: 'ckpt/optimizer_rank{rank}.pt'")
    x = torch.randn(32, 16, generator=g)
    return x, x.sum(dim=1, keepdim=True)


for step in range(args.steps):
    x, y = load_shard(step)
    loss = nn.functional.mse_loss(model(x), y)
    opt.zero_grad(); loss.backward(); opt.step()
    log.info("attempt %d rank %d step %d loss %.4f", attempt, rank, step, loss.item())
    time.sleep(0.2)

dist.barrier()
log.info("attempt %d rank %d training complete", attempt, rank)
dist.destroy_process_group()
