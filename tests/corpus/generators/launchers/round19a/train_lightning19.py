"""Round 19a: Lightning DDP on CPU, started as plain `python train_lightning19.py --devices N`: Lightning's own
subprocess launcher re-runs this script for ranks 1..N-1 (gloo, DDPStrategy timeout --pg-timeout s).
Data: train19.ShardDataset through a DataLoader with 2 worker processes per rank.
ONE fault on ONE global rank from env TRAIN_FAULT=<mode>:<rank>:<batch> (not on the command line):
  worker   sample <batch-1> of that rank's shard is corrupt: ValueError in Dataset.__getitem__ in a DataLoader worker
  sysexit  that rank's lr schedule has a sign error at <batch>: training_step calls sys.exit("bad config: ...")
"""
import argparse, datetime, logging, os, sys, time

import lightning as L
import torch
import torch.nn as nn
from lightning.pytorch.strategies import DDPStrategy

import train19

log = logging.getLogger("train")


class Regressor(L.LightningModule):
    def __init__(self, steps, lr):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 1))
        self.steps, self.lr = steps, lr

    def setup(self, stage):
        mode, frank, fstep = train19.fault()
        self.bad = (mode, fstep) if frank == self.global_rank else (None, -1)
        self.lr_table = {s: self.lr for s in range(self.steps)}
        if self.bad[0] == "sysexit":
            self.lr_table[fstep - 1] = -self.lr  # this rank's schedule file carries a sign error

    def train_dataloader(self):
        bad = [self.bad[1] - 1] if self.bad[0] == "worker" else []
        ds = train19.ShardDataset(f"shard-{self.global_rank:03d}.rec", self.global_rank, self.steps, 32, bad=bad)
        return torch.utils.data.DataLoader(ds, batch_size=None, num_workers=2)

    def training_step(self, batch, i):
        if self.lr_table[i] <= 0:
            sys.exit("bad config: lr must be positive")
        x, y = batch
        loss = nn.functional.mse_loss(self.net(x), y)
        g = self.all_gather(loss.detach()).mean()
        log.info("[rank %d] step %d/%d loss %.4f (global %.4f)", self.global_rank, i + 1, self.steps, loss.item(), g.item())
        time.sleep(0.3)
        return loss

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=self.lr)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--devices", type=int, default=3)
    ap.add_argument("--steps", type=int, default=8)
    ap.add_argument("--lr", type=float, default=0.05)
    ap.add_argument("--pg-timeout", type=int, default=20)
    a = ap.parse_args()
    logging.basicConfig(level=logging.INFO, stream=sys.stdout, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    trainer = L.Trainer(accelerator="cpu", devices=a.devices, num_nodes=1, max_epochs=1, use_distributed_sampler=False,
                        strategy=DDPStrategy(process_group_backend="gloo",
                                             timeout=datetime.timedelta(seconds=a.pg_timeout)),
                        logger=False, enable_checkpointing=False, enable_progress_bar=False,
                        enable_model_summary=False)
    trainer.fit(Regressor(a.steps, a.lr))


if __name__ == "__main__":
    main()
