#!/usr/bin/env python3
"""mp.spawn launcher for train.py: same flags as train.py; --world picks nprocs."""
import os, socket, sys

import torch.multiprocessing as mp

import train


def _wrap(rank, args):
    train.worker(rank, args)


if __name__ == "__main__":
    args = train.parse()
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    if "MASTER_PORT" not in os.environ:
        s = socket.socket(); s.bind(("127.0.0.1", 0)); os.environ["MASTER_PORT"] = str(s.getsockname()[1]); s.close()
    print(f"launching {args.world} processes with mp.spawn (master {os.environ['MASTER_ADDR']}:{os.environ['MASTER_PORT']})")
    mp.spawn(_wrap, args=(args,), nprocs=args.world, join=True)
    print("all processes finished")
