"""Round 29a: a small Lightning job (CPU, gloo, 3 processes) with one induced fault, chosen by --fault.

Launch modes (--strategy): ddp (Lightning launches the other ranks itself, or torchrun launched them),
ddp_spawn (torch.multiprocessing spawn), ddp_notebook (fork-based launcher, used from a script). cli29.py runs the
same LightningModule through LightningCLI.

--fault (rank --bad-rank, global step --fault-step):
  train_raise     ValueError in training_step (bad label value in the batch)
  val_raise       KeyError in validation_step during the sanity check
  callback_raise  RuntimeError in a Callback's on_train_batch_end
  sigkill         os.kill(os.getpid(), SIGKILL) in training_step
  hostoom         the rank joins the memory cgroup $R29A_CGROUP, then caches 64 MiB buffers until OOM-killed
  hang            the rank sleeps --hang-s s in training_step; the others wait in DDP's allreduce (PG timeout 20 s)
  syncdist_onerank  self.log("grad_scale", ..., sync_dist=True) only on the bad rank (a collective only it enters)
  anomaly_nan     torch.autograd.set_detect_anomaly(True) everywhere; the bad rank's batch gets a log() of a
                  negative feature -> NaN -> "Function '...Backward0' returned nan values"
  (every rank) resume via --ckpt-path from a checkpoint of a model with another --hidden; logger dir via --log-dir;
  --monitor for ModelCheckpoint.
Healthy noise: --num-workers 0 (PossibleUserWarning), val_loss logged without sync_dist (sync_dist warning).
"""
import argparse
import datetime
import logging
import os
import signal
import sys
import time

import lightning as L
import torch
import torch.nn as nn
import torch.nn.functional as F
from lightning.pytorch.callbacks import Callback, ModelCheckpoint
from lightning.pytorch.loggers import CSVLogger, TensorBoardLogger
from lightning.pytorch.strategies import DDPStrategy
from torch.utils.data import DataLoader, Dataset

log = logging.getLogger("train")
# at import time, so that ddp_spawn's children (which import this file, not run main()) log their steps too
logging.basicConfig(level=logging.INFO, stream=sys.stdout, format="%(asctime)s %(levelname)s %(name)s: %(message)s")


class RegData(Dataset):
    def __init__(self, n, seed):
        g = torch.Generator().manual_seed(seed)
        self.x = torch.randn(n, 16, generator=g)
        self.y = self.x[:, :1] * 0.5 + 0.1 * torch.randn(n, 1, generator=g)

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return self.x[i], self.y[i]


class RegDataModule(L.LightningDataModule):
    def __init__(self, batch_size: int = 16, num_workers: int = 0, n_train: int = 480, n_val: int = 96):
        super().__init__()
        self.batch_size, self.num_workers, self.n_train, self.n_val = batch_size, num_workers, n_train, n_val

    def train_dataloader(self):
        return DataLoader(RegData(self.n_train, 0), batch_size=self.batch_size, num_workers=self.num_workers,
                          shuffle=True)

    def val_dataloader(self):
        return DataLoader(RegData(self.n_val, 1), batch_size=self.batch_size, num_workers=self.num_workers)


