import torch
from common import get_logger
log = get_logger()
def pad_to_block(x):
    if x.shape[0] == 16:
        return x * 2
    return torch.nn.functional.pad(x, (0, 0, 0, 8 - x.shape[0] % 8))
f = torch.compile(pad_to_block, fullgraph=True)
x = torch.randn(16, 32, device="cuda")
torch._dynamo.mark_dynamic(x, 0)
log.info("compiling pad_to_block with dynamic batch dim")
y = f(x)
log.info("output %s", tuple(y.shape))
