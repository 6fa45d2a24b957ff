"""Small DDP job (gloo, CPU) whose log lines carry the HOST, not always the rank.

Rank/world come from torchrun (RANK/WORLD_SIZE/...), Open MPI (OMPI_COMM_WORLD_*) or a shell loop (RANK...).
Fault injection (env):
  FAULT       none | raise | sigkill | hang | mismatch | compile | hostoom
  FAULT_RANK  the GLOBAL rank that misbehaves
  FAULT_STEP  step at which it happens (default 3)
  PG_TIMEOUT  process group timeout in seconds (default 20)
  OOM_CGROUP  (hostoom) cgroup v1 memory dir; the faulty rank writes its own pid into its cgroup.procs
Log format (env LOGFMT):
  filter  -> "2025-.. node-b INFO train: ..." (%(hostname)s added by a logging.Filter, no rank)
  hostpid -> "node-b:1234 ..."
  bracket -> "[node-b:1234] INFO ..."
  hostfile-> the training logger writes to $LOG_DIR/<hostname>.log (one file per node; console only gets
             whatever escapes the logger, e.g. tracebacks)
"""
import datetime, logging, os, signal, socket, sys, time

import torch
import torch.distributed as dist
import torch.nn as nn

HOST = socket.gethostname()


class HostFilter(logging.Filter):
    def filter(self, record):
        record.hostname = HOST
        return True


def setup_logging():
    fmt = os.environ.get("LOGFMT", "filter")
    log = logging.getLogger("train")
    log.setLevel(logging.INFO)
    log.addFilter(HostFilter())
    if fmt == "hostfile":
        d = os.environ.get("LOG_DIR", "logs")
        os.makedirs(d, exist_ok=True)
        h = logging.FileHandler(os.path.join(d, f"{HOST}.log"))
        h.setFormatter(logging.Formatter("%(asctime)s %(hostname)s pid=%(process)d %(levelname)s %(message)s"))
    else:
        h = logging.StreamHandler(sys.stdout)
        f = {"filter": "%(asctime)s %(hostname)s %(levelname)s train: %(message)s",
             "hostpid": "%(hostname)s:%(process)d %(message)s",
             "bracket": "[%(hostname)s:%(process)d] %(levelname)s %(message)s"}[fmt]
        h.setFormatter(logging.Formatter(f))
    log.addHandler(h)
    log.propagate = False
    return log


def env_int(*names, default=None):
    for n in names:
        if n in os.environ:
            return int(os.environ[n])
    return default


def main():
    log = setup_logging()
    rank = env_int("RANK", "OMPI_COMM_WORLD_RANK")
    world = env_int("WORLD_SIZE", "OMPI_COMM_WORLD_SIZE")
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29548")
    fault = os.environ.get("FAULT", "none")
    frank = env_int("FAULT_RANK", default=-1)
    fstep = env_int("FAULT_STEP", default=3)
    me = rank == frank

    if fault == "hostoom" and me:
        # move only this rank into the memory-limited cgroup (created by run_all.sh)
        with open(os.path.join(os.environ["OOM_CGROUP"], "cgroup.procs"), "w") as f:
            f.write(str(os.getpid()))
    if fault == "compile" and me:
        # this node's image has no C++ compiler where inductor looks for it
        os.environ["CXX"] = "/nonexistent/g++"

    timeout = datetime.timedelta(seconds=env_int("PG_TIMEOUT", default=20))
    dist.init_process_group("gloo", rank=rank, world_size=world, timeout=timeout)
    log.info("process group up: world_size=%d backend=gloo", world)

    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 1))
    ddp = nn.parallel.DistributedDataParallel(model)
    fwd = torch.compile(ddp) if fault == "compile" else ddp
    opt = torch.optim.SGD(ddp.parameters(), lr=0.05)
    g = torch.Generator().manual_seed(1234 + rank)
    data = {"features": None}
    hog = []

    for step in range(1, 7):
        x = torch.randn(8, 16, generator=g)
        y = x[:, :1] * 0.5
        if fault == "raise" and me and step == fstep:
            data = {}  # a shard whose record lacks the key
            x = data["features"]
        if fault == "sigkill" and me and step == fstep:
            os.kill(os.getpid(), signal.SIGKILL)
        if fault == "hang" and me and step == fstep:
            time.sleep(env_int("PG_TIMEOUT", default=20) * 4)  # stuck: never reaches the collective in time
        if fault == "hostoom" and me and step == fstep:
            for _ in range(64):  # 64 x 64 MiB, each page touched
                hog.append(torch.ones(16 * 1024 * 1024))
        loss = nn.functional.mse_loss(fwd(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        # average the loss for logging
        n = 8 if (fault == "mismatch" and me and step == fstep) else 4
        stat = torch.full((n,), loss.item())
        dist.all_reduce(stat)
        log.info("step %d loss %.4f avg_loss %.4f", step, loss.item(), stat[0].item() / world)
    dist.barrier()
    log.info("training done")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
