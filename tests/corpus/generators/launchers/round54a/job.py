"""Small gloo training job (4-5 CPU processes) with a STRAGGLER that wakes up: one rank (CULPRIT, never
rank 0) becomes slow at SLOW_STEP -- not dead, not hung forever -- so the others time out in the step's
gradient all_reduce first, and the slow rank prints its own (later) error when it finally reaches the
collective.

Environment:
  SLOW        none | dataload | ckpt | eval | affinity | pyloop | gc | retry   (what slows the culprit)
              dataload: the culprit's loader sleeps SLOW_S s fetching its batch (remote shard fetch)
              ckpt:     the culprit alone saves a local checkpoint, 1 MiB writes + fsync each, for ~SLOW_S s
              eval:     the culprit alone runs an evaluation pass over EVAL_BATCHES batches
              affinity: the culprit pins itself (sched_setaffinity) to core 0, which a busy-loop thread
                        also uses, then does PY_ITERS of per-sample python preprocessing
              pyloop:   the culprit runs a heavy pure-Python loop (PY_ITERS iterations) building its batch
              gc:       the culprit builds GC_OBJS cyclic objects and a gc.collect() pause follows
              retry:    a flaky read on the culprit is retried with exponential backoff (logged)
  CULPRIT, SLOW_STEP, SLOW_S, PG_TIMEOUT (s), STEPS
  TS=1        timestamps in log lines (asctime); TS=0 none
  RANK_TAG=1  "[rank N]" in log lines (0: the launcher prefixes lines itself)
  CATCH=1     every rank catches the failure, logs it with logging.exception and exits 1
  WORKERS=1   launcher: torchrun/loop (env RANK) or mp.spawn (main(rank, world))
"""
import os, sys, time, gc, logging, threading
from datetime import timedelta

SLOW = os.environ.get("SLOW", "none")
CULPRIT = int(os.environ.get("CULPRIT", "2"))
SLOW_STEP = int(os.environ.get("SLOW_STEP", "3"))
SLOW_S = float(os.environ.get("SLOW_S", "25"))
STEPS = int(os.environ.get("STEPS", "7"))
CATCH = os.environ.get("CATCH") == "1"


def make_log(rank):
    tag = f"[rank {rank}] " if os.environ.get("RANK_TAG", "1") == "1" else ""
    if os.environ.get("TS", "1") == "1":
        fmt = f"%(asctime)s %(levelname)s {tag}%(name)s: %(message)s"
    else:
        fmt = f"{tag}%(levelname)s %(name)s: %(message)s"
    log = logging.getLogger("train")
    log.setLevel(logging.INFO)
    h = logging.StreamHandler(sys.stdout)
    h.setFormatter(logging.Formatter(fmt))
    log.addHandler(h)
    return log


def main(rank=None, world=None):
    if rank is None:
        rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    else:  # mp.spawn
        os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    log = make_log(rank)
    if not CATCH:
        train(rank, world, log)
        return
    try:
        train(rank, world, log)
    except Exception:
        log.exception("training aborted on rank %d", rank)
        sys.exit(1)


# ------------------------------------------------------------------ the slow paths (culprit only)
def fetch_batch(step, rank, g, slow):
    import torch
    if slow and SLOW == "dataload":
        time.sleep(SLOW_S)                                    # remote shard fetch stalls
    if slow and SLOW == "retry":
        flaky_read(f"/data/shards/train-{rank:02d}-{step:05d}.tar")
    if slow and SLOW in ("pyloop", "affinity"):
        n = int(os.environ.get("PY_ITERS", "60000000"))
        acc = 0
        for i in range(n):                                    # per-sample python augmentation / tokenizing
            acc = (acc * 31 + i) % 1000003
    if slow and SLOW == "gc":
        junk = []
        for i in range(int(os.environ.get("GC_OBJS", "12000000"))):
            a = [i]; a.append(a); junk.append(a)              # reference cycles (decoded-sample cache)
        del junk
        t0 = time.time(); n = gc.collect()
        logging.getLogger("train").info("gc.collect() freed %d objects in %.1fs", n, time.time() - t0)
    x = torch.randn(32, 64, generator=g)
    y = torch.randint(0, 10, (32,), generator=g)
    return x, y


