"""accelerate version: the main process prepares the dataset inside `main_process_first()` while the
other processes wait (accelerate's wait_for_everyone barrier), then a few training steps.
  --fault csv    the dataset CSV lacks the 'label' column -> main process raises KeyError
  --fault slow   the main process's preparation takes --solo-secs (> --timeout) -> the others time out
  (no --fault)   healthy, preparation takes --solo-secs (< --timeout)
"""
import argparse, csv, logging, sys, time
from datetime import timedelta

import torch
import torch.nn as nn
from accelerate import Accelerator
from accelerate.utils import InitProcessGroupKwargs

p = argparse.ArgumentParser()
p.add_argument("--csv", required=True)
p.add_argument("--fault", default="")
p.add_argument("--timeout", type=float, default=20)
p.add_argument("--solo-secs", type=float, default=5)
a = p.parse_args()

logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s", stream=sys.stdout)
log = logging.getLogger("train")
acc = Accelerator(cpu=True, kwargs_handlers=[InitProcessGroupKwargs(backend="gloo", timeout=timedelta(seconds=a.timeout))])
rank = acc.process_index

with acc.main_process_first():
    if acc.is_main_process:
        log.info("rank %d: preparing dataset from %s", rank, a.csv)
        t0 = time.time()
        while time.time() - t0 < a.solo_secs:
            time.sleep(1)
        with open(a.csv, newline="") as f:
            rows = list(csv.DictReader(f))
        labels = [int(r["label"]) for r in rows]
        log.info("rank %d: dataset ready, %d rows", rank, len(labels))
    else:
        log.info("rank %d: dataset prepared by the main process, loading cache", rank)

model = nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 1))
opt = torch.optim.SGD(model.parameters(), lr=1e-3)
model, opt = acc.prepare(model, opt)
for step in range(4):
    x = torch.randn(32, 16)
    loss = nn.functional.mse_loss(model(x), x.sum(1, keepdim=True))
    opt.zero_grad()
    acc.backward(loss)
    opt.step()
    log.info("rank %d step %d loss %.4f", rank, step, loss.item())
acc.wait_for_everyone()
log.info("rank %d: done", rank)
acc.end_training()
