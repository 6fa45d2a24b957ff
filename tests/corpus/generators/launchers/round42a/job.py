"""job.py - small gloo data-parallel job in which ONE rank gets stuck (round 42a).

Launch: torchrun (env://), `python job.py --spawn N` (mp.spawn) or `mpirun -np N python job.py` (OMPI_* env).
Env knobs:
  STUCK       none | deadlock | filelock | spin | pipe | socket | loader | lonebarrier | retry   (what the stuck rank does)
  STUCK_RANK  rank that gets stuck;  STUCK_STEP  step at which it gets stuck (inside its data code, before the
              step's gradient all_reduce, so every other rank waits in that all_reduce)
  NOTE=1      the stuck rank logs one line about what it is doing just before it blocks (else it goes silent)
  PG_TIMEOUT  gloo process-group timeout in seconds (20-30)
  SLOW_RANK / SLOW_S   healthy variant: that rank takes SLOW_S extra seconds per step (below the timeout)
  RETRY_OK    retry variant: the fetch succeeds after this many attempts (healthy run); unset = never succeeds
  LOCK_PATH / FEATURE_PORT   for filelock / socket: a lock held by another process / a server that never answers
"""
import fcntl, logging, os, socket, subprocess, sys, threading, time
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

STEPS = int(os.environ.get("STEPS", "8"))
STUCK = os.environ.get("STUCK", "none")
STUCK_RANK = int(os.environ.get("STUCK_RANK", "-1"))
STUCK_STEP = int(os.environ.get("STUCK_STEP", "3"))
NOTE = os.environ.get("NOTE") == "1"
T0 = time.time()


def setup_log(rank, world):
    fmt = f"%(asctime)s.%(msecs)03d %(levelname).1s trainer[{rank}/{world}] %(message)s"
    logging.basicConfig(level=logging.INFO, format=fmt, datefmt="%H:%M:%S", stream=sys.stdout, force=True)
    return logging.getLogger("trainer")


# ---- the ways the stuck rank blocks (all inside its data code) ---------------------------------------------
class ShardCache:
    """Two locks taken in opposite orders by the main thread and the prefetch thread -> deadlock."""
    def __init__(self):
        self.index_lock, self.buf_lock = threading.Lock(), threading.Lock()

    def prefetch(self):               # prefetch thread: buf_lock then index_lock
        with self.buf_lock:
            time.sleep(0.5)
            with self.index_lock:
                pass

    def lookup(self):                 # main thread: index_lock then buf_lock
        with self.index_lock:
            time.sleep(0.5)
            with self.buf_lock:
                pass


class Shard(torch.utils.data.Dataset):
    def __init__(self, rank, hang_at=None):
        self.rank, self.hang_at = rank, hang_at

    def __len__(self):
        return 10_000

    def __getitem__(self, i):
        if self.hang_at is not None and i == self.hang_at:
            # DataLoader worker reading a record from a "remote" store that never answers: blocks forever
            r, _w = os.pipe()
            os.read(r, 1)
        g = torch.Generator().manual_seed(self.rank * 100_000 + i)
        return torch.randn(32, generator=g), torch.randn(1, generator=g)


