"""DDP-style job launched by Open MPI's mpirun (rank/size from OMPI_COMM_WORLD_*), gloo backend, env://.

--mode allgather_size: rank --bad-rank passes a tensor of a different size to all_gather at step --step
                       (the others gather 4 floats, it gathers 6) - no TORCH_DISTRIBUTED_DEBUG.
--mode segv          : rank --bad-rank delivers SIGSEGV to itself at step --step (default action: core/exit 139).
"""
import argparse, os, signal, time
from datetime import timedelta
import torch, torch.nn as nn, torch.distributed as dist

p = argparse.ArgumentParser()
p.add_argument("--mode", required=True, choices=["allgather_size", "segv"])
p.add_argument("--bad-rank", type=int, default=0)
p.add_argument("--step", type=int, default=3)
p.add_argument("--steps", type=int, default=8)
args = p.parse_args()

rank = int(os.environ["OMPI_COMM_WORLD_RANK"])
world = int(os.environ["OMPI_COMM_WORLD_SIZE"])
os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
dist.init_process_group("gloo", init_method="env://", rank=rank, world_size=world, timeout=timedelta(seconds=20))
print(f"rank {rank}/{world}: gloo process group up", flush=True)

torch.manual_seed(0)
w = nn.Linear(4, 1)
for step in range(args.steps):
    x = torch.randn(8, 4)
    loss = w(x).pow(2).mean()
    loss.backward()
    for prm in w.parameters():                        # manual gradient averaging
        dist.all_reduce(prm.grad); prm.grad /= world
    with torch.no_grad():
        for prm in w.parameters():
            prm -= 0.1 * prm.grad; prm.grad = None
    # gather per-rank metrics (4 floats per rank)
    n = 6 if (args.mode == "allgather_size" and rank == args.bad_rank and step == args.step) else 4
    metrics = torch.full((n,), float(rank))
    if args.mode == "segv" and rank == args.bad_rank and step == args.step:
        os.kill(os.getpid(), signal.SIGSEGV)          # induced: segmentation fault, no Python traceback
    out = [torch.empty_like(metrics) for _ in range(world)]
    dist.all_gather(out, metrics)
    print(f"rank {rank} step {step} loss {loss.item():.4f}", flush=True)
    time.sleep(0.2)
dist.barrier()
dist.destroy_process_group()
print(f"rank {rank} done", flush=True)
