"""Round 36b training job: a small MLP trained for a few steps, alone or under torchrun (gloo).

The job itself is ordinary; round 36b varies the TOOL that stores its output (ts, script, >>, tail, head,
split stdout/stderr, nbconvert, IPython, gzip).  One fault can be induced on one rank (--fault-rank):

  --fault keyerror   rank R looks up batch["targets"] in a dict that lacks it at step k -> KeyError: 'targets'
  --fault shape      rank R feeds a (8, 20) batch to a Linear(16, 32) at step k          -> RuntimeError mat1/mat2
  --fault cxx        rank R sets CXX=/nonexistent/g++ (before torch is imported), then torch.compile -> inductor
                     cannot find a C++ compiler
  --fault fullgraph  rank R compiles with fullgraph=True a forward that branches on a tensor value
  --fault hang       rank R sleeps --hang-sec before the step-k gradient all_reduce (pg timeout --pg-timeout)
  --fault hostoom    rank R moves itself into the memory cgroup named by $CG36B_PATH and allocates+touches
                     64 MiB chunks until the kernel OOM killer SIGKILLs it
  --catch            catch the exception and log it with logger.exception (so the traceback goes where the
                     logger writes, e.g. stdout with --log-stdout), then exit 1
"""
import argparse
import os
import sys

p = argparse.ArgumentParser()
p.add_argument("--steps", type=int, default=6)
p.add_argument("--fault", default="none",
               choices=["none", "keyerror", "shape", "cxx", "fullgraph", "hang", "hostoom"])
p.add_argument("--fault-rank", type=int, default=1)
p.add_argument("--fault-step", type=int, default=3)
p.add_argument("--hang-sec", type=int, default=60)
p.add_argument("--pg-timeout", type=int, default=15)
p.add_argument("--compile", action="store_true", help="torch.compile the model on every rank")
p.add_argument("--log-stdout", action="store_true", help="logger writes to stdout instead of stderr")
p.add_argument("--catch", action="store_true")
p.add_argument("--verbose", action="store_true", help="also log a config dump and per-step metrics")
args = p.parse_args()

RANK = int(os.environ.get("RANK", "0"))
WORLD = int(os.environ.get("WORLD_SIZE", "1"))
FAULTY = args.fault != "none" and RANK == args.fault_rank

if FAULTY and args.fault == "cxx":
    # must happen before torch._inductor.config is imported: it reads $CXX at import time
    os.environ["CXX"] = "/nonexistent/g++"

import logging  # noqa: E402
import time  # noqa: E402
from datetime import timedelta  # noqa: E402

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
import torch.nn as nn  # noqa: E402

logging.basicConfig(stream=sys.stdout if args.log_stdout else sys.stderr, level=logging.INFO,
                    format=f"%(asctime)s %(levelname)s [rank{RANK}] %(name)s: %(message)s")
log = logging.getLogger("train")


class Net(nn.Module):
    def __init__(self, branchy=False):
        super().__init__()
        self.fc1 = nn.Linear(16, 32)
        self.fc2 = nn.Linear(32, 1)
        self.branchy = branchy

    def forward(self, x):
        h = torch.relu(self.fc1(x))
        if self.branchy:
            # data-dependent Python branch: fine in eager, unsupported under fullgraph=True
            if h.sum() > 0:
                h = h * 2
        return self.fc2(h)


def make_batch(step, g):
    batch = {"inputs": torch.randn(8, 16, generator=g), "targets": torch.randn(8, 1, generator=g)}
    if FAULTY and args.fault == "keyerror" and step == args.fault_step:
        batch = {"inputs": batch["inputs"], "target": batch["targets"]}  # the loader renamed the key
    if FAULTY and args.fault == "shape" and step == args.fault_step:
        batch["inputs"] = torch.randn(8, 20, generator=g)  # a feature column too many
    return batch


def hostoom():
    cg = os.environ["CG36B_PATH"]
    with open(os.path.join(cg, "cgroup.procs"), "w") as f:
        f.write(str(os.getpid()))
    log.info("moved pid %d into %s", os.getpid(), cg)
    hog = []
    for i in range(400):
        t = torch.empty(64 * 1024 * 1024, dtype=torch.uint8)
        t.fill_(1)  # touch every page
        hog.append(t)
        if i % 4 == 0:
            log.info("cache warmup: %d MiB resident", (i + 1) * 64)


def main():
    if WORLD > 1:
        dist.init_process_group("gloo", timeout=timedelta(seconds=args.pg_timeout))
    torch.manual_seed(0)
    model = Net(branchy=FAULTY and args.fault == "fullgraph")
    if WORLD > 1:
        model = nn.parallel.DistributedDataParallel(model)
    if args.compile or (FAULTY and args.fault in ("cxx", "fullgraph")):
        model = torch.compile(model, fullgraph=(FAULTY and args.fault == "fullgraph"))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    log.info("world_size=%d params=%d steps=%d", WORLD, sum(p.numel() for p in model.parameters()), args.steps)
    if args.verbose:
        for k, v in sorted(vars(args).items()):
            log.info("config %s = %s", k, v)
    g = torch.Generator().manual_seed(1234 + RANK)
    for step in range(1, args.steps + 1):
        t0 = time.time()
        if FAULTY and args.fault == "hostoom" and step == args.fault_step:
            hostoom()
        batch = make_batch(step, g)
        out = model(batch["inputs"])
        loss = nn.functional.mse_loss(out, batch["targets"])
        opt.zero_grad()
        loss.backward()
        if FAULTY and args.fault == "hang" and step == args.fault_step:
            log.info("refreshing shard index ...")
            time.sleep(args.hang_sec)
        if WORLD > 1:
            # an explicit metric all_reduce on top of DDP's gradient sync
            m = loss.detach().clone()
            dist.all_reduce(m)
            loss_avg = m.item() / WORLD
        else:
            loss_avg = loss.item()
        opt.step()
        log.info("step %d/%d loss %.4f (avg %.4f) %.0f ms", step, args.steps, loss.item(), loss_avg,
                 (time.time() - t0) * 1000)
        if args.verbose:
            log.info("step %d metrics: lr=0.05 grad_norm=%.4f samples=%d", step,
                     sum(p.grad.norm().item() for p in model.parameters() if p.grad is not None), step * 8 * WORLD)
    log.info("training done")
    if WORLD > 1:
        dist.barrier()
        dist.destroy_process_group()


if __name__ == "__main__":
    if args.catch:
        try:
            main()
        except Exception:
            log.exception("training step failed")
            sys.exit(1)
    else:
        main()
