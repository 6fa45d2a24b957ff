#!/usr/bin/env python3
"""Round 29b: a plain gloo training loop (small MLP, manual gradient all_reduce, one logger line per step), launched
by the older/elastic launch styles (torch.distributed.launch with and without --use-env, torch.distributed.run
--standalone, torchrun elastic --nnodes 1:2, --max-restarts, --monitor-interval). --what picks the induced fault:

  healthy        nothing goes wrong
  raise          rank --bad-rank raises KeyError('label') in its data loading at step --k
  raise-attempt  like raise, but the failing rank depends on the restart attempt (TORCHELASTIC_RESTART_COUNT):
                 --bad-rank in attempt 0, --last-bad-rank from attempt --last-attempt on (ValueError there)
  sysexit        rank --bad-rank calls sys.exit(3) at step --k (no traceback)
  osexit         rank --bad-rank calls os._exit(1) at step --k (no traceback, no atexit, no flush of Python buffers)
  early-exit     rank --bad-rank returns from main with exit code 0 after step --k, the others go on training
  wait-signal    nothing is induced inside: every rank writes its pid to $R29B_PIDDIR/rank<N>.pid and trains slowly
                 (--sleep s per step); run_all.sh sends the signal (SIGINT to a rank, SIGTERM to the agent)
  elastic        slow training loop (--sleep s per step) for the elastic --nnodes 1:2 case; never induces anything

--argstyle picks how the script reads its local rank:
  env      os.environ['LOCAL_RANK'] (what torchrun / launch --use-env give)
  old      an old script: argparse knows only `--local_rank` (pre-2.0 style); torch 2.x launch without --use-env
           passes `--local-rank=N`, which this argparse rejects
  both     argparse accepts both `--local-rank` and `--local_rank` (the documented migration)
--record wraps main in torch.distributed.elastic.multiprocessing.errors.record (error file for the agent's summary).
"""
import argparse
import logging
import os
import sys
import time
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn as nn

logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s [%(name)s] %(message)s")


def parse():
    p = argparse.ArgumentParser(description="toy gloo trainer")
    p.add_argument("--what", default="healthy")
    p.add_argument("--bad-rank", type=int, default=1)
    p.add_argument("--last-bad-rank", type=int, default=2)
    p.add_argument("--last-attempt", type=int, default=2)
    p.add_argument("--k", type=int, default=3)
    p.add_argument("--steps", type=int, default=6)
    p.add_argument("--sleep", type=float, default=0.0)
    p.add_argument("--timeout", type=int, default=30)
    p.add_argument("--argstyle", default="env", choices=["env", "old", "both"])
    p.add_argument("--record", action="store_true")
    # the local-rank argument that torch.distributed.launch appends when --use-env is not given
    style = "env"
    if "--argstyle" in sys.argv:
        style = sys.argv[sys.argv.index("--argstyle") + 1]
    if style == "old":
        p.add_argument("--local_rank", type=int, default=0)
    elif style == "both":
        p.add_argument("--local-rank", "--local_rank", type=int, default=0)
    return p.parse_args(), style


def fetch_batch(step, rank, args, gen):
    # "data loading": a dict record per step; the induced KeyError happens here
    rec = {"x": torch.randn(16, 32, generator=gen), "label": torch.randint(0, 4, (16,), generator=gen)}
    attempt = int(os.environ.get("TORCHELASTIC_RESTART_COUNT", "0"))
    if args.what == "raise" and rank == args.bad_rank and step == args.k:
        del rec["label"]
    if args.what == "raise-attempt" and step == args.k:
        if attempt >= args.last_attempt and rank == args.last_bad_rank:
            raise ValueError(f"corrupt shard index {1000 + attempt} on rank {rank}: expected < 1000")
        if attempt < args.last_attempt and rank == args.bad_rank:
            del rec["label"]
    return rec["x"], rec["label"]


def main():
    args, style = parse()
    if style == "env":
        local_rank = int(os.environ["LOCAL_RANK"])
    else:
        local_rank = args.local_rank
    log = logging.getLogger("train")
    dist.init_process_group("gloo", timeout=timedelta(seconds=args.timeout))
    rank, world = dist.get_rank(), dist.get_world_size()
    attempt = os.environ.get("TORCHELASTIC_RESTART_COUNT", "0")
    log.info("rank %d/%d local_rank %d pid %d attempt %s started", rank, world, local_rank, os.getpid(), attempt)
    piddir = os.environ.get("R29B_PIDDIR")
    if piddir:
        with open(os.path.join(piddir, f"rank{rank}.pid"), "w") as f:
            f.write(str(os.getpid()))
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 4))
    for prm in model.parameters():
        dist.broadcast(prm.data, src=0)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    gen = torch.Generator().manual_seed(100 + rank)
    for step in range(args.steps):
        x, y = fetch_batch(step, rank, args, gen)
        loss = nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        for prm in model.parameters():
            dist.all_reduce(prm.grad)
            prm.grad /= world
        opt.step()
        avg = loss.detach().clone()
        dist.all_reduce(avg)
        log.info("rank %d step %d loss %.4f (avg %.4f)", rank, step, loss.item(), avg.item() / world)
        if rank == args.bad_rank and step == args.k:
            if args.what == "sysexit":
                log.info("rank %d: shard list exhausted, stopping", rank)
                sys.exit(3)
            if args.what == "osexit":
                os._exit(1)
            if args.what == "early-exit":
                log.info("rank %d: reached its own step budget, leaving the training loop", rank)
                return
        if args.sleep:
            time.sleep(args.sleep)
    dist.barrier()
    log.info("rank %d training complete", rank)
    dist.destroy_process_group()


if __name__ == "__main__":
    if "--record" in sys.argv:
        from torch.distributed.elastic.multiprocessing.errors import record
        main = record(main)
    main()
