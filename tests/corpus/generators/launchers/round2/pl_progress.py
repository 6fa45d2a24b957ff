"""Healthy PyTorch Lightning run WITH the default TQDM progress bar (CPU, 3 devices, DDP on gloo).

Launched as `python pl_progress.py`; Lightning's "ddp" strategy re-runs this script for ranks 1-2.
Nothing is induced: it trains 2 epochs of a tiny regression model and validates each epoch.
"""
from datetime import timedelta

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

import lightning as L
from lightning.pytorch.strategies import DDPStrategy

torch.set_num_threads(1)


class Regressor(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))

    def training_step(self, batch, i):
        x, y = batch
        loss = nn.functional.mse_loss(self.net(x).squeeze(-1), y)
        self.log("train_loss", loss, prog_bar=True)
        return loss

    def validation_step(self, batch, i):
        x, y = batch
        self.log("val_loss", nn.functional.mse_loss(self.net(x).squeeze(-1), y), prog_bar=True, sync_dist=True)

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=1e-2)


def data(n, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 8, generator=g)
    return TensorDataset(x, x.sum(1) + 0.1 * torch.randn(n, generator=g))


if __name__ == "__main__":
    L.seed_everything(7)
    trainer = L.Trainer(accelerator="cpu", devices=3, max_epochs=2, log_every_n_steps=2,
                        strategy=DDPStrategy(process_group_backend="gloo", timeout=timedelta(seconds=60)),
                        enable_checkpointing=False, logger=False)
    trainer.fit(Regressor(), DataLoader(data(192, 0), batch_size=8), DataLoader(data(48, 1), batch_size=8))