class RegModel(L.LightningModule):
    def __init__(self, hidden: int = 32, lr: float = 0.05, fault: str = "", bad_rank: int = 1, fault_step: int = 3,
                 hang_s: float = 90.0):
        super().__init__()
        self.save_hyperparameters()
        self.net = nn.Sequential(nn.Linear(16, hidden), nn.ReLU(), nn.Linear(hidden, 1))

    def _bad(self):
        return self.global_rank == self.hparams.bad_rank and self.global_step == self.hparams.fault_step

    def on_train_start(self):
        # (inside Trainer's own `set_detect_anomaly(detect_anomaly)` block, so this is not reset before training)
        if self.hparams.fault == "anomaly_nan":
            torch.autograd.set_detect_anomaly(True)

    def on_train_end(self):
        # runs inside the worker processes (with ddp_spawn the launching process never sees the real step count)
        if self.global_rank == 0:
            log.info("training complete: global_step=%d", self.global_step)

    def setup(self, stage):
        if self.hparams.fault == "hostoom" and self.global_rank == self.hparams.bad_rank:
            with open(os.path.join(os.environ["R29A_CGROUP"], "cgroup.procs"), "w") as f:
                f.write(str(os.getpid()))   # only this rank is memory-limited

    def training_step(self, batch, batch_idx):
        x, y = batch
        f = self.hparams.fault
        if self._bad():
            if f == "train_raise":
                raise ValueError(f"label out of range in batch {batch_idx}: got -7.25, expected normalized "
                                 f"targets in [-1, 1]")
            if f == "sigkill":
                os.kill(os.getpid(), signal.SIGKILL)
            if f == "hostoom":
                cache = []   # "cache the augmented batches in RAM": grows until the cgroup OOM killer strikes
                for i in range(64):
                    cache.append(torch.ones(64 << 20, dtype=torch.uint8))
                    log.info("rank %d: augmentation cache %d MiB", self.global_rank, 64 * (i + 1))
            if f == "hang":
                log.info("rank %d: refreshing remote feature store before step %d", self.global_rank,
                         self.global_step)
                time.sleep(self.hparams.hang_s)
            if f == "anomaly_nan":
                x = x.clone()
                x[:, 3] = torch.log(x[:, 3] - 5.0)   # log of a negative "feature" -> NaN in this rank's batch
        loss = F.mse_loss(self.net(x), y)
        self.log("train_loss", loss, prog_bar=True)
        if f == "syncdist_onerank" and self._bad():
            # only this rank logs an extra synced metric: its all_reduce has no partner on the other ranks
            self.log("grad_scale", loss.detach() * 0 + 1.0, sync_dist=True)
        log.info("rank %d step %d loss %.4f", self.global_rank, self.global_step, loss.item())
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        if (self.hparams.fault == "val_raise" and self.trainer.sanity_checking
                and self.global_rank == self.hparams.bad_rank):
            meta = {"split": "val", "n": len(x)}
            log.info("rank %d: sanity check, reading sample metadata", self.global_rank)
            y = y * meta["label_scale"]
        loss = F.mse_loss(self.net(x), y)
        self.log("val_loss", loss)   # no sync_dist: Lightning warns (harmless)
        return loss

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=self.hparams.lr)


class BatchAudit(Callback):
    """Checks every rank's per-batch loss; the bad rank's callback raises (fault callback_raise)."""

    def __init__(self, bad_rank=-1, step=-1):
        self.bad_rank, self.step = bad_rank, step

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        if trainer.global_rank == self.bad_rank and trainer.global_step == self.step:
            raise RuntimeError(f"BatchAudit: loss history buffer full on rank {trainer.global_rank} "
                               f"(step {trainer.global_step}, capacity 4)")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--strategy", default="ddp", choices=["ddp", "ddp_spawn", "ddp_notebook"])
    ap.add_argument("--fault", default="")
    ap.add_argument("--bad-rank", type=int, default=1)
    ap.add_argument("--fault-step", type=int, default=3)
    ap.add_argument("--hang-s", type=float, default=90)
    ap.add_argument("--timeout-s", type=int, default=20)
    ap.add_argument("--hidden", type=int, default=32)
    ap.add_argument("--max-steps", type=int, default=8)
    ap.add_argument("--devices", type=int, default=3)
    ap.add_argument("--num-workers", type=int, default=0)
    ap.add_argument("--log-every", type=int, default=2)    # 50 > batches per epoch -> PossibleUserWarning
    ap.add_argument("--ckpt-path", default=None)       # resume from this checkpoint
    ap.add_argument("--save-ckpt", default=None)       # after fit, rank 0 saves the trainer checkpoint here
    ap.add_argument("--log-dir", default="logs")       # TensorBoardLogger save_dir
    ap.add_argument("--monitor", default=None)         # ModelCheckpoint(monitor=...)
    args = ap.parse_args()
    torch.set_num_threads(1)
    L.seed_everything(0)
    strategy = DDPStrategy(process_group_backend="gloo", timeout=datetime.timedelta(seconds=args.timeout_s),
                           start_method={"ddp": "popen", "ddp_spawn": "spawn", "ddp_notebook": "fork"}[args.strategy])
    callbacks = [BatchAudit(args.bad_rank if args.fault == "callback_raise" else -1, args.fault_step)]
    if args.monitor:
        callbacks.append(ModelCheckpoint(dirpath="ckpt", monitor=args.monitor, mode="min"))
    trainer = L.Trainer(accelerator="cpu", devices=args.devices, strategy=strategy, max_steps=args.max_steps,
                        val_check_interval=4, limit_val_batches=2, log_every_n_steps=args.log_every,
                        callbacks=callbacks, enable_checkpointing=bool(args.monitor),
                        logger=[TensorBoardLogger(args.log_dir, name="reg"), CSVLogger(args.log_dir, name="reg_csv")])
    model = RegModel(hidden=args.hidden, fault=args.fault, bad_rank=args.bad_rank, fault_step=args.fault_step,
                     hang_s=args.hang_s)
    trainer.fit(model, datamodule=RegDataModule(num_workers=args.num_workers), ckpt_path=args.ckpt_path)
    if args.save_ckpt:
        trainer.save_checkpoint(args.save_ckpt)


if __name__ == "__main__":
    main()
