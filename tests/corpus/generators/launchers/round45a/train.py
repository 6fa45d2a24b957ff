"""round45a train.py: a tiny DDP job (Linear 16->4, gloo) whose ranks run NESTED helpers every 'shard refresh'
(steps 0, 3, 6): a multiprocessing.Pool, a concurrent.futures Process/ThreadPoolExecutor, a background prefetch
thread, a subprocess (prep_shard.py), or DataLoader workers.  --fault makes ONE helper of rank --bad-rank fail at
shard refresh --step (a multiple of 3):
  pool-raise    Pool.map task raises KeyError('text')                 -> RemoteTraceback chain, rank dies
  ppe-sigkill   ProcessPoolExecutor worker SIGKILLs itself            -> BrokenProcessPool, rank dies
  ppe-exit      ProcessPoolExecutor worker calls os._exit(3)          -> BrokenProcessPool, rank dies
  tpe-raise     ThreadPoolExecutor future raises FileNotFoundError, re-raised by .result() later -> rank dies
  prefetch-hang background prefetch thread dies (UnicodeDecodeError); main thread blocks on queue.get() -> others time out
  subproc-fail  prep_shard.py exits 2 (missing vocab); rank logs the tool's stderr and re-raises CalledProcessError
  subproc-oom   prep_shard.py runs in a memory cgroup (OOM_CGROUP) and is OOM-killed -> CalledProcessError (SIGKILL)
  dl-pool       DataLoader worker's __getitem__ starts its own multiprocessing.Pool -> daemonic-children AssertionError
  dl-oom        DataLoader worker joins a memory cgroup (OOM_CGROUP) and is OOM-killed -> 'DataLoader worker ... killed'
--atexit registers a metrics-flush atexit handler that itself raises (after the failure) on the bad rank.
HEALTHY modes (--healthy ...): the helper fails once and is handled: pool-retry, ppe-rebuild, subproc-retry.
Launcher is detected: torchrun (RANK env), mpirun (OMPI_COMM_WORLD_*), or --spawn N (torch.multiprocessing.spawn).
"""
import argparse, atexit, datetime, logging, multiprocessing, os, queue, signal, subprocess, sys, threading, time
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool
import torch, torch.distributed as dist, torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset

HERE = os.path.dirname(os.path.abspath(__file__))
log = logging.getLogger("train")
# parsed args (set in train())
A = None
RANK = 0


def is_fault(step, name):
    return A.fault == name and RANK == A.bad_rank and step == A.step


# ---------------- nested helpers (top level, so pools can pickle them)
# Pool task: one record -> token count
def tokenize(job):
    shard, i, broken = job
    rec = {"id": i, "txt": "x " * i} if broken else {"id": i, "text": "x " * i}
    # broken record: KeyError: 'text'
    return len(rec["text"].split())


# ProcessPoolExecutor task
def decode(job):
    shard, i, how = job
    if how == "sigkill":
        os.kill(os.getpid(), signal.SIGKILL)
    if how == "exit":
        os._exit(3)
    return sum(range(i + shard))


# ThreadPoolExecutor task
def read_index(shard, missing):
    path = os.path.join(os.getcwd(), "data", f"shard-{shard:04d}{'.idx.missing' if missing else '.idx'}")
    if missing:
        # FileNotFoundError
        with open(path) as f:
            return f.read()
    return [shard, shard + 1]


class ToyData(Dataset):
    def __init__(self, n, pool_in_worker=False, oom=False):
        self.n, self.pool_in_worker, self.oom = n, pool_in_worker, oom

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        # "parallel augmentation" inside a DataLoader worker
        if self.pool_in_worker and i == 5:
            with multiprocessing.Pool(2) as p:
                p.map(abs, [1, -2, 3])
        # worker preloads a big augmentation table
        if self.oom and i == 5:
            with open(os.path.join(os.environ["OOM_CGROUP"], "cgroup.procs"), "w") as f:
                f.write(str(os.getpid()))
            table = [bytearray(b"\1" * (64 << 20)) for _ in range(40)]
        g = torch.Generator().manual_seed(i)
        return torch.randn(16, generator=g), torch.randn(4, generator=g)


