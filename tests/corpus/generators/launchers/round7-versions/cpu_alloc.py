import torch, torch.distributed as dist, torch.nn as nn
dist.init_process_group("gloo")
rank = dist.get_rank()
model = nn.parallel.DistributedDataParallel(nn.Linear(16, 16))
# per-rank cache of precomputed features; rank 3's partition config has num_items mis-set
num_items = 1_000_000 if rank != 3 else 1_000_000_000_000
print(f"rank {rank}: allocating feature cache for {num_items} items", flush=True)
cache = torch.empty(num_items, 16)
for i in range(5):
    out = model(torch.randn(8, 16)).sum()
    out.backward()
print(f"rank {rank} done", flush=True)
dist.destroy_process_group()
