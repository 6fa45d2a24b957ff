"""Small gloo/CPU data-parallel job with one injected fault, used under several launchers.

Fault spec (env): FAULT="kind:rank:step" with kind in raise|sigkill|hang|mismatch|none.
  raise    -> the rank raises an exception (FAULT_EXC: keyerror|valueerror|indexerror) in its data loading
  sigkill  -> the rank SIGKILLs itself (no traceback)
  hang     -> the rank sleeps HANG_S s before the step's metric all_reduce; others time out (PG_TIMEOUT s)
  mismatch -> the rank all_reduces a metric tensor of another size (MISMATCH=size) or does an extra
              broadcast (MISMATCH=extra_broadcast)
PREFIX_STORE=1: init from MASTER_ADDR/PORT's store under a per-attempt PrefixStore (see below).
FAULT_A1 (same format) replaces FAULT on a torchelastic restart (TORCHELASTIC_RESTART_COUNT=1).
DDP=0 averages gradients with explicit all_reduce instead of DDP.
RECORD=1 wraps main in torch.distributed.elastic.multiprocessing.errors.record (writes TORCHELASTIC_ERROR_FILE).
Accepts --local-rank/--local_rank for the deprecated torch.distributed.launch without --use-env.
"""
import argparse, logging, os, signal, sys, time
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.distributed.elastic.multiprocessing.errors import record
from torch.nn.parallel import DistributedDataParallel as DDP

log = logging.getLogger("train")


def parse_fault():
    spec = os.environ.get("FAULT", "none")
    if os.environ.get("TORCHELASTIC_RESTART_COUNT", "0") != "0" and os.environ.get("FAULT_A1"):
        spec = os.environ["FAULT_A1"]
    if spec == "none":
        return "none", -1, -1
    kind, rank, step = spec.split(":")
    return kind, int(rank), int(step)


def load_batch(rank, step, faulty):
    """Builds a synthetic batch from a 'record' dict, like a data loader would."""
    g = torch.Generator().manual_seed(1000 * rank + step)
    rec = {"features": torch.randn(16, 32, generator=g), "target": torch.randn(16, 1, generator=g)}
    if faulty:
        exc = os.environ.get("FAULT_EXC", "keyerror")
        if exc == "keyerror":
            del rec["target"]  # a record written without its label column
        elif exc == "valueerror":
            raise ValueError(f"shard {rank:05d}: record {step * 16 + 7} has 31 features, expected 32")
        elif exc == "indexerror":
            idx = list(range(16))
            _ = idx[16 + step]  # off-by-one in the sampler's index window
    return rec["features"], rec["target"]


def run(args=None):
    logging.basicConfig(stream=sys.stdout, level=logging.INFO,
                        format="%(asctime)s %(levelname)s [%(name)s] %(message)s")
    kind, bad_rank, bad_step = parse_fault()
    timeout = timedelta(seconds=int(os.environ.get("PG_TIMEOUT", "20")))
    attempt = int(os.environ.get("TORCHELASTIC_RESTART_COUNT", "0"))
    if os.environ.get("PREFIX_STORE") == "1":
        # On a torchelastic restart the agent's store still holds attempt 0's gloo addresses (the restarted group
        # then fails in connectFullMesh), so each attempt joins its own key namespace.
        store = dist.PrefixStore(f"/job/attempt_{attempt}", dist.TCPStore(
            os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"]), is_master=False, timeout=timeout))
        dist.init_process_group("gloo", store=store, rank=int(os.environ["RANK"]),
                                world_size=int(os.environ["WORLD_SIZE"]), timeout=timeout)
    else:
        dist.init_process_group("gloo", timeout=timeout)
    rank, world = dist.get_rank(), dist.get_world_size()
    local_rank = int(os.environ.get("LOCAL_RANK", getattr(args, "local_rank", 0) or 0))
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 1))
    use_ddp = os.environ.get("DDP", "1") == "1"  # DDP=0: average grads by hand (DDP + DETAIL segfaults in 2.13 CPU)
    if use_ddp:
        model = DDP(model)
    else:
        for p in model.parameters():
            dist.broadcast(p.data, src=0)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    steps = int(os.environ.get("STEPS", "6"))
    log.info("rank %d/%d (local_rank %d) starting %d steps (attempt %d), pid %d", rank, world, local_rank, steps, attempt, os.getpid())
    for step in range(steps):
        mine = rank == bad_rank and step == bad_step
        if mine and kind == "sigkill":
            os.kill(os.getpid(), signal.SIGKILL)
        x, y = load_batch(rank, step, mine and kind == "raise")
        loss = nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        if not use_ddp:
            for p in model.parameters():
                dist.all_reduce(p.grad)
                p.grad /= world
        opt.step()
        metric = torch.tensor([loss.item(), 1.0])
        if mine and kind == "hang":
            time.sleep(float(os.environ.get("HANG_S", "90")))  # stuck (e.g. slow storage) before the collective
        if mine and kind == "mismatch":
            if os.environ.get("MISMATCH", "size") == "size":
                metric = torch.tensor([loss.item(), 1.0, 0.0, 0.0, 0.0])  # extra stats only on this rank
            else:
                dist.broadcast(torch.zeros(4), src=rank)  # an extra broadcast only this rank issues
        dist.all_reduce(metric)
        if rank == 0:
            log.info("step %d loss %.4f (mean over %d ranks)", step, metric[0].item() / world, world)
        time.sleep(0.3)
    dist.barrier()
    log.info("rank %d done", rank)
    dist.destroy_process_group()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--local-rank", "--local_rank", dest="local_rank", type=int, default=None)
    args = ap.parse_args()
    run(args)


if __name__ == "__main__":
    if os.environ.get("RECORD") == "1":
        main = record(main)
    main()
