import torch, torch.nn as nn, torch.nn.functional as F
from common import get_logger
log = get_logger()
class Net(nn.Module):
    def __init__(self):
        super().__init__(); self.a = nn.Linear(128, 128); self.b = nn.Linear(128, 10)
    def forward(self, x):
        h = torch.relu(self.a(x))
        scale = h.abs().mean().item()      # data-dependent scalar
        if scale > 0.5:
            h = h * 0.5
        print("activation scale", round(scale, 3))
        return self.b(h)
model = Net().cuda(); opt = torch.optim.SGD(model.parameters(), lr=0.1)
cm = torch.compile(model)
for step in range(1, 9):
    x = torch.randn(32, 128, device="cuda"); y = torch.randint(0, 10, (32,), device="cuda")
    loss = F.cross_entropy(cm(x), y); opt.zero_grad(); loss.backward(); opt.step()
    log.info("step %d loss %.4f", step, loss.item())
log.info("finished 8 steps")
