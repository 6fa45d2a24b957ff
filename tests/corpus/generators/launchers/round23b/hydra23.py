#!/usr/bin/env python3
"""Hydra-configured DDP training (hydra-core, conf/config.yaml), one Hydra job per torchrun rank, gloo.

Hydra's job logging prints `[YYYY-MM-DD HH:MM:SS,mmm][module][LEVEL] - msg`; the rank appears only inside some messages.
Faults (fault.kind, on fault.rank at fault.step):
  raise  KeyError from the rank's sample parsing (a record without the 'target' field)
  nan_loss  the rank's batch gets a NaN; the finite-loss check raises RuntimeError
  ckpt   every rank saves its own checkpoint; fault.rank's save goes to a directory that does not exist
  none   healthy; noisy=true adds warnings, a retried data-store read and a deprecation notice
"""
import logging, os, time, warnings
from datetime import timedelta

import hydra
import torch
import torch.distributed as dist
import torch.nn as nn
from omegaconf import DictConfig, OmegaConf

log = logging.getLogger(__name__)


def parse_record(rec):
    return torch.tensor(rec["features"]), torch.tensor([rec["target"]])


@hydra.main(version_base=None, config_path="conf", config_name="config")
def main(cfg: DictConfig) -> None:
    dist.init_process_group("gloo", timeout=timedelta(seconds=cfg.train.pg_timeout))
    rank, world = dist.get_rank(), dist.get_world_size()
    if rank == 0:
        log.info("config:\n%s", OmegaConf.to_yaml(cfg))
    log.info(f"process group ready: rank {rank} of {world}")
    torch.manual_seed(0)
    layers, d = [], cfg.data.features
    for _ in range(cfg.model.layers):
        layers += [nn.Linear(d, cfg.model.hidden), nn.Tanh()]
        d = cfg.model.hidden
    model = nn.parallel.DistributedDataParallel(nn.Sequential(*layers, nn.Linear(d, 1)))
    opt = torch.optim.Adam(model.parameters(), lr=cfg.optim.lr, weight_decay=cfg.optim.weight_decay)
    f = cfg.fault
    if cfg.noisy:
        warnings.warn("`optim.weight_decay=0.0` is deprecated for Adam; use AdamW instead", FutureWarning)
    for step in range(1, cfg.train.steps + 1):
        g = torch.Generator().manual_seed(100 * rank + step)
        recs = [{"features": torch.randn(cfg.data.features, generator=g).tolist(), "target": 0.5} for _ in range(cfg.data.batch_size)]
        if f.kind == "raise" and rank == f.rank and step == f.step:
            del recs[7]["target"]
        if cfg.noisy and rank == world - 1 and step == 3:
            log.warning("read of s3://datasets/train/part-00003.parquet failed: ConnectionResetError(104, 'Connection reset by peer'); retry 1/5 in 0.5s")
            time.sleep(0.5)
            log.info("read of s3://datasets/train/part-00003.parquet succeeded on retry 1")
        xs, ys = zip(*(parse_record(r) for r in recs))
        x, y = torch.stack(xs), torch.stack(ys)
        if f.kind == "nan_loss" and rank == f.rank and step == f.step:
            x[2] = float("nan")
        loss = nn.functional.mse_loss(model(x), y)
        if not torch.isfinite(loss).item():
            raise RuntimeError(f"Loss is {loss.item()} at step {step}; stopping (rank {rank})")
        opt.zero_grad(); loss.backward(); opt.step()
        if step % cfg.train.log_every == 0:
            log.info(f"step {step}/{cfg.train.steps} loss={loss.item():.4f}")
    ckpt_dir = cfg.train.ckpt_dir
    if f.kind == "ckpt" and rank == f.rank:
        ckpt_dir = os.path.join(ckpt_dir, "node-local-scratch")  # never created
    else:
        os.makedirs(ckpt_dir, exist_ok=True)
    path = os.path.join(ckpt_dir, f"model_rank{rank}.pt")
    torch.save({"model": model.module.state_dict(), "opt": opt.state_dict()}, path)
    log.info(f"checkpoint written to {path}")
    dist.barrier()
    if rank == 0:
        log.info("training finished")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
