"""Round 32b, Lightning part: a tiny LightningModule trained with Trainer(accelerator='cpu', devices=3, strategy=DDPStrategy(timeout=20 s))
(Lightning's own subprocess launcher, gloo). --fault:
  none     healthy
  unused   rank --bad-rank skips the aux head in training_step at step --at; DDP's default
           find_unused_parameters=False, so DDP's reducer on that rank reports unfinished reduction
  inplace  rank --bad-rank modifies a tensor saved for backward in place at step --at
"""
import argparse, sys
from datetime import timedelta

import torch
import torch.nn as nn
import torch.nn.functional as F
import lightning as L
from lightning.pytorch.strategies import DDPStrategy
from torch.utils.data import DataLoader, TensorDataset

p = argparse.ArgumentParser()
p.add_argument("--fault", default="none")
p.add_argument("--bad-rank", type=int, default=2)
p.add_argument("--at", type=int, default=3)
p.add_argument("--steps", type=int, default=8)
args = p.parse_args()


class Lit(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.inp, self.block = nn.Linear(16, 32), nn.Linear(32, 32)
        self.head, self.aux = nn.Linear(32, 4), nn.Linear(32, 4)

    def training_step(self, batch, i):
        x, y = batch
        at = self.global_rank == args.bad_rank and self.global_step == args.at
        h = torch.sigmoid(self.inp(x))
        if args.fault == "inplace" and at:
            h.mul_(0.5)
        h = F.relu(self.block(h))
        out = self.head(h)
        if not (args.fault == "unused" and at):
            out = out + 0.1 * self.aux(h)
        loss = F.cross_entropy(out, y)
        self.log("train_loss", loss, prog_bar=True)
        print(f"[rank{self.global_rank}] step {self.global_step} loss {loss.item():.4f}", flush=True)
        return loss

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.05)


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(256, 16)
    ds = TensorDataset(x, (x[:, :4].sum(1) > 0).long())
    trainer = L.Trainer(accelerator="cpu", devices=3, strategy=DDPStrategy(process_group_backend="gloo", timeout=timedelta(seconds=20)), max_steps=args.steps,
                        enable_checkpointing=False, logger=False, enable_model_summary=False)
    trainer.fit(Lit(), DataLoader(ds, batch_size=8))
    if trainer.global_rank == 0:
        print("training complete", flush=True)
