"""Round 7, accelerate launch: rank 0 hangs.

Accelerator(cpu=True) (MULTI_CPU under `accelerate launch --multi_gpu` on a machine without GPUs: gloo, DDP-wrapped Linear 16-32-4), process group timeout 15 s
(InitProcessGroupKwargs). At step --fault-step the main process (rank 0) "uploads the latest checkpoint"
synchronously before its backward: it sleeps --hang-seconds (60) and prints nothing, so the other ranks wait
in DDP's gradient all_reduce until gloo's 15 s timeout fires on them.
"""
import argparse
import os
import time
from datetime import timedelta

import torch
import torch.nn as nn
from accelerate import Accelerator
from accelerate.logging import get_logger
from accelerate.utils import InitProcessGroupKwargs
import logging

p = argparse.ArgumentParser()
p.add_argument("--fault-step", type=int, default=3)
p.add_argument("--steps", type=int, default=8)
p.add_argument("--hang-seconds", type=float, default=60.0)
p.add_argument("--pg-timeout", type=int, default=15)
args = p.parse_args()

logging.basicConfig(format="%(asctime)s - %(levelname)s - %(name)s - %(message)s", level=logging.INFO)
torch.set_num_threads(1)
acc = Accelerator(cpu=True, kwargs_handlers=[InitProcessGroupKwargs(backend="gloo", timeout=timedelta(seconds=args.pg_timeout))])
log = get_logger("train")
log.info(f"process {acc.process_index}/{acc.num_processes} pid {os.getpid()} device {acc.device}", main_process_only=False)

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
data = torch.utils.data.TensorDataset(torch.randn(256, 16), torch.randint(0, 4, (256,)))
loader = torch.utils.data.DataLoader(data, batch_size=8, shuffle=True)
model, opt, loader = acc.prepare(model, opt, loader)
loss_fn = nn.CrossEntropyLoss()

for step, (x, y) in enumerate(loader):
    if step >= args.steps:
        break
    loss = loss_fn(model(x), y)
    if acc.is_main_process and step == args.fault_step:
        # synchronous upload of the last checkpoint to object storage; the remote end stalls
        time.sleep(args.hang_seconds)
    acc.backward(loss)
    opt.step()
    opt.zero_grad()
    avg = acc.reduce(loss.detach(), reduction="mean")
    log.info(f"step {step + 1}/{args.steps} loss {avg.item():.4f}")
acc.wait_for_everyone()
log.info("training finished")
acc.end_training()
