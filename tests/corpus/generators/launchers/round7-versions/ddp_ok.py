import torch, torch.distributed as dist, torch.nn as nn
dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
torch.manual_seed(0)
model = nn.parallel.DistributedDataParallel(nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 1)))
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for step in range(20):
    x = torch.randn(64, 32); y = x.sum(1, keepdim=True)
    opt.zero_grad(); loss = nn.functional.mse_loss(model(x), y); loss.backward(); opt.step()
    if step % 5 == 0 or step == 19:
        l = loss.detach().clone(); dist.all_reduce(l); l /= world
        if rank == 0:
            print(f"step {step:3d} | loss {l.item():.4f}", flush=True)
if rank == 0:
    torch.save(model.module.state_dict(), "/tmp/h7b/ddp_ok_final.pt")
    print("training finished, checkpoint saved to /tmp/h7b/ddp_ok_final.pt", flush=True)
dist.destroy_process_group()
