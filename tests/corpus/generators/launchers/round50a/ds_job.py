"""DeepSpeed engine job (DS_ACCELERATOR=cpu, dist_backend gloo, timeout 20 s, ZeRO stage 0/1).

Started by the `deepspeed` launcher (hostfile `localhost slots=N`, --num_nodes/--include variants,
--enable_each_rank_log). The bad process is global rank BAD_RANK (torch.distributed.get_rank()).
Job logs print the launcher's LOCAL_RANK and the pid only; DeepSpeed itself prints `[Rank N]` lines.
"""
import argparse
import logging
import os
from datetime import timedelta

import torch
import torch.nn as nn
import deepspeed
from deepspeed.utils.logging import set_log_level_from_string

from common import fault_before_step, load_batch, reduce_metric

p = argparse.ArgumentParser()
p.add_argument("--local_rank", type=int, default=-1)  # passed by the deepspeed launcher
p.add_argument("--stage", type=int, default=int(os.environ.get("ZERO_STAGE", 1)))
args, _ = p.parse_known_args()

logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s job[local %(lrank)s pid %(process)d]: %(message)s")
log = logging.LoggerAdapter(logging.getLogger("dsjob"), {"lrank": os.environ.get("LOCAL_RANK", "?")})

set_log_level_from_string(os.environ.get("DS_LOG_LEVEL", "info"))  # DeepSpeed's own [Rank N] info logs
deepspeed.init_distributed(dist_backend="gloo", timeout=timedelta(seconds=20))
is_bad = torch.distributed.get_rank() == int(os.environ.get("BAD_RANK", 2))
log.info("process up (LOCAL_RANK=%s)", os.environ.get("LOCAL_RANK"))

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 1))
cfg = {"train_micro_batch_size_per_gpu": 8, "gradient_accumulation_steps": 1,
       "optimizer": {"type": "Adam", "params": {"lr": 1e-3, "torch_adam": True}},
       "zero_optimization": {"stage": args.stage}, "steps_per_print": 2}
engine, _, _, _ = deepspeed.initialize(model=model, model_parameters=model.parameters(), config=cfg)
gen = torch.Generator().manual_seed(100 + torch.distributed.get_rank())
for step in range(6):
    fault_before_step(step, is_bad)
    x, y = load_batch(step, is_bad, gen)
    loss = nn.functional.mse_loss(engine(x), y)
    engine.backward(loss)
    engine.step()
    mean = reduce_metric(loss, step, is_bad)
    log.info("step %d loss=%.4f mean=%.4f", step, loss.item(), mean)
log.info("done")
