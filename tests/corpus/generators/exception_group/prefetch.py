"""A 3-rank gloo job whose batches come from an asyncio.TaskGroup prefetcher; on rank 1 one fetch of step 3 raises,
so the TaskGroup raises an ExceptionGroup (Python 3.11+) around it. Run: torchrun --nproc-per-node 3 prefetch.py"""
import asyncio
import logging
import os

import torch
import torch.distributed as dist

logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
log = logging.getLogger("train")


async def fetch(rank: int, step: int, part: int) -> torch.Tensor:
    await asyncio.sleep(0.01 * part)
    if rank == 1 and step == 3 and part == 2:
        raise ValueError(f"corrupt record in shard-{step:05d} part {part}: bad magic number 0x00000000")
    return torch.randn(4, 8)


async def prefetch(rank: int, step: int) -> torch.Tensor:
    async with asyncio.TaskGroup() as group:
        tasks = [group.create_task(fetch(rank, step, part)) for part in range(4)]
    return torch.cat([t.result() for t in tasks])


def main() -> None:
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    model = torch.nn.Linear(8, 1)
    for step in range(6):
        batch = asyncio.run(prefetch(rank, step))
        loss = model(batch).pow(2).mean()
        loss.backward()
        for p in model.parameters():
            dist.all_reduce(p.grad)
        log.info("rank %d step %d loss %.4f", rank, step, loss.item())
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
