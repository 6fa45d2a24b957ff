"""Launch train23c.run in N processes from one parent, two ways:
  --mode forkserver : torch.multiprocessing.start_processes(..., start_method="forkserver"), join=True
  --mode spawnjoin  : torch.multiprocessing.spawn(..., join=False); the parent polls ctx.join(timeout) by hand,
                      logging a heartbeat, and lets the exception from join() propagate.
MASTER_ADDR/MASTER_PORT come from the environment."""
import argparse, logging, os, sys

import torch.multiprocessing as mp

import train23c


def worker(i, world, targs):
    train23c.run(i, world, targs)


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--mode", choices=["forkserver", "spawnjoin"], required=True)
    p.add_argument("--nprocs", type=int, default=4)
    a, rest = p.parse_known_args()
    targs = train23c.parse(rest)
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s [launcher] %(message)s", stream=sys.stdout)
    log = logging.getLogger("launcher")
    if a.mode == "forkserver":
        log.info("starting %d workers (start_method=forkserver)", a.nprocs)
        mp.start_processes(worker, args=(a.nprocs, targs), nprocs=a.nprocs, join=True, start_method="forkserver")
    else:
        ctx = mp.spawn(worker, args=(a.nprocs, targs), nprocs=a.nprocs, join=False)
        log.info("spawned %d workers: pids %s", a.nprocs, [pr.pid for pr in ctx.processes])
        polls = 0
        while not ctx.join(timeout=5):
            polls += 1
            alive = sum(pr.is_alive() for pr in ctx.processes)
            log.info("waiting for workers (%d alive, %ds)", alive, polls * 5)
    log.info("all workers finished")
