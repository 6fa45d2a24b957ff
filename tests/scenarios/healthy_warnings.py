"""A healthy compiled training run that prints genuine, harmless torch warnings.

Warnings: GradScaler asked for CUDA on a CPU-only box (disables itself), torch.tensor() copy-constructing
from a tensor, and lr_scheduler.step() called before optimizer.step() (on purpose, once).
"""

import logging

import torch
import torch.nn as nn

logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
log = logging.getLogger("train")
torch.manual_seed(0)

model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.9)
scaler = torch.amp.GradScaler("cuda")  # no CUDA here: warns and disables itself
sched.step()  # before the first optimizer.step(): warns, harmless here
cmodel = torch.compile(model)
for step in range(2):
    x = torch.tensor(torch.randn(8, 16))  # copy-construct warning
    loss = cmodel(x).pow(2).mean()
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()
    opt.zero_grad()
    log.info("step %d loss %.4f lr %.3f", step, loss.item(), sched.get_last_lr()[0])
log.info("done")
