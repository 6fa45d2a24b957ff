import torch, torch.distributed as dist, torch.nn as nn
dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
torch.manual_seed(0)
model = nn.parallel.DistributedDataParallel(nn.Linear(16, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
# samples are split by file; rank 3 got the shortest file
num_batches = [12, 12, 12, 9][rank]
for step in range(num_batches):
    opt.zero_grad()
    loss = model(torch.randn(8, 16)).pow(2).mean()
    loss.backward()
    opt.step()
print(f"rank {rank}: epoch finished after {num_batches} batches", flush=True)
dist.destroy_process_group()
