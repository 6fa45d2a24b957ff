"""Tiny training loop under torch.compile (Inductor, CPU C++ backend).

Used for the C++ toolchain and the cache-corruption scenarios.
  --cxx PATH   set torch._inductor.config.cpp.cxx in code (instead of the CXX environment variable)
"""

import argparse
import logging

import torch
import torch.nn as nn

parser = argparse.ArgumentParser()
parser.add_argument("--cxx", default=None)
args = parser.parse_args()

logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
log = logging.getLogger("train")
if args.cxx:
    torch._inductor.config.cpp.cxx = (None, args.cxx)
    log.info("using C++ compiler %s", args.cxx)

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(16, 32), nn.GELU(), nn.Linear(32, 4))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
cmodel = torch.compile(model)
for step in range(2):
    x = torch.randn(8, 16)
    y = torch.randn(8, 4)
    loss = nn.functional.mse_loss(cmodel(x), y)
    loss.backward()
    opt.step()
    opt.zero_grad()
    log.info("step %d loss %.4f", step, loss.item())
log.info("done")
