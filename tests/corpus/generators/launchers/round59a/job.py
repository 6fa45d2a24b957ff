"""Round 59a training job: 4 gloo CPU ranks (torchrun, usually two agents of 2 = two "nodes"), a small MLP,
gradients all_reduced by hand, one logger line per step with a clock.  Faults are scheduled IN TIME so that
more than one thing goes wrong and only the clock says which came first.

Environment (all optional):
  FAULTS      ";"-separated  RANK:KIND:STEP:OFFSET  (global rank, kind, step, seconds into that step's data
              loading).  KIND: keyerror | valueerror | hang (sleeps HANG_S, silent) | sigkill (os.kill SIGKILL)
  SLOW        ";"-separated  STEP:SECONDS  every rank's data loading at STEP takes that long ("a new shard is
              opened"), so the survivors are still reading (not in a collective) while the faults fire
  LOAD_S      normal per-step data-loading time (0.15 s)
  STEPS       number of steps (6)
  PAIRS=1     gradients are all_reduced only inside pairs {0,1} and {2,3} (dist.new_group), the world only
              all_reduces the loss in a final sync: a pair can stall without the other pair noticing
  TEARDOWN    ","-separated second, unrelated errors while a failed job tears down:
                destroy_twice : except-block AND finally both call cleanup() -> destroy_process_group() twice
                                (ValueError: Default process group has not been initialized ...)
                metrics       : finally writes metrics.json into METRICS_DIR that does not exist (FileNotFoundError)
                ckpt          : rank 0's except block saves an emergency checkpoint into CKPT_DIR that does not
                                exist (torch.save -> RuntimeError: Parent directory ... does not exist)
  FMT         ms (asctime with ,mmm) | sec (no sub-second) | glog (torch-like I1207 10:00:00.123000 pid file:line])
              | isoz (ISO-8601 with milliseconds and the UTC offset)
  LOGEXC=0    do not logger.exception() the failure before re-raising (default 1)
  NOISY=1     harmless warnings (FutureWarning, torch UserWarning, slow-loader and clipping warnings)
  PG_TIMEOUT  process-group timeout in seconds (20)
"""
import json
import logging
import os
import signal
import sys
import time
import warnings
from datetime import timedelta

import torch
import torch.distributed as dist
from torch.distributed.elastic.multiprocessing.errors import record

RANK = int(os.environ["RANK"])
LOCAL_RANK = int(os.environ["LOCAL_RANK"])
NODE = int(os.environ.get("GROUP_RANK", "0"))
WORLD = int(os.environ["WORLD_SIZE"])
FMT = os.environ.get("FMT", "ms")


class Fmt(logging.Formatter):
    def formatTime(self, record, datefmt=None):
        if FMT == "isoz":
            ct = time.localtime(record.created)
            return time.strftime("%Y-%m-%dT%H:%M:%S", ct) + ".%03d" % record.msecs + time.strftime("%z", ct)
        return super().formatTime(record, datefmt)


class RankFilter(logging.Filter):
    def filter(self, rec):
        rec.rank, rec.node, rec.local = RANK, NODE, LOCAL_RANK
        return True


FORMATS = {
    "ms": ("%(asctime)s %(levelname)-7s [rank %(rank)d] %(message)s", None),
    "sec": ("[%(asctime)s] %(levelname)s node%(node)d/rank%(rank)d: %(message)s", "%Y-%m-%d %H:%M:%S"),
    "glog": ("%(levelname).1s%(asctime)s.%(msecs)03d000 %(process)d train/job.py:%(lineno)d] [rank%(rank)d] %(message)s",
             "%m%d %H:%M:%S"),
    "isoz": ("%(asctime)s | %(levelname)s | n%(node)d r%(rank)d | %(message)s", None),
}
h = logging.StreamHandler(sys.stdout)
h.setFormatter(Fmt(*FORMATS[FMT]))
h.addFilter(RankFilter())
log = logging.getLogger("train")
log.addHandler(h)
log.setLevel(logging.INFO)
log.propagate = False


def parse(spec, n):
    return [tuple(x.split(":")) for x in spec.split(";") if x.strip()] if spec else []


FAULTS = [(int(r), k, int(s), float(o)) for r, k, s, o in parse(os.environ.get("FAULTS", ""), 4)]
SLOW = {int(s): float(t) for s, t in parse(os.environ.get("SLOW", ""), 2)}
LOAD_S = float(os.environ.get("LOAD_S", "0.15"))
STEPS = int(os.environ.get("STEPS", "6"))
PAIRS = os.environ.get("PAIRS") == "1"
TEARDOWN = set(filter(None, os.environ.get("TEARDOWN", "").split(",")))
HANG_S = float(os.environ.get("HANG_S", "60"))


