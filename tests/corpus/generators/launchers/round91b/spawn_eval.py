"""mp.spawn launcher for eval_job.py: python spawn_eval.py NPROCS <eval_job args>."""
import os, sys
import torch.multiprocessing as mp
import eval_job


def worker(rank, world, argv):
    eval_job.run(rank, world, rank, eval_job.parse(argv))


if __name__ == "__main__":
    n = int(sys.argv[1])
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29691")
    mp.spawn(worker, args=(n, sys.argv[2:]), nprocs=n, join=True)
