"""Small data-parallel training job (gloo, CPU) with one induced fault.

Reads RANK / WORLD_SIZE / MASTER_ADDR / MASTER_PORT from the environment, so it runs under torchrun,
under the legacy `python -m torch.distributed.launch --use-env`, and under a plain shell loop.

Fault knobs (command-line):
  --fault none|raise|sigkill|hang|mismatch
      raise    : rank --fail-rank raises in its data loading at step --fail-step: KeyError (a stale sample id,
                 --raise-kind key) or ValueError (an unparsable label field, --raise-kind value)
      sigkill  : rank --fail-rank SIGKILLs itself at step --fail-step (no traceback)
      hang     : rank --fail-rank sleeps --hang-s seconds before the step's all_reduce, longer than the
                 process-group timeout --pg-timeout, so the other ranks time out in the collective
      mismatch : rank --fail-rank all-reduces a gradient bucket of another size at step --fail-step
  --ckpt-every K : every K steps the ranks agree on a checkpoint through the TCPStore (home-grown
                 commit barrier: each rank sets a key and waits for everyone's); with --kill-at-ckpt the
                 sigkill fault hits the faulty rank inside that store exchange instead of before the all_reduce
  --attempts A : fault only while TORCHELASTIC_RESTART_COUNT < A (torchrun restarts); default: every attempt
"""
import argparse
import logging
import os
import signal
import sys
import time
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn as nn

p = argparse.ArgumentParser()
p.add_argument("--fault", default="none", choices=["none", "raise", "sigkill", "hang", "mismatch"])
p.add_argument("--raise-kind", default="key", choices=["key", "value"])
p.add_argument("--fail-rank", type=int, default=1)
p.add_argument("--fail-step", type=int, default=3)
p.add_argument("--steps", type=int, default=8)
p.add_argument("--pg-timeout", type=int, default=15)
p.add_argument("--hang-s", type=int, default=120)
p.add_argument("--attempts", type=int, default=1000)
p.add_argument("--ckpt-every", type=int, default=0)
p.add_argument("--kill-at-ckpt", action="store_true")
p.add_argument("--step-sleep", type=float, default=0.3)
args = p.parse_args()

rank = int(os.environ["RANK"])
world = int(os.environ["WORLD_SIZE"])
attempt = int(os.environ.get("TORCHELASTIC_RESTART_COUNT", "0"))

logging.basicConfig(level=logging.INFO, stream=sys.stdout,
                    format=f"%(asctime)s [rank{rank}] %(levelname)s %(name)s: %(message)s")
log = logging.getLogger("train")

dist.init_process_group("gloo", timeout=timedelta(seconds=args.pg_timeout))
log.info("initialized process group: rank %d/%d, attempt %d, backend gloo", rank, world, attempt)

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 1))
for prm in model.parameters():  # same initial weights on every rank
    dist.broadcast(prm.data, src=0)
opt = torch.optim.SGD(model.parameters(), lr=0.05)
gen = torch.Generator().manual_seed(1000 + rank)
faulty = rank == args.fail_rank and attempt < args.attempts


def load_batch(step):
    """Fake data loader: a dict keyed by sample id, as a real dataset index would be."""
    keys = [f"sample_{step * 64 + i}" for i in range(8)]
    index = {k: torch.randn(16, generator=gen) for k in keys}
    labels = [f"{0.1 * i:.3f}" for i in range(8)]  # label column as read from a text file
    if faulty and args.fault == "raise" and step == args.fail_step:
        if args.raise_kind == "key":
            keys[3] = f"sample_{step * 64 + 901}"  # stale index entry: not in the shard
        else:
            labels[5] = "n/a"  # a corrupt row in the label file
    x = torch.stack([index[k] for k in keys])
    y = x.sum(dim=1, keepdim=True) * 0.1 + 0.01 * torch.tensor([float(v) for v in labels]).unsqueeze(1)
    return x, y


for step in range(args.steps):
    x, y = load_batch(step)
    loss = nn.functional.mse_loss(model(x), y)
    opt.zero_grad()
    loss.backward()
    if faulty and step == args.fail_step and not args.kill_at_ckpt:
        if args.fault == "sigkill":
            os.kill(os.getpid(), signal.SIGKILL)
        if args.fault == "hang":
            time.sleep(args.hang_s)  # stuck (e.g. a slow filesystem read) past the pg timeout
    # Gradient all-reduce as one flat bucket.
    flat = torch.cat([q.grad.reshape(-1) for q in model.parameters()])
    if faulty and args.fault == "mismatch" and step == args.fail_step:
        flat = torch.cat([flat, torch.zeros(32)])  # this rank's bucket has 32 extra elements
    dist.all_reduce(flat)
    flat /= world
    off = 0
    for q in model.parameters():
        n = q.numel()
        q.grad.copy_(flat[off:off + n].view_as(q))
        off += n
    opt.step()
    lv = loss.detach().clone()
    dist.all_reduce(lv)
    if rank == 0:
        log.info("step %d/%d loss %.4f", step + 1, args.steps, lv.item() / world)
    if args.ckpt_every and (step + 1) % args.ckpt_every == 0:
        store = dist.distributed_c10d._get_default_store()
        if faulty and args.fault == "sigkill" and args.kill_at_ckpt and step == args.fail_step:
            os.kill(os.getpid(), signal.SIGKILL)
        torch.save(model.state_dict(), f"ckpt_rank{rank}.pt")
        store.set(f"ckpt/{step + 1}/rank{rank}", "done")
        store.wait([f"ckpt/{step + 1}/rank{r}" for r in range(world)])
        if rank == 0:
            log.info("checkpoint for step %d committed by all %d ranks", step + 1, world)
    time.sleep(args.step_sleep)

dist.barrier()
if rank == 0:
    log.info("training finished after %d steps", args.steps)
dist.destroy_process_group()
