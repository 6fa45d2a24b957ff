#!/usr/bin/env python
"""Round 22: HEALTHY Lightning DDP job on CPU (strategy="ddp", accelerator="cpu", devices=N; Lightning
launches the extra processes itself). Noise (all handled): Lightning's own warnings (few dataloader workers,
sync_dist hints), user warnings ("failed", "timeout"), a logged metric named val_error, an EarlyStopping
callback that stops training, ModelCheckpoint saving, an optional resume from a checkpoint (--ckpt-path),
a corrupted sample skipped with traceback.print_exc(), the TQDM progress bar. Exits 0.
"""
import argparse
import sys
import traceback
import warnings

import lightning as L
import torch
import torch.nn as nn
from lightning.pytorch.callbacks import EarlyStopping, ModelCheckpoint
from torch.utils.data import DataLoader, Dataset

p = argparse.ArgumentParser()
p.add_argument("--devices", type=int, default=2)
p.add_argument("--max-epochs", type=int, default=8)
p.add_argument("--ckpt-dir", default="/tmp/pl22_ckpt")
p.add_argument("--ckpt-path", default=None)
p.add_argument("--patience", type=int, default=2)
p.add_argument("--bad-index", type=int, default=-1)
args = p.parse_args()


class DS(Dataset):
    def __init__(self, n, seed):
        g = torch.Generator().manual_seed(seed)
        self.x = torch.randn(n, 10, generator=g)
        self.y = (self.x[:, :3].sum(1) > 0).long()

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        if i == args.bad_index:
            try:
                raise OSError(f"failed to read sample {i}: checksum mismatch in shard-00003.tar")
            except OSError:
                traceback.print_exc()
                print(f"WARNING: skipping corrupted sample {i}, using sample {i - 1} instead", file=sys.stderr, flush=True)
                i = i - 1
        return self.x[i], self.y[i]


class Clf(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(10, 16), nn.ReLU(), nn.Linear(16, 2))

    def training_step(self, batch, _):
        x, y = batch
        loss = nn.functional.cross_entropy(self.net(x), y)
        self.log("train_loss", loss, prog_bar=True)
        self.log("oom_retries", 0.0)
        return loss

    def validation_step(self, batch, _):
        x, y = batch
        logits = self.net(x)
        self.log("val_loss", nn.functional.cross_entropy(logits, y), sync_dist=True)
        # plateauing metric (rounded) so that EarlyStopping fires after `patience` epochs
        self.log("val_error", torch.round((logits.argmax(1) != y).float().mean() * 4) / 4, sync_dist=True, prog_bar=True)

    def on_train_start(self):
        if self.global_rank == 0:
            warnings.warn("remote experiment tracker upload failed (timeout after 10s); metrics kept locally", UserWarning)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


if __name__ == "__main__":
    L.seed_everything(0)
    train = DataLoader(DS(256, 1), batch_size=32)
    val = DataLoader(DS(64, 2), batch_size=32)
    trainer = L.Trainer(accelerator="cpu", devices=args.devices, strategy="ddp", max_epochs=args.max_epochs,
                        callbacks=[EarlyStopping("val_error", patience=args.patience, mode="min", verbose=True),
                                   ModelCheckpoint(dirpath=args.ckpt_dir, save_last=True, monitor="val_error")],
                        log_every_n_steps=2, enable_model_summary=True, logger=False)
    trainer.fit(Clf(), train, val, ckpt_path=args.ckpt_path)
    if trainer.global_rank == 0:
        print(f"fit finished: epoch={trainer.current_epoch} global_step={trainer.global_step} "
              f"should_stop={trainer.should_stop} best={trainer.checkpoint_callback.best_model_path}", flush=True)
