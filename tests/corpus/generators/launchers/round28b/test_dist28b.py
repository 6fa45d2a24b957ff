"""Round 28b: pytest tests of a distributed step and a compiled model (run with pytest -x ... -k <name>).
test_ddp_allreduce_step: mp.spawn 3 gloo ranks; rank 1's data lookup raises KeyError at step 3 (fails the test).
test_compiled_forward_fullgraph: torch.compile(fullgraph=True) of a forward with a data-dependent branch (fails).
test_loss_decreases: a passing test."""
import os, socket
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn


def _free_port():
    s = socket.socket(); s.bind(("127.0.0.1", 0)); p = s.getsockname()[1]; s.close(); return p


def _shard(rank, step):
    cache = {f"shard-{s:05d}": s for s in range(8) if not (rank == 1 and s == 3)}
    return torch.randn(16, 8) + cache[f"shard-{step:05d}"]


def _worker(rank, world, port):
    os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"] = "127.0.0.1", str(port)
    dist.init_process_group("gloo", rank=rank, world_size=world, timeout=timedelta(seconds=60))
    torch.manual_seed(0)
    model = nn.parallel.DistributedDataParallel(nn.Linear(8, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    for step in range(6):
        x = _shard(rank, step)
        loss = nn.functional.mse_loss(model(x), x.sum(1, keepdim=True))
        opt.zero_grad(); loss.backward(); opt.step()
        print(f"[rank{rank}] step {step} loss {loss.item():.4f}", flush=True)
    dist.destroy_process_group()


def test_ddp_allreduce_step():
    mp.spawn(_worker, args=(3, _free_port()), nprocs=3, join=True)


class Branchy(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x):
        h = self.lin(x)
        if h.sum() > 0:
            return h.relu()
        return h


def test_compiled_forward_fullgraph():
    m = torch.compile(Branchy(), fullgraph=True)
    out = m(torch.randn(4, 8))
    assert out.shape == (4, 8)


def test_loss_decreases():
    torch.manual_seed(0)
    m = nn.Linear(8, 1); opt = torch.optim.SGD(m.parameters(), lr=0.05)
    x = torch.randn(64, 8); y = x.sum(1, keepdim=True)
    first = None
    for _ in range(20):
        loss = nn.functional.mse_loss(m(x), y); opt.zero_grad(); loss.backward(); opt.step()
        first = first if first is not None else loss.item()
    assert loss.item() < first
