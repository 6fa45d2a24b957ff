import os, torch, torch.distributed as dist
from common import MLP, get_logger
log = get_logger()
local_rank = int(os.environ["LOCAL_RANK"])
log.info("visible GPUs: %d", torch.cuda.device_count())
torch.cuda.set_device(local_rank)
dist.init_process_group("nccl")
model = MLP().cuda()
t = torch.ones(1, device="cuda"); dist.all_reduce(t)
log.info("all_reduce ok %s", t.item())
dist.destroy_process_group()
