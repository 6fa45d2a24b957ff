"""Entry point for torch.multiprocessing.spawn: `python job_spawn.py --nprocs 3 --scenario X`."""
import os

import torch.multiprocessing as mp

from faults2 import parse_args, run


def worker(rank, world_size, args):
    run(rank, world_size, args)


if __name__ == "__main__":
    args = parse_args()
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29700")
    mp.spawn(worker, args=(args.nprocs, args), nprocs=args.nprocs, join=True)
