"""mp.spawn launcher for job.py: NPROCS processes (default 4), rank = process index.
GZIP_LOGS=1: when the job ends (success or failure) the launcher process gzips LOGDIR/rank*.log in a finally
block, the way a job compresses its logs at exit."""
import glob, gzip, os, shutil
import torch.multiprocessing as mp
import job


def compress_logs():
    for p in sorted(glob.glob(os.path.join(job.LOGDIR, "rank*.log*"))):
        if p.endswith(".gz"):
            continue
        with open(p, "rb") as f, gzip.open(p + ".gz", "wb") as g:
            shutil.copyfileobj(f, g)
        os.remove(p)
    print(f"compressed logs in {job.LOGDIR}/")


if __name__ == "__main__":
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29893")
    n = int(os.environ.get("NPROCS", "4"))
    try:
        mp.spawn(job.main, args=(n,), nprocs=n, join=True)
    finally:
        if os.environ.get("GZIP_LOGS") == "1":
            compress_logs()
