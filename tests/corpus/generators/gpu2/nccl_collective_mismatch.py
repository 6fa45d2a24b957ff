# Three ranks; rank 2 calls all_reduce on a tensor of a different shape; TORCH_DISTRIBUTED_DEBUG=DETAIL checks the
# collective fingerprints before NCCL runs and reports the mismatch.
import os
from datetime import timedelta

import torch
import torch.distributed as dist

dist.init_process_group("nccl", timeout=timedelta(seconds=20))
rank = dist.get_rank()
torch.cuda.set_device(0)
# rank 2 flattened the gradient bucket differently
grad = torch.ones(1000 if rank == 2 else 1024, device="cuda")
print(f"[rank{rank}] INFO all_reduce numel={grad.numel()}", flush=True)
dist.all_reduce(grad)
torch.cuda.synchronize()
print(f"[rank{rank}] INFO done", flush=True)
dist.destroy_process_group()
