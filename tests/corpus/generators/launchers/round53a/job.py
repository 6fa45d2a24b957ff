"""Small gloo training job (4-6 processes, CPU) in which EVERY process writes its OWN log file, named the
way real jobs / clusters name them.  One process (CULPRIT, never rank 0) injects one fault.

Configuration by environment:
  LOG_NAME   file name template relative to LOG_DIR (python str.format with rank, world, local, node,
             host, pid, jobid, nodename), e.g. "logs/rank{rank}.log", "node{node}/gpu{rank}.log",
             "job.{jobid}.{rank}.out", "host-{host}-{pid}.log".  Empty: the launcher redirected us.
  LOG_MODE   handler  logging.FileHandler into the file (console keeps stderr: tracebacks also there)
             pyredir  sys.stdout = sys.stderr = open(file)  (C++ warnings still reach the console)
             split    fd-level: stdout -> LOG_NAME, stderr -> ERR_NAME   (out.N / err.N)
             console  log to stdout (the shell loop did `exec > file 2>&1`)
  RANK_IN_LINES 1: every line carries "[rank N]"; 0: it does not (the file name is the only link)
  START_LINE    1: first line states rank/world/local/pid (used where neither name nor lines carry rank)
  FAULT      none | raise | sigkill | hang | mismatch | oom ;  CULPRIT (global rank), FAULT_STEP
  PG_TIMEOUT process-group timeout in s (hang: the culprit sleeps HANG_S before the step's all_reduce)
  OOM_CGROUP cgroup v1 memory dir: the culprit moves itself in at start and allocates at FAULT_STEP
  NOISY=1    harmless warnings (healthy runs)
"""
import os, sys, time, socket, logging, warnings
from datetime import timedelta

FAULT = os.environ.get("FAULT", "none")
CULPRIT = int(os.environ.get("CULPRIT", "2"))
FAULT_STEP = int(os.environ.get("FAULT_STEP", "3"))
STEPS = int(os.environ.get("STEPS", "8"))
NOISY = os.environ.get("NOISY") == "1"


def open_log(rank, world):
    local = int(os.environ.get("LOCAL_RANK", rank % int(os.environ.get("NPROC_PER_NODE", world))))
    node = int(os.environ.get("GROUP_RANK", os.environ.get("NODE_RANK", rank // int(os.environ.get("NPROC_PER_NODE", world)))))
    fmtargs = dict(rank=rank, world=world, local=local, node=node, host=socket.gethostname(), pid=os.getpid(),
                   jobid=os.environ.get("SLURM_JOB_ID", "0"), nodename=os.environ.get("NODE_NAME", "node"))
    mode = os.environ.get("LOG_MODE", "console")
    name = os.environ.get("LOG_NAME", "")
    base = os.environ.get("LOG_DIR", ".")
    path = os.path.join(base, name.format(**fmtargs)) if name else None
    if path:
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    tag = f"[rank {rank}] " if os.environ.get("RANK_IN_LINES", "1") == "1" else ""
    fmt = logging.Formatter(f"%(asctime)s %(levelname)s {tag}%(name)s: %(message)s")
    log = logging.getLogger("train")
    log.setLevel(logging.INFO)
    if mode == "handler":
        h = logging.FileHandler(path)
    elif mode == "pyredir":
        sys.stdout = sys.stderr = open(path, "a", buffering=1)
        h = logging.StreamHandler(sys.stdout)
    elif mode == "split":
        err = os.path.join(base, os.environ["ERR_NAME"].format(**fmtargs))
        sys.stdout.flush(); sys.stderr.flush()
        fo = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        fe = os.open(err, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(fo, 1); os.dup2(fe, 2)
        sys.stdout = os.fdopen(1, "w", buffering=1); sys.stderr = os.fdopen(2, "w", buffering=1)
        h = logging.StreamHandler(sys.stdout)
    else:
        h = logging.StreamHandler(sys.stdout)
    h.setFormatter(fmt)
    log.addHandler(h)
    if os.environ.get("START_LINE") == "1":
        log.info("starting worker: global rank %d of %d, local rank %d, node %d, pid %d, host %s",
                 rank, world, local, node, os.getpid(), socket.gethostname())
    return log


def main(rank=None, world=None):
    if rank is None:
        rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    else:  # mp.spawn
        os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    log = open_log(rank, world)
    try:
        train(rank, world, log)
    except Exception:
        log.exception("training failed")
        raise


def train(rank, world, log):
    import torch, torch.nn as nn, torch.distributed as dist
    culprit = FAULT != "none" and rank == CULPRIT
    if culprit and FAULT == "oom":
        with open(os.path.join(os.environ["OOM_CGROUP"], "cgroup.procs"), "w") as f:
            f.write(str(os.getpid()))
    torch.set_num_threads(1)
    dist.init_process_group("gloo", rank=rank, world_size=world,
                            timeout=timedelta(seconds=int(os.environ.get("PG_TIMEOUT", "30"))))
    log.info("process group ready (backend=gloo, world_size=%d)", world)
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    lossf = nn.CrossEntropyLoss()
    records = {f"sample_{i}": i for i in range(STEPS * 16)}
    if NOISY and rank == 0:
        warnings.warn("torch.cuda not available; training on CPU", UserWarning)
        log.warning("wandb not installed; metrics go to the log only")
    hoard = []
    for step in range(STEPS):
        t0 = time.time()
        g = torch.Generator().manual_seed(100 * rank + step)
        keys = [f"sample_{step * 16 + i}" for i in range(16)]
        if culprit and FAULT == "raise" and step == FAULT_STEP:
            keys[5] = f"sample_{10 ** 6 + step}"          # a record missing from the index
        idx = [records[k] for k in keys]                     # KeyError on the culprit
        x = torch.randn(len(idx), 64, generator=g)
        y = torch.tensor(idx) % 10
        opt.zero_grad()
        loss = lossf(model(x), y)
        loss.backward()
        if culprit and FAULT == "sigkill" and step == FAULT_STEP:
            os.kill(os.getpid(), 9)
        if culprit and FAULT == "hang" and step == FAULT_STEP:
            time.sleep(float(os.environ.get("HANG_S", "40")))   # stuck (e.g. in I/O) before the collective
        if culprit and FAULT == "oom" and step == FAULT_STEP:
            for _ in range(200):                              # cache "decoded samples": 64 MiB each
                hoard.append(torch.ones(16 * 1024 * 1024))
        for p in model.parameters():
            grad = p.grad
            if culprit and FAULT == "mismatch" and step == FAULT_STEP and p.dim() == 2:
                grad = torch.zeros(grad.shape[0] + 32, grad.shape[1])   # wrong-shaped bucket
            dist.all_reduce(grad)
            p.grad /= world
        opt.step()
        if NOISY and rank == 1 and step == 4:
            log.warning("step %d took %.1fs (p95 0.1s): possible straggler, continuing", step, 2.3)
        if NOISY and rank == world - 1 and step == 2:
            try:
                open("/nonexistent/tb/events.out", "w")
            except OSError as e:
                log.warning("could not write tensorboard event (%s); ignoring", e)
        log.info("step %d/%d loss %.4f lr %.3f (%.1f ms)", step, STEPS, loss.item(), 0.05, 1000 * (time.time() - t0))
        time.sleep(0.2)
    dist.barrier()
    log.info("training finished")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