def refresh_shard(step, shard):
    """Run this step's nested helper; returns a number so the work is used."""
    mode = A.helper
    if mode == "pool":
        broken = is_fault(step, "pool-raise")
        retry = A.healthy == "pool-retry" and RANK == A.bad_rank and step == A.step
        jobs = [(shard, i, broken and i == 7) for i in range(12)]
        try:
            with multiprocessing.Pool(2) as p:
                counts = p.map(tokenize, [(s, i, b or (retry and i == 7)) for s, i, b in jobs])
        except KeyError:
            if not retry:
                raise
            log.warning("shard %d: tokenize failed on a malformed record, retrying with the repaired record", shard, exc_info=True)
            with multiprocessing.Pool(2) as p:
                counts = p.map(tokenize, [(s, i, False) for s, i, _ in jobs])
        return sum(counts)
    if mode == "ppe":
        how = None
        if is_fault(step, "ppe-sigkill"): how = "sigkill"
        if is_fault(step, "ppe-exit"): how = "exit"
        rebuild = A.healthy == "ppe-rebuild" and RANK == A.bad_rank and step == A.step
        jobs = [(shard, i, (how or ("exit" if rebuild else None)) if i == 4 else None) for i in range(8)]
        try:
            with ProcessPoolExecutor(2) as ex:
                return sum(ex.map(decode, jobs))
        except BrokenProcessPool:
            if not rebuild:
                raise
            log.warning("shard %d: decode pool broke, rebuilding the executor and retrying", shard, exc_info=True)
            with ProcessPoolExecutor(2) as ex:
                return sum(ex.map(decode, [(s, i, None) for s, i, _ in jobs]))
    if mode == "tpe":
        ex = ThreadPoolExecutor(2)
        futs = [ex.submit(read_index, shard + j, is_fault(step, "tpe-raise") and j == 1) for j in range(3)]
        # training work happens meanwhile; results are read later
        time.sleep(0.5)
        # the worker's exception is re-raised here
        out = [len(f.result()) for f in futs]
        ex.shutdown()
        return sum(out)
    if mode == "subproc":
        vocab = os.path.join(os.getcwd(), "vocab.txt")
        cmd = [sys.executable, os.path.join(HERE, "prep_shard.py"), "--shard", str(shard)]
        if is_fault(step, "subproc-fail"):
            vocab = os.path.join(os.getcwd(), "vocab", f"rank{RANK}", "vocab.txt")
        if is_fault(step, "subproc-oom"):
            cmd += ["--mem-mb", "2048"]
        retry = A.healthy == "subproc-retry" and RANK == A.bad_rank and step == A.step
        if retry:
            cmd += ["--flaky", os.path.join(os.getcwd(), f"shard{shard}.lock")]
        cmd += ["--vocab", vocab]
        for attempt in range(1, 4):
            try:
                r = subprocess.run(cmd, check=True, capture_output=True, text=True)
                break
            except subprocess.CalledProcessError as e:
                log.error("prep_shard failed (attempt %d), stderr:\n%s", attempt, e.stderr.rstrip())
                if not retry:
                    raise
                time.sleep(1)
        return int(r.stdout.split()[2])
    if mode == "prefetch":
        q = queue.Queue(maxsize=2)
        die = is_fault(step, "prefetch-hang")

        def prefetch():
            for i in range(4):
                raw = b"\xff\xfe corrupt" if (die and i == 2) else b"tokens %d" % i
                # UnicodeDecodeError kills the thread
                q.put(raw.decode("utf-8"))

        threading.Thread(target=prefetch, name="prefetch", daemon=True).start()
        # main thread waits for 4 items: hangs if the thread died
        return sum(len(q.get()) for _ in range(4))
    return 0


def train(rank, world, local_rank):
    global RANK
    RANK = rank
    logging.basicConfig(level=logging.INFO, format=f"%(asctime)s %(levelname)s [rank{rank}] %(name)s: %(message)s",
                        stream=sys.stdout, force=True)
    torch.manual_seed(0)
    dist.init_process_group("gloo", rank=rank, world_size=world, timeout=datetime.timedelta(seconds=A.pg_timeout))
    if A.atexit and rank == A.bad_rank:
        metrics = open(os.path.join(os.getcwd(), f"metrics-{rank}.jsonl"), "w")

        def flush_metrics():
            # file already closed by then -> ValueError in atexit
            metrics.write('{"final": true}\n')
        atexit.register(flush_metrics)
        metrics.close()
    model = DDP(nn.Linear(16, 4))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    log.info("world=%d local_rank=%d helper=%s", world, local_rank, A.helper)
    dl = None
    if A.helper in ("dl-pool", "dl-oom"):
        ds = ToyData(64, pool_in_worker=(A.fault == "dl-pool" and rank == A.bad_rank),
                     oom=(A.fault == "dl-oom" and rank == A.bad_rank))
        dl = DataLoader(ds, batch_size=4, num_workers=2)
        it = iter(dl)
    for step in range(A.steps):
        if dl is not None:
            x, y = next(it)
        else:
            if step % 3 == 0:
                n = refresh_shard(step, 4 * rank + step // 3)
                log.info("step %d: shard refreshed (%d items)", step, n)
            x, y = torch.randn(8, 16), torch.randn(8, 4)
        loss = nn.functional.mse_loss(model(x), y)
        opt.zero_grad(); loss.backward(); opt.step()
        l = loss.detach().clone(); dist.all_reduce(l)
        log.info("step %d loss %.4f", step, l.item() / world)
    dist.barrier()
    log.info("done")
    dist.destroy_process_group()


def spawn_main(i, world, args):
    global A
    # mp.spawn starts fresh interpreters: hand them the parsed args
    A = args
    train(i, world, i)


def main():
    global A
    p = argparse.ArgumentParser()
    p.add_argument("--helper", default="pool")
    p.add_argument("--fault", default=None)
    p.add_argument("--healthy", default=None)
    p.add_argument("--bad-rank", type=int, default=1)
    p.add_argument("--step", type=int, default=3)
    p.add_argument("--steps", type=int, default=8)
    p.add_argument("--pg-timeout", type=int, default=60)
    p.add_argument("--atexit", action="store_true")
    p.add_argument("--spawn", type=int, default=0)
    A = p.parse_args()
    with open("vocab.txt", "w") as f:
        f.write("the a of to and in is\n")
    if A.spawn:
        import torch.multiprocessing as tmp
        tmp.spawn(spawn_main, args=(A.spawn, A), nprocs=A.spawn)
    elif "OMPI_COMM_WORLD_RANK" in os.environ:
        train(int(os.environ["OMPI_COMM_WORLD_RANK"]), int(os.environ["OMPI_COMM_WORLD_SIZE"]),
              int(os.environ["OMPI_COMM_WORLD_LOCAL_RANK"]))
    else:
        train(int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]), int(os.environ["LOCAL_RANK"]))


if __name__ == "__main__":
    main()
