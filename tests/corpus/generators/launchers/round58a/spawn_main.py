"""mp.spawn launcher for job.py: NPROCS processes (default 4), rank = process index."""
import os, torch.multiprocessing as mp
import job

if __name__ == "__main__":
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29583")
    n = int(os.environ.get("NPROCS", "4"))
    mp.spawn(job.main, args=(n,), nprocs=n, join=True)
