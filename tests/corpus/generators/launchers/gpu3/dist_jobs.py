"""torchrun --nproc_per_node 2 jobs on a machine with ONE GPU; one scenario each. Model: an MLP in DDP.

  --scenario nccl-duplicate   backend nccl; each rank picks cuda:(LOCAL_RANK % device_count) = cuda:0 for
                              both ranks (the script assumed one GPU per rank). NCCL refuses two ranks of
                              one communicator on one GPU: "Duplicate GPU detected", ncclInvalidUsage at
                              the first collective (DDP's parameter broadcast). Both ranks fail alike.
  --scenario cudaoom-leak     backend gloo, both ranks on cuda:0. The LAST rank is also the "probe" rank:
                              every step it embeds a 131072-sample probe set for the embedding projector
                              and appends the GPU tensor (4 GiB) to a list that is never freed or moved to
                              the CPU; after ~30 steps it runs out of GPU memory (torch.OutOfMemoryError),
                              while rank 0 waits for it in the loss all_reduce.
  --scenario invalid-ordinal  backend gloo; GPUs come from a --gpus list copied from a 4-GPU node's config
                              ("0,3"), so rank 1 asks for cuda:3 on a one-GPU machine: torch.cuda.set_device
                              fails with "invalid device ordinal"; rank 0 waits for it in DDP's broadcast.
"""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP

from jobutil import init_pg, rank_info, setup_logging

IN, HIDDEN, CLASSES, BATCH = 64, 8192, 10, 64
PROBE = 131072                                     # probe set: 131072 x 8192 fp32 = 4 GiB per step


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Sequential(nn.Linear(IN, HIDDEN), nn.ReLU())
        self.head = nn.Linear(HIDDEN, CLASSES)

    def forward(self, x):
        return self.head(self.enc(x))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--scenario", required=True, choices=["nccl-duplicate", "cudaoom-leak", "invalid-ordinal"])
    p.add_argument("--steps", type=int, default=8)
    p.add_argument("--gpus", default="0,3", help="invalid-ordinal: GPU index per local rank")
    p.add_argument("--pg-timeout", type=int, default=60)
    args = p.parse_args()
    log = setup_logging()
    _, rank, local_rank, world = rank_info()

    if args.scenario == "nccl-duplicate":
        index = local_rank % torch.cuda.device_count()        # 1 GPU: every rank gets cuda:0
        backend = "nccl"
    elif args.scenario == "invalid-ordinal":
        index = int(args.gpus.split(",")[local_rank])         # rank 1 -> cuda:3
        backend = "gloo"
    else:
        index = 0
        backend = "gloo"
        args.steps = max(args.steps, 60)
    init_pg(backend, args.pg_timeout)
    log.info("rank %d using cuda:%d (%d visible GPU(s))", rank, index, torch.cuda.device_count())
    torch.cuda.set_device(index)
    dev = torch.device("cuda", index)
    torch.manual_seed(0)
    model = DDP(Net().to(dev), device_ids=[index])
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    probe_rank = world - 1
    probe = torch.randn(PROBE, IN, device=dev) if args.scenario == "cudaoom-leak" and rank == probe_rank else None
    projector_bank = []                                       # meant for a TensorBoard projector callback
    for step in range(args.steps):
        x = torch.randn(BATCH, IN, device=dev)
        y = torch.randint(0, CLASSES, (BATCH,), device=dev)
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if probe is not None:
            with torch.no_grad():
                projector_bank.append(model.module.enc(probe))   # BUG: kept on the GPU, never cleared
        metric = loss.detach().reshape(1)
        dist.all_reduce(metric)
        if rank == 0 and (step < 10 or (step + 1) % 10 == 0):
            log.info("step %d/%d loss %.4f", step + 1, args.steps, metric.item() / world)
    dist.barrier()
    if rank == 0:
        log.info("training finished")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
