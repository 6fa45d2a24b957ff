"""Tiny DDP training job (CPU, gloo) used as the worker of every round-35a multi-node torchrun case.

The faults of this round are mostly in the rendezvous / store / agents (induced by run_all.sh, not here);
this script only adds the few worker-side faults, each chosen by a flag:
  --kill-rank R --kill-step K      global rank R SIGKILLs itself at step K (no traceback)
  --kill-once                      ... only on the first attempt (TORCHELASTIC_RESTART_COUNT == 0)
  --late-rank R --late-sec S       global rank R sleeps S seconds before init_process_group
  --hang-rank R --hang-step K      global rank R sleeps --hang-sec before its all_reduce at step K
  --pg-timeout T                   init_process_group(timeout=T seconds)
  --store-heartbeat                every rank sets a progress key in the c10d store at every step
Rank 0 touches $MARK_DIR/step<K> at every step so run_all.sh can kill an agent mid-training.
"""
import argparse
import datetime
import logging
import os
import signal
import socket
import time

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

p = argparse.ArgumentParser()
p.add_argument("--steps", type=int, default=8)
p.add_argument("--step-sec", type=float, default=0.5, help="sleep per step (simulated work)")
p.add_argument("--pg-timeout", type=float, default=30)
p.add_argument("--kill-rank", type=int, default=-1)
p.add_argument("--kill-step", type=int, default=3)
p.add_argument("--kill-once", action="store_true")
p.add_argument("--late-rank", type=int, default=-1)
p.add_argument("--late-sec", type=float, default=0)
p.add_argument("--hang-rank", type=int, default=-1)
p.add_argument("--hang-step", type=int, default=3)
p.add_argument("--hang-sec", type=float, default=120)
p.add_argument("--store-heartbeat", action="store_true", help="each rank writes its progress to the c10d store every step")
a = p.parse_args()

rank = int(os.environ["RANK"])
world = int(os.environ["WORLD_SIZE"])
local_rank = int(os.environ["LOCAL_RANK"])
attempt = int(os.environ.get("TORCHELASTIC_RESTART_COUNT", "0"))
node = os.environ.get("NODE_NAME", socket.gethostname())
logging.basicConfig(level=logging.INFO, format=f"%(asctime)s %(levelname)s [{node} rank{rank}] %(message)s")
log = logging.getLogger("train")

if rank == a.late_rank:
    log.info("waiting %.0fs for the input shards to be staged before joining the process group", a.late_sec)
    time.sleep(a.late_sec)  # fault: this rank joins init_process_group late

log.info("init_process_group(gloo) world_size=%d local_rank=%d master=%s:%s attempt=%d", world, local_rank,
         os.environ.get("MASTER_ADDR"), os.environ.get("MASTER_PORT"), attempt)
dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=a.pg_timeout))
torch.manual_seed(0)
model = DDP(nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 1)))
opt = torch.optim.SGD(model.parameters(), lr=0.05)
g = torch.Generator().manual_seed(rank)
mark = os.environ.get("MARK_DIR")

for step in range(1, a.steps + 1):
    if rank == a.kill_rank and step == a.kill_step and not (a.kill_once and attempt > 0):
        os.kill(os.getpid(), signal.SIGKILL)  # fault: killed, no traceback
    x = torch.randn(32, 16, generator=g)
    y = x.sum(1, keepdim=True)
    loss = nn.functional.mse_loss(model(x), y)
    opt.zero_grad()
    loss.backward()  # DDP all_reduce of gradients
    opt.step()
    if rank == a.hang_rank and step == a.hang_step:
        log.info("step %d: flushing metrics to the tracking server", step)
        time.sleep(a.hang_sec)  # fault: this rank stops calling collectives
    if a.store_heartbeat:  # progress tracker: a key per rank in the job's store (lives in the node-rank-0 agent)
        dist.distributed_c10d._get_default_store().set(f"progress/rank{rank}", str(step))
    t = loss.detach().clone()
    dist.all_reduce(t)
    time.sleep(a.step_sec)
    if rank == 0:
        log.info("step %d/%d loss %.4f (mean over %d ranks %.4f)", step, a.steps, loss.item(), world, t.item() / world)
        if mark:
            open(os.path.join(mark, f"step{step}"), "w").close()

dist.barrier()
log.info("training finished")
dist.destroy_process_group()
