import torch, torch.distributed as dist, torch.nn as nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Linear(16, 16)
        self.head_a = nn.Linear(16, 4)
        self.head_b = nn.Linear(16, 4)
    def forward(self, x, task):
        h = torch.relu(self.trunk(x))
        out = self.head_a(h)
        if task == "ab":
            out = out + self.head_b(h)
        return out
dist.init_process_group("gloo")
rank = dist.get_rank()
torch.manual_seed(rank)
model = nn.parallel.DistributedDataParallel(Net())
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(4):
    task = "a" if (rank == 1 and step >= 1) else "ab"
    opt.zero_grad()
    loss = model(torch.randn(8, 16), task).pow(2).mean()
    loss.backward()
    opt.step()
    print(f"rank {rank} step {step} task {task} loss {loss.item():.4f}", flush=True)
dist.destroy_process_group()
