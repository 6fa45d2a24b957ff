"""mp.spawn launcher for solo_job.py: python spawn_job.py NPROCS <solo_job args>."""
import os, sys
import torch.multiprocessing as mp
import solo_job


def worker(rank, world, argv):
    solo_job.run(rank, world, rank, solo_job.parse(argv))


if __name__ == "__main__":
    n = int(sys.argv[1])
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29645")
    mp.spawn(worker, args=(n, sys.argv[2:]), nprocs=n, join=True)
