"""Small elastic DDP-style job (gloo, CPU) for torchrun --max-restarts runs.

Every attempt resumes from its own checkpoint in --ckpt-dir:
  ckpt.pt            model + optimizer + step, written atomically by rank 0 after every step
  shard_rank<r>.pt   each rank's data-shard cursor, written in place (NOT atomic) by that rank

--plan says what goes wrong in which attempt (attempt = TORCHELASTIC_RESTART_COUNT):
  "A:ACTION@RANK:STEP,..."  e.g. "0:raise@1:4,1:hang@3:6"   attempts not listed run cleanly
  ACTION  raise     ValueError from the data loader of RANK at STEP (a corrupt record)
          keyerror  KeyError from the data loader of RANK at STEP
          sigkill   RANK SIGKILLs itself at STEP (no traceback)
          hang      RANK sleeps --hang-s before the all_reduce of STEP (> process group timeout)
          badsave   RANK's shard-state save raises mid-write at STEP (unpicklable generator),
                    leaving a half-written shard_rank<RANK>.pt behind for the next attempt
  "*:..." applies to every attempt.
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
from torch.distributed.elastic.multiprocessing.errors import record

logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
log = logging.getLogger("train")


def parse_plan(plan):
    out = {}
    for item in filter(None, plan.split(",")):
        att, rest = item.split(":", 1)
        action, where = rest.split("@")
        rank, step = where.split(":")
        out[att] = (action, int(rank), int(step))
    return out


def records(rank, start):
    """The rank's data shard: an endless stream of (x, y) batches."""
    g = torch.Generator().manual_seed(1000 + rank)
    i = start
    while True:
        yield i, torch.randn(16, 32, generator=g), torch.randn(16, 1, generator=g)
        i += 1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ckpt-dir", required=True)
    ap.add_argument("--plan", default="")
    ap.add_argument("--steps", type=int, default=8)
    ap.add_argument("--pg-timeout", type=int, default=15)
    ap.add_argument("--hang-s", type=int, default=60)
    ap.add_argument("--step-s", type=float, default=0.5)
    args = ap.parse_args()

    attempt = os.environ.get("TORCHELASTIC_RESTART_COUNT", "0")
    dist.init_process_group("gloo", timeout=timedelta(seconds=args.pg_timeout))
    rank, world = dist.get_rank(), dist.get_world_size()
    plan = parse_plan(args.plan)
    fault = plan.get(attempt) or plan.get("*")
    log.info("rank %d/%d attempt %s pid %d starting", rank, world, attempt, os.getpid())

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    start = 0
    ck = os.path.join(args.ckpt_dir, "ckpt.pt")
    if os.path.exists(ck):
        state = torch.load(ck)
        model.load_state_dict(state["model"])
        opt.load_state_dict(state["opt"])
        start = state["step"]
        log.info("rank %d resumed from %s at step %d", rank, ck, start)
    cursor = start
    shard_file = os.path.join(args.ckpt_dir, f"shard_rank{rank}.pt")
    if os.path.exists(shard_file):
        cursor = torch.load(shard_file)["cursor"]  # raises on a half-written file
        log.info("rank %d resumed data shard at record %d", rank, cursor)
    data = records(rank, cursor)

    for step in range(start + 1, args.steps + 1):
        mine = fault is not None and fault[1] == rank and fault[2] == step
        idx, x, y = next(data)
        if mine and fault[0] == "raise":
            raise ValueError(f"corrupt record {idx} in shard data/train-{rank:05d}.bin: expected 32 features, got 0")
        if mine and fault[0] == "keyerror":
            sample = {"input": x}
            y = sample["label"]
        loss = torch.nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        if mine and fault[0] == "sigkill":
            os.kill(os.getpid(), signal.SIGKILL)
        if mine and fault[0] == "hang":
            time.sleep(args.hang_s)
        for p in model.parameters():
            dist.all_reduce(p.grad)
            p.grad /= world
        opt.step()
        log.info("rank %d step %d/%d loss %.4f", rank, step, args.steps, loss.item())
        # per-rank shard cursor, saved in place
        shard_state = {"cursor": idx + 1, "rank": rank}
        if mine and fault[0] == "badsave":
            shard_state["iterator"] = data  # a generator: torch.save fails half-way through the zip
        torch.save(shard_state, shard_file)
        dist.barrier()
        if rank == 0:
            tmp = ck + ".tmp"
            torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "step": step}, tmp)
            os.replace(tmp, ck)
        time.sleep(args.step_s)
    dist.barrier()
    if rank == 0:
        log.info("training finished: %d steps, world size %d", args.steps, world)
    dist.destroy_process_group()


if __name__ == "__main__":
    record(main)() if os.environ.get("USE_RECORD") == "1" else main()
