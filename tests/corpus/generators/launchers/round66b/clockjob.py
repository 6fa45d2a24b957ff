"""Round 66b training job: 4 gloo CPU ranks started as two torchrun agents ("nodes" of 2) on one host, each agent
in its own time zone (TZ), a small MLP with gradients all_reduced by hand, one logger line per step with a clock.
The clocks of the two nodes disagree (local time in different zones); faults are scheduled IN TIME.

Environment (all optional):
  FMT         clock format of the job's logger lines:
                local  : Python logging %(asctime)s, local time, no zone      '2026-12-08 00:25:28,989 INFO ...'
                localz : %(asctime)s with datefmt ...%z                      '[2026-12-08 00:25:28+0900] ...'
                iso    : datetime.now().astimezone().isoformat()            '2026-12-08T00:25:28.989123+09:00 ...'
                utcz   : UTC with a Z, the same on every node               '2026-12-07T15:25:28.989Z ...'
                glog   : glog-style, local time, microseconds               'I1208 00:25:28.989123 4630 clockjob.py:211] ...'
  FAULTS      ";"-separated  RANK:KIND:STEP:OFFSET  (global rank, kind, step, seconds into that step's data read)
              KIND: keyerror | valueerror | indexerror  (raise)
                    linger     (raises ValueError, logs it, then spends LINGER_S "uploading a crash report" before
                                re-raising: its peers sit in the next all_reduce and time out first)
                    hang       (sleeps HANG_S, silent, then goes on)
                    sigkill    (os.kill(os.getpid(), SIGKILL), no traceback)
  SLOW        ";"-separated  STEP:SECONDS  every rank's data read at STEP takes that long, so the other ranks are
              still reading (not in a collective) while the scheduled faults fire
  LOAD_S      normal per-step data-read time (0.15 s)      STEPS  number of steps (8)
  PG_TIMEOUT  process-group timeout in seconds (20)        HANG_S / LINGER_S  (PG_TIMEOUT + 15)
  NOISY=1     harmless warnings (FutureWarning, torch UserWarning, slow-loader warnings)
  BANNER=1    the startup line names the node's time zone (time.strftime('%Z %z'))
  CLEAN_EXIT  1 (default): barrier before destroy_process_group at the end.  0: destroy right after the last
              all_reduce; then, intermittently (3 of 11 such runs here), a rank aborts at exit with
              "terminate called without an active exception" after training completed (not induced)
  R66B_META   if set: a directory where each rank leaves rank<R>.json {rank, node, local_rank, pid, TZ} for
              make_labels.py (outside the case folder; the log itself is not touched)
"""
import json
import logging
import os
import signal
import sys
import time
import warnings
from datetime import datetime, timedelta, timezone

import torch
import torch.distributed as dist
from torch.distributed.elastic.multiprocessing.errors import record

RANK = int(os.environ["RANK"])
LOCAL_RANK = int(os.environ["LOCAL_RANK"])
NODE = int(os.environ.get("GROUP_RANK", "0"))
WORLD = int(os.environ["WORLD_SIZE"])
FMT = os.environ.get("FMT", "local")


