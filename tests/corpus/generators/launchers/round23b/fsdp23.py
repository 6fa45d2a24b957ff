#!/usr/bin/env python3
"""FSDP2 (torch.distributed.fsdp.fully_shard) training of a small MLP on CPU/gloo, launched by torchrun.

Faults (one per run), injected on --bad-rank at --step:
  raise    ValueError from the rank's data loading
  sigkill  os.kill(os.getpid(), SIGKILL): no traceback
  hang     sleep --sleep seconds before the step's collective (process group timeout --pg-timeout)
  nan      the rank's batch gets a NaN; the script's finite-loss check raises FloatingPointError
  ckpt     checkpoint save: the bad rank's shard directory does not exist -> torch.save raises
  none     healthy; --noisy adds warnings and a retried metrics push
"""
import argparse, logging, os, signal, sys, time, warnings
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.distributed.fsdp import fully_shard

p = argparse.ArgumentParser()
p.add_argument("--fault", default="none")
p.add_argument("--bad-rank", type=int, default=1)
p.add_argument("--step", type=int, default=3)
p.add_argument("--steps", type=int, default=6)
p.add_argument("--sleep", type=float, default=60)
p.add_argument("--pg-timeout", type=float, default=20)
p.add_argument("--ckpt-dir", default="ckpt_fsdp")
p.add_argument("--noisy", action="store_true")
a = p.parse_args()

rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
logging.basicConfig(level=logging.INFO, format=f"%(asctime)s [rank{rank}] %(levelname)s %(name)s: %(message)s")
log = logging.getLogger("fsdp_train")

dist.init_process_group("gloo", timeout=timedelta(seconds=a.pg_timeout))
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 1))
mesh = dist.device_mesh.init_device_mesh("cpu", (world,))
for layer in model:
    if isinstance(layer, nn.Linear):
        fully_shard(layer, mesh=mesh)
fully_shard(model, mesh=mesh)
opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
log.info("FSDP2 model sharded over %d ranks; local params %d", world, sum(p.to_local().numel() for p in model.parameters()))

def get_batch(step):
    g = torch.Generator().manual_seed(1000 * rank + step)
    x = torch.randn(16, 32, generator=g)
    y = x[:, :1].clone()
    if a.fault == "raise" and rank == a.bad_rank and step == a.step:
        sample = {"id": 16 * step + 5, "label": "n/a"}
        raise ValueError(f"could not convert label {sample['label']!r} of sample {sample['id']} to float")
    if a.fault == "nan" and rank == a.bad_rank and step == a.step:
        x[3, 7] = float("nan")
    return x, y

if a.noisy and rank == 0:
    warnings.warn("torch.cuda.amp.GradScaler is enabled, but CUDA is not available. Disabling.", UserWarning)
for step in range(1, a.steps + 1):
    if a.fault == "sigkill" and rank == a.bad_rank and step == a.step:
        os.kill(os.getpid(), signal.SIGKILL)
    if a.fault == "hang" and rank == a.bad_rank and step == a.step:
        time.sleep(a.sleep)
    x, y = get_batch(step)
    loss = nn.functional.mse_loss(model(x), y)
    if not torch.isfinite(loss):
        raise FloatingPointError(f"non-finite loss {loss.item()} at step {step} on rank {rank}")
    loss.backward()
    opt.step(); opt.zero_grad()
    log.info("step %d/%d loss=%.4f", step, a.steps, loss.item())
    if a.noisy and rank == 0 and step == 2:
        log.warning("metrics push to http://metrics.internal:9091 failed: timed out after 5.0s (attempt 1/3); retrying")
        log.info("metrics push ok (attempt 2/3)")

# sharded checkpoint: each rank saves its own shards
sd = {k: v.to_local() for k, v in model.state_dict().items()}
d = os.path.join(a.ckpt_dir, f"shard_{rank}")
if not (a.fault == "ckpt" and rank == a.bad_rank):
    os.makedirs(d, exist_ok=True)
torch.save(sd, os.path.join(d, "model.pt"))
log.info("saved shard to %s", d)
dist.barrier()
if rank == 0:
    log.info("training done")
dist.destroy_process_group()
