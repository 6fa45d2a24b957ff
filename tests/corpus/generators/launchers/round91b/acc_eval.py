"""accelerate train + evaluate (CPU, gloo): `accelerate launch --multi_gpu --num_processes N acc_eval.py ARGS`.

--fault:
  none        healthy: eval loader prepared by accelerate over 101 samples (uneven across processes);
              gather_for_metrics drops the duplicated samples -> exactly 101 predictions
  gather      the eval shards are built by hand (one file per process); the --who process's file has 5
              samples fewer, so its LAST batch is smaller, and the loop calls accelerator.gather() (which
              does not pad) -> different sizes in the all_gather
  extra       hand-built shards, the --who process's file holds one batch more; gather_for_metrics per
              batch -> that process calls one gather more than the others, which wait in wait_for_everyone()
"""
import argparse, logging, sys
from datetime import timedelta

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset
from accelerate import Accelerator
from accelerate.utils import InitProcessGroupKwargs

p = argparse.ArgumentParser()
p.add_argument("--fault", default="none")
p.add_argument("--who", default="1")
p.add_argument("--epochs", type=int, default=3)
p.add_argument("--fault-epoch", type=int, default=1)
p.add_argument("--timeout", type=float, default=20)
a = p.parse_args()

logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s", stream=sys.stdout)
log = logging.getLogger("eval")
acc = Accelerator(cpu=True, kwargs_handlers=[InitProcessGroupKwargs(backend="gloo", timeout=timedelta(seconds=a.timeout))])
rank, world = acc.process_index, acc.num_processes
who = world - 1 if a.who == "last" else int(a.who)

torch.manual_seed(0)
x = torch.randn(480, 16); y = (x[:, :4].sum(1) > 0).long()
train_dl = DataLoader(TensorDataset(x, y), batch_size=16, shuffle=True)
model = nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 2))
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
model, opt, train_dl = acc.prepare(model, opt, train_dl)

vx = torch.randn(101, 16); vy = (vx[:, :4].sum(1) > 0).long()
full_eval_dl = acc.prepare(DataLoader(TensorDataset(vx, vy), batch_size=8))


def own_shard(epoch):
    """This process's validation file (hand-sharded: 32 samples each)."""
    g = torch.Generator().manual_seed(100 + rank)
    n = 32
    if epoch >= a.fault_epoch and rank == who:
        n += {"gather": -5, "extra": 8}.get(a.fault, 0)
    sx = torch.randn(n, 16, generator=g); sy = (sx[:, :4].sum(1) > 0).long()
    return DataLoader(TensorDataset(sx, sy), batch_size=8)


for epoch in range(a.epochs):
    model.train()
    for step, (bx, by) in enumerate(train_dl):
        loss = nn.functional.cross_entropy(model(bx), by)
        acc.backward(loss); opt.step(); opt.zero_grad()
        if step % 5 == 0:
            log.info("process %d epoch %d step %d loss %.4f", rank, epoch, step, loss.item())
    model.eval()
    dl = full_eval_dl if a.fault == "none" else own_shard(epoch)
    log.info("process %d epoch %d evaluating %d batches", rank, epoch, len(dl))
    preds, labels = [], []
    with torch.no_grad():
        for bx, by in dl:
            pr = model(bx).argmax(1)
            if a.fault == "gather":
                pr, by = acc.gather(pr), acc.gather(by)
            else:
                pr, by = acc.gather_for_metrics((pr, by))
            preds.append(pr); labels.append(by)
    preds, labels = torch.cat(preds), torch.cat(labels)
    acc.wait_for_everyone()
    if acc.is_main_process:
        log.info("epoch %d eval accuracy %.4f over %d samples", epoch, (preds == labels).float().mean().item(), len(preds))
acc.wait_for_everyone()
log.info("process %d finished", rank)
acc.end_training()
