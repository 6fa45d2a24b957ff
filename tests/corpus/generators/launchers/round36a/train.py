#!/usr/bin/env python3
"""Round 36a worker: a tiny DDP job (CPU, gloo) whose ranks read a config + vocab from DATA_DIR, import a local
helper module (jobutils, found through PYTHONPATH), train a few steps and write per-rank checkpoints to CKPT_DIR.

It has no fault switches of its own: every failure comes from ONE rank's environment being different (set by
node_env.sh under torchrun/mpirun, or by apply_node_profile() below under mp.spawn, as a per-node wrapper would).

Launchers: torchrun (RANK/LOCAL_RANK/WORLD_SIZE from the agent), mpirun (OMPI_COMM_WORLD_* mapped to the torch
names), or `python train.py --spawn N` (torch.multiprocessing.spawn)."""
import argparse
import json
import logging
import os
import resource
import sys
import time
from datetime import timedelta

log = logging.getLogger("train")


def apply_node_profile(rank):
    """mp.spawn only: ODD_RANK's process applies ODD_SET at start-up, as a node's wrapper script would:
    `-KEY` unsets, `KEY=VAL` sets, `nofile=N` / `as_mb=N` set RLIMIT_NOFILE / RLIMIT_AS (like ulimit -n / -v)."""
    if os.environ.get("ODD_RANK") != str(rank):
        return
    for item in filter(None, os.environ.get("ODD_SET", "").split(";")):
        if item.startswith("-"):
            os.environ.pop(item[1:], None)
        elif item.startswith("nofile="):
            n = int(item.split("=")[1])
            resource.setrlimit(resource.RLIMIT_NOFILE, (n, n))
        elif item.startswith("as_mb="):
            n = int(item.split("=")[1]) << 20
            resource.setrlimit(resource.RLIMIT_AS, (n, n))
        else:
            k, v = item.split("=", 1)
            os.environ[k] = v


def main(spawn_rank=None, args=None):
    if spawn_rank is not None:                      # mp.spawn: this process's rank comes from spawn
        os.environ.update(RANK=str(spawn_rank), LOCAL_RANK=str(spawn_rank), WORLD_SIZE=str(args.spawn))
        apply_node_profile(spawn_rank)
    elif "OMPI_COMM_WORLD_RANK" in os.environ:     # mpirun: map Open MPI's names to torch's
        os.environ.setdefault("RANK", os.environ["OMPI_COMM_WORLD_RANK"])
        os.environ.setdefault("LOCAL_RANK", os.environ["OMPI_COMM_WORLD_LOCAL_RANK"])
        os.environ.setdefault("WORLD_SIZE", os.environ["OMPI_COMM_WORLD_SIZE"])
    rank = int(os.environ["RANK"])
    logging.basicConfig(level=logging.INFO, stream=sys.stdout, force=True,
                        format=f"%(asctime)s [rank{rank}] %(levelname)s %(name)s: %(message)s")

    import torch
    import torch.distributed as dist
    import torch.nn as nn
    from torch.nn.parallel import DistributedDataParallel as DDP
    from jobutils import load_vocab, make_batches   # local helper package (PYTHONPATH)

    local_rank = int(os.environ["LOCAL_RANK"])
    world = int(os.environ["WORLD_SIZE"])
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
    data_dir = os.environ.get("DATA_DIR", "data")
    ckpt_dir = os.path.join(os.environ.get("CKPT_DIR", "ckpt"), f"rank{rank}")
    log.info("start: rank %d local_rank %d world %d data_dir %s ckpt_dir %s", rank, local_rank, world, data_dir, ckpt_dir)

    with open(os.path.join(data_dir, "config.json")) as f:
        cfg = json.load(f)
    vocab = load_vocab(os.path.join(data_dir, "vocab.txt"))
    log.info("config %s, vocab of %d tokens", cfg["name"], len(vocab))

    dist.init_process_group("gloo", timeout=timedelta(seconds=args.pg_timeout))
    torch.manual_seed(0)
    if args.preload_mb:                              # keep the training set in RAM (touch it)
        cache = torch.empty(args.preload_mb << 20, dtype=torch.uint8)
        cache.fill_(1)
        log.info("preloaded %d MiB of samples", args.preload_mb)
    model = DDP(nn.Sequential(nn.Linear(32, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 4)))
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    os.makedirs(ckpt_dir, exist_ok=True)
    for step, (x, y) in enumerate(make_batches(torch, rank, args.steps, args.workers), 1):
        loss = nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        log.info("step %d/%d loss %.4f", step, args.steps, loss.item())
        if step % args.ckpt_every == 0:
            path = os.path.join(ckpt_dir, f"step{step}.pt")
            torch.save({"model": model.module.state_dict(), "opt": opt.state_dict(), "step": step}, path)
            with open(os.path.join(ckpt_dir, "latest.json"), "w") as f:
                json.dump({"step": step, "path": path}, f)
            log.info("saved checkpoint %s", path)
        time.sleep(0.2)
    dist.barrier()
    log.info("training finished")
    dist.destroy_process_group()


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=6)
    p.add_argument("--ckpt-every", type=int, default=3)
    p.add_argument("--pg-timeout", type=int, default=30)
    p.add_argument("--preload-mb", type=int, default=0)
    p.add_argument("--workers", type=int, default=0, help="DataLoader workers")
    p.add_argument("--spawn", type=int, default=0, help="world size for torch.multiprocessing.spawn")
    a = p.parse_args()
    if a.spawn:
        import torch.multiprocessing as mp
        os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
        mp.spawn(main, args=(a,), nprocs=a.spawn)
    else:
        main(None, a)
