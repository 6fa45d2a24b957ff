"""Lightning Trainer, strategy ddp on CPU (gloo), 3 processes started by Lightning itself: `python lt_job.py ARGS`.

--fault (on global rank --who, in epoch --fault-epoch):
  sync_dist   validation_step logs an extra metric ('val_hard_frac', sync_dist=True) only on the rank whose
              shard contains 'hard' samples -> only that rank all_reduces it at epoch end
  stop        a hand-written callback sets trainer.should_stop from the LOCAL val loss (only --who stops)
  none        healthy
"""
import argparse, logging, sys
from datetime import timedelta

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset
import lightning as L
from lightning.pytorch.strategies import DDPStrategy

p = argparse.ArgumentParser()
p.add_argument("--fault", default="none")
p.add_argument("--who", default="1")
p.add_argument("--fault-epoch", type=int, default=1)
p.add_argument("--epochs", type=int, default=4)
p.add_argument("--devices", type=int, default=3)
p.add_argument("--timeout", type=int, default=20)
a = p.parse_args()
log = logging.getLogger("job")


class Model(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 2))

    def training_step(self, batch, i):
        x, y = batch
        loss = nn.functional.cross_entropy(self.net(x), y)
        self.log("train_loss", loss)
        if i % 4 == 0:
            log.info("rank %d epoch %d step %d loss %.4f", self.global_rank, self.current_epoch, i, loss.item())
        return loss

    def validation_step(self, batch, i):
        x, y = batch
        out = self.net(x)
        loss = nn.functional.cross_entropy(out, y)
        self.log("val_loss", loss, sync_dist=True)
        self.log("val_acc", (out.argmax(1) == y).float().mean(), sync_dist=True)
        who = self.trainer.world_size - 1 if a.who == "last" else int(a.who)
        if a.fault == "sync_dist" and self.current_epoch == a.fault_epoch and self.global_rank == who and i == 1:
            # only this rank's shard has samples flagged 'hard' in this epoch, so only it logs the metric
            self.log("val_hard_frac", torch.tensor(0.25), sync_dist=True)

    def on_validation_epoch_end(self):
        m = self.trainer.callback_metrics
        log.info("rank %d epoch %d val_loss %.4f val_acc %.4f", self.global_rank, self.current_epoch,
                 m["val_loss"].item(), m["val_acc"].item())

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=1e-3)


class LocalEarlyStop(L.Callback):
    """Patience on the val loss of THIS rank's shard (not synced): only rank --who decides to stop."""
    def on_validation_epoch_end(self, trainer, pl_module):
        who = trainer.world_size - 1 if a.who == "last" else int(a.who)
        if trainer.current_epoch == a.fault_epoch and trainer.global_rank == who:
            log.info("rank %d: val_loss did not improve for 2 epochs, stopping", trainer.global_rank)
            trainer.should_stop = True


def data(n, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 16, generator=g)
    return TensorDataset(x, (x[:, :4].sum(1) > 0).long())


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO, stream=sys.stdout, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    L.seed_everything(0)
    trainer = L.Trainer(accelerator="cpu", devices=a.devices, max_epochs=a.epochs,
                        strategy=DDPStrategy(process_group_backend="gloo", timeout=timedelta(seconds=a.timeout)),
                        enable_progress_bar=False, enable_checkpointing=False, logger=False,
                        callbacks=[LocalEarlyStop()] if a.fault == "stop" else [])
    trainer.fit(Model(), DataLoader(data(480, 1), batch_size=16), DataLoader(data(96, 2), batch_size=8))
    log.info("rank %d: fit finished, saving final checkpoint", trainer.global_rank)
    trainer.save_checkpoint("final.ckpt")   # collective: strategy barrier