def load_batch(step, g):
    """Reads one batch; at the steps in FAULTS this rank's fault fires OFFSET s into the read."""
    total = SLOW.get(step, LOAD_S)
    t0 = time.monotonic()
    for r, kind, s, off in sorted(FAULTS, key=lambda f: f[3]):
        if r != RANK or s != step:
            continue
        time.sleep(max(0.0, off - (time.monotonic() - t0)))
        shard = f"shard-{step * WORLD + RANK:05d}.jsonl"
        if kind == "keyerror":
            rec = {"input": [0.0] * 16, "target": 1}            # old schema: no 'label' field
            _ = rec["label"]
        elif kind == "valueerror":
            header = {"rows": "n/a", "cols": "16"}              # corrupt header of this rank's shard
            _ = int(header["rows"])
        elif kind == "hang":
            time.sleep(HANG_S)                                  # stuck on a read that never returns
        elif kind == "sigkill":
            os.kill(os.getpid(), signal.SIGKILL)
    time.sleep(max(0.0, total - (time.monotonic() - t0)))
    x = torch.randn(32, 16, generator=g)
    return x, (x.sum(1, keepdim=True) > 0).float()


def cleanup():
    dist.destroy_process_group()


def train():
    timeout = timedelta(seconds=float(os.environ.get("PG_TIMEOUT", "20")))
    dist.init_process_group("gloo", timeout=timeout)
    log.info("node %d local_rank %d -> global rank %d of %d, pid %d, host %s", NODE, LOCAL_RANK, RANK, WORLD,
             os.getpid(), os.uname().nodename)
    if os.environ.get("NOISY") == "1":
        warnings.warn("`loader.num_shards` is deprecated and will be removed in v3; use `loader.shards`",
                      FutureWarning)
        torch.tensor(torch.ones(2))                             # torch's copy-construct UserWarning
    grad_group = None
    if PAIRS:
        groups = [dist.new_group([0, 1], timeout=timeout), dist.new_group([2, 3], timeout=timeout)]
        grad_group = groups[RANK // 2]
        log.info("gradient sync group: ranks %s", [RANK // 2 * 2, RANK // 2 * 2 + 1])
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    g = torch.Generator().manual_seed(100 + RANK)
    gsize = dist.get_world_size(grad_group) if PAIRS else WORLD
    for step in range(1, STEPS + 1):
        t0 = time.monotonic()
        x, y = load_batch(step, g)
        loss = torch.nn.functional.binary_cross_entropy_with_logits(model(x), y)
        opt.zero_grad()
        loss.backward()
        flat = torch.cat([p.grad.flatten() for p in model.parameters()])
        dist.all_reduce(flat, group=grad_group)
        flat /= gsize
        i = 0
        for p in model.parameters():
            p.grad.copy_(flat[i:i + p.numel()].view_as(p)); i += p.numel()
        gn = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if os.environ.get("NOISY") == "1":
            if gn > 0.5:
                log.warning("step %d: grad norm %.3f above 0.5 (clipped at 1.0)", step, gn)
            if RANK % 2 == 1 and step % 2 == 0:
                log.warning("step %d: data loader slow (%.2fs), consider more workers", step, time.monotonic() - t0)
        if PAIRS:
            log.info("step %d/%d loss %.4f (pair-local) %.2fs", step, STEPS, loss.item(), time.monotonic() - t0)
        else:
            l = loss.detach().clone()
            dist.all_reduce(l)
            log.info("step %d/%d loss %.4f (mean over %d ranks) %.2fs", step, STEPS, l.item() / WORLD, WORLD,
                     time.monotonic() - t0)
    l = torch.tensor([loss.item()])
    dist.all_reduce(l)
    log.info("training done, final mean loss %.4f", l.item() / WORLD)


@record
def main():
    try:
        train()
    except Exception:
        if os.environ.get("LOGEXC", "1") == "1":
            log.exception("rank %d: training failed", RANK)
        if "ckpt" in TEARDOWN and RANK == 0:
            path = os.path.join(os.environ.get("CKPT_DIR", "/mnt/ckpt/run59"), "emergency", "last.pt")
            log.info("saving emergency checkpoint to %s", path)
            torch.save({"note": "emergency"}, path)
        if "destroy_twice" in TEARDOWN:
            cleanup()
        raise
    finally:
        if "metrics" in TEARDOWN:
            with open(os.path.join(os.environ.get("METRICS_DIR", "/mnt/metrics/run59"), f"rank{RANK}.json"), "w") as f:
                json.dump({"rank": RANK}, f)
        if "destroy_twice" in TEARDOWN:
            cleanup()
    if dist.is_initialized():
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
