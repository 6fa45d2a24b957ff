"""Lightning Trainer job (CPU, strategy ddp, gloo, timeout 20 s), 2 "nodes" x devices=2 on one host.

Launched twice by run_all.sh (NODE_RANK=0/1 via two_nodes.sh). The bad process is (BAD_NODE, BAD_LOCAL);
its global rank is BAD_NODE*2 + BAD_LOCAL. Faults (common.py) fire inside training_step.
The module logs with self.local_rank / node_rank only (rank_zero_info for rank-0 messages).
"""
import logging
import os
from datetime import timedelta

import torch
import torch.nn as nn
import lightning as L
from lightning.pytorch.strategies import DDPStrategy
from torch.utils.data import DataLoader, TensorDataset

from common import fault_before_step, load_batch, reduce_metric

logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
log = logging.getLogger("trainjob")


class Net(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 1))
        self.gen = None

    def training_step(self, batch, idx):
        node = self.trainer.node_rank
        is_bad = node == int(os.environ.get("BAD_NODE", 1)) and self.local_rank == int(os.environ.get("BAD_LOCAL", 0))
        if self.gen is None:
            self.gen = torch.Generator().manual_seed(100 + self.global_rank)
        fault_before_step(idx, is_bad)
        x, y = load_batch(idx, is_bad, self.gen)
        loss = nn.functional.mse_loss(self.net(x), y)
        mean = reduce_metric(loss, idx, is_bad)
        log.info("[node %d/local %d] batch %d loss=%.4f mean=%.4f", node, self.local_rank, idx, loss.item(), mean)
        return loss

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.01)


if __name__ == "__main__":
    ds = TensorDataset(torch.randn(64, 16), torch.randn(64, 1))  # batches only set the step count
    trainer = L.Trainer(accelerator="cpu", devices=2, num_nodes=2, max_epochs=1, limit_train_batches=6,
                        strategy=DDPStrategy(process_group_backend="gloo", timeout=timedelta(seconds=20)),
                        enable_progress_bar=False, enable_checkpointing=False, logger=False)
    trainer.fit(Net(), DataLoader(ds, batch_size=4))
    log.info("[node %d/local %d] fit finished", trainer.node_rank, trainer.local_rank)
