"""DDP train + validate with torchmetrics metrics synced across ranks (torchrun, CPU, gloo).

--fault (on rank --who, 'last' = world-1, from epoch --fault-epoch on):
  none          healthy: uneven val shards, metrics synced by compute() on every rank
  shape         a custom LabelHistogram metric sizes its state by the largest label seen on THIS rank; the
                --who rank's shard contains the rare class 4 -> its state has 5 entries, the others 4
  dtype         a custom MeanAbsError metric; the --who rank's targets come from a float64 .npy cache, so
                `self.sum_abs = self.sum_abs + ...` turns its state into float64 (the others float32)
  rank0_compute only rank 0 calls metric.compute() (to log it); compute() syncs, the others go on training
"""
import argparse, datetime, logging, os, sys

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torchmetrics import Metric
from torchmetrics.classification import MulticlassAccuracy


class MeanAbsError(Metric):
    def __init__(self):
        super().__init__()
        self.add_state("sum_abs", default=torch.tensor(0.0), dist_reduce_fx="sum")
        self.add_state("n", default=torch.tensor(0), dist_reduce_fx="sum")

    def update(self, pred, target):
        self.sum_abs = self.sum_abs + (pred - target).abs().sum()
        self.n += target.numel()

    def compute(self):
        return self.sum_abs / self.n


class LabelHistogram(Metric):
    """Class distribution of the validation labels (state grown to the largest label seen locally)."""
    def __init__(self):
        super().__init__()
        self.add_state("hist", default=torch.zeros(0, dtype=torch.long), dist_reduce_fx="sum")

    def update(self, target):
        c = torch.bincount(target)
        n = max(len(c), len(self.hist))
        self.hist = nn.functional.pad(self.hist, (0, n - len(self.hist))) + nn.functional.pad(c, (0, n - len(c)))

    def compute(self):
        return self.hist


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--fault", default="none")
    p.add_argument("--who", default="1")
    p.add_argument("--fault-epoch", type=int, default=1)
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--steps", type=int, default=5)
    p.add_argument("--timeout", type=int, default=20)
    a = p.parse_args()
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    who = world - 1 if a.who == "last" else int(a.who)
    logging.basicConfig(level=logging.INFO, stream=sys.stdout,
                        format=f"%(asctime)s %(levelname)s [rank{rank}] %(name)s: %(message)s")
    log = logging.getLogger("val")
    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=a.timeout))
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 5))
    model = DDP(net)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    g = torch.Generator().manual_seed(rank)

    for epoch in range(a.epochs):
        model.train()
        for step in range(a.steps):
            x = torch.randn(16, 16, generator=g); y = (x[:, :3].sum(1) > 0).long() + (x[:, 3] > 0).long()
            loss = nn.functional.cross_entropy(model(x), y)
            opt.zero_grad(); loss.backward(); opt.step()
            if rank == 0:
                log.info("epoch %d step %d loss %.4f", epoch, step, loss.item())

        # validation shard of this rank (uneven sizes: ranks hold 40, 48, ... samples)
        faulty = epoch >= a.fault_epoch and rank == who
        nval = 40 + 8 * (rank % 2)
        vx = torch.randn(nval, 16, generator=g)
        vy = (vx[:, :3].sum(1) > 0).long() + (vx[:, 3] > 0).long()
        if a.fault == "shape" and faulty:
            vy[-3:] = 4                  # a few samples of the rare class 4 landed in this rank's shard
        acc = MulticlassAccuracy(num_classes=5, average="macro")
        mae = MeanAbsError()
        hist = LabelHistogram()
        model.eval()
        with torch.no_grad():
            for i in range(0, nval, 8):
                logits = model(vx[i:i + 8])
                acc.update(logits, vy[i:i + 8])
                hist.update(vy[i:i + 8])
                target = vy[i:i + 8].float()
                if a.fault == "dtype" and faulty:
                    target = torch.from_numpy(np.asarray(vy[i:i + 8].numpy(), dtype=np.float64))
                mae.update(logits.argmax(1).float(), target)
        log.info("epoch %d validated %d samples", epoch, nval)
        if a.fault == "rank0_compute" and epoch >= a.fault_epoch:
            if rank == 0:
                log.info("epoch %d val_acc %.4f val_mae %.4f", epoch, acc.compute().item(), mae.compute().item())
            continue
        va, vm, vh = acc.compute(), mae.compute(), hist.compute()
        if rank == 0:
            log.info("epoch %d val_acc %.4f val_mae %.4f label_hist %s", epoch, va.item(), vm.item(), vh.tolist())
    dist.barrier()
    log.info("done")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
