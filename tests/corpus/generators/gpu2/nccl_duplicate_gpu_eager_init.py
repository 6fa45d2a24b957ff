# Two ranks bind the same GPU and create the NCCL communicator eagerly (device_id=...): NCCL refuses.
import os
from datetime import timedelta

import torch
import torch.distributed as dist

rank = int(os.environ["RANK"])
dev = torch.device("cuda", 0)  # bug: should be LOCAL_RANK
torch.cuda.set_device(dev)
print(f"[rank{rank}] INFO init_process_group on {dev}", flush=True)
dist.init_process_group("nccl", device_id=dev, timeout=timedelta(seconds=30))
t = torch.ones(4, device=dev)
dist.all_reduce(t)
print(f"[rank{rank}] INFO all_reduce {t.tolist()}", flush=True)
dist.destroy_process_group()
