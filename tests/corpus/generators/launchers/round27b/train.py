"""Plain PyTorch DDP-style training loop (gloo, CPU) run under torchrun on two "nodes".

Fault injection is chosen by env vars (set by collector.py on the ranks of ONE node only):
  SCENARIO   raise | sigkill | hang | mismatch | healthy | nodekill | rdzv
  FAULT_LOCAL_RANK local rank (on the node whose env has it) that misbehaves
  FAULT_STEP step at which it misbehaves
NODE_NAME (node-a / node-b) is a fake hostname printed by this program's own logging format.
"""
import logging
import os
import signal
import sys
import time
import warnings
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn as nn

SCENARIO = os.environ.get("SCENARIO", "healthy")
FAULT_LOCAL_RANK = int(os.environ.get("FAULT_LOCAL_RANK", "-1"))  # only set on node-b
FAULT_STEP = int(os.environ.get("FAULT_STEP", "4"))
STEPS = int(os.environ.get("STEPS", "10"))
NODE = os.environ.get("NODE_NAME", "localhost")
MISMATCH_OP = os.environ.get("MISMATCH_OP", "allreduce")  # allreduce | broadcast
PG_TIMEOUT = int(os.environ.get("PG_TIMEOUT", "20"))


def main():
    rank = int(os.environ["RANK"])
    world = int(os.environ["WORLD_SIZE"])
    local_rank = int(os.environ["LOCAL_RANK"])
    logging.basicConfig(
        level=logging.INFO,
        format=f"%(asctime)s {NODE} [rank{rank}] %(levelname)s %(name)s: %(message)s",
        stream=sys.stdout,
    )
    log = logging.getLogger("train")
    dist.init_process_group("gloo", timeout=timedelta(seconds=PG_TIMEOUT))
    log.info("initialized process group: world_size=%d local_rank=%d backend=gloo", world, local_rank)

    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 1))
    for p in model.parameters():  # same start weights on every rank
        dist.broadcast(p.data, src=0)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    faulty = local_rank == FAULT_LOCAL_RANK
    g = torch.Generator().manual_seed(1234 + rank)

    if SCENARIO == "healthy":
        # noisy but harmless warnings, like real jobs print
        warnings.warn("Detected call of `lr_scheduler.step()` before `optimizer.step()`. "
                      "(harmless in this job: no scheduler is used)", UserWarning)
        _ = torch.tensor(torch.ones(2))  # PyTorch's copy-construct UserWarning

    for step in range(1, STEPS + 1):
        x = torch.randn(64, 16, generator=g)
        y = x.sum(dim=1, keepdim=True) * 0.1
        if faulty and step == FAULT_STEP:
            if SCENARIO == "raise":
                # bug in this rank's data code: the batch dict has no "labels" key
                shard = {"input_ids": x}
                x = shard["labels"]
            elif SCENARIO == "sigkill":
                os.kill(os.getpid(), signal.SIGKILL)  # no traceback, like the OOM killer
            elif SCENARIO == "hang":
                time.sleep(PG_TIMEOUT * 4)  # silent: the others wait in all_reduce
        loss = nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        for p in model.parameters():
            dist.all_reduce(p.grad)
            p.grad /= world
        # metric all_reduce; the mismatching rank sends a tensor of another size
        bad = SCENARIO == "mismatch" and faulty and step == FAULT_STEP
        if MISMATCH_OP == "broadcast":
            # loss-scale sync broadcast from the first rank of node-b (rank world//2 under static
            # rendezvous); at the fault step that rank sends 5 floats where the others expect 4
            scale = torch.ones(5 if bad else 4)
            dist.broadcast(scale, src=world // 2)
        metrics = torch.tensor([loss.item()] * (5 if bad and MISMATCH_OP == "allreduce" else 4))
        dist.all_reduce(metrics)
        if SCENARIO == "healthy" and step == 3 and rank % 2 == 1:
            log.warning("grad norm %.2f above threshold, clipping (step %d)", 7.31, step)
        opt.step()
        log.info("step %d/%d loss=%.4f avg_loss=%.4f", step, STEPS, loss.item(), metrics[0].item() / world)
        time.sleep(0.4)
    dist.barrier()
    log.info("training done")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
