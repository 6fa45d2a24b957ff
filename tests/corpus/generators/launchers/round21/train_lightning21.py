"""Round 21: Lightning DDP on CPU, started as plain `python train_lightning21.py --devices N` (Lightning's own
subprocess launcher re-runs this script for ranks 1..N-1; gloo). Progress bar on, a validation loop that logs
`val_error`, model summary on: a healthy run prints Lightning's usual warnings (few DataLoader workers, ...).
env R21_JOB=<mode>:<rank>:<batch> (not on the command line):
  ok     nothing
  raise  training_step of <rank> raises KeyError at batch <batch> (a missing entry in its per-shard stats table)
"""
import argparse, datetime, logging, os, sys, time

import lightning as L
import torch
import torch.nn as nn
from lightning.pytorch.strategies import DDPStrategy
from torch.utils.data import DataLoader, TensorDataset

log = logging.getLogger("train")


def job_spec():
    m, r, s = (os.environ.get("R21_JOB", "ok:-1:0").split(":") + ["-1", "0"])[:3]
    return m, int(r), int(s)


class Regressor(L.LightningModule):
    def __init__(self, lr):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 1))
        self.lr = lr

    def setup(self, stage):
        mode, frank, fstep = job_spec()
        self.stats = {i: 1.0 for i in range(64)}
        if mode == "raise" and frank == self.global_rank:
            del self.stats[fstep]

    def _data(self, seed, n):
        g = torch.Generator().manual_seed(seed)
        x = torch.randn(n, 16, generator=g)
        return TensorDataset(x, x[:, :1] * 0.5 + 0.1 * torch.randn(n, 1, generator=g))

    def train_dataloader(self):
        return DataLoader(self._data(100 + self.global_rank, 128), batch_size=16)

    def val_dataloader(self):
        return DataLoader(self._data(7, 64), batch_size=16)

    def training_step(self, batch, i):
        w = self.stats[i]
        x, y = batch
        loss = w * nn.functional.mse_loss(self.net(x), y)
        self.log("train_loss", loss, prog_bar=True)
        log.info("[rank %d] batch %d loss %.4f", self.global_rank, i, loss.item())
        time.sleep(0.2)
        return loss

    def validation_step(self, batch, i):
        x, y = batch
        err = (self.net(x) - y).abs().mean()
        self.log("val_error", err, prog_bar=True, sync_dist=True)

    def on_validation_epoch_end(self):
        if self.global_rank == 0:
            log.info("validation error: %.3f, 0 failed samples", self.trainer.callback_metrics["val_error"].item())

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=self.lr)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--devices", type=int, default=3)
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--lr", type=float, default=0.05)
    ap.add_argument("--pg-timeout", type=int, default=60)
    a = ap.parse_args()
    logging.basicConfig(level=logging.INFO, stream=sys.stdout, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    trainer = L.Trainer(accelerator="cpu", devices=a.devices, num_nodes=1, max_epochs=a.epochs,
                        use_distributed_sampler=False, log_every_n_steps=2,
                        strategy=DDPStrategy(process_group_backend="gloo",
                                             timeout=datetime.timedelta(seconds=a.pg_timeout)),
                        logger=False, enable_checkpointing=False)
    trainer.fit(Regressor(a.lr))
    if trainer.global_rank == 0:
        log.info("training complete")


if __name__ == "__main__":
    main()
