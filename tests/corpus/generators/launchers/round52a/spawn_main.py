"""mp.spawn launcher for train.py: 4 processes, rank = process index."""
import os, torch.multiprocessing as mp
import train

if __name__ == "__main__":
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29652")
    mp.spawn(train.main, args=(4,), nprocs=4, join=True)
