import os, torch, torch.distributed as dist, torch.nn as nn
dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
ckdir = "/tmp/h7b/ckpt_step1000"
model = nn.parallel.DistributedDataParallel(nn.Linear(32, 32))
opt = torch.optim.Adam(model.parameters())
model(torch.randn(2, 32)).sum().backward(); opt.step()
if rank == 0:
    os.makedirs(ckdir, exist_ok=True)
    for r in range(world):
        torch.save(opt.state_dict(), f"{ckdir}/optim_rank{r}.pt")
    # simulate the copy of rank 1's shard being cut off by a full disk
    with open(f"{ckdir}/optim_rank1.pt", "r+b") as fh:
        fh.truncate(700)
dist.barrier()
print(f"rank {rank}: resuming from {ckdir}/optim_rank{rank}.pt", flush=True)
state = torch.load(f"{ckdir}/optim_rank{rank}.pt")
opt.load_state_dict(state)
for step in range(3):
    opt.zero_grad(); model(torch.randn(2, 32)).sum().backward(); opt.step()
print(f"rank {rank}: resumed training ok", flush=True)
dist.destroy_process_group()
