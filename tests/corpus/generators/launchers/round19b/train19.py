"""Plain PyTorch DDP job (gloo, CPU) for round 19b, started by torchrun (ranks from RANK / WORLD_SIZE / LOCAL_RANK /
GROUP_RANK). Small MLP, one log record per step; what changes between runs is HOW the job logs (--log-style):

  plain    stdlib logging, '%(asctime)s %(levelname)s rank=%(rank)s %(message)s' (rank through a LoggerAdapter)
  bracket  stdlib logging, '[%(asctime)s][%(name)s][RANK %(rank)s][%(levelname)s] %(message)s' (rank through a Filter)
  loguru   loguru, '{time} | {level} | rank {extra[rank]} | {message}' with logger.bind(rank=r); main() runs under
           logger.catch(onerror=exit 1), so an exception is printed by loguru (its own traceback layout)
  structlog structlog JSON lines ({"rank": r, "event": ..., "level": ..., "timestamp": ...}); an exception in the
           training loop is logged with log.exception (dict_tracebacks -> one JSON line) and the rank exits 1
  rich     stdlib logging through rich's RichHandler (colours, columns) + rich.traceback.install(); run under a pty
           (`script -q`) so the ANSI codes land in the log
  tqdm     rank 0 shows a tqdm progress bar over the steps (stderr) and logs nothing per step; the other ranks log
           with the plain format

ONE fault on ONE rank comes from the environment, R19_FAULT=<mode>:<global rank>:<step> (not from the command line,
so no launcher can echo it into a log):
  raise         the rank's data loader looks a sample id up in its shard index, which lacks it -> KeyError
  sigkill       the rank SIGKILLs itself after logging the step (no traceback)
  hang          the rank sleeps R19_SLEEP s (default 60) before the per-step loss all_reduce; PG timeout --timeout
  mismatch      after the step's loss all_reduce the rank all_reduces 1000 grad-norm stats, the others 4 (with 8 vs 4
                gloo's ring all_reduce does not notice: the job just hangs into a timeout)
                (with --no-ddp and TORCH_DISTRIBUTED_DEBUG=DETAIL: the fingerprint check reports it)
  compile       every rank torch.compiles a feature-normalisation function (inductor, own TORCHINDUCTOR_CACHE_DIR per
                rank); this rank alone sets inductor's cpp.cxx = ('/nonexistent/g++',) first
  compilebranch every rank torch.compile(fullgraph=True)s the normalisation; this rank's config turns on outlier
                clipping, which branches on a tensor value (data-dependent control flow)
  none          healthy run
"""
import argparse
import logging
import os
import signal
import socket
import sys
import time
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

p = argparse.ArgumentParser()
p.add_argument("--log-style", default="plain",
               choices=["plain", "bracket", "loguru", "structlog", "rich", "tqdm"])
p.add_argument("--steps", type=int, default=8)
p.add_argument("--timeout", type=int, default=20, help="process-group timeout (s)")
p.add_argument("--no-ddp", action="store_true", help="average gradients by hand (DDP segfaults under DETAIL)")
p.add_argument("--attempt-store", action="store_true",
               help="join the process group through PrefixStore('attempt<TORCHELASTIC_RESTART_COUNT>') on torchrun's store "
                    "(without it, a group restarted by --max-restarts fails in gloo's connectFullMesh on torch 2.13: "
                    "the default store keys of attempt 0 are still there)")
args = p.parse_args()

RANK, WORLD = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
LOCAL, NODE = int(os.environ["LOCAL_RANK"]), int(os.environ.get("GROUP_RANK", "0"))
_f = os.environ.get("R19_FAULT", "none:-1:0").split(":")
MODE, BAD_RANK, BAD_STEP = _f[0], int(_f[1]), int(_f[2])
BAD = RANK == BAD_RANK

# ------------------------------------------------------------------ logging set-up (one style per run)
STYLE = args.log_style
if STYLE == "tqdm" and RANK != 0:
    STYLE = "plain"
if STYLE in ("plain", "tqdm"):
    logging.basicConfig(level=logging.INFO, stream=sys.stdout,
                        format="%(asctime)s %(levelname)s rank=%(rank)s %(message)s")
    log = logging.LoggerAdapter(logging.getLogger("train"), {"rank": RANK})
elif STYLE == "bracket":
    class RankFilter(logging.Filter):
        def filter(self, record):
            record.rank = RANK
            return True
    h = logging.StreamHandler(sys.stdout)
    h.addFilter(RankFilter())
    h.setFormatter(logging.Formatter("[%(asctime)s][%(name)s][RANK %(rank)s][%(levelname)s] %(message)s"))
    logging.basicConfig(level=logging.INFO, handlers=[h])
    log = logging.getLogger("trainer.loop")
elif STYLE == "loguru":
    from loguru import logger
    logger.remove()
    logger.add(sys.stderr, format="{time} | {level} | rank {extra[rank]} | {message}", level="INFO")
    log = logger.bind(rank=RANK)
elif STYLE == "structlog":
    import structlog
    structlog.configure(processors=[
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso"),
        structlog.processors.dict_tracebacks,
        structlog.processors.JSONRenderer(),
    ], logger_factory=structlog.PrintLoggerFactory(sys.stdout))
    log = structlog.get_logger().bind(rank=RANK)