def flaky_read(path):
    log = logging.getLogger("train.io")
    delay = 1.0
    for attempt in range(1, 8):
        t0 = time.time()
        try:
            if time.time() < flaky_read.until:                 # storage is unavailable for a while
                time.sleep(0.5)
                raise OSError(5, "Input/output error", path)
            return
        except OSError as e:
            log.warning("read %s failed (%s), attempt %d/7, retrying in %.1fs", path, e, attempt, delay)
            time.sleep(delay)
            delay *= 2
    raise OSError(5, "Input/output error", path)
flaky_read.until = 0.0


def save_local_checkpoint(model, rank, step):
    log = logging.getLogger("train.ckpt")
    path = f"/tmp/h54a/ckpt/rank{rank}-step{step}.bin"
    os.makedirs(os.path.dirname(path), exist_ok=True)
    log.info("saving local checkpoint %s", path)
    chunk = os.urandom(1 << 20)
    t0 = time.time(); n = 0
    with open(path, "wb") as f:
        while time.time() - t0 < SLOW_S:                      # slow volume: 1 MiB writes, fsync each
            f.write(chunk); f.flush(); os.fsync(f.fileno()); n += 1
            time.sleep(0.02)
    os.remove(path)
    log.info("checkpoint saved (%d MiB in %.1fs)", n, time.time() - t0)


def evaluate(model, rank):
    import torch
    log = logging.getLogger("train.eval")
    nb = int(os.environ.get("EVAL_BATCHES", "4000"))
    log.info("running evaluation on %d batches (rank %d only)", nb, rank)
    g = torch.Generator().manual_seed(7)
    t0 = time.time(); correct = 0
    big = torch.nn.Linear(64, 2048)
    with torch.no_grad():
        for b in range(nb):
            x = torch.randn(256, 64, generator=g)
            h = big(x).relu().sum() + model(x).sum()
            correct += int(model(x).argmax(1).eq(0).sum())
    log.info("eval done: acc %.3f (%.1fs)", correct / (256 * nb), time.time() - t0)


def busy_core0():
    while True:                                               # a stray spinner pinned to core 0
        pass


# ------------------------------------------------------------------ training
def train(rank, world, log):
    import torch, torch.nn as nn, torch.distributed as dist
    slow = SLOW != "none" and rank == CULPRIT
    torch.set_num_threads(1)
    dist.init_process_group("gloo", rank=rank, world_size=world,
                            timeout=timedelta(seconds=float(os.environ.get("PG_TIMEOUT", "15"))))
    log.info("process group ready (backend=gloo, world_size=%d, timeout=%ss)", world, os.environ.get("PG_TIMEOUT", "15"))
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    lossf = nn.CrossEntropyLoss()
    if slow and SLOW == "affinity":
        os.sched_setaffinity(0, {0})
        threading.Thread(target=busy_core0, daemon=True).start()
    for step in range(STEPS):
        t0 = time.time()
        at = slow and step == SLOW_STEP
        if at and SLOW == "retry":
            flaky_read.until = time.time() + SLOW_S
        g = torch.Generator().manual_seed(100 * rank + step)
        x, y = fetch_batch(step, rank, g, at)
        opt.zero_grad()
        loss = lossf(model(x), y)
        loss.backward()
        if at and SLOW == "ckpt":
            save_local_checkpoint(model, rank, step)
        if at and SLOW == "eval":
            evaluate(model, rank)
        for p in model.parameters():
            dist.all_reduce(p.grad)
            p.grad /= world
        opt.step()
        log.info("step %d/%d loss %.4f lr %.3f (%.1f ms)", step, STEPS, loss.item(), 0.05, 1000 * (time.time() - t0))
        time.sleep(0.3)
    dist.barrier()
    log.info("training finished")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
