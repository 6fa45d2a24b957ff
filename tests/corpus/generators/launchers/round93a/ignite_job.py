"""PyTorch Ignite training job, run either by Ignite's own spawner or under torchrun.

  python ignite_job.py --spawn 3 --port P   # idist.Parallel(backend="gloo", nproc_per_node=3): Ignite spawns
  torchrun --nproc-per-node 3 ignite_job.py # idist.Parallel(backend="gloo") inside torchrun's workers

Faults (env SCENARIO, FAIL_RANK, FAIL_STEP; see common.py):
  healthy        2 epochs, everyone finishes
  raise          KeyError in the process function (label lookup) on FAIL_RANK at iteration FAIL_STEP
  raise_handler  ZeroDivisionError in an ITERATION_COMPLETED handler (throughput meter) on FAIL_RANK
  sigkill        FAIL_RANK SIGKILLs itself at iteration FAIL_STEP (no traceback)
  hang           FAIL_RANK sleeps 90 s before the loss all_reduce; process group timeout is 20 s
  mismatch       FAIL_RANK all_reduces its metrics tensor (loss, count, logit histogram) with 400 histogram bins
                 instead of 256 at iteration FAIL_STEP
  hostoom        FAIL_RANK joins a small memory cgroup and grows a cache until the kernel OOM killer kills it
"""
import argparse
import os
import time
from datetime import timedelta

import torch
import torch.nn as nn
from torch.utils.data import TensorDataset

import ignite.distributed as idist
from ignite.engine import Engine, Events

from common import (FAIL_RANK, FAIL_STEP, SCENARIO, grow_cache_until_oom, is_faulty, join_oom_cgroup,
                    setup_logging, sigkill_self)

PG_TIMEOUT = timedelta(seconds=20)
HIST_BINS = 256
USE_DDP = os.environ.get("USE_DDP", "1") == "1"


def training(local_rank, cfg):
    rank = idist.get_rank()
    world = idist.get_world_size()
    log = setup_logging(rank, "ignite_job")
    log.info("backend=%s world_size=%d local_rank=%d scenario=%s", idist.backend(), world, local_rank, SCENARIO)
    torch.manual_seed(0)

    if is_faulty(rank, "hostoom"):
        join_oom_cgroup(log)

    x = torch.randn(96, 16)
    y = torch.randint(0, 4, (96,))
    # auto_dataloader divides the global batch by the world size (8 per rank with 3 ranks)
    loader = idist.auto_dataloader(TensorDataset(x, y), batch_size=24, shuffle=False)
    net = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))
    # USE_DDP=0: average gradients by hand instead of DDP (DDP + TORCH_DISTRIBUTED_DEBUG=DETAIL segfaults
    # rank 0 on torch 2.13.0 CPU/gloo right after the wrap, so the DETAIL cases run without DDP)
    model = idist.auto_model(net) if USE_DDP else net
    opt = idist.auto_optim(torch.optim.SGD(model.parameters(), lr=0.05))
    crit = nn.CrossEntropyLoss()
    label_names = {0: "cat", 1: "dog", 2: "bird", 3: "fish"}
    class_index = {v: k for k, v in label_names.items()}

    def train_step(engine, batch):
        it = engine.state.iteration
        xb, yb = batch
        names = [label_names[int(v)] for v in yb]
        if is_faulty(rank, "raise") and it == FAIL_STEP:
            names[3] = "horse"  # a label the class map does not know (stale label file on this shard)
        targets = torch.tensor([class_index[n] for n in names])
        if is_faulty(rank, "sigkill") and it == FAIL_STEP:
            sigkill_self()
        if is_faulty(rank, "hostoom") and it == FAIL_STEP:
            grow_cache_until_oom(log)
        model.train()
        opt.zero_grad()
        loss = crit(model(xb), targets)
        loss.backward()
        if not USE_DDP:
            for p in model.parameters():
                p.grad = idist.all_reduce(p.grad) / world
        opt.step()
        if is_faulty(rank, "hang") and it == FAIL_STEP:
            log.info("refreshing sample weights from the feature store ...")
            time.sleep(90)
        bins = HIST_BINS
        if is_faulty(rank, "mismatch") and it == FAIL_STEP:
            bins = 400  # this rank picked up a stale metrics config (logit histogram with 400 bins)
        hist = torch.histc(model(xb).detach(), bins=bins, min=-5, max=5)
        stats = torch.cat([torch.tensor([loss.item(), float(len(xb))]), hist])
        stats = idist.all_reduce(stats)
        return stats[0].item() / world

    trainer = Engine(train_step)

    @trainer.on(Events.ITERATION_COMPLETED)
    def log_loss(engine):
        e, it = engine.state.epoch, engine.state.iteration
        log.info("Epoch[%d] Iteration[%d] loss=%.4f", e, it, engine.state.output)

    state = {"t_last": time.time(), "samples": 0}

    @trainer.on(Events.ITERATION_COMPLETED(every=2))
    def throughput(engine):
        now = time.time()
        dt = now - state["t_last"]
        if is_faulty(rank, "raise_handler") and engine.state.iteration >= FAIL_STEP:
            dt = 0  # clock not advanced on this host (cached timestamp)
        ips = (2 * 8) / dt
        state["t_last"] = now
        log.info("throughput %.1f samples/s", ips)

    @trainer.on(Events.EPOCH_COMPLETED)
    def epoch_done(engine):
        log.info("Epoch %d complete", engine.state.epoch)

    trainer.run(loader, max_epochs=cfg["epochs"])
    log.info("training finished: %d iterations", trainer.state.iteration)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--spawn", type=int, default=0, help="let Ignite spawn this many processes")
    p.add_argument("--port", type=int, default=29500)
    p.add_argument("--epochs", type=int, default=2)
    a = p.parse_args()
    cfg = {"epochs": a.epochs}
    if a.spawn:
        # Ignite's own spawner (torch.multiprocessing.start_processes underneath); timeout goes to
        # init_process_group of every spawned worker.
        with idist.Parallel(backend="gloo", nproc_per_node=a.spawn, master_port=a.port,
                            timeout=PG_TIMEOUT) as par:
            par.run(training, cfg)
    elif SCENARIO == "hang":
        # under torchrun: initialise the group ourselves to get a short timeout, then let Ignite run it
        idist.initialize("gloo", timeout=PG_TIMEOUT)
        with idist.Parallel(backend=None) as par:
            par.run(training, cfg)
        idist.finalize()
    else:
        with idist.Parallel(backend="gloo") as par:
            par.run(training, cfg)


if __name__ == "__main__":
    main()
