import torch
from common import MLP, get_logger
log = get_logger()
model = MLP().cuda()
cm = torch.compile(model)
log.info("warming up compiled model")
out = cm(torch.randn(8, 256, device="cuda"))
log.info("ok %s", tuple(out.shape))
