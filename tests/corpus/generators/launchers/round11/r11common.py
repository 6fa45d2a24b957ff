"""Shared pieces of the round-11 failure jobs: a tiny model, a synthetic sharded
data set, a per-step logger, and the fault hooks that one chosen rank runs.

Every job trains a small regression MLP on synthetic shards for a few steps and
prints an ordinary log line per step.  The fault (if any) is picked on the
command line and only the rank given by --fault-rank performs it, at step
--fault-step:

  raise      the rank's data loader looks up a shard that is not in its index
             (KeyError) -- or, with --raise-kind value, finds a corrupt record
             (ValueError)
  sigkill    the rank sends itself SIGKILL: it dies with no traceback
  hang       the rank sleeps far longer than the process-group timeout before
             its next collective, so the other ranks time out waiting for it
  exit3      the rank leaves with sys.exit(3) and prints nothing
"""
import argparse
import logging
import os
import signal
import sys
import time

import torch
import torch.nn as nn

FEATURES = 16


def base_parser(desc):
    p = argparse.ArgumentParser(description=desc)
    p.add_argument("--fault", default="none")
    p.add_argument("--fault-rank", type=int, default=-1)
    p.add_argument("--fault-step", type=int, default=3)
    p.add_argument("--steps", type=int, default=8)
    p.add_argument("--timeout-s", type=int, default=20, help="process-group timeout")
    p.add_argument("--raise-kind", default="key", choices=["key", "value"])
    return p


def get_logger(rank):
    log = logging.getLogger(f"train.rank{rank}")
    if not log.handlers:
        h = logging.StreamHandler(sys.stdout)
        h.setFormatter(logging.Formatter(
            f"%(asctime)s | rank {rank} | %(levelname)s | %(message)s"))
        log.addHandler(h)
        log.setLevel(logging.INFO)
        log.propagate = False
    return log


def make_model(seed=0):
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(FEATURES, 32), nn.ReLU(), nn.Linear(32, 1))


class ShardedData:
    """Synthetic shards 'shard-00000'... ; each rank reads its own stride."""

    def __init__(self, rank, world, steps, batch=8, fault=None, fault_step=-1):
        self.rank, self.world, self.batch = rank, world, batch
        g = torch.Generator().manual_seed(1234 + rank)
        self.index = {}
        for step in range(steps):
            key = f"shard-{step * world + rank:05d}"
            self.index[key] = (torch.randn(batch, FEATURES, generator=g),
                               torch.randn(batch, 1, generator=g))
        # the faulty rank's index lost one shard / holds one corrupt shard
        if fault == "raise-key":
            del self.index[f"shard-{fault_step * world + rank:05d}"]
        elif fault == "raise-value":
            k = f"shard-{fault_step * world + rank:05d}"
            x, y = self.index[k]
            self.index[k] = (x[:, :FEATURES - 1], y)

    def get(self, step):
        key = f"shard-{step * self.world + self.rank:05d}"
        x, y = self.index[key]
        if x.shape[1] != FEATURES:
            raise ValueError(
                f"corrupt record in {key}: expected {FEATURES} features, got {x.shape[1]}")
        return x, y


def data_fault(args, rank):
    """Which data fault this rank's loader carries (None for healthy ranks)."""
    if args.fault == "raise" and rank == args.fault_rank:
        return f"raise-{args.raise_kind}"
    return None


def maybe_fault(args, rank, step, log):
    """Run the process-level faults (sigkill / hang / exit3) at the chosen step."""
    if rank != args.fault_rank or step != args.fault_step:
        return
    if args.fault == "sigkill":
        sys.stdout.flush()
        os.kill(os.getpid(), signal.SIGKILL)
    elif args.fault == "hang":
        # stuck (e.g. on a slow filesystem): silent, far past the pg timeout
        time.sleep(args.timeout_s * 8)
    elif args.fault == "exit3":
        sys.exit(3)
