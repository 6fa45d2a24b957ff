"""Shared set-up for the gpu3 jobs: logging like a real training script, and the torchrun / single-process
split (under torchrun RANK is set; a plain `python3 x.py` is one process with no process group)."""
import logging
import os
import sys
from datetime import timedelta

logger = logging.getLogger("train")


def setup_logging():
    logging.basicConfig(level=logging.INFO, stream=sys.stdout,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    return logger


def rank_info():
    """(distributed, rank, local_rank, world_size)"""
    distributed = "RANK" in os.environ
    return (distributed, int(os.environ.get("RANK", "0")), int(os.environ.get("LOCAL_RANK", "0")),
            int(os.environ.get("WORLD_SIZE", "1")))


def init_pg(backend, timeout_s=60):
    import torch.distributed as dist
    dist.init_process_group(backend, timeout=timedelta(seconds=timeout_s))
    logger.info("rank %d/%d initialized (backend=%s, pid=%d)", dist.get_rank(), dist.get_world_size(),
                dist.get_backend(), os.getpid())
