"""NCCL variant (GPU machine): one rank never calls dist.new_group(); the others time out in the store-based
barrier that new_group runs when TORCH_DIST_INIT_BARRIER=1 (torch.distributed._store_based_barrier).

    TORCH_DIST_INIT_BARRIER=1 torchrun --nproc-per-node 3 --tee 3 skip_new_group.py --skip-rank 2
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
    args = parser.parse_args()
    torch.cuda.set_device(0)
    dist.init_process_group("nccl", timeout=timedelta(seconds=args.timeout))
    rank, world = dist.get_rank(), dist.get_world_size()
    log.info("rank %d of %d: process group ready (pid %d)", rank, world, os.getpid())
    # no collective: three ranks on one GPU would stop at NCCL's duplicate-GPU check
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
