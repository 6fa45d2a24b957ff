"""Lightning 2.x job, Trainer(accelerator="cpu", devices=3, strategy="ddp") started as plain `python
lightning_val.py` (Lightning's subprocess launcher starts ranks 1..2 itself; rank 0 is this process).

Induced: in validation after epoch 0, global rank --bad-rank's validation_step computes a mean absolute error
over the valid targets of its batch --batch, where all targets are masked out: float / 0 -> ZeroDivisionError.
"""
import argparse
import logging
import time

import lightning as L
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

p = argparse.ArgumentParser()
p.add_argument("--bad-rank", type=int, default=0)
p.add_argument("--batch", type=int, default=1)
p.add_argument("--devices", type=int, default=3)
args = p.parse_args()
log = logging.getLogger("train")


class Regressor(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(10, 32), nn.Tanh(), nn.Linear(32, 1))

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = nn.functional.mse_loss(self.net(x), y)
        self.log("train_loss", loss)
        print(f"[rank {self.global_rank}] epoch {self.current_epoch} step {batch_idx} loss={loss.item():.4f}",
              flush=True)
        time.sleep(0.2)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        pred = self.net(x)
        valid = (y.abs() < 1e6).squeeze(1)
        if self.global_rank == args.bad_rank and batch_idx == args.batch:
            valid[:] = False                             # induced: a validation batch whose targets are all masked
        err_sum = float((pred - y).abs().squeeze(1)[valid].sum())
        n_valid = int(valid.sum())
        mae = err_sum / n_valid
        print(f"[rank {self.global_rank}] val batch {batch_idx} mae={mae:.4f}", flush=True)
        return mae

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.05)


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(960, 10)
    ds = TensorDataset(x, x.sum(1, keepdim=True))
    trainer = L.Trainer(accelerator="cpu", devices=args.devices, strategy="ddp", max_epochs=2,
                        limit_train_batches=6, limit_val_batches=4, num_sanity_val_steps=0, logger=False,
                        enable_checkpointing=False, enable_progress_bar=False, log_every_n_steps=1)
    trainer.fit(Regressor(), DataLoader(ds, batch_size=16), DataLoader(ds, batch_size=16))
