#!/usr/bin/env python3
"""PyTorch-Ignite DDP training on CPU/gloo, launched by ignite.distributed.Parallel (spawns --spawn ranks itself)
or, with --spawn 0, under torchrun. Logs with Ignite's setup_logger. One fault is induced on --bad-rank:
  raise     ValueError in the step function at iteration --step
  sigkill   os.kill(os.getpid(), SIGKILL) at iteration --step
  hang      sleep --sleep s before the DDP backward of iteration --step (pg timeout --pg-timeout s)
  mismatch  the metric-sync handler calls all_gather on that rank where the other ranks call all_reduce
  dlworker  the Dataset raises inside a DataLoader worker process (num_workers=2) on that rank
  init      that rank's config has batch_size=0 (bad per-rank override) -> DataLoader construction fails
--noisy adds benign warnings / retried logging (healthy runs)."""
import argparse, os, signal, time, warnings
from datetime import timedelta

import torch
import torch.nn as nn
import ignite.distributed as idist
from ignite.engine import Engine, Events
from ignite.utils import setup_logger

p = argparse.ArgumentParser()
p.add_argument("--spawn", type=int, default=4)
p.add_argument("--fault", default="none")
p.add_argument("--bad-rank", type=int, default=1)
p.add_argument("--step", type=int, default=3)
p.add_argument("--sleep", type=float, default=60)
p.add_argument("--pg-timeout", type=int, default=15)
p.add_argument("--epochs", type=int, default=2)
p.add_argument("--noisy", action="store_true")
p.add_argument("--port", type=int, default=29641)
args = p.parse_args()


class CsvLikeDataset(torch.utils.data.Dataset):
    """Synthetic regression rows; on the bad rank one row is 'corrupt' (only read inside a worker process)."""
    def __init__(self, n, corrupt_idx=None):
        g = torch.Generator().manual_seed(0)
        self.x = torch.randn(n, 16, generator=g)
        self.y = self.x.sum(1, keepdim=True) * 0.1
        self.corrupt_idx = corrupt_idx

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        if self.corrupt_idx is not None and i in self.corrupt_idx:
            raw = "0.12,0.55,,nan?"
            return torch.tensor([float(v) for v in raw.split(",")]), self.y[i]
        return self.x[i], self.y[i]


def training(local_rank, cfg):
    rank, world = idist.get_rank(), idist.get_world_size()
    logger = setup_logger(name="trainer", distributed_rank=rank)   # Ignite's logger: only rank 0 prints INFO
    wlog = setup_logger(name=f"worker.{rank}", distributed_rank=0)  # every rank prints its own lines
    torch.manual_seed(0)
    bad = rank == cfg.bad_rank
    batch_size = 8
    if cfg.fault == "init" and bad:
        batch_size = int(os.environ.get("IGN24_RANK_BATCH", "0"))   # per-rank override; 0 here (bad value)
    wlog.info(f"rank {rank}/{world} config: batch_size={batch_size} lr=0.05 epochs={cfg.epochs}")
    corrupt = set(range(0, 256, 7)) if (cfg.fault == "dlworker" and bad) else None
    ds = CsvLikeDataset(256, corrupt)
    loader = idist.auto_dataloader(ds, batch_size=batch_size, num_workers=2 if cfg.fault == "dlworker" else 0,
                                   shuffle=True, drop_last=True)
    model = idist.auto_model(nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 1)))
    opt = idist.auto_optim(torch.optim.SGD(model.parameters(), lr=0.05))
    loss_fn = nn.MSELoss()

    def step(engine, batch):
        it = engine.state.iteration
        if bad and it == cfg.step:
            if cfg.fault == "raise":
                raise ValueError(f"target scaler not fitted for column 'y' (rank {rank}, iteration {it})")
            if cfg.fault == "sigkill":
                os.kill(os.getpid(), signal.SIGKILL)
        model.train()
        x, y = batch
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        if bad and it == cfg.step and cfg.fault == "hang":
            wlog.info(f"iteration {it}: refreshing feature cache")
            time.sleep(cfg.sleep)
        loss.backward()
        opt.step()
        return loss.item()

    trainer = Engine(step)
    trainer.logger = setup_logger("ignite.engine.Engine", distributed_rank=rank)

    @trainer.on(Events.ITERATION_COMPLETED(every=2))
    def log_loss(engine):
        wlog.info(f"Epoch[{engine.state.epoch}] Iteration[{engine.state.iteration}] loss: {engine.state.output:.4f}")

    @trainer.on(Events.ITERATION_COMPLETED(every=4))
    def sync_metrics(engine):
        m = torch.full((3,), float(engine.state.output))
        if cfg.fault == "mismatch" and bad:
            m = idist.all_gather(m)[:3]   # bad rank gathers where the others all_reduce (different collective)
        else:
            idist.all_reduce(m)
        logger.info(f"iteration {engine.state.iteration}: mean loss over ranks {m[0].item() / world:.4f}")

    if cfg.noisy:
        @trainer.on(Events.EPOCH_COMPLETED)
        def noisy(engine):
            warnings.warn("Detected call of `lr_scheduler.step()` before `optimizer.step()`.", UserWarning)
            if rank == 0:
                logger.warning("tensorboard writer: connection refused (attempt 1/3), retrying in 1s")
                time.sleep(1)
                logger.info("tensorboard writer: reconnected")

    trainer.run(loader, max_epochs=cfg.epochs, epoch_length=8)
    logger.info(f"training finished: {trainer.state.iteration} iterations")


if __name__ == "__main__":
    kw = dict(timeout=timedelta(seconds=args.pg_timeout))
    if args.spawn > 0:
        kw.update(nproc_per_node=args.spawn, master_port=args.port)
    with idist.Parallel(backend="gloo", **kw) as parallel:
        parallel.run(training, args)
