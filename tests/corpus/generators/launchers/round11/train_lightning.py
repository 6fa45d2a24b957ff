"""PyTorch Lightning job: Trainer(accelerator="cpu", devices=N,
strategy=DDPStrategy(process_group_backend="gloo", timeout=...)).
Lightning itself starts the N-1 other ranks (it re-runs this script).

The data loader yields step indices; training_step fetches that step's shard
from the rank's ShardedData, so the faults of r11common happen inside
training_step on --fault-rank at --fault-step:
  raise    the shard is corrupt (ValueError) or missing (KeyError)
  sigkill  the rank SIGKILLs itself
  hang     the rank sleeps past the DDP timeout before its backward all_reduce

--others-busy-s S: at --fault-step the healthy ranks first spend S seconds on
local work (re-reading their shard cache) before the step's collectives.  The
sigkill run uses it: Lightning's child-process observer in rank 0 polls every
5 s, and without it the survivors' gloo errors end the job before the observer
reports the killed child.
"""
from datetime import timedelta

import os
import time

import lightning as L
import torch
from lightning.pytorch.strategies import DDPStrategy
from torch.utils.data import DataLoader

import r11common as c


class Regressor(L.LightningModule):
    def __init__(self, args):
        super().__init__()
        self.args = args
        self.net = c.make_model()
        self.shards = None

    def on_train_start(self):
        rank, world = self.global_rank, self.trainer.world_size
        self.log_ = c.get_logger(rank)
        self.shards = c.ShardedData(rank, world, self.args.steps,
                                    fault=c.data_fault(self.args, rank),
                                    fault_step=self.args.fault_step)
        self.log_.info("training starts: world_size=%d pid=%d", world, os.getpid())

    def training_step(self, batch, batch_idx):
        c.maybe_fault(self.args, self.global_rank, batch_idx, self.log_)
        if self.args.others_busy_s and batch_idx == self.args.fault_step:
            self.log_.info("step %d: refreshing local shard cache", batch_idx + 1)
            time.sleep(self.args.others_busy_s)
        x, y = self.shards.get(batch_idx)
        loss = torch.nn.functional.mse_loss(self.net(x), y)
        self.log_.info("step %d/%d loss=%.4f", batch_idx + 1, self.args.steps, loss.item())
        return loss

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.05)


def main():
    p = c.base_parser(__doc__)
    p.add_argument("--devices", type=int, default=3)
    p.add_argument("--others-busy-s", type=float, default=0)
    args = p.parse_args()
    L.seed_everything(0)
    steps = list(range(args.steps))
    # every rank gets all step indices; shards are chosen by rank in training_step
    loader = DataLoader(steps, batch_size=None, shuffle=False)
    trainer = L.Trainer(
        accelerator="cpu", devices=args.devices,
        strategy=DDPStrategy(process_group_backend="gloo",
                             timeout=timedelta(seconds=args.timeout_s)),
        max_epochs=1, limit_train_batches=args.steps, use_distributed_sampler=False,
        logger=False, enable_checkpointing=False, enable_progress_bar=False,
        enable_model_summary=False)
    trainer.fit(Regressor(args), loader)


if __name__ == "__main__":
    main()
