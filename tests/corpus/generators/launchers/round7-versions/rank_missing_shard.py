# DDP-style training where each rank reads its own data shard; rank 2's shard is missing
import os, torch, torch.distributed as dist, torch.nn as nn
dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
torch.manual_seed(0)
model = nn.parallel.DistributedDataParallel(nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 1)))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
os.makedirs("/tmp/h7b/shards", exist_ok=True)
for r in range(world):
    if r != 2 and rank == 0:
        torch.save(torch.randn(256, 33), f"/tmp/h7b/shards/shard_{r:05d}.pt")
dist.barrier()
for epoch in range(3):
    if epoch == 1:
        data = torch.load(f"/tmp/h7b/shards/shard_{rank:05d}.pt", weights_only=True)
    else:
        data = torch.randn(256, 33)
    x, y = data[:, :32], data[:, 32:]
    for i in range(0, 256, 32):
        opt.zero_grad()
        loss = nn.functional.mse_loss(model(x[i:i+32]), y[i:i+32])
        loss.backward()
        opt.step()
    print(f"rank {rank} epoch {epoch} loss {loss.item():.4f}", flush=True)
dist.destroy_process_group()
