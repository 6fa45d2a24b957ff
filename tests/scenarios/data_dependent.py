"""Data-dependent Python control flow under torch.compile.

branch      `if tensor:` on a traced value under fullgraph=True  (fatal)
item-guard  `if int(x.item()) == 0:` under fullgraph=True        (fatal)
item-break  Tensor.item() without fullgraph -> graph break, run completes
fixed       the branch rewritten with torch.where under fullgraph=True (works)
"""

import logging
import sys

import torch
import torch.nn as nn

MODE = sys.argv[1]
logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
log = logging.getLogger("infer")
torch.manual_seed(0)


class Gate(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(8, 8)
        self.b = nn.Linear(8, 8)

    def forward(self, x):
        h = self.a(x)
        if MODE == "branch":
            if h.sum() > 0:
                return self.b(h)
            return h
        if MODE == "item-guard":
            n = int((h > 0).sum().item())
            if n == 0:
                return h
            return self.b(h) / n
        if MODE == "item-break":
            scale = h.abs().max().item()
            return self.b(h / (scale + 1e-6))
        return torch.where(h.sum() > 0, self.b(h), h)


model = Gate().eval()
cmodel = torch.compile(model, fullgraph=MODE != "item-break")
with torch.no_grad():
    for step in range(2):
        out = cmodel(torch.randn(4, 8))
        log.info("batch %d out.mean %.4f", step, out.mean().item())
log.info("done")
