"""One rank never calls dist.new_group(): the others wait for it in the new group's set-up.

With gloo the new group's rendezvous waits for the missing rank's address key in the store; with NCCL (lazy
communicators) and TORCH_DIST_INIT_BARRIER=1 the ranks wait in torch's store-based barrier
(torch.distributed._store_based_barrier). `--backend nccl` runs three ranks on one GPU: no collective is made,
so NCCL's duplicate-GPU check never fires.

    TORCH_DIST_INIT_BARRIER=1 torchrun --nproc-per-node 3 --tee 3 skip_new_group.py --skip-rank 2 [--backend nccl]
"""

import argparse
import logging
import os
import time
from datetime import timedelta

import torch
import torch.distributed as dist

logging.basicConfig(format="%(asctime)s %(levelname)s train: %(message)s", level=logging.INFO)
log = logging.getLogger("train")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--skip-rank", type=int, default=2)
    parser.add_argument("--timeout", type=int, default=15)
    parser.add_argument("--backend", choices=("gloo", "nccl"), default="gloo")
    args = parser.parse_args()
    if args.backend == "nccl":
        torch.cuda.set_device(0)
    dist.init_process_group(args.backend, timeout=timedelta(seconds=args.timeout))
    rank, world = dist.get_rank(), dist.get_world_size()
    log.info("rank %d of %d: process group ready (pid %d)", rank, world, os.getpid())
    if args.backend == "gloo":
        x = torch.ones(4)
        dist.all_reduce(x)
        log.info("rank %d: warm-up all_reduce gave %s", rank, x.tolist())
    if rank == args.skip_rank:
        log.info("rank %d: evaluation disabled, no eval group", rank)  # the bug: the group is made on some ranks
        time.sleep(args.timeout * 2)
    else:
        log.info("rank %d: creating the eval group", rank)
        dist.new_group(ranks=list(range(world)), timeout=timedelta(seconds=args.timeout))
        log.info("rank %d: eval group ready", rank)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
