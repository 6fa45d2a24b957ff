"""mp.spawn launcher for job.py: python spawn_job.py NPROCS PORT [job.py args...]"""
import os
import sys

import torch.multiprocessing as mp

import job

if __name__ == "__main__":
    nprocs, port = int(sys.argv[1]), sys.argv[2]
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ["MASTER_PORT"] = port
    mp.spawn(job.main, args=(nprocs, sys.argv[3:]), nprocs=nprocs, join=True)
