"""Round 21: start train21.run on every rank with torch.multiprocessing.spawn (one machine, gloo).
usage: python spawn_job21.py --nprocs N [train21 args...]   (MASTER_ADDR/MASTER_PORT from the environment)"""
import os, sys

import torch.multiprocessing as mp

import train21


def main():
    n = int(sys.argv[sys.argv.index("--nprocs") + 1])
    rest = [x for i, x in enumerate(sys.argv[1:]) if x != "--nprocs" and sys.argv[i] != "--nprocs"]
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    mp.spawn(train21.run, args=(n, rest), nprocs=n, join=True)


if __name__ == "__main__":
    main()
