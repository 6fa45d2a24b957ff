"""torch.distributed.checkpoint (DCP) job: train a small model a few steps, dcp.save a checkpoint, then
"resume": build a fresh model and optimizer, dcp.load the checkpoint and train on.

The first layer's weight is a DTensor sharded on dim 0 over all ranks (each rank writes its own shard file
__<rank>_0.distcp); the rest is replicated (written once, by rank 0).

  torchrun --nproc-per-node 3 dcp_job.py --ckpt ckpt/run1
  python dcp_job.py --spawn 3 --port P --ckpt ckpt/run1          # mp.spawn

Faults (env SCENARIO, FAIL_RANK; see common.py):
  healthy        save, load, resume; everyone finishes
  missingshard   after the save, FAIL_RANK's shard file __<FAIL_RANK>_0.distcp is deleted (node-local
                 scratch cleaner) before the load
  truncated      FAIL_RANK's shard file is truncated to 40% (copy interrupted) before the load
  shape          at resume FAIL_RANK builds its head with 6 outputs instead of 4 (stale config)
  missingkey     at resume FAIL_RANK's state_dict has an extra EMA buffer the checkpoint does not have
  planner        FAIL_RANK saves with a DefaultSavePlanner(flatten_state_dict=False) while the others flatten
  readonly       FAIL_RANK runs as uid 65534 (container user mismatch) and cannot write into the checkpoint dir
                 (DCP_WRITER=explicit: FileSystemWriter(ckpt); DCP_WRITER=auto: dcp.save(checkpoint_id=ckpt))
  hang           FAIL_RANK sleeps 90 s before dcp.save; process group timeout is 20 s
  sigkill        FAIL_RANK is SIGKILLed at the start of dcp.save
"""
import argparse
import os
import shutil
import time
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.distributed.checkpoint as dcp
import torch.multiprocessing as mp
import torch.nn as nn
from torch.distributed.checkpoint import DefaultSavePlanner, FileSystemWriter
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor import DTensor, Shard, distribute_tensor

from common import FAIL_RANK, SCENARIO, is_faulty, setup_logging, sigkill_self

SAVE_STEP = 3
WRITER = os.environ.get("DCP_WRITER", "explicit")  # "explicit": FileSystemWriter(ckpt); "auto": checkpoint_id=ckpt


class Net(nn.Module):
    def __init__(self, out=4):
        super().__init__()
        self.fc1 = nn.Linear(16, 48)
        self.fc2 = nn.Linear(48, out)

    def forward(self, x):
        w1 = self.fc1.weight
        if isinstance(w1, DTensor):
            w1 = w1.full_tensor()  # all-gather the row shards
        return self.fc2(torch.relu(nn.functional.linear(x, w1, self.fc1.bias)))


def build(mesh, out=4, ema=False):
    torch.manual_seed(0)
    model = Net(out)
    # shard fc1.weight row-wise over the mesh (what FSDP2 / TP would hand DCP)
    model.fc1.weight = nn.Parameter(distribute_tensor(model.fc1.weight.detach(), mesh, [Shard(0)]))
    if ema:
        model.register_buffer("ema_fc2_weight", model.fc2.weight.detach().clone())
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    return model, opt


def train(model, opt, steps, start, rank, log, world):
    for step in range(start, start + steps):
        g = torch.Generator().manual_seed(step * 10 + rank)
        x = torch.randn(8, 16, generator=g)
        y = torch.randint(0, model.fc2.out_features, (8,), generator=g)
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        for p in [model.fc1.bias, model.fc2.weight, model.fc2.bias]:  # replicated params: average grads
            dist.all_reduce(p.grad)
            p.grad /= world
        opt.step()
        log.info("step %d loss=%.4f", step, loss.item())
    return start + steps


def state_dict(model, opt, step):
    return {"model": model.state_dict(), "step": step}


def run(rank, world, ckpt):
    log = setup_logging(rank, "dcp_job")
    mesh = init_device_mesh("cpu", (world,))
    log.info("world_size=%d scenario=%s checkpoint=%s", world, SCENARIO, ckpt)

    model, opt = build(mesh)
    step = train(model, opt, SAVE_STEP, 1, rank, log, world)

    if rank == 0:
        os.makedirs(ckpt, exist_ok=True)
        os.chmod(ckpt, 0o755)
    dist.barrier()
    if is_faulty(rank, "hang"):
        log.info("flushing dataloader state to object store before checkpoint ...")
        time.sleep(90)
    if is_faulty(rank, "sigkill"):
        sigkill_self()
    if is_faulty(rank, "readonly"):
        os.setgid(65534)
        os.setuid(65534)
    flatten = not is_faulty(rank, "planner")  # this rank's trainer config has flatten_state_dict: false
    planner = DefaultSavePlanner(flatten_state_dict=flatten)
    log.info("saving checkpoint at step %d (planner=DefaultSavePlanner flatten_state_dict=%s)", step - 1, flatten)
    if WRITER == "explicit":
        dcp.save(state_dict(model, opt, step - 1), storage_writer=FileSystemWriter(ckpt), planner=planner)
    else:  # let DCP pick the storage writer from checkpoint_id
        dcp.save(state_dict(model, opt, step - 1), checkpoint_id=ckpt, planner=planner)
    log.info("checkpoint saved to %s", ckpt)
    dist.barrier()

    shard = os.path.join(ckpt, f"__{rank}_0.distcp")
    if is_faulty(rank, "missingshard"):
        os.remove(shard)  # node-local scratch cleaner ran between save and resume
    if is_faulty(rank, "truncated"):
        size = os.path.getsize(shard)
        with open(shard, "r+b") as f:
            f.truncate(int(size * 0.4))  # copy of this shard was interrupted
    dist.barrier()

    # ---- resume ----
    out = 6 if is_faulty(rank, "shape") else 4
    model2, opt2 = build(mesh, out=out, ema=is_faulty(rank, "missingkey"))
    sd = state_dict(model2, opt2, 0)
    log.info("resuming from %s", ckpt)
    dcp.load(sd, checkpoint_id=ckpt)
    model2.load_state_dict(sd["model"])
    log.info("resumed at step %d", sd["step"])
    train(model2, opt2, 2, sd["step"] + 1, rank, log, world)
    dist.barrier()
    log.info("done")


def spawn_entry(rank, world, port, ckpt):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(rank), WORLD_SIZE=str(world),
                      LOCAL_RANK=str(rank))
    dist.init_process_group("gloo", rank=rank, world_size=world, timeout=timedelta(seconds=20))
    try:
        run(rank, world, ckpt)
    finally:
        dist.destroy_process_group()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--spawn", type=int, default=0)
    p.add_argument("--port", type=int, default=29500)
    p.add_argument("--ckpt", default="ckpt/run1")
    a = p.parse_args()
    ckpt = os.path.abspath(a.ckpt)
    if a.spawn:
        shutil.rmtree(ckpt, ignore_errors=True)
        mp.spawn(spawn_entry, args=(a.spawn, a.port, ckpt), nprocs=a.spawn, join=True)
    else:
        rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
        dist.init_process_group("gloo", timeout=timedelta(seconds=20))
        run(rank, world, ckpt)
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
