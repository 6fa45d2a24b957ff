import os, logging, datetime, torch, torch.nn as nn, torch.distributed as dist, torch.nn.functional as F
from common import get_logger
log = get_logger()
dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=30))
rank = dist.get_rank()
DEBUG = os.environ.get("DEBUG_RANK") == str(rank)
class Block(nn.Module):
    def __init__(self):
        super().__init__(); self.l1 = nn.Linear(64, 64); self.l2 = nn.Linear(64, 10)
    def forward(self, x):
        h = torch.relu(self.l1(x))
        if DEBUG:
            log.debug("hidden norm %s", h.norm())
        return self.l2(h)
model = Block().cuda()
cm = torch.compile(model, fullgraph=True)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(1, 6):
    x = torch.randn(8, 64, device="cuda"); y = torch.randint(0, 10, (8,), device="cuda")
    loss = F.cross_entropy(cm(x), y); opt.zero_grad(); loss.backward(); opt.step()
    t = torch.tensor([loss.item()]); dist.all_reduce(t)
    if rank == 0:
        log.info("step %d mean loss %.4f", step, t.item() / dist.get_world_size())
dist.destroy_process_group()