elif STYLE == "rich":
    from rich.logging import RichHandler
    from rich.traceback import install
    install(show_locals=False, extra_lines=0)   # only each frame's own line (no code around it in the log)
    logging.basicConfig(level=logging.INFO, format=f"rank{RANK}: %(message)s", datefmt="[%X]",
                        handlers=[RichHandler(rich_tracebacks=True)])
    log = logging.getLogger("train")


def info(msg, **kv):
    """one log record; structlog gets the values as keys, the others as 'k=v' text"""
    if STYLE == "structlog":
        log.info(msg, **kv)
    else:
        tail = " ".join(f"{k}={v}" for k, v in kv.items())
        log.info(f"{msg} {tail}".rstrip())


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU())
        self.head = nn.Linear(32, 1)

    def forward(self, x):
        return self.head(self.body(x))


SHARD_INDEX = {f"sample-{i:05d}": i for i in range(0, 8192)}


def load_batch(step):
    g = torch.Generator().manual_seed(1000 * RANK + step)
    ids = [f"sample-{(RANK * 512 + step * 32 + j):05d}" for j in range(32)]
    if MODE == "raise" and BAD and step == BAD_STEP:
        ids[11] = "sample-7c2e9"                     # induced: a corrupt id in this rank's shard manifest
    offs = torch.tensor([SHARD_INDEX[i] for i in ids], dtype=torch.float32)
    x = torch.randn(32, 16, generator=g) + 0.0 * offs[:, None]
    return x, x.sum(1, keepdim=True) * 0.1


CLIP_OUTLIERS = MODE == "compilebranch" and BAD      # induced: only this rank's config enables outlier clipping


def normalize(x):
    x = (x - x.mean(0, keepdim=True)) / (x.std(0, keepdim=True) + 1e-5)
    if CLIP_OUTLIERS:
        # (branches on a tensor value: data-dependent control flow; no comment on the line itself, Dynamo prints it)
        if x.abs().max() > 4.0:
            x = x.clamp(-4.0, 4.0)
    return torch.tanh(x * 0.5) * 2.0


def make_normalizer():
    if MODE == "compile":
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(os.getcwd(), ".inductor", f"rank{RANK}")
        if BAD:
            import torch._inductor.config as ic
            ic.cpp.cxx = ("/nonexistent/g++",)       # induced: this rank's C++ toolchain is "missing"
        return torch.compile(normalize)
    if MODE == "compilebranch":
        return torch.compile(normalize, fullgraph=True)
    return normalize


def train():
    if args.attempt_store:
        base = dist.TCPStore(os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"]), is_master=False,
                             timeout=timedelta(seconds=args.timeout))
        store = dist.PrefixStore("attempt" + os.environ.get("TORCHELASTIC_RESTART_COUNT", "0"), base)
        dist.init_process_group("gloo", store=store, rank=RANK, world_size=WORLD,
                                timeout=timedelta(seconds=args.timeout))
    else:
        dist.init_process_group("gloo", rank=RANK, world_size=WORLD, timeout=timedelta(seconds=args.timeout))
    info("process group ready", backend="gloo", world_size=WORLD, node_rank=NODE, local_rank=LOCAL,
         host=socket.gethostname(), pid=os.getpid(),
         attempt=os.environ.get("TORCHELASTIC_RESTART_COUNT", "0"))
    torch.manual_seed(0)
    net = Net()
    model = net if args.no_ddp else DDP(net)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    norm = make_normalizer()
    steps = range(args.steps)
    if STYLE == "tqdm":
        from tqdm import tqdm
        steps = tqdm(steps, desc="train", unit="step", dynamic_ncols=False, ncols=100)
    for step in steps:
        t0 = time.time()
        x, y = load_batch(step)
        x = norm(x)
        loss = nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        if args.no_ddp:
            for prm in model.parameters():           # manual gradient averaging
                dist.all_reduce(prm.grad)
                prm.grad /= WORLD
        opt.step()
        avg = loss.detach().clone()
        if MODE == "hang" and BAD and step == BAD_STEP:
            time.sleep(float(os.environ.get("R19_SLEEP", "60")))   # induced: a silent stall before the collective
        dist.all_reduce(avg)
        avg /= WORLD
        if MODE == "mismatch" and step == BAD_STEP:
            n = 1000 if BAD else 4                   # induced: this rank packs 1000 grad-norm stats, the others 4
            stats = torch.ones(n)
            dist.all_reduce(stats)
            info("grad-norm stats synced", n=n)
        if STYLE == "tqdm":
            steps.set_postfix(loss=f"{loss.item():.4f}", avg=f"{avg.item():.4f}")
        else:
            info(f"step {step}/{args.steps}", loss=f"{loss.item():.4f}", avg_loss=f"{avg.item():.4f}",
                 step_time=f"{time.time() - t0:.2f}s")
        if MODE == "sigkill" and BAD and step == BAD_STEP:
            os.kill(os.getpid(), signal.SIGKILL)     # induced: killed, no traceback
        time.sleep(0.4)
    if STYLE == "tqdm":
        steps.close()
    dist.barrier()
    info("training done")
    dist.destroy_process_group()


def main():
    if STYLE == "loguru":
        log.catch(onerror=lambda _e: sys.exit(1))(train)()
    elif STYLE == "structlog":
        try:
            train()
        except Exception:
            log.exception("training failed")
            sys.exit(1)
    else:
        train()


if __name__ == "__main__":
    main()
