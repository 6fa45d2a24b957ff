# Rank 0 of a 2-process job starts; rank 1 never does (its launch failed on the other node):
# the TCPStore on rank 0 waits for the second client until the 15 s timeout.
import os
from datetime import timedelta

import torch
import torch.distributed as dist

os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT="29534", RANK="0", WORLD_SIZE="2", LOCAL_RANK="0")
torch.cuda.set_device(0)
print("INFO rank 0 waiting for 2 ranks", flush=True)
dist.init_process_group("nccl", timeout=timedelta(seconds=15))
t = torch.ones(4, device="cuda")
dist.all_reduce(t)
print("INFO", t.tolist())
