"""Token classifier (Embedding -> MLP) on the GPU whose batch holds a token id past the embedding table.

Induces: a CUDA device-side assert in the embedding lookup (index_select kernel: `srcIndex <
srcSelectDimSize`), reported asynchronously (CUDA_LAUNCH_BLOCKING unset), so the Python error surfaces at
a later CUDA call, not at the embedding line.

The story: the tokenizer got VOCAB + 4 added special tokens (<pad>, <bos>, ...) but the model's
embedding was never resized; at step FAULT_STEP the faulty rank's batch contains <pad> = VOCAB + 2.

  python3 device_assert.py                      one process, no process group (the faulty rank is 0)
  torchrun --nproc_per_node 2 device_assert.py  2 ranks that BOTH use cuda:0 (one-GPU machine), gloo,
                                                DDP; only rank 1's batch has the bad id
"""
import argparse

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP

from jobutil import init_pg, rank_info, setup_logging

VOCAB, DIM, CLASSES, SEQ, BATCH = 32000, 256, 8, 128, 16


class TokenClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, DIM)
        self.mlp = nn.Sequential(nn.Linear(DIM, 512), nn.GELU(), nn.Linear(512, CLASSES))

    def forward(self, ids):
        return self.mlp(self.emb(ids).mean(dim=1))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=8)
    p.add_argument("--fault-step", type=int, default=3)
    args = p.parse_args()
    log = setup_logging()
    distributed, rank, _, world = rank_info()
    fault_rank = 1 if distributed else 0
    dev = torch.device("cuda", 0)          # one GPU: every rank uses cuda:0
    torch.cuda.set_device(dev)
    if distributed:
        init_pg("gloo")
    torch.manual_seed(0)
    model = TokenClassifier().to(dev)
    if distributed:
        model = DDP(model, device_ids=[0])
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    g = torch.Generator(device=dev).manual_seed(100 + rank)
    for step in range(args.steps):
        ids = torch.randint(0, VOCAB, (BATCH, SEQ), device=dev, generator=g)
        y = torch.randint(0, CLASSES, (BATCH,), device=dev, generator=g)
        if rank == fault_rank and step == args.fault_step:
            ids[3, -1] = VOCAB + 2         # "<pad>" from the enlarged tokenizer: out of range
        loss = F.cross_entropy(model(ids), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        metric = loss.detach().reshape(1)
        if distributed:
            dist.all_reduce(metric)
        if rank == 0:
            log.info("step %d/%d loss %.4f", step + 1, args.steps, metric.item() / world)
    if distributed:
        dist.destroy_process_group()
    if rank == 0:
        log.info("training finished")


if __name__ == "__main__":
    main()
