"""mp.spawn DDP job (gloo, CPU) whose DataLoader uses num_workers=2.

Induced: on rank --bad-rank, Dataset.__getitem__ raises (inside a DataLoader worker process) for the sample
at index --bad-index; the DataLoader re-raises the worker's exception in the rank's main process, and mp.spawn
reports the rank's failure.
"""
import argparse, os, time
from datetime import timedelta
import torch, torch.nn as nn, torch.distributed as dist, torch.multiprocessing as mp
from torch.utils.data import DataLoader, Dataset, DistributedSampler
from torch.nn.parallel import DistributedDataParallel as DDP


class Records(Dataset):
    def __init__(self, rank, bad_rank, bad_index, n=480):
        self.rank, self.bad_rank, self.bad_index, self.n = rank, bad_rank, bad_index, n
    def __len__(self):
        return self.n
    def __getitem__(self, i):
        if self.rank == self.bad_rank and i == self.bad_index:
            # induced: a corrupt record that fails to decode
            raise UnicodeDecodeError("utf-8", b"\xff\xfe", 0, 1, f"invalid start byte in record {i}")
        g = torch.Generator().manual_seed(i)
        x = torch.randn(12, generator=g)
        return x, x.mean().unsqueeze(0)


def worker(rank, world, port, bad_rank, bad_index):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=world, timeout=timedelta(seconds=20))
    ds = Records(rank, bad_rank, bad_index)
    sampler = DistributedSampler(ds, num_replicas=world, rank=rank, shuffle=False)
    dl = DataLoader(ds, batch_size=16, sampler=sampler, num_workers=2)
    model = DDP(nn.Linear(12, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for step, (x, y) in enumerate(dl):
        loss = nn.functional.mse_loss(model(x), y)
        opt.zero_grad(); loss.backward(); opt.step()
        print(f"[rank {rank}] step {step} loss {loss.item():.4f}", flush=True)
        time.sleep(0.1)
    dist.destroy_process_group()


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--world", type=int, default=3)
    p.add_argument("--port", type=int, default=29631)
    p.add_argument("--bad-rank", type=int, default=1)
    p.add_argument("--bad-index", type=int, default=301)
    a = p.parse_args()
    mp.spawn(worker, args=(a.world, a.port, a.bad_rank, a.bad_index), nprocs=a.world, join=True)
