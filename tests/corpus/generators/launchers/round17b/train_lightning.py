"""Lightning DDP job (accelerator='cpu', strategy=DDPStrategy(gloo), devices=3, num_nodes=1) meant to be started by
`srun -N1 --ntasks-per-node=3 -n3 --label python train_lightning.py ...`: Lightning's SLURMEnvironment takes the
global/local rank and world size from SLURM_PROCID / SLURM_LOCALID / SLURM_NTASKS (srun creates the processes,
Lightning launches nothing itself). MASTER_PORT is exported by the caller. One logging line per training step.

One fault on ONE rank (--bad-rank) at batch --step (rank taken from Lightning, trainer.global_rank):
  raise   : the rank's Dataset.__getitem__ looks a sample id up in its shard index, which lacks it -> KeyError
            (num_workers=0, so it is raised in the training process).
  sigkill : the rank SIGKILLs itself at the start of training_step (no traceback).
  hang    : the rank sleeps --sleep s at the start of training_step; the others wait in DDP's gradient all_reduce
            until the gloo process-group timeout (--timeout s) fires.
"""
import argparse
import logging
import os
import signal
import sys
import time
from datetime import timedelta

import lightning as L
import torch
import torch.nn as nn
from lightning.pytorch.strategies import DDPStrategy
from torch.utils.data import DataLoader, Dataset

p = argparse.ArgumentParser()
p.add_argument("--mode", required=True, choices=["raise", "sigkill", "hang", "none"])
p.add_argument("--bad-rank", type=int, required=True)
p.add_argument("--step", type=int, default=3)
p.add_argument("--timeout", type=int, default=20)
p.add_argument("--sleep", type=float, default=90)
args = p.parse_args()

SLURM_RANK = int(os.environ.get("SLURM_PROCID", "0"))
logging.basicConfig(level=logging.INFO, stream=sys.stdout,
                    format=f"%(asctime)s %(levelname)s %(name)s [rank{SLURM_RANK}] %(message)s")
log = logging.getLogger("train")


class ShardDataset(Dataset):
    """Samples of one manifest; the bad rank's manifest has one corrupt id (raise mode)."""

    def __init__(self, rank, n=256):
        self.rank = rank
        self.index = {f"img-{i:06d}": i for i in range(4096)}
        self.ids = [f"img-{i:06d}" for i in range(n)]
        g = torch.Generator().manual_seed(0)
        self.x = torch.randn(n, 16, generator=g)

    def __len__(self):
        return len(self.ids)

    def __getitem__(self, i):
        key = self.ids[i]
        if args.mode == "raise" and self.rank == args.bad_rank and self.calls == args.step * 8:
            key = "img-0x3f9a"                        # induced: the first sample of batch --step on this rank
                                                      # comes from a corrupt manifest entry
        self.calls += 1
        _ = self.index[key]
        return self.x[i], self.x[i].sum(0, keepdim=True) * 0.1

    calls = 0


class LitMLP(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU(), nn.Linear(32, 1))
        self.t0 = time.time()

    def training_step(self, batch, batch_idx):
        if self.global_rank == args.bad_rank and batch_idx == args.step:
            if args.mode == "sigkill":
                os.kill(os.getpid(), signal.SIGKILL)  # induced: killed, no traceback
            if args.mode == "hang":
                time.sleep(args.sleep)                # induced: a silent stall; peers block in DDP's all_reduce
        x, y = batch
        loss = nn.functional.mse_loss(self.net(x), y)
        log.info("epoch %d step %d loss=%.4f (%.2fs)", self.current_epoch, batch_idx, loss.item(),
                 time.time() - self.t0)
        self.t0 = time.time()
        time.sleep(0.2)
        return loss

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.05)


def main():
    L.seed_everything(0)
    ds = ShardDataset(SLURM_RANK)
    trainer = L.Trainer(accelerator="cpu", devices=3, num_nodes=1,
                        strategy=DDPStrategy(process_group_backend="gloo", timeout=timedelta(seconds=args.timeout)),
                        max_epochs=1, limit_train_batches=10, logger=False, enable_checkpointing=False,
                        enable_progress_bar=False)
    log.info("trainer ready: global_rank=%d local_rank=%d world_size=%d (SLURM_JOB_ID=%s)", trainer.global_rank,
             trainer.local_rank, trainer.world_size, os.environ.get("SLURM_JOB_ID", "?"))
    trainer.fit(LitMLP(), DataLoader(ds, batch_size=8, num_workers=0))
    log.info("training done")


if __name__ == "__main__":
    main()
