import os, datetime, torch, torch.distributed as dist, torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from common import MLP, get_logger
log = get_logger()
dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=120))
rank, world = dist.get_rank(), dist.get_world_size()
torch.manual_seed(rank)
model = MLP()  # CPU replica for DDP/gloo
ddp = DDP(model)
opt = torch.optim.SGD(ddp.parameters(), lr=0.05)
# a GPU side-model compiled with max-autotune for the eval metric
evalnet = MLP().cuda().eval()
ceval = torch.compile(evalnet, mode="max-autotune-no-cudagraphs")
log.info("rank %d/%d ready", rank, world)
for step in range(1, 21):
    x = torch.randn(32, 256); y = torch.randint(0, 10, (32,))
    loss = F.cross_entropy(ddp(x), y)
    opt.zero_grad(); loss.backward(); opt.step()
    if step % 5 == 0:
        evalnet.load_state_dict(model.state_dict())
        with torch.no_grad():
            acc = (ceval(x.cuda()).argmax(-1).cpu() == y).float().mean()
        t = torch.tensor([loss.item(), acc.item()]); dist.all_reduce(t); t /= world
        if rank == 0:
            log.info("step %d/20 loss %.4f acc %.3f", step, t[0].item(), t[1].item())
dist.barrier()
if rank == 0:
    log.info("done")
dist.destroy_process_group()
