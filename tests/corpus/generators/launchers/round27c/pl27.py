"""Round 27c: Lightning Trainer(accelerator="cpu", devices=3, strategy=DDPStrategy(gloo)) with harmless errors.

--noise (comma list; harmless):
  ckpt      every rank tries to resume from ckpt/last.ckpt, which does not exist: FileNotFoundError logged with
            logger.exception, then "no checkpoint found, starting from scratch"
  metrics   logged metrics error_rate, loss/nan_count, oom_skipped each step (and in the per-step logger line)
  warnings  a user warning with error/failed/OOM words at step 1
  (c10d debug output comes from the environment: TORCH_DISTRIBUTED_DEBUG=DETAIL TORCH_CPP_LOG_LEVEL=INFO)
--fault mismatch : at global step --fault-step, rank --bad-rank all_reduces a 64-float stats tensor while the others
                   all_reduce 3 floats (real fault); process-group timeout 30 s
"""
import argparse
import datetime
import logging
import os
import sys
import warnings

import lightning as L
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from lightning.pytorch.strategies import DDPStrategy
from torch.utils.data import DataLoader, TensorDataset

log = logging.getLogger("train")


class Model(L.LightningModule):
    def __init__(self, args):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 1))
        self.args = args
        self.noise = set(filter(None, args.noise.split(",")))

    def on_fit_start(self):
        if "ckpt" in self.noise:
            path = os.path.join(os.getcwd(), "ckpt", "last.ckpt")
            try:
                state = torch.load(path, map_location="cpu")
                self.load_state_dict(state["state_dict"])
            except FileNotFoundError:
                log.exception("rank %d: could not load %s", self.global_rank, path)
                log.info("rank %d: no checkpoint found, starting from scratch", self.global_rank)

    def training_step(self, batch, i):
        x, y = batch
        loss = F.mse_loss(self.net(x), y)
        step = self.global_step
        if "warnings" in self.noise and step == 1:
            warnings.warn("eval OOM-safe mode: batch halved after failed allocation attempt on a previous run",
                          UserWarning)
        if self.args.fault == "mismatch" or "metrics" in self.noise:
            n = 64 if (self.args.fault == "mismatch" and self.global_rank == self.args.bad_rank
                      and step == self.args.fault_step) else 3
            stats = torch.zeros(n)
            stats[0] = loss.detach()
            dist.all_reduce(stats)  # per-step stats sync; the bad rank sends 64 floats once
        if "metrics" in self.noise:
            err = 0.3 / (step + 1)
            self.log_dict({"train_loss": loss, "error_rate": err, "loss/nan_count": 0.0, "oom_skipped": 0.0})
            log.info("rank %d step %d loss %.4f error_rate=%.3f loss/nan_count=0", self.global_rank, step,
                     loss.item(), err)
        else:
            log.info("rank %d step %d loss %.4f", self.global_rank, step, loss.item())
        return loss

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.05)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--noise", default="")
    ap.add_argument("--fault", default="")
    ap.add_argument("--bad-rank", type=int, default=2)
    ap.add_argument("--fault-step", type=int, default=4)
    ap.add_argument("--devices", type=int, default=3)
    ap.add_argument("--steps", type=int, default=8)
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, stream=sys.stdout,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    torch.set_num_threads(1)
    L.seed_everything(0)
    g = torch.Generator().manual_seed(0)
    ds = TensorDataset(torch.randn(16 * 3 * args.steps, 16, generator=g), torch.randn(16 * 3 * args.steps, 1, generator=g))
    trainer = L.Trainer(accelerator="cpu", devices=args.devices, strategy=DDPStrategy(process_group_backend="gloo",
                                                                               timeout=datetime.timedelta(seconds=30)),
                        max_steps=args.steps, enable_checkpointing=False, logger=False, enable_progress_bar=False)
    trainer.fit(Model(args), DataLoader(ds, batch_size=16))
    if trainer.global_rank == 0:
        log.info("training complete: global_step=%d", trainer.global_step)


if __name__ == "__main__":
    main()
