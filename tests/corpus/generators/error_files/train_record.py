"""3 gloo ranks on CPU; main() is decorated with @record, so each rank that raises writes torchelastic's
error.json. Rank 1's shard holds 2 batches, so it raises IndexError at step 2; the others then lose their peer
in the next all_reduce (gloo: connection closed) or are SIGTERMed by torchrun."""
import datetime
import os

import torch
import torch.distributed as dist
from torch.distributed.elastic.multiprocessing.errors import record


def shard(rank: int) -> list[torch.Tensor]:
    g = torch.Generator().manual_seed(rank)
    return [torch.randn(8, 16, generator=g) for _ in range(2 if rank == 1 else 5)]


@record
def main() -> None:
    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=30))
    rank = dist.get_rank()
    model = torch.nn.Linear(16, 4)
    batches = shard(rank)
    for step in range(5):
        x = batches[step]
        loss = model(x).pow(2).mean()
        loss.backward()
        for p in model.parameters():
            dist.all_reduce(p.grad)
        print(f"[rank{rank}] step {step} loss {loss.item():.4f}", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