class Fmt(logging.Formatter):
    def formatTime(self, record, datefmt=None):
        if FMT == "iso":      # local time with the UTC offset, microseconds: 2026-12-08T00:25:28.989123+09:00
            return datetime.fromtimestamp(record.created).astimezone().isoformat()
        if FMT == "utcz":     # UTC, milliseconds, Z
            return datetime.fromtimestamp(record.created, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
        if FMT == "glog":     # glog: MMDD HH:MM:SS.uuuuuu, local time
            return datetime.fromtimestamp(record.created).strftime("%m%d %H:%M:%S.%f")
        return super().formatTime(record, datefmt)


class RankFilter(logging.Filter):
    def filter(self, rec):
        rec.rank, rec.node, rec.local = RANK, NODE, LOCAL_RANK
        return True


FORMATS = {
    "local": ("%(asctime)s %(levelname)s train [rank%(rank)d]: %(message)s", None),
    "localz": ("[%(asctime)s] [node%(node)d:rank%(rank)d] %(levelname)s - %(message)s", "%Y-%m-%d %H:%M:%S%z"),
    "iso": ("%(asctime)s %(levelname)-5s rank=%(rank)d local_rank=%(local)d %(message)s", None),
    "utcz": ("%(asctime)s [%(levelname)s] [r%(rank)d] %(message)s", None),
    "glog": ("%(levelname).1s%(asctime)s %(process)d clockjob.py:%(lineno)d] [rank%(rank)d] %(message)s", None),
}
h = logging.StreamHandler(sys.stdout)
h.setFormatter(Fmt(*FORMATS[FMT]))
h.addFilter(RankFilter())
log = logging.getLogger("train")
log.addHandler(h)
log.setLevel(logging.INFO)
log.propagate = False


def parse(spec):
    return [tuple(x.split(":")) for x in spec.split(";") if x.strip()] if spec else []


FAULTS = [(int(r), k, int(s), float(o)) for r, k, s, o in parse(os.environ.get("FAULTS", ""))]
SLOW = {int(s): float(t) for s, t in parse(os.environ.get("SLOW", ""))}
LOAD_S = float(os.environ.get("LOAD_S", "0.15"))
STEPS = int(os.environ.get("STEPS", "8"))
PG_TIMEOUT = float(os.environ.get("PG_TIMEOUT", "20"))
HANG_S = float(os.environ.get("HANG_S", str(PG_TIMEOUT + 15)))
LINGER_S = float(os.environ.get("LINGER_S", str(PG_TIMEOUT + 15)))


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
        elif kind in ("valueerror", "linger"):
            header = {"rows": "n/a", "cols": "16"}              # corrupt header of this rank's shard
            _ = int(header["rows"])
        elif kind == "indexerror":
            offsets = [0, 4096, 8192]                           # truncated index file of this rank's shard
            _ = offsets[step + 3]
        elif kind == "hang":
            time.sleep(HANG_S)                                  # stuck on a read that does not return in time
        elif kind == "sigkill":
            os.kill(os.getpid(), signal.SIGKILL)
    time.sleep(max(0.0, total - (time.monotonic() - t0)))
    x = torch.randn(32, 16, generator=g)
    return x, (x.sum(1, keepdim=True) > 0).float()


def train():
    dist.init_process_group("gloo", timeout=timedelta(seconds=PG_TIMEOUT))
    zone = time.strftime(" (clock %Z, UTC%z)") if os.environ.get("BANNER") == "1" else ""
    log.info("node %d local_rank %d -> global rank %d of %d, pid %d%s", NODE, LOCAL_RANK, RANK, WORLD,
             os.getpid(), zone)
    if os.environ.get("R66B_META"):
        os.makedirs(os.environ["R66B_META"], exist_ok=True)
        with open(os.path.join(os.environ["R66B_META"], f"rank{RANK}.json"), "w") as f:
            json.dump({"rank": RANK, "node": NODE, "local_rank": LOCAL_RANK, "pid": os.getpid(),
                       "tz": os.environ.get("TZ")}, f)
    if os.environ.get("NOISY") == "1":
        warnings.warn("`loader.num_shards` is deprecated and will be removed in v3; use `loader.shards`",
                      FutureWarning)
        torch.tensor(torch.ones(2))                             # torch's copy-construct UserWarning
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    g = torch.Generator().manual_seed(100 + RANK)
    for step in range(1, STEPS + 1):
        t0 = time.monotonic()
        x, y = load_batch(step, g)
        loss = torch.nn.functional.binary_cross_entropy_with_logits(model(x), y)
        opt.zero_grad()
        loss.backward()
        flat = torch.cat([p.grad.flatten() for p in model.parameters()])
        dist.all_reduce(flat)
        flat /= WORLD
        i = 0
        for p in model.parameters():
            p.grad.copy_(flat[i:i + p.numel()].view_as(p)); i += p.numel()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if os.environ.get("NOISY") == "1" and RANK % 2 == 1 and step % 3 == 0:
            log.warning("step %d: data loader slow (%.2fs), consider more workers", step, time.monotonic() - t0)
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
        log.exception("rank %d: training failed", RANK)
        if any(r == RANK and k == "linger" for r, k, _, _ in FAULTS):
            log.info("uploading crash report for rank %d before exiting ...", RANK)
            time.sleep(LINGER_S)                                # the peers wait in the next all_reduce meanwhile
        raise
    if os.environ.get("CLEAN_EXIT", "1") == "1":
        dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
