"""Round 51a: a small gloo training job whose own log lines carry the PID, never the rank.

Env knobs:
  LAUNCH      torchrun | spawn | mpi | shell  (where the rank comes from)
  NPROC       world size for LAUNCH=spawn
  SCENARIO    none | sigkill | oom | raise | hang   (fault happens on FAULT_RANK only, at FAULT_STEP)
  FAULT_RANK  global rank that misbehaves (never 0)     FAULT_STEP  step of the fault (default 3)
  PIDMAP      1: at start-up each process logs "rank R started, pid P" (the only rank<->pid link); 0: not
  LOGSTYLE    logging: Python logging with %(process)d;  print: "pid=1234 ..." inside the message
  NOISY       1: extra harmless warnings / retries (for healthy runs)
  OOM_CGROUP  cgroup-v1 memory cgroup dir that the faulty rank joins at start-up (SCENARIO=oom)
  PG_TIMEOUT  process-group timeout in s (default 15);  HANG_S  how long the hanging rank sleeps (default 40)

What each scenario induces on FAULT_RANK:
  sigkill  os.kill(os.getpid(), 9) while loading batch FAULT_STEP (no traceback)
  oom      joined a 1 GiB memory cgroup at start-up; loading batch FAULT_STEP allocates and touches 128 MiB
           blocks until the kernel OOM killer SIGKILLs it
  raise    loading batch FAULT_STEP raises KeyError: 'label'
  hang     sleeps HANG_S before the step's all_reduce, so the others hit the gloo timeout
"""
import datetime
import logging
import os
import sys
import time
import warnings

SCENARIO = os.environ.get("SCENARIO", "none")
FAULT_RANK = int(os.environ.get("FAULT_RANK", "2"))
FAULT_STEP = int(os.environ.get("FAULT_STEP", "3"))
PIDMAP = os.environ.get("PIDMAP", "0") == "1"
LOGSTYLE = os.environ.get("LOGSTYLE", "logging")
NOISY = os.environ.get("NOISY", "0") == "1"
STEPS = int(os.environ.get("STEPS", "8"))


def make_log():
    if LOGSTYLE == "logging":
        logging.basicConfig(level=logging.INFO, stream=sys.stdout, force=True,
                            format="%(asctime)s %(levelname)s [%(process)d] train: %(message)s")
        lg = logging.getLogger("train")
        return lg.info, lg.warning
    pid = os.getpid()
    def info(msg):
        print(f"{time.strftime('%H:%M:%S')} INFO pid={pid} {msg}", flush=True)
    def warn(msg):
        print(f"{time.strftime('%H:%M:%S')} WARNING pid={pid} {msg}", flush=True)
    return info, warn


def load_batch(rank, step, info, torch):
    info(f"loading batch {step} (shard {step % 3})")
    if rank == FAULT_RANK and step == FAULT_STEP:
        if SCENARIO == "sigkill":
            os.kill(os.getpid(), 9)
        if SCENARIO == "raise":
            record = {"input": [0.1] * 8}
            return record["label"]
        if SCENARIO == "oom":
            blocks = []
            while True:                      # touch 128 MiB at a time until the cgroup OOM-kills us
                blocks.append(torch.ones(32 * 1024 * 1024))
        if SCENARIO == "hang":
            time.sleep(float(os.environ.get("HANG_S", "40")))
    g = torch.Generator().manual_seed(step * 100 + rank)
    return torch.randn(16, 8, generator=g), torch.randn(16, 1, generator=g)


def main(rank, world):
    info, warn = make_log()
    if SCENARIO == "oom" and rank == FAULT_RANK and os.environ.get("OOM_CGROUP"):
        with open(os.path.join(os.environ["OOM_CGROUP"], "cgroup.procs"), "w") as f:
            f.write(str(os.getpid()))
    import torch
    import torch.distributed as dist
    if PIDMAP:
        info(f"rank {rank} started, pid {os.getpid()}")
    else:
        info("worker started")
    dist.init_process_group("gloo", rank=rank, world_size=world,
                            timeout=datetime.timedelta(seconds=float(os.environ.get("PG_TIMEOUT", "15"))))
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1))
    for p in model.parameters():
        dist.broadcast(p.data, 0)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    info(f"model ready: {sum(p.numel() for p in model.parameters())} params, world size {world}")
    if NOISY:
        warnings.warn("torch.utils.data: num_workers=0, data loading runs in the main process", UserWarning)
        warn("config key 'optimizer.eps' not set, using default 1e-8")
    for step in range(STEPS):
        x, y = load_batch(rank, step, info, torch)
        if NOISY and step == 2:
            warn("shard 2 read took 1.9s (> 1.5s), retrying once: ConnectionResetError(104) -- recovered")
        loss = torch.nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        for p in model.parameters():
            dist.all_reduce(p.grad)
            p.grad /= world
        opt.step()
        info(f"step {step} loss {loss.item():.4f}")
        time.sleep(0.3)
    dist.barrier()
    info("training finished")
    dist.destroy_process_group()


def spawn_entry(rank, world):
    main(rank, world)


if __name__ == "__main__":
    launch = os.environ.get("LAUNCH", "torchrun")
    if launch == "spawn":
        import torch.multiprocessing as mp
        world = int(os.environ.get("NPROC", "4"))
        mp.spawn(spawn_entry, args=(world,), nprocs=world)
    elif launch == "mpi":
        os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
        main(int(os.environ["OMPI_COMM_WORLD_RANK"]), int(os.environ["OMPI_COMM_WORLD_SIZE"]))
    else:   # torchrun or the shell loop: RANK / WORLD_SIZE in the environment
        main(int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]))
