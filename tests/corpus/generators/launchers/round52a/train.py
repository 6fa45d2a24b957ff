"""Small DDP-style CPU/gloo training job (4 ranks, DataLoader with 2 workers) in which ONE rank
(CULPRIT, never 0) runs out of an operating-system resource.  Fault chosen with FAULT=:
  none    healthy run (NOISY=1 adds harmless warnings)
  shm     culprit runs in its own mount namespace with a 1 MiB /dev/shm (re-execs itself under
          `unshare -m` unless the launcher already did); from batch FAULT_STEP on the workers
          produce 8 MiB batches -> shared memory exhausted
  nproc   at epoch FAULT_EPOCH the culprit drops to uid nobody and sets RLIMIT_NPROC=1, then
          starts DataLoader workers (NPROC_WHAT=workers) or a prefetch thread (NPROC_WHAT=thread)
  nofile  at epoch FAULT_EPOCH the culprit sets RLIMIT_NOFILE to its current fd count, then starts
          DataLoader workers (NOFILE_WHAT=workers) or saves a checkpoint (NOFILE_WHAT=ckpt)
  cpu     culprit sets RLIMIT_CPU (soft) to used+3s at step FAULT_STEP (or the launcher used
          `ulimit -t`) -> SIGXCPU while training goes on
  ckpt    at epoch end every rank saves a checkpoint; the culprit's directory (CKPT_DIR_CULPRIT)
          is a 1 MiB tmpfs -> ENOSPC
  stack   culprit sets RLIMIT_STACK to 256 KiB (unless the launcher used `ulimit -s`) at epoch
          FAULT_EPOCH and its data code recurses deeply (STACK_WHERE=worker|main) -> SIGSEGV
"""
import os, sys, time, logging, warnings, resource, threading

RANK_ENV = os.environ.get("RANK")
FAULT = os.environ.get("FAULT", "none")
CULPRIT = int(os.environ.get("CULPRIT", "2"))

# shm under torchrun: start the culprit rank itself in a private mount namespace with a tiny /dev/shm
if (FAULT == "shm" and RANK_ENV is not None and int(RANK_ENV) == CULPRIT
        and os.environ.get("SHM_NS_DONE") != "1"):
    os.environ["SHM_NS_DONE"] = "1"
    os.execvp("unshare", ["unshare", "-m", "sh", "-c",
              'mount -t tmpfs -o size=1M tmpfs /dev/shm && exec "$0" "$@"', sys.executable] + sys.argv)

import torch, torch.nn as nn, torch.distributed as dist
from datetime import timedelta
from torch.utils.data import Dataset, DataLoader

FAULT_STEP = int(os.environ.get("FAULT_STEP", "3"))
FAULT_EPOCH = int(os.environ.get("FAULT_EPOCH", "1"))
EPOCHS = int(os.environ.get("EPOCHS", "3"))
STEPS = int(os.environ.get("STEPS_PER_EPOCH", "6"))
NOISY = os.environ.get("NOISY") == "1"


class Synthetic(Dataset):
    """Each item is a whole batch (batch_size=None)."""
    def __init__(self, rank, big_from=None, recurse=False):
        self.rank, self.big_from, self.recurse = rank, big_from, recurse
    def __len__(self):
        return STEPS
    def __getitem__(self, i):
        g = torch.Generator().manual_seed(1000 * self.rank + i)
        if self.recurse:
            sys.setrecursionlimit(10 ** 7)
            depth = count_nodes(build_tree(200000))   # deep "parse" of a nested record
        n = 8192 if (self.big_from is not None and i >= self.big_from) else 32   # 8192x256 fp32 = 8 MiB
        x = torch.randn(n, 256, generator=g)
        return x, (x[:, :10].sum(1) > 0).long()


def build_tree(depth):
    node = []
    for _ in range(depth):
        node = [node]
    return node


def count_nodes(node):
    # recursion through C builtins (sum/map) -> uses the C stack on every level
    return 1 + sum(map(count_nodes, node))


def log_setup(rank):
    logging.basicConfig(level=logging.INFO, stream=sys.stdout,
                        format=f"%(asctime)s [rank{rank}] %(levelname)s %(name)s: %(message)s")
    return logging.getLogger("train")


