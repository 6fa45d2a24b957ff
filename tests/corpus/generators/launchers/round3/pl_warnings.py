"""Healthy Lightning run (Trainer devices=3, strategy ddp, gloo, CPU) that is noisy on purpose.

Run with PYTHONWARNINGS=always (run_all.sh), so a warning is printed every time it is raised:
- every step: F.mse_loss of a (B, 1) prediction against a (B,) target (torch's "Using a target size ...
  that is different to the input size" broadcasting UserWarning) in an auxiliary loss, and
  F.softmax without dim ("Implicit dimension choice for softmax has been deprecated").
- every 3rd step on rank 1: a metrics-push callback fails to connect to its (absent) metrics sink on
  127.0.0.1:9 (ConnectionRefusedError), logs the traceback with logger.exception and training continues.
Nothing fails: the run ends with "training finished" and exit status 0.
"""
import logging
import os
import socket

import lightning as L
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

log = logging.getLogger("train")


class Model(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))
        self.aux = nn.Linear(16, 1)

    def training_step(self, batch, i):
        x, y = batch
        logits = self.net(x)
        probs = F.softmax(logits)  # implicit dim: deprecated
        aux = F.mse_loss(self.aux(x), y.float())  # (B,1) vs (B,): broadcast warning
        loss = F.nll_loss(torch.log(probs + 1e-8), y) + 0.1 * aux
        self.log("train_loss", loss)
        log.info("rank %d step %d loss %.4f", self.global_rank, self.global_step, loss.item())
        return loss

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


class MetricsPush(L.Callback):
    def on_train_batch_end(self, trainer, module, outputs, batch, i):
        if trainer.global_rank != 1 or trainer.global_step % 3 != 0:
            return
        try:
            with socket.create_connection(("127.0.0.1", 9), timeout=2) as s:
                s.sendall(b"train_loss %f\n" % outputs["loss"].item())
        except OSError:
            log.exception("rank %d: could not push metrics to 127.0.0.1:9, continuing", trainer.global_rank)


def main():
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    torch.set_num_threads(1)
    L.seed_everything(0)
    g = torch.Generator().manual_seed(0)
    ds = TensorDataset(torch.randn(192, 16, generator=g), torch.randint(0, 4, (192,), generator=g))
    trainer = L.Trainer(accelerator="cpu", devices=3, strategy="ddp", max_epochs=2, logger=False,
                        enable_checkpointing=False, enable_progress_bar=False, callbacks=[MetricsPush()])
    trainer.fit(Model(), DataLoader(ds, batch_size=8))
    if trainer.global_rank == 0:
        log.info("training finished")


if __name__ == "__main__":
    main()
