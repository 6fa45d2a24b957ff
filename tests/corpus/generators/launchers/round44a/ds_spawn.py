"""Start ds_train.main on N ranks with torch.multiprocessing.spawn (env:// rendezvous set here)."""
import os
import sys

import torch.multiprocessing as mp

import ds_train

NPROC = int(os.environ.get("NPROC", "3"))


def worker(local_rank):
    os.environ.update(RANK=str(local_rank), LOCAL_RANK=str(local_rank), WORLD_SIZE=str(NPROC),
                      MASTER_ADDR="127.0.0.1", MASTER_PORT=os.environ.get("MASTER_PORT", "29512"))
    ds_train.main(rank_hint=local_rank)


if __name__ == "__main__":
    mp.spawn(worker, nprocs=NPROC, join=True)
