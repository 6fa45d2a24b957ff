import os, torch, torch.distributed as dist
from common import get_logger
log = get_logger()
torch.cuda.set_device(0)
dist.init_process_group("nccl")
log.info("rank %d initialised on cuda:0", dist.get_rank())
t = torch.ones(4, device="cuda"); dist.all_reduce(t)
log.info("sum %s", t.tolist())
dist.destroy_process_group()
