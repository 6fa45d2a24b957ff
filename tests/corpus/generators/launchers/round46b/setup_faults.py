"""Round 46b: failures while the process groups are being SET UP, caused by ONE rank.

A small DDP job (gloo, CPU) that reads a config, joins the default process group, creates a
couple of sub-groups, then trains a tiny model for a few steps.  `--fault NAME --bad-rank B`
makes rank B alone do something different during set-up (see FAULTS below).

Rank/world come from (in order): mp.spawn (--spawn N), RANK/WORLD_SIZE (shell loop, torchrun),
OMPI_COMM_WORLD_RANK/SIZE (mpirun).  Log lines carry the rank in the job's own format
("rank 2/4: ..."), no "[rank N]" prefix.
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

FAULTS = {
    "none": "healthy",
    "slow_ok": "healthy but slow set-up: every rank sleeps 2 s, the bad rank 8 s (within the timeout)",
    "dup_rank": "bad rank takes rank B-1 from its own config (two processes claim B-1, rank B missing)",
    "world_size": "bad rank uses WORLD_SIZE+1",
    "late": "bad rank sleeps --late-s seconds before init_process_group (past the timeout)",
    "preinit_raise": "bad rank fails reading its config (KeyError) before init_process_group",
    "preinit_import": "bad rank imports a module that is not installed before init_process_group",
    "file_stale": "bad rank uses init_method file:// pointing at a stale file left by an earlier run",
    "tcp_wrongport": "bad rank uses init_method tcp:// to a wrong port",
    "newgroup_skip": "bad rank does not call new_group([0,1]) (all other ranks do)",
    "newgroup_ranks": "bad rank calls new_group with a different rank list",
    "group_order": "bad rank creates its two sub-groups in the other order",
    "subgroup_backend": "bad rank creates its sub-group with backend='nccl' (others gloo)",
    "destroy_early": "bad rank calls destroy_process_group right after set-up; others all_reduce",
    "subgroups_skip": "bad rank does not call new_subgroups(group_size=2) (all other ranks do)",
}

log = logging.getLogger("train")


def setup_logging(rank, world):
    logging.basicConfig(
        stream=sys.stdout,
        level=logging.INFO,
        format=f"%(asctime)s %(levelname)s %(name)s rank {rank}/{world}: %(message)s",
    )


def read_config(args, rank):
    cfg = {"lr": 0.05, "steps": args.steps, "batch": 16}
    if args.fault == "preinit_raise" and rank == args.bad_rank:
        # this rank's config dict lacks the key its data loader needs
        per_rank = {"lr": 0.05}
        cfg["data_shard"] = per_rank["data_shard"]  # KeyError
    if args.fault == "preinit_import" and rank == args.bad_rank:
        import fastshard_loader  # noqa: F401  (not installed)
    return cfg


def init_pg(args, rank, world):
    timeout = timedelta(seconds=args.timeout)
    bad = rank == args.bad_rank
    if args.fault == "dup_rank" and bad:
        log.info("using rank %d from config override", rank - 1)
        rank = rank - 1
    if args.fault == "world_size" and bad:
        log.info("using world_size %d from config", world + 1)
        world = world + 1
    if args.fault == "slow_ok":
        delay = 8 if bad else 2
        log.info("warming data cache (%d s) before joining", delay)
        time.sleep(delay)
    if args.fault == "late" and bad:
        log.info("warming data cache (%d s) before joining", args.late_s)
        time.sleep(args.late_s)
    method = args.init
    if args.fault == "file_stale" and bad:
        method = "file://" + args.stale_file
    if args.fault == "tcp_wrongport" and bad:
        method = f"tcp://127.0.0.1:{args.port + 7}"
    if method == "tcp":
        method = f"tcp://127.0.0.1:{args.port}"
    elif method == "file":
        method = "file://" + args.stale_file
    log.info("init_process_group(backend=gloo, init_method=%s, timeout=%ss)", method, args.timeout)
    dist.init_process_group("gloo", init_method=method, rank=rank, world_size=world, timeout=timeout)
    log.info("joined default group (rank %d of %d)", dist.get_rank(), dist.get_world_size())
    return rank, world


def make_groups(args, rank, world):
    bad = rank == args.bad_rank
    f = args.fault
    groups = {}
    if f == "newgroup_skip" and bad:
        log.info("skipping pipeline sub-group (not configured on this host)")
    elif f == "newgroup_ranks" and bad:
        groups["pipe"] = dist.new_group(ranks=list(range(world)))
    elif f == "group_order" and bad:
        groups["tp"] = dist.new_group(ranks=[1, 2])
        groups["pipe"] = dist.new_group(ranks=[0, 1])
    elif f == "subgroup_backend" and bad:
        groups["pipe"] = dist.new_group(ranks=[0, 1], backend="nccl")
    else:
        groups["pipe"] = dist.new_group(ranks=[0, 1])
        if f == "group_order":
            groups["tp"] = dist.new_group(ranks=[1, 2])
    if f == "subgroups_skip":
        if bad:
            log.info("skipping data-parallel sub-groups (not configured on this host)")
        else:
            groups["dp"], _ = dist.new_subgroups(group_size=2)
    log.info("created sub-groups: %s", sorted(groups))
    return groups


def main_worker(rank, world, args):
    setup_logging(rank, world)
    log.info("starting (pid %d, fault=%s)", os.getpid(), args.fault)
    cfg = read_config(args, rank)
    rank, world = init_pg(args, rank, world)
    groups = make_groups(args, rank, world)
    if "pipe" in groups and rank in (0, 1):
        t = torch.ones(4)
        dist.all_reduce(t, group=groups["pipe"])
        log.info("pipe group check ok (%s)", t.tolist())
    if args.fault == "destroy_early" and rank == args.bad_rank:
        log.info("evaluation-only rank: releasing process group")
        dist.destroy_process_group()
        time.sleep(args.timeout + 10)
        log.info("done")
        return
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 1))
    ddp = nn.parallel.DistributedDataParallel(model)
    opt = torch.optim.SGD(ddp.parameters(), lr=cfg["lr"])
    g = torch.Generator().manual_seed(100 + rank)
    for step in range(cfg["steps"]):
        x = torch.randn(cfg["batch"], 16, generator=g)
        y = x.sum(dim=1, keepdim=True)
        loss = nn.functional.mse_loss(ddp(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        log.info("step %d loss %.4f", step, loss.item())
        time.sleep(0.2)
    dist.barrier()
    log.info("training finished")
    dist.destroy_process_group()


def parse():
    p = argparse.ArgumentParser()
    p.add_argument("--fault", default="none", choices=sorted(FAULTS))
    p.add_argument("--bad-rank", type=int, default=-1)
    p.add_argument("--timeout", type=int, default=20)
    p.add_argument("--late-s", type=int, default=40)
    p.add_argument("--init", default="env://", help="env:// | tcp (tcp://127.0.0.1:--port) | file (file://--stale-file)")
    p.add_argument("--port", type=int, default=29760)
    p.add_argument("--stale-file", default="/tmp/r46b_init_store")
    p.add_argument("--steps", type=int, default=4)
    p.add_argument("--spawn", type=int, default=0, help="use torch.multiprocessing.spawn with N procs")
    return p.parse_args()


if __name__ == "__main__":
    args = parse()
    if args.spawn:
        import torch.multiprocessing as mp
        mp.spawn(main_worker, args=(args.spawn, args), nprocs=args.spawn)
    else:
        env = os.environ
        rank = int(env.get("RANK", env.get("OMPI_COMM_WORLD_RANK", "0")))
        world = int(env.get("WORLD_SIZE", env.get("OMPI_COMM_WORLD_SIZE", "1")))
        main_worker(rank, world, args)
