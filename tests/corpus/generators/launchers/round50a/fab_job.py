"""Lightning Fabric job (CPU, strategy ddp, gloo), run as 2 "nodes" x devices=2 on one host.

Launched twice by run_all.sh: NODE_RANK=0 and NODE_RANK=1 (MASTER_ADDR/MASTER_PORT shared); Fabric itself
starts the second local process of each node. The bad process is chosen by BAD_NODE/BAD_LOCAL
(node_rank, local_rank), so its global rank is BAD_NODE*2 + BAD_LOCAL. Fault: see common.py.
"""
import logging
import os
from datetime import timedelta

import torch
import torch.nn as nn
import torch.distributed as dist
from lightning.fabric import Fabric
from lightning.fabric.strategies import DDPStrategy

from common import fault_before_step, load_batch, reduce_metric

logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
log = logging.getLogger("fabjob")

fabric = Fabric(accelerator="cpu", devices=2, num_nodes=2,
                strategy=DDPStrategy(process_group_backend="gloo", timeout=timedelta(seconds=20)))
fabric.launch()
is_bad = (fabric.node_rank == int(os.environ.get("BAD_NODE", 1))
          and fabric.local_rank == int(os.environ.get("BAD_LOCAL", 0)))
log.info("worker up: node_rank=%d local_rank=%d global_rank=%d world_size=%d pid=%d",
         fabric.node_rank, fabric.local_rank, fabric.global_rank, fabric.world_size, os.getpid())

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
model, opt = fabric.setup(model, opt)
gen = torch.Generator().manual_seed(100 + fabric.global_rank)
for step in range(6):
    fault_before_step(step, is_bad)
    x, y = load_batch(step, is_bad, gen)
    loss = nn.functional.mse_loss(model(x), y)
    opt.zero_grad()
    fabric.backward(loss)
    opt.step()
    mean = reduce_metric(loss, step, is_bad)
    fabric.print(f"step {step} mean_loss={mean:.4f}")  # global rank 0 only
    log.info("node %d local %d: step %d loss=%.4f", fabric.node_rank, fabric.local_rank, step, loss.item())
fabric.barrier()
log.info("node %d local %d: done", fabric.node_rank, fabric.local_rank)
