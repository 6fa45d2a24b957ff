"""torch.multiprocessing.spawn launcher for job.py: python spawn_main.py NPROCS <job.py args...>
spawn adds no prefix to the children's output; a child's exception is caught by spawn's wrapper and re-raised
in the parent as ProcessRaisedException, a killed child as ProcessExitedException."""
import os
import sys

import torch.multiprocessing as mp

import job


def entry(rank, world, argv):
    job.run(rank, world, argv)


if __name__ == "__main__":
    world = int(sys.argv[1])
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29733")
    mp.spawn(entry, args=(world, sys.argv[2:]), nprocs=world, join=True)
