"""A tiny PyTorch Lightning job on 2 GPUs: Trainer(accelerator="gpu", devices=2, strategy=DDP on NCCL).

Started as a plain `python3 train_lightning.py --scenario SCENARIO`; Lightning's DDP strategy (start
method "popen") re-runs this script as a subprocess for rank 1 and watches it from rank 0.
Same model and loss as train_gpu.py (MLP 64-256-10, cross-entropy + InfoNCE over the batch).

--devices 1 (run_gpu.sh's one-GPU mode): Trainer(accelerator="gpu", devices=1) with the default
strategy (Lightning's SingleDeviceStrategy): one process, no process group, no NCCL; the faulty rank
is then the only one, rank 0, and the corrupt record of `raise` is the one it reads third in its 4th
batch (no DistributedSampler: the DataLoader's own sequential order).

Scenarios (--scenario), all on rank 1:
  none     healthy run
  raise    the dataset has one corrupt record (key 'lable' instead of 'label'), the one that the
           DistributedSampler Lightning injects (shuffle=True, seed 0) hands rank 1 in its 4th batch;
           rank 0 never reads it -> KeyError: 'label' in the collate function, on rank 1 only
  cudaoom  at batch 3 rank 1 "gathers the whole shard" (262144 samples) into one batch; the InfoNCE
           similarity matrix asks for 256 GiB -> torch.OutOfMemoryError on rank 1

--accelerator cpu (gloo) is a dry run of the control flow on a machine without GPU.
"""
import argparse
import logging
import sys
from datetime import timedelta

import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset, DistributedSampler

import lightning as L
from lightning.pytorch.strategies import DDPStrategy

from gpu_model import CLASSES, IN, Net, info_nce

logging.basicConfig(level=logging.INFO, stream=sys.stdout, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
log = logging.getLogger("train")
BATCH, N_RECORDS = 8, 1024


def broken_record_index(devices):
    """The record the faulty rank reads third in its 4th batch of epoch 0: with 2 devices rank 1's, in
    the order of the DistributedSampler Lightning injects (shuffle, seed 0); with 1 device the only
    rank's, in the DataLoader's own order (shuffle=False: sequential)."""
    if devices == 1:
        order = list(range(N_RECORDS))
    else:
        order = list(DistributedSampler(range(N_RECORDS), num_replicas=devices, rank=1, shuffle=True, seed=0))
    return order[3 * BATCH + 2]


class Records(Dataset):
    """Decoded jsonl records; in the raise scenario one of them was written with a misspelt key."""

    def __init__(self, scenario, devices):
        g = torch.Generator().manual_seed(0)
        self.x = torch.randn(N_RECORDS, IN, generator=g)
        self.y = torch.randint(0, CLASSES, (N_RECORDS,), generator=g)
        self.scenario = scenario
        self.broken = broken_record_index(devices)

    def __len__(self):
        return N_RECORDS

    def __getitem__(self, i):
        if self.scenario == "raise" and i == self.broken:
            return {"features": self.x[i], "lable": int(self.y[i])}
        return {"features": self.x[i], "label": int(self.y[i])}


def collate(records):
    x = torch.stack([r["features"] for r in records])
    y = torch.tensor([r["label"] for r in records])
    return x, y


class TinyModule(L.LightningModule):
    def __init__(self, scenario, oom_batch, devices):
        super().__init__()
        self.net = Net()
        self.scenario = scenario
        self.oom_batch = oom_batch
        self.devices = devices
        self.fault_rank = 1 if devices > 1 else 0

    def training_step(self, batch, batch_idx):
        x, y = batch
        if self.scenario == "cudaoom" and self.global_rank == self.fault_rank and batch_idx == 3:
            # the shard index is corrupt: this rank gathers its whole shard as one batch
            x = torch.randn(self.oom_batch, IN, device=self.device)
            y = torch.randint(0, CLASSES, (self.oom_batch,), device=self.device)
        logits, h = self.net(x)
        loss = F.cross_entropy(logits, y) + 0.1 * info_nce(h)
        return loss

    def on_train_batch_end(self, outputs, batch, batch_idx):
        if self.global_rank == 0:
            log.info("step %d loss %.4f", self.global_step, outputs["loss"].item())

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.05)

    def train_dataloader(self):
        return DataLoader(Records(self.scenario, self.devices), batch_size=BATCH, shuffle=False, num_workers=0,
                          collate_fn=collate)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--scenario", default="none", choices=["none", "raise", "cudaoom"])
    p.add_argument("--max-steps", type=int, default=8)
    p.add_argument("--timeout", type=int, default=30, help="process-group timeout, seconds")
    p.add_argument("--oom-batch", type=int, default=262144)
    p.add_argument("--accelerator", default="gpu", choices=["gpu", "cpu"], help="cpu: gloo dry run")
    p.add_argument("--devices", type=int, default=2, choices=[1, 2],
                   help="1: one device, Lightning's default (single-device) strategy, no process group")
    a = p.parse_args()

    L.seed_everything(0)
    if a.devices == 1:
        strategy = "auto"  # SingleDeviceStrategy: one process, no NCCL, no process group
    else:
        strategy = DDPStrategy(timeout=timedelta(seconds=a.timeout),
                               process_group_backend="nccl" if a.accelerator == "gpu" else "gloo")
    trainer = L.Trainer(accelerator=a.accelerator, devices=a.devices, strategy=strategy, max_steps=a.max_steps,
                        logger=False, enable_checkpointing=False, enable_progress_bar=False,
                        default_root_dir=".")
    trainer.fit(TinyModule(a.scenario, a.oom_batch, a.devices))
    log.info("[rank %d] training finished", trainer.global_rank)


if __name__ == "__main__":
    main()