def get_batch(step, rank, log, state):
    stuck = rank == STUCK_RANK and step == STUCK_STEP
    if STUCK == "loader" and rank == STUCK_RANK:
        return next(state["it"])      # the worker blocks on item STUCK_STEP*BS; main waits (timeout=0) forever
    if stuck and STUCK == "deadlock":
        if NOTE:
            log.info("step %d: shard cache rebuild (prefetch thread + index lookup)", step)
        cache = ShardCache()
        threading.Thread(target=cache.prefetch, name="prefetch", daemon=True).start()
        cache.lookup()
    elif stuck and STUCK == "filelock":
        path = os.environ["LOCK_PATH"]
        if NOTE:
            log.info("step %d: acquiring vocab cache lock %s", step, path)
        with open(path, "a") as f:
            fcntl.flock(f, fcntl.LOCK_EX)   # held by another process that never releases it
    elif stuck and STUCK == "spin":
        if NOTE:
            log.info("step %d: resampling batch (min_len=512)", step)
        lens = [int(x) for x in torch.randint(16, 256, (64,))]
        batch = []
        while len(batch) < 8:               # rejection sampling that can never succeed: no record >= 512
            batch.extend(l for l in lens if l >= 512)
            lens = lens[1:] + lens[:1]
    elif stuck and STUCK == "pipe":
        if NOTE:
            log.info("step %d: waiting for tokenizer helper output", step)
        helper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(240)"], stdout=subprocess.PIPE)
        helper.stdout.readline()           # the helper never writes a line
    elif stuck and STUCK == "socket":
        if NOTE:
            log.info("step %d: fetching features from 127.0.0.1:%s", step, os.environ["FEATURE_PORT"])
        s = socket.create_connection(("127.0.0.1", int(os.environ["FEATURE_PORT"])))
        s.sendall(b"GET shard=%d\n" % rank)
        s.recv(4096)                        # the server accepts but never answers
    elif stuck and STUCK == "lonebarrier":
        if NOTE:
            log.info("step %d: waiting for checkpoint writers (barrier)", step)
        dist.barrier()                      # only this rank calls it
    elif STUCK == "retry" and rank == STUCK_RANK and step == STUCK_STEP:
        ok_after = int(os.environ.get("RETRY_OK", "0"))
        attempt = 0
        while True:
            attempt += 1
            if ok_after and attempt > ok_after:
                log.info("step %d: feature store reachable again after %d attempts", step, attempt - 1)
                break
            log.warning("step %d: feature store 10.0.3.17:7070 unavailable (attempt %d), retrying in 5 s", step, attempt)
            time.sleep(5)
    g = torch.Generator().manual_seed(rank * 1000 + step)
    return torch.randn(16, 32, generator=g), torch.randn(16, 1, generator=g)


def worker(rank, world):
    log = setup_log(rank, world)
    dist.init_process_group("gloo", rank=rank, world_size=world,
                            timeout=timedelta(seconds=int(os.environ.get("PG_TIMEOUT", "20"))))
    log.info("joined process group (gloo), pid %d", os.getpid())
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    state = {}
    if STUCK == "loader" and rank == STUCK_RANK:
        dl = torch.utils.data.DataLoader(Shard(rank, hang_at=STUCK_STEP * 16), batch_size=16, num_workers=1, timeout=0)
        state["it"] = iter(dl)
    slow_rank, slow_s = int(os.environ.get("SLOW_RANK", "-1")), float(os.environ.get("SLOW_S", "0"))
    last = time.time()
    for step in range(STEPS):
        if NOTE and rank == STUCK_RANK and step == STUCK_STEP and STUCK == "loader":
            log.info("step %d: next batch from DataLoader (1 worker)", step)
        x, y = get_batch(step, rank, log, state)
        if rank == slow_rank:
            time.sleep(slow_s)
        loss = torch.nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        flat = torch.cat([p.grad.flatten() for p in model.parameters()])
        dist.all_reduce(flat)               # everyone else waits here for the stuck rank
        flat /= world
        off = 0
        for p in model.parameters():
            n = p.numel(); p.grad.copy_(flat[off:off + n].view_as(p)); off += n
        opt.step()
        now = time.time()
        log.info("step %03d/%03d loss=%.4f dt=%.2fs elapsed=%.1fs", step + 1, STEPS, loss.item(), now - last, now - T0)
        last = now
    dist.barrier()
    log.info("done in %.1fs", time.time() - T0)
    dist.destroy_process_group()


def spawned(i, world):
    worker(i, world)


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--spawn":
        n = int(sys.argv[2])
        mp.spawn(spawned, args=(n,), nprocs=n, join=True)
    elif "OMPI_COMM_WORLD_RANK" in os.environ:        # mpirun
        worker(int(os.environ["OMPI_COMM_WORLD_RANK"]), int(os.environ["OMPI_COMM_WORLD_SIZE"]))
    else:                                              # torchrun
        worker(int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]))
