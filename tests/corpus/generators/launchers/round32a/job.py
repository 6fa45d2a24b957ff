"""Tiny data-parallel training job (gloo, CPU) run by one torchrun agent per "node" (round 32a).

Scenario comes from argv[1]; the fault is placed on one (node, local rank) pair given by the env vars
FAULT_NODE (e.g. node-b) and FAULT_LOCAL (e.g. 1), at step FAULT_STEP. NODE_NAME is set by node.sh.
  healthy   - no fault; noisy but harmless output (a UserWarning, a caught+logged exception, INFO lines)
  raise     - faulty rank raises KeyError in its data loading at step k
  sigkill   - faulty rank SIGKILLs itself at step k (no traceback)
  hang      - faulty rank sleeps PG_TIMEOUT+60 s before the step-k all_reduce, so the others time out
  mismatch  - faulty rank all_reduces a gradient bucket of a different size at step k
  hostoom   - faulty rank moves itself into the memory cgroup OOM_CGROUP at start, then allocates and
              touches memory at step k until the kernel OOM killer SIGKILLs it
LOG_NODE=1 puts the node name into this program's own log format; otherwise only the rank is shown.
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

SCEN = sys.argv[1] if len(sys.argv) > 1 else "healthy"
NODE = os.environ.get("NODE_NAME", "?")
LOCAL = int(os.environ["LOCAL_RANK"])
FAULT_NODE = os.environ.get("FAULT_NODE", "node-b")
FAULT_LOCAL = int(os.environ.get("FAULT_LOCAL", "1"))
FAULT_STEP = int(os.environ.get("FAULT_STEP", "3"))
PG_TIMEOUT = int(os.environ.get("PG_TIMEOUT", "20"))
STEPS = 6
faulty = SCEN != "healthy" and NODE == FAULT_NODE and LOCAL == FAULT_LOCAL

if faulty and SCEN == "hostoom":      # join the memory cgroup before doing anything big
    with open(os.path.join(os.environ["OOM_CGROUP"], "cgroup.procs"), "w") as f:
        f.write(str(os.getpid()))

dist.init_process_group("gloo", timeout=timedelta(seconds=PG_TIMEOUT))
rank, world = dist.get_rank(), dist.get_world_size()
fmt = ("%(asctime)s %(levelname)s [" + NODE + f" rank {rank}/{world}] %(name)s: %(message)s"
       if os.environ.get("LOG_NODE") == "1" else
       f"[%(asctime)s][rank{rank}][%(levelname)s] %(message)s")
logging.basicConfig(level=logging.INFO, format=fmt, stream=sys.stdout, force=True)
log = logging.getLogger("train")
log.info("process group ready: backend=gloo world_size=%d local_rank=%d pid=%d", world, LOCAL, os.getpid())

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))
opt = torch.optim.SGD(model.parameters(), lr=0.05)
for p in model.parameters():          # start every rank from rank 0's weights
    dist.broadcast(p.data, src=0)

shards = {f"shard-{rank}-{i}": i for i in range(STEPS)}   # the "dataset index" this rank reads


def load_batch(step):
    key = f"shard-{rank}-{step}"
    if faulty and SCEN == "raise" and step == FAULT_STEP:
        key = f"shard-{rank}-{step}.tmp"                    # a stale index entry that is not there
    seed = shards[key]
    g = torch.Generator().manual_seed(1000 * rank + seed)
    return torch.randn(32, 16, generator=g), torch.randint(0, 4, (32,), generator=g)


if SCEN == "healthy":
    warnings.warn("dataloader num_workers=0: loading in the main process, this may be slow", UserWarning)
    try:
        import tensorboard  # noqa: F401  (optional, not installed)
    except ImportError:
        log.exception("tensorboard not available, metrics will only be logged to stdout")

for step in range(STEPS):
    t0 = time.time()
    x, y = load_batch(step)
    loss = torch.nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    if faulty and step == FAULT_STEP:
        if SCEN == "sigkill":
            os.kill(os.getpid(), signal.SIGKILL)
        elif SCEN == "hang":
            time.sleep(PG_TIMEOUT + 60)                      # stuck (e.g. on a slow filesystem)
        elif SCEN == "hostoom":
            hog = []
            while True:                                      # 128 MiB at a time, every page touched
                hog.append(torch.ones(32 * 1024 * 1024))
                log.info("cache grew to %d MiB", 128 * len(hog))
    flat = torch.cat([p.grad.reshape(-1) for p in model.parameters()])
    if faulty and SCEN == "mismatch" and step == FAULT_STEP:
        flat = flat[:-4]                                     # bucket built from a stale parameter list
    dist.all_reduce(flat)
    flat /= world
    off = 0
    for p in model.parameters():
        n = p.numel(); p.grad.copy_(flat[off:off + n].view_as(p)); off += n
    opt.step()
    lv = loss.detach().clone(); dist.all_reduce(lv)
    time.sleep(0.2)                                          # pretend the step has real work
    log.info("step %d/%d loss=%.4f avg_loss=%.4f (%.2fs)", step + 1, STEPS, loss.item(), lv.item() / world, time.time() - t0)

dist.barrier()
log.info("training done")
dist.destroy_process_group()
