"""Shared fault injection for the round50a jobs (all gloo, CPU).

Every job calls `fault_before_step(step, is_bad)` before its forward pass and `reduce_metric(t, is_bad)`
to average the step loss over ranks (an explicit all_reduce, as real jobs do for logging).
FAULT (env or --fault) is one of:
  none      healthy
  raise     the bad process raises KeyError in its own data loading at step STEP
  sigkill   the bad process SIGKILLs itself at step STEP (no traceback)
  hang      the bad process sleeps HANG_S (> process group timeout) before the step-STEP loss all_reduce,
            so every other process times out in that all_reduce
  mismatch  the bad process all_reduces a 1000-element tensor (the others: 1 element) in the step-STEP
            loss reduction
"""
import os
import signal
import time

import torch
import torch.distributed as dist

FAULT = os.environ.get("FAULT", "none")
STEP = int(os.environ.get("STEP", "3"))
HANG_S = float(os.environ.get("HANG_S", "90"))


def load_batch(step, is_bad, gen):
    """Toy data loading: a dict record per step. The bad process looks up a missing field (raise)."""
    rec = {"x": torch.randn(8, 16, generator=gen), "y": torch.randn(8, 1, generator=gen)}
    if FAULT == "raise" and is_bad and step == STEP:
        rec = {"features": rec["x"], "y": rec["y"]}  # a shard written with another schema
    return rec["x"], rec["y"]  # KeyError: 'x' on the bad process


def fault_before_step(step, is_bad):
    if FAULT == "sigkill" and is_bad and step == STEP:
        os.kill(os.getpid(), signal.SIGKILL)


def reduce_metric(loss, step, is_bad):
    t = loss.detach().reshape(1).clone()
    if is_bad and step == STEP:
        if FAULT == "hang":
            time.sleep(HANG_S)  # stuck (e.g. a slow filesystem read) while the others wait
        elif FAULT == "mismatch":
            t = torch.cat([t, torch.zeros(999)])  # 1000 elements instead of 1
    dist.all_reduce(t)
    return t[0].item() / dist.get_world_size()
