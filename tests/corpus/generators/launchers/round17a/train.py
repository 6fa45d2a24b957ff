"""Small plain-PyTorch DDP job (gloo, CPU) used under TorchX (`torchx run -s local_cwd dist.ddp ...`, which runs
torchrun) and under Open MPI (`mpirun -np 3 python train.py ...`). ONE induced fault on ONE rank.

Rank/world come from torchrun's env (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR/PORT) or, under mpirun, from
OMPI_COMM_WORLD_RANK / OMPI_COMM_WORLD_SIZE / OMPI_COMM_WORLD_LOCAL_RANK (MASTER_ADDR/PORT exported with -x);
the process group is always init_process_group("gloo", init_method="env://", timeout=20 s).

The fault is chosen by the environment variable R17_FAULT="<mode>:<rank>:<step>" (not by command-line arguments,
so neither launcher can echo the answer into the log). Modes:
  ok        no fault
  raise     at step <step> the rank's data loading looks up a sample id missing from its shard index -> KeyError
  sigkill   the rank SIGKILLs itself (os.kill(os.getpid(), SIGKILL)) after its optimizer step, no traceback
  hang      the rank sleeps 90 s before the per-step loss all_reduce; the others time out (gloo, 20 s)
  mismatch  after the loss all_reduce the rank all_reduces 8 grad-norm stats where the others all_reduce 4
            (run with TORCH_DISTRIBUTED_DEBUG=DETAIL for the fingerprint-check variant; then the model is not
            wrapped in DDP, whose constructor segfaults under DETAIL on torch 2.13.0 CPU, and gradients are
            all_reduced by hand)
  compile   the rank alone points inductor's C++ compiler at /nonexistent/g++ before torch.compile runs; every
            rank uses its own TORCHINDUCTOR_CACHE_DIR (as on separate nodes: a shared warm cache would let the
            bad rank reuse the others' compiled code and never call the compiler)
"""
import argparse
import logging
import os
import signal
import sys
import time
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def setup_env():
    """Map Open MPI's env to torch's env:// variables (torchrun already sets them)."""
    if "OMPI_COMM_WORLD_RANK" in os.environ:
        os.environ["RANK"] = os.environ["OMPI_COMM_WORLD_RANK"]
        os.environ["WORLD_SIZE"] = os.environ["OMPI_COMM_WORLD_SIZE"]
        os.environ["LOCAL_RANK"] = os.environ.get("OMPI_COMM_WORLD_LOCAL_RANK", os.environ["RANK"])
        os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
        os.environ.setdefault("MASTER_PORT", "29517")
    return int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=6)
    ap.add_argument("--lr", type=float, default=0.05)
    ap.add_argument("--batch-size", type=int, default=16)
    a = ap.parse_args()
    mode, bad_rank, kstep = (os.environ.get("R17_FAULT") or "ok:-1:0").split(":")
    bad_rank, kstep = int(bad_rank), int(kstep)

    rank, world = setup_env()
    logging.basicConfig(level=logging.INFO, stream=sys.stdout,
                        format=f"%(asctime)s %(levelname)s [rank{rank}] %(name)s: %(message)s")
    log = logging.getLogger("train")
    me_bad = rank == bad_rank

    if mode == "compile":
        # own inductor cache per rank (see module docstring)
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(
            os.environ.get("R17_CACHE_ROOT", "/tmp/r17-inductor"), f"rank{rank}")

    dist.init_process_group("gloo", init_method="env://", timeout=timedelta(seconds=20))
    log.info("process group ready: backend=gloo world_size=%d master=%s:%s", world,
             os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"])

    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 4))
    if mode == "compile":
        if me_bad:
            import torch._inductor.config as ic
            ic.cpp.cxx = ("/nonexistent/g++",)  # this rank's C++ toolchain is "missing"
        net = torch.compile(net)  # compile the module first, then wrap it in DDP
    # DDP's constructor segfaults under TORCH_DISTRIBUTED_DEBUG=DETAIL on torch 2.13.0 CPU (in
    # Logger.set_construction_data_and_log, every rank): then gradients are averaged by hand instead
    by_hand = os.environ.get("TORCH_DISTRIBUTED_DEBUG", "").upper() == "DETAIL"
    model = net if by_hand else DDP(net)
    opt = torch.optim.SGD(model.parameters(), lr=a.lr)
    g = torch.Generator().manual_seed(100 + rank)

    # shard index: sample id -> row; the bad rank's step-k batch references an id that is not in it
    index = {f"sample-{rank}-{i:05d}": i for i in range(a.steps * a.batch_size)}
    table = torch.randn(len(index), 32, generator=g)
    labels = torch.randint(0, 4, (len(index),), generator=g)

    def load_batch(step):
        ids = [f"sample-{rank}-{(step - 1) * a.batch_size + j:05d}" for j in range(a.batch_size)]
        if mode == "raise" and me_bad and step == kstep:
            ids[5] = "sample-7c1e2"  # a corrupt id in this rank's manifest
        rows = [index[i] for i in ids]
        return table[rows], labels[rows]

    log.info("starting training: %d steps, batch %d, lr %g", a.steps, a.batch_size, a.lr)
    for step in range(1, a.steps + 1):
        t0 = time.time()
        x, y = load_batch(step)
        loss = nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        if by_hand:
            for p in model.parameters():
                dist.all_reduce(p.grad)
                p.grad /= world
        opt.step()
        if mode == "sigkill" and me_bad and step == kstep:
            os.kill(os.getpid(), signal.SIGKILL)
        if mode == "hang" and me_bad and step == kstep:
            time.sleep(90)  # stalls (e.g. a stuck filesystem read) before the loss all_reduce
        avg = loss.detach().clone()
        dist.all_reduce(avg)
        avg /= world
        if mode == "mismatch" and step == kstep:
            # grad-norm stats: the bad rank packs 8 values, the others 4
            stats = torch.full((8 if me_bad else 4,), float(rank))
            dist.all_reduce(stats)
        log.info("step %d/%d loss %.4f avg_loss %.4f (%.2fs)", step, a.steps, loss.item(), avg.item(),
                 time.time() - t0)
        time.sleep(0.3)
    log.info("training done")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
