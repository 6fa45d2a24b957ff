# Negative control: a one-rank DDP job with torch.compile under torchrun, NCCL_DEBUG=INFO noise, clean exit.
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

local_rank = int(os.environ["LOCAL_RANK"])
torch.cuda.set_device(local_rank)
dist.init_process_group("nccl")
torch.set_float32_matmul_precision("high")
model = torch.nn.Sequential(torch.nn.Linear(512, 1024), torch.nn.GELU(), torch.nn.Linear(1024, 10)).cuda()
ddp = DDP(model, device_ids=[local_rank])
cmodel = torch.compile(ddp)
opt = torch.optim.AdamW(cmodel.parameters(), lr=1e-3)
for step in range(6):
    x = torch.randn(128, 512, device="cuda")
    y = torch.randint(0, 10, (128,), device="cuda")
    loss = torch.nn.functional.cross_entropy(cmodel(x), y)
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
    print(f"[rank{dist.get_rank()}] INFO step={step} loss={loss.item():.4f}", flush=True)
dist.destroy_process_group()
print("INFO training finished")
