import os, datetime, torch, torch.distributed as dist, torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from common import MLP, get_logger
log = get_logger()
dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=30))
rank = dist.get_rank()
if os.environ.get("INDUCTOR_CXX") and rank == 1:
    import torch._inductor.config as icfg
    icfg.cpp.cxx = (os.environ["INDUCTOR_CXX"],)
torch.manual_seed(0)
model = DDP(MLP(d=64, h=128))
cm = torch.compile(model)
opt = torch.optim.SGD(model.parameters(), lr=0.05)
for step in range(1, 11):
    x = torch.randn(16, 64); y = torch.randint(0, 10, (16,))
    loss = F.cross_entropy(cm(x), y); opt.zero_grad(); loss.backward(); opt.step()
    log.info("step %d loss %.4f", step, loss.item())
dist.destroy_process_group()
