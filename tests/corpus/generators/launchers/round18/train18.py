"""Small plain-PyTorch DDP job (gloo, CPU) for round 18. Started by the legacy launcher
`python -m torch.distributed.launch --use-env` (ranks from RANK / WORLD_SIZE / LOCAL_RANK, env:// rendezvous) or,
through `main()`, as the entrypoint function of torch.distributed.launcher.api.elastic_launch (elastic_driver.py),
which sets the same variables in each spawned worker.

ONE induced fault on ONE rank, chosen by the environment variable TRAIN_FAULT="<mode>:<rank>:<step>" (never by a
command-line argument, so no launcher can echo it into the log). Modes:
  ok        no fault
  raise     at step <step> the rank's data loading looks up a sample id missing from its shard index -> KeyError
  sigkill   the rank SIGKILLs itself (os.kill(os.getpid(), SIGKILL)) after its optimizer step, no traceback
  hang      the rank sleeps 90 s before the per-step loss all_reduce; the others time out (gloo, 20 s)
  mismatch  after the loss all_reduce the rank all_reduces 1000 grad-norm stats where the others all_reduce 4
            (with TORCH_DISTRIBUTED_DEBUG=DETAIL 8 vs 4, gradients averaged by hand: DDP's constructor segfaults
            under DETAIL on torch 2.13.0 CPU)
  hostoom   at startup the rank moves itself into the memory cgroup named by TRAIN_MEMCG (a cgroup-v1 directory
            made by run_all.sh with a 1 GiB limit); from step <step> on it keeps a growing host-side cache of
            128 MiB blocks it touches, so the kernel OOM killer SIGKILLs it
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


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=6)
    ap.add_argument("--lr", type=float, default=0.05)
    ap.add_argument("--batch-size", type=int, default=16)
    a = ap.parse_args(argv)
    mode, bad_rank, kstep = (os.environ.get("TRAIN_FAULT") or "ok:-1:0").split(":")
    bad_rank, kstep = int(bad_rank), int(kstep)
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    local_rank = int(os.environ["LOCAL_RANK"])

    logging.basicConfig(level=logging.INFO, stream=sys.stdout, force=True,
                        format=f"%(asctime)s %(levelname)s [rank{rank}] %(name)s: %(message)s")
    log = logging.getLogger("train")
    me_bad = rank == bad_rank

    if mode == "hostoom" and me_bad:
        # join the memory cgroup (only this rank), as a job step would run inside a memory-limited container
        with open(os.path.join(os.environ["TRAIN_MEMCG"], "cgroup.procs"), "w") as f:
            f.write(str(os.getpid()))

    dist.init_process_group("gloo", init_method="env://", timeout=timedelta(seconds=20))
    log.info("process group ready: backend=gloo world_size=%d local_rank=%d master=%s:%s", world, local_rank,
             os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"])

    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 4))
    by_hand = os.environ.get("TORCH_DISTRIBUTED_DEBUG", "").upper() == "DETAIL"
    model = net if by_hand else DDP(net)
    opt = torch.optim.SGD(model.parameters(), lr=a.lr)
    g = torch.Generator().manual_seed(100 + rank)

    # shard index: sample id -> row; the bad rank's step-k batch references an id that is not in it
    index = {f"sample-{rank}-{i:05d}": i for i in range(a.steps * a.batch_size)}
    table = torch.randn(len(index), 32, generator=g)
    labels = torch.randint(0, 4, (len(index),), generator=g)
    cache = []  # host-side feature cache (grows without bound on the bad rank in hostoom mode)

    def load_batch(step):
        ids = [f"sample-{rank}-{(step - 1) * a.batch_size + j:05d}" for j in range(a.batch_size)]
        if mode == "raise" and me_bad and step == kstep:
            ids[5] = "sample-7c1e2"  # a corrupt id in this rank's manifest
        rows = [index[i] for i in ids]
        if mode == "hostoom" and me_bad and step >= kstep:
            for _ in range(16):
                blk = torch.empty(32 * 1024 * 1024)  # 128 MiB
                blk.fill_(1.0)                       # touch every page
                cache.append(blk)
                time.sleep(0.05)
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
            # grad-norm stats: the bad rank packs more values than the others (4)
            stats = torch.full(((8 if by_hand else 1000) if me_bad else 4,), float(rank))
            dist.all_reduce(stats)
        log.info("step %d/%d loss %.4f avg_loss %.4f (%.2fs)", step, a.steps, loss.item(), avg.item(),
                 time.time() - t0)
        time.sleep(0.3)
    log.info("training done")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
