import torch
from common import get_logger
log = get_logger()
@torch.compile(mode="reduce-overhead")
def update(buf, g):
    buf.mul_(0.9).add_(g, alpha=0.1)   # in-place update of a graph input
    return buf.norm()
buf = torch.zeros(1024, device="cuda")
for step in range(1, 6):
    n = update(buf, torch.randn(1024, device="cuda"))
    log.info("step %d ema norm %.4f", step, n.item())
log.info("done")
