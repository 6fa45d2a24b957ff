"""Small helpers shared by the round-93a jobs (Ignite, torch.distributed.rpc, DCP).

Every job reads its fault from the environment:
  SCENARIO   which fault to induce (healthy, raise, sigkill, hang, mismatch, hostoom, ...)
  FAIL_RANK  the one rank that misbehaves (never 0 in these cases)
  FAIL_STEP  the step at which it misbehaves
  OOM_CGROUP (hostoom only) a cgroup-v1 memory cgroup the failing rank moves itself into
"""
import logging
import os
import signal
import sys
import time

SCENARIO = os.environ.get("SCENARIO", "healthy")
FAIL_RANK = int(os.environ.get("FAIL_RANK", "1"))
FAIL_STEP = int(os.environ.get("FAIL_STEP", "3"))


def setup_logging(rank, name="train"):
    logging.basicConfig(
        level=logging.INFO,
        format=f"%(asctime)s [rank{rank}] %(levelname)s %(name)s: %(message)s",
        stream=sys.stdout,
        force=True,
    )
    return logging.getLogger(name)


def is_faulty(rank, scenario=None):
    return rank == FAIL_RANK and (scenario is None or SCENARIO == scenario)


def sigkill_self():
    """Die like the kernel OOM killer would kill us: SIGKILL, no traceback."""
    sys.stdout.flush()
    sys.stderr.flush()
    os.kill(os.getpid(), signal.SIGKILL)


def join_oom_cgroup(log):
    """Move this process (only) into the memory cgroup named by OOM_CGROUP."""
    cg = os.environ.get("OOM_CGROUP")
    if not cg:
        raise RuntimeError("OOM_CGROUP not set")
    with open(os.path.join(cg, "cgroup.procs"), "w") as f:
        f.write(str(os.getpid()))
    log.info("data cache worker pinned to memory cgroup %s", os.path.basename(cg))


def grow_cache_until_oom(log, chunk_mb=256):
    """Allocate and touch memory in steps (a cache that never evicts) until the OOM killer fires."""
    import numpy as np

    cache = []
    while True:
        a = np.ones(chunk_mb * 1024 * 1024 // 8, dtype=np.float64)  # touched: ones() writes every page
        cache.append(a)
        log.info("prefetch cache holds %d MiB", len(cache) * chunk_mb)
        time.sleep(0.2)
