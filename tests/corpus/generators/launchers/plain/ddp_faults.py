"""A tiny DDP training job (CPU, gloo) that can induce one failure on one rank.

Used by the three entry points (train_env.py for torchrun/mpirun, train_spawn.py for
torch.multiprocessing.spawn). Each scenario breaks exactly one rank (FAULT_RANK, never
rank 0) at step FAULT_STEP; the other ranks are healthy and only suffer the consequences.

Scenarios (--scenario):
  none      healthy run (sanity check)
  raise     the faulty rank's data loading hits a record without 'label' -> KeyError: 'label'
  sigkill   the faulty rank SIGKILLs itself (no traceback)
  hang      the faulty rank sleeps longer than the process-group timeout before the next
            step, so the other ranks time out inside DDP's gradient all_reduce
  mismatch  the faulty rank all_reduces its loss-metric tensor with a different size
            (run with TORCH_DISTRIBUTED_DEBUG=DETAIL for the fingerprint check variant)
  compile   --compile-fault cxx: the faulty rank points Inductor at a C++ compiler that does
            not exist (torch._inductor.config.cpp.cxx = /nonexistent/g++) before torch.compile
            --compile-fault fullgraph: the model is compiled with fullgraph=True and its forward
            takes a data-dependent branch (`if x.sum() > 0`) only on the faulty rank
  hostoom   the faulty rank moves itself into the memory cgroup named by $FAULT_CGROUP
            (created by run_all.sh with a small limit) and allocates host memory step by step
            until the kernel OOM killer SIGKILLs it
"""
import argparse
import logging
import os
import signal
import sys
import time
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

logger = logging.getLogger("train")


def parse_args(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("--scenario", default="none",
                   choices=["none", "raise", "sigkill", "hang", "mismatch", "compile", "hostoom"])
    p.add_argument("--fault-rank", type=int, default=2)
    p.add_argument("--fault-step", type=int, default=3)
    p.add_argument("--steps", type=int, default=8)
    p.add_argument("--pg-timeout", type=int, default=15, help="process group timeout, seconds")
    p.add_argument("--hang-seconds", type=int, default=60)
    p.add_argument("--compile-fault", default="cxx", choices=["cxx", "fullgraph"])
    p.add_argument("--grad-sync", default="ddp", choices=["ddp", "manual"],
                   help="manual: all_reduce each gradient by hand instead of wrapping in DDP "
                        "(DDP construction segfaults under TORCH_DISTRIBUTED_DEBUG=DETAIL here)")
    p.add_argument("--nprocs", type=int, default=3, help="mp.spawn only")
    return p.parse_args(argv)


class Net(nn.Module):
    def __init__(self, data_dependent_branch=False):
        super().__init__()
        self.fc1 = nn.Linear(16, 32)
        self.fc2 = nn.Linear(32, 4)
        self.data_dependent_branch = data_dependent_branch

    def forward(self, x):
        h = torch.relu(self.fc1(x))
        if self.data_dependent_branch:
            # branch on a tensor value: not traceable with fullgraph=True
            if h.sum() > 0:
                h = h * 2
        return self.fc2(h)


def load_records(rank, step, args, batch=8):
    """Fake data loading: a list of dict records per step."""
    g = torch.Generator().manual_seed(1000 * rank + step)
    xs = torch.randn(batch, 16, generator=g)
    ys = torch.randint(0, 4, (batch,), generator=g)
    records = [{"features": xs[i], "label": int(ys[i])} for i in range(batch)]
    if args.scenario == "raise" and rank == args.fault_rank and step == args.fault_step:
        # a corrupt shard: one record lost its label field
        records[5] = {"features": xs[5], "lable": int(ys[5])}
    return records


def collate(records):
    x = torch.stack([r["features"] for r in records])
    y = torch.tensor([r["label"] for r in records])
    return x, y


def join_cgroup():
    cg = os.environ["FAULT_CGROUP"]
    with open(os.path.join(cg, "cgroup.procs"), "w") as f:
        f.write(str(os.getpid()))
    logger.info("moved pid %d into memory cgroup %s", os.getpid(), cg)


def run(rank, world_size, args):
    logging.basicConfig(level=logging.INFO,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s", stream=sys.stdout)
    torch.set_num_threads(1)
    torch.manual_seed(0)
    dist.init_process_group("gloo", rank=rank, world_size=world_size,
                            timeout=timedelta(seconds=args.pg_timeout))
    logger.info("rank %d/%d initialized (backend=gloo, pid=%d)", rank, world_size, os.getpid())
    faulty = rank == args.fault_rank

    net = Net(data_dependent_branch=(args.scenario == "compile" and args.compile_fault == "fullgraph"
                                     and faulty))
    module = net
    if args.scenario == "compile":
        if args.compile_fault == "cxx" and faulty:
            import torch._inductor.config as inductor_config
            inductor_config.cpp.cxx = (None, "/nonexistent/g++")
        # compile the inner module, then wrap it in DDP
        module = torch.compile(net, fullgraph=(args.compile_fault == "fullgraph"))
    if args.grad_sync == "ddp":
        model = DDP(module)
    else:
        model = module
        for p in net.parameters():
            dist.broadcast(p.data, src=0)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    loss_fn = nn.CrossEntropyLoss()
    hog = []

    if args.scenario == "hostoom" and faulty:
        join_cgroup()

    for step in range(args.steps):
        if faulty and step == args.fault_step:
            if args.scenario == "sigkill":
                os.kill(os.getpid(), signal.SIGKILL)
            if args.scenario == "hang":
                time.sleep(args.hang_seconds)  # silently stuck (e.g. a stalled filesystem read)
        if args.scenario == "hostoom" and faulty and step >= args.fault_step:
            # a leak: cache 256 MiB of decoded samples per step and touch it
            for _ in range(4):
                hog.append(torch.ones(64 * 1024 * 1024, dtype=torch.uint8))  # 64 MiB, touched
                time.sleep(0.05)
        x, y = collate(load_records(rank, step, args))
        out = model(x)
        loss = loss_fn(out, y)
        opt.zero_grad()
        loss.backward()
        if args.grad_sync == "manual":
            for p in net.parameters():
                dist.all_reduce(p.grad)
                p.grad /= world_size
        opt.step()

        # average the loss for logging
        metric = loss.detach().reshape(1)
        if args.scenario == "mismatch" and faulty and step == args.fault_step:
            # this rank also packs a label histogram into the same reduction -> 1024 elements vs 1
            metric = torch.cat([metric, torch.bincount(y, minlength=1023).float()])
        dist.all_reduce(metric)
        if rank == 0:
            logger.info("step %d/%d loss %.4f", step + 1, args.steps, metric[0].item() / world_size)

    dist.barrier()
    if rank == 0:
        logger.info("training finished")
    dist.destroy_process_group()
