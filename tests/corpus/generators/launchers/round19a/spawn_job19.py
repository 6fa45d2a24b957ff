"""Round 19a: start train19.run on every rank with torch.multiprocessing.spawn (one machine, gloo).
usage: python spawn_job19.py --nprocs N [train19 args...]   (MASTER_ADDR/MASTER_PORT from the environment)"""
import os, sys

import torch.multiprocessing as mp

import train19


def main():
    n = int(sys.argv[sys.argv.index("--nprocs") + 1])
    rest = [x for i, x in enumerate(sys.argv[1:]) if x != "--nprocs" and sys.argv[i] != "--nprocs"]
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    mp.spawn(train19.run, args=(n, rest), nprocs=n, join=True)


if __name__ == "__main__":
    main()
