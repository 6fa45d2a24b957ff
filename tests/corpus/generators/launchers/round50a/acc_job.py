"""Accelerate custom loop (Accelerator(cpu=True), gloo, InitProcessGroupKwargs timeout 20 s).

Started by `accelerate launch --multi_gpu --num_processes 4 --num_machines 2 --machine_rank 0|1 ...` twice
(two_nodes.sh) or once with --num_machines 1. The bad process is the one whose accelerator.process_index ==
BAD_INDEX (= its global rank). Logs name processes by process_index/local_process_index only.
"""
import logging
import os
from datetime import timedelta

import torch
import torch.nn as nn
from accelerate import Accelerator
from accelerate.logging import get_logger
from accelerate.utils import InitProcessGroupKwargs

from common import fault_before_step, load_batch, reduce_metric

logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
log = get_logger("accjob")
acc = Accelerator(cpu=True, kwargs_handlers=[InitProcessGroupKwargs(backend="gloo", timeout=timedelta(seconds=20))])
is_bad = acc.process_index == int(os.environ.get("BAD_INDEX", 3))
tag = f"[proc {acc.process_index} | local {acc.local_process_index}]"
log.info(f"{tag} started, num_processes={acc.num_processes}, pid={os.getpid()}", main_process_only=False)
log.info(f"distributed_type={acc.distributed_type} device={acc.device}")  # main process only

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 1))
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
model, opt = acc.prepare(model, opt)
gen = torch.Generator().manual_seed(100 + acc.process_index)
for step in range(6):
    fault_before_step(step, is_bad)
    x, y = load_batch(step, is_bad, gen)
    loss = nn.functional.mse_loss(model(x), y)
    opt.zero_grad()
    acc.backward(loss)
    opt.step()
    mean = reduce_metric(loss, step, is_bad)
    log.info(f"{tag} step {step} loss={loss.item():.4f} mean={mean:.4f}", main_process_only=False)
acc.wait_for_everyone()
log.info(f"{tag} training done", main_process_only=False)
acc.end_training()