def main(rank=None, world=None):
    if rank is None:
        rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    else:
        os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    log = log_setup(rank)
    torch.set_num_threads(1)
    dist.init_process_group("gloo", rank=rank, world_size=world, timeout=timedelta(seconds=int(os.environ.get("PG_TIMEOUT", "30"))))
    culprit = (rank == CULPRIT and FAULT != "none")
    log.info("initialized process group: rank %d/%d, fault=%s", rank, world, FAULT if culprit else "none")
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(256, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 2))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    lossf = nn.CrossEntropyLoss()
    ds = Synthetic(rank, big_from=FAULT_STEP if (culprit and FAULT == "shm") else None)
    if NOISY and rank == 0:
        warnings.warn("torch.utils.data: num_workers=2 may be slow on this machine", UserWarning)
        log.warning("tensorboard not installed; metrics go to stdout only")
    step = 0
    for epoch in range(EPOCHS):
        if culprit and epoch == FAULT_EPOCH:
            apply_epoch_fault(rank, log, ds, model, opt)
        dl = DataLoader(ds, batch_size=None, num_workers=2, shuffle=False, timeout=20)
        for x, y in dl:
            if culprit and FAULT == "cpu" and step == FAULT_STEP and os.environ.get("CPU_BY_LAUNCHER") != "1":
                used = resource.getrusage(resource.RUSAGE_SELF)
                lim = int(used.ru_utime + used.ru_stime) + 3
                resource.setrlimit(resource.RLIMIT_CPU, (lim, resource.RLIM_INFINITY))
                log.info("RLIMIT_CPU soft limit now %ds", lim)
            if culprit and FAULT == "cpu":
                burn = torch.randn(700, 700)
                for _ in range(40):
                    burn = torch.tanh(burn @ burn)   # extra CPU work on the culprit
            opt.zero_grad()
            loss = lossf(model(x), y)
            loss.backward()
            for p in model.parameters():
                dist.all_reduce(p.grad)
                p.grad /= world
            opt.step()
            if NOISY and step == 4 and rank == 1:
                log.warning("step time 1.9s above p95 (0.4s); possible straggler, continuing")
            log.info("epoch %d step %d loss %.4f", epoch, step, loss.item())
            step += 1
        if FAULT == "ckpt" or (NOISY and epoch == 0):
            save_ckpt(rank, culprit, model, opt, epoch, log)
        dist.barrier()
    log.info("training done")
    dist.destroy_process_group()


def save_ckpt(rank, culprit, model, opt, epoch, log):
    d = os.environ.get("CKPT_DIR_CULPRIT") if culprit else None
    d = d or os.path.join(os.environ.get("CKPT_DIR", "/tmp/h52a/ckpt"), f"rank{rank}")
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, f"epoch{epoch}.pt")
    log.info("saving checkpoint to %s", path)
    torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "epoch": epoch}, path)


def apply_epoch_fault(rank, log, ds, model, opt):
    if FAULT == "nproc":
        os.setgid(65534); os.setuid(65534)
        resource.setrlimit(resource.RLIMIT_NPROC, (1, 1))
        log.info("dropped to uid 65534 with RLIMIT_NPROC=1")
        if os.environ.get("NPROC_WHAT") == "thread":
            t = threading.Thread(target=lambda: None, name="ckpt-prefetch")
            log.info("starting background prefetch thread")
            t.start()
    elif FAULT == "nofile":
        nfd = len(os.listdir("/proc/self/fd")) - 1   # minus the fd listdir itself used: no free slot left
        resource.setrlimit(resource.RLIMIT_NOFILE, (nfd, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))
        log.info("RLIMIT_NOFILE soft limit now %d", nfd)
        if os.environ.get("NOFILE_WHAT") == "ckpt":
            save_ckpt(rank, True, model, opt, FAULT_EPOCH - 1, log)
    elif FAULT == "stack":
        if os.environ.get("STACK_BY_LAUNCHER") != "1":
            resource.setrlimit(resource.RLIMIT_STACK, (256 * 1024, resource.RLIM_INFINITY))
            log.info("RLIMIT_STACK soft limit now 256 KiB")
        if os.environ.get("STACK_WHERE", "worker") == "worker":
            ds.recurse = True
        else:
            log.info("parsing nested metadata record")
            sys.setrecursionlimit(10 ** 7)
            count_nodes(build_tree(200000))


if __name__ == "__main__":
    main()
