"""Tiny PyTorch Lightning job: Trainer(accelerator="cpu", devices=N, strategy=DDP on gloo).

Launched as a plain `python pl_job.py --devices 3`; Lightning's DDP strategy starts ranks 1..N-1 itself
(strategy "ddp": it re-runs this script as subprocesses; "ddp_spawn": torch.multiprocessing.spawn).
The fault of each scenario is chosen with SCENARIO/FAULT_RANK/FAULT_STEP (see faults.py).
"""
import argparse
import logging
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import faults  # noqa: E402

faults.pre_import_setup()

from datetime import timedelta  # noqa: E402

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
import torch.nn as nn  # noqa: E402
from torch.utils.data import DataLoader, Dataset  # noqa: E402

import lightning as L  # noqa: E402
from lightning.pytorch.strategies import DDPStrategy  # noqa: E402

torch.set_num_threads(1)
logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
log = logging.getLogger("train")

BATCH = 4


class RankLog:
    """faults.py logs through this, with the rank in front like the step lines."""

    def __init__(self, rank):
        self.rank = rank

    def info(self, msg, *args):
        log.info("[rank %d] " + msg, self.rank, *args)


class ShardDataset(Dataset):
    """Records as dicts, like a decoded jsonl shard."""

    def __init__(self, rank, n=64):
        g = torch.Generator().manual_seed(rank)
        self.rank = rank
        self.x = torch.randn(n, 8, generator=g)
        self.y = torch.randint(0, 2, (n,), generator=g)
        self.n_loaded = 0

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        if self.n_loaded % BATCH == 0:
            faults.on_load(self.rank, self.n_loaded // BATCH, RankLog(self.rank))
        rec = {"features": self.x[i], "label": self.y[i]}
        if faults.record_is_broken(self.rank, self.n_loaded // BATCH):
            rec = {"features": self.x[i], "lable": self.y[i]}  # a record written with a misspelt key
        self.n_loaded += 1
        return rec["features"], rec["label"]


class TinyClassifier(L.LightningModule):
    def __init__(self, compile_model=False):
        super().__init__()
        self.compile_model = compile_model
        self.net = None

    def setup(self, stage):
        # class weights computed on rank 0 from its label map, shared with all ranks
        w = torch.ones(faults.n_classes(self.global_rank))
        dist.broadcast(w, src=0)
        self.register_buffer("class_weights", w[:2].clone(), persistent=False)

    def configure_model(self):
        # built per rank, after the process group exists (so the rank is known)
        if self.net is not None:
            return
        hidden = faults.hidden_size(self.global_rank)
        net = nn.Sequential(nn.Linear(8, hidden), nn.ReLU(), nn.Linear(hidden, 2))
        if self.compile_model:
            if faults.SCENARIO == "compile" and faults.is_faulty(self.global_rank):
                import torch._inductor.config as ic

                ic.cpp.cxx = (None, os.environ["CXX"])
            net = torch.compile(net)
        self.net = net
        faults.join_oom_cgroup(self.global_rank, RankLog(self.global_rank))

    def train_dataloader(self):
        # each rank reads its own shard; no sampler needed
        return DataLoader(ShardDataset(self.global_rank), batch_size=BATCH, shuffle=False, num_workers=0)

    def training_step(self, batch, batch_idx):
        step = self.global_step
        faults.at_step(self.global_rank, step, RankLog(self.global_rank))
        x, y = batch
        loss = nn.functional.cross_entropy(self.net(x), y, weight=self.class_weights)
        # per-step metrics synced by hand, like many training loops do
        m = loss.detach().reshape(1).clone()
        dist.all_reduce(m)
        log.info("[rank %d] epoch %d step %d loss %.4f mean_loss %.4f",
                 self.global_rank, self.current_epoch, step, loss.item(), m[0].item() / self.trainer.world_size)
        return loss

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--devices", type=int, default=3)
    p.add_argument("--strategy", default="ddp", choices=["ddp", "ddp_spawn"])
    p.add_argument("--max-steps", type=int, default=8)
    p.add_argument("--timeout", type=int, default=20, help="process group timeout (s)")
    p.add_argument("--compile", action="store_true")
    a = p.parse_args()

    L.seed_everything(42)
    # "ddp" == DDPStrategy(start_method="popen"), "ddp_spawn" == DDPStrategy(start_method="spawn")
    start = "popen" if a.strategy == "ddp" else "spawn"
    strategy = DDPStrategy(start_method=start, process_group_backend="gloo", timeout=timedelta(seconds=a.timeout))
    trainer = L.Trainer(
        accelerator="cpu",
        devices=a.devices,
        strategy=strategy,
        max_steps=a.max_steps,
        enable_progress_bar=False,
        enable_checkpointing=False,
        logger=False,
        log_every_n_steps=1,
    )
    trainer.fit(TinyClassifier(compile_model=a.compile))
    log.info("[rank %d] training finished", trainer.global_rank)


if __name__ == "__main__":
    main()
