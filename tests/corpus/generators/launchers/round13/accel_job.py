"""Hugging Face accelerate job (Accelerator(cpu=True)) launched by torchrun; the collate function pads
variable-length samples and maps class ids to names.

Induced: on process --bad-rank the collate function's --step-th batch (0-based) contains a class id outside the
class-name table -> IndexError. (accelerate's DataLoaderShard fetches one batch ahead, so that batch is
collated while the previous step is being handed out.)
"""
import argparse
import logging
import time

import torch
import torch.nn as nn
from accelerate import Accelerator
from torch.utils.data import DataLoader

p = argparse.ArgumentParser()
p.add_argument("--bad-rank", type=int, default=1)
p.add_argument("--step", type=int, default=2)
p.add_argument("--steps", type=int, default=8)
args = p.parse_args()

logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
log = logging.getLogger("train")
acc = Accelerator(cpu=True)
rank = acc.process_index
CLASSES = ["neg", "neu", "pos"]
calls = {"n": 0}


def collate(samples):
    n = calls["n"]
    calls["n"] += 1
    bad = rank == args.bad_rank and n == args.step
    L = max(len(s) for s in samples)
    x = torch.zeros(len(samples), 12)
    names, ys = [], []
    for i, s in enumerate(samples):
        x[i, :len(s)] = torch.tensor(s)
        cid = 3 if (bad and i == 5) else i % 3               # induced: a label id from a newer label set
        names.append(CLASSES[cid])
        ys.append(float(cid))
    return x, torch.tensor(ys).unsqueeze(1)


data = [[float((i * 7 + j) % 5) / 5 for j in range(4 + i % 8)] for i in range(960)]
loader = DataLoader(data, batch_size=16, collate_fn=collate, shuffle=False)
model = nn.Sequential(nn.Linear(12, 32), nn.ReLU(), nn.Linear(32, 1))
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
model, opt, loader = acc.prepare(model, opt, loader)
log.info("[rank %d] accelerate state: %s, num_processes=%d", rank, acc.distributed_type, acc.num_processes)
for step, (x, y) in enumerate(loader):
    loss = nn.functional.mse_loss(model(x), y)
    acc.backward(loss)
    opt.step()
    opt.zero_grad()
    log.info("[rank %d] step %d loss=%.4f", rank, step, loss.item())
    time.sleep(0.3)
    if step + 1 == args.steps:
        break
acc.wait_for_everyone()
log.info("[rank %d] done", rank)
acc.end_training()
