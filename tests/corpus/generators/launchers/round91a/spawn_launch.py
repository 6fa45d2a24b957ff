"""mp.spawn launcher for ranklog_train.py: spawn_launch.py NPROCS PORT -- <train args>.
Each child sets the env rendezvous (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT) and runs train.main."""
import os
import sys

import torch.multiprocessing as mp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ranklog_train  # noqa: E402


def worker(rank, world, port, argv):
    os.environ.update(RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE=str(world), LOCAL_WORLD_SIZE="2",
                      MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    ranklog_train.main(argv)


if __name__ == "__main__":
    nprocs, port = int(sys.argv[1]), int(sys.argv[2])
    argv = sys.argv[4:] if sys.argv[3] == "--" else sys.argv[3:]
    print(f"launching {nprocs} workers with mp.spawn (master 127.0.0.1:{port})", flush=True)
    mp.spawn(worker, args=(nprocs, port, argv), nprocs=nprocs, join=True)
