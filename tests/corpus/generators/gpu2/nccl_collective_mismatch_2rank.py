# Two ranks call all_reduce on tensors of different shapes; TORCH_DISTRIBUTED_DEBUG=DETAIL checks the
# collective fingerprints before NCCL runs and reports the mismatch.
import os
from datetime import timedelta

import torch
import torch.distributed as dist

dist.init_process_group("nccl", timeout=timedelta(seconds=20))
rank = dist.get_rank()
torch.cuda.set_device(0)
# rank 1 flattened the gradient bucket differently
grad = torch.ones(1024 if rank == 0 else 1000, device="cuda")
print(f"[rank{rank}] INFO all_reduce numel={grad.numel()}", flush=True)
dist.all_reduce(grad)
torch.cuda.synchronize()
print(f"[rank{rank}] INFO done", flush=True)
dist.destroy_process_group()
