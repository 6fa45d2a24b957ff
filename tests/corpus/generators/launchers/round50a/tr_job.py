"""Plain DDP job for torchrun (gloo, timeout 20 s). Its logger prints host and pid, never a rank:
the launcher's own lines (pid <-> local_rank, and the failure summary) are the only map to ranks.
The bad process is global rank BAD_RANK. Fault: see common.py.
"""
import logging
import os
import socket
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.distributed.elastic.multiprocessing.errors import record

from common import fault_before_step, load_batch, reduce_metric

logging.basicConfig(level=logging.INFO,
                    format=f"%(asctime)s {socket.gethostname()} pid=%(process)d %(levelname)s trainer: %(message)s")
log = logging.getLogger("trainer")


@record
def main():
    dist.init_process_group("gloo", timeout=timedelta(seconds=int(os.environ.get("PG_TIMEOUT", 20))))
    is_bad = dist.get_rank() == int(os.environ.get("BAD_RANK", 2))
    log.info("joined process group (%s workers), role=%s", dist.get_world_size(), os.environ.get("ROLE_NAME"))
    torch.manual_seed(0)
    model = nn.parallel.DistributedDataParallel(nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 1)))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    gen = torch.Generator().manual_seed(100 + dist.get_rank())
    for step in range(6):
        fault_before_step(step, is_bad)
        x, y = load_batch(step, is_bad, gen)
        loss = nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        mean = reduce_metric(loss, step, is_bad)
        log.info("step %d loss %.4f (mean %.4f)", step, loss.item(), mean)
    dist.barrier()
    log.info("finished")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
