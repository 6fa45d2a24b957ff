import os, torch, torch.distributed as dist, torch.nn as nn
dist.init_process_group("gloo")
rank = dist.get_rank()
# hidden size is read from a per-node config; rank 3 picked up an old config file
hidden = 256 if rank != 3 else 512
model = nn.Sequential(nn.Linear(64, hidden), nn.GELU(), nn.Linear(hidden, 10))
print(f"rank {rank}: built model with hidden={hidden}", flush=True)
ddp = nn.parallel.DistributedDataParallel(model)
opt = torch.optim.SGD(ddp.parameters(), lr=0.1)
for step in range(3):
    opt.zero_grad(); ddp(torch.randn(4, 64)).sum().backward(); opt.step()
print(f"rank {rank} done", flush=True)
dist.destroy_process_group()
