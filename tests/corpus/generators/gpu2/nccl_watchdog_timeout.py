# One NCCL rank whose compute stream is stuck behind a very long kernel (a straggler): the queued
# all_reduce cannot finish, and the ProcessGroupNCCL watchdog times it out after 10 s and aborts.
import os
from datetime import timedelta

import torch
import torch.distributed as dist

os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
os.environ.setdefault("MASTER_PORT", "29533")
dist.init_process_group("nccl", rank=0, world_size=1, timeout=timedelta(seconds=10),
                        device_id=torch.device("cuda", 0))
t = torch.ones(1 << 20, device="cuda")
dist.all_reduce(t)
torch.cuda.synchronize()
print("INFO step 0 all_reduce ok", flush=True)
torch.cuda._sleep(int(1.2e11))  # ~60 s of GPU time on the compute stream
dist.all_reduce(t)
print("INFO step 1 all_reduce queued; waiting for the result", flush=True)
print("INFO value", t[0].item(), flush=True)
dist.destroy_process_group()
