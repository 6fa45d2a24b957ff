"""Small gloo/CPU data-parallel job started by an MPI launcher (MPICH Hydra or Open MPI) as plain Python processes.

No MPI is used for communication: rank/world size come from the launcher's environment
(PMI_RANK/PMI_SIZE for MPICH Hydra, OMPI_COMM_WORLD_RANK/SIZE for Open MPI) and torch.distributed uses gloo with
an env:// rendezvous (MASTER_ADDR/MASTER_PORT passed by the launcher, -genv for Hydra, -x for Open MPI).

Fault spec (env): FAULT="kind:rank:step" with kind in raise|sigkill|hang|mismatch|compile|hostoom|none.
  raise    -> the rank raises an exception (FAULT_EXC: keyerror|valueerror|indexerror) in its data loading
  sigkill  -> the rank SIGKILLs itself (no traceback)
  hang     -> the rank sleeps HANG_S s before the step's metric all_reduce; the others time out (PG_TIMEOUT s)
  mismatch -> the rank all_reduces a metric tensor of another size (MISMATCH=size: 5 elements instead of 2;
              MISMATCH=hist: 64 elements) or issues an extra broadcast (MISMATCH=extra_broadcast).
              DDP=0 averages grads by hand (DDP + TORCH_DISTRIBUTED_DEBUG=DETAIL segfaults in 2.13 CPU).
  compile  -> all ranks torch.compile the model at start (step field unused). COMPILE=cxx: the faulty rank alone
              points inductor at a C++ compiler that does not exist (/nonexistent/g++), as a broken per-node
              toolchain would; COMPILE=fullgraph: the model has a data-dependent branch that, only on the faulty
              rank (its config enables 'skip_outliers'), Dynamo must trace with fullgraph=True.
  hostoom  -> the faulty rank moves itself into the memory cgroup OOM_CGROUP (written by run_all.sh, limit ~1 GiB)
              at startup, and from step k on caches 'decoded samples' (touched memory) that grow every step until
              the kernel OOM killer SIGKILLs it.
"""
import logging, os, signal, sys, time
from datetime import timedelta

# --- rank / world from the MPI launcher's environment ---
if "OMPI_COMM_WORLD_RANK" in os.environ:
    os.environ["RANK"] = os.environ["OMPI_COMM_WORLD_RANK"]
    os.environ["WORLD_SIZE"] = os.environ["OMPI_COMM_WORLD_SIZE"]
    os.environ["LOCAL_RANK"] = os.environ.get("OMPI_COMM_WORLD_LOCAL_RANK", os.environ["RANK"])
elif "PMI_RANK" in os.environ:
    os.environ["RANK"] = os.environ["PMI_RANK"]
    os.environ["WORLD_SIZE"] = os.environ["PMI_SIZE"]
    os.environ["LOCAL_RANK"] = os.environ.get("MPI_LOCALRANKID", os.environ["RANK"])


def parse_fault():
    spec = os.environ.get("FAULT", "none")
    if spec == "none":
        return "none", -1, -1
    kind, rank, step = spec.split(":")
    return kind, int(rank), int(step)


KIND, BAD_RANK, BAD_STEP = parse_fault()
RANK = int(os.environ["RANK"])

# hostoom: only the faulty rank joins the memory cgroup (before torch is imported, so the limit covers its growth)
if KIND == "hostoom" and RANK == BAD_RANK and os.environ.get("OOM_CGROUP"):
    with open(os.path.join(os.environ["OOM_CGROUP"], "cgroup.procs"), "w") as f:
        f.write(str(os.getpid()))

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

log = logging.getLogger("train")


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


class Net(nn.Module):
    def __init__(self, skip_outliers=False):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 1))
        self.skip_outliers = skip_outliers

    def forward(self, x):
        if self.skip_outliers and x.abs().max() > 3.0:  # data-dependent branch (Tensor -> Python bool)
            x = x.clamp(-3.0, 3.0)
        return self.body(x)


def main():
    logging.basicConfig(stream=sys.stdout, level=logging.INFO,
                        format="%(asctime)s %(levelname)s [%(name)s] %(message)s")
    timeout = timedelta(seconds=int(os.environ.get("PG_TIMEOUT", "20")))
    dist.init_process_group("gloo", init_method="env://", timeout=timeout)
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)
    mine_rank = rank == BAD_RANK
    model = Net(skip_outliers=(KIND == "compile" and os.environ.get("COMPILE") == "fullgraph" and mine_rank))
    use_ddp = os.environ.get("DDP", "1") == "1"
    if use_ddp:
        model = DDP(model)
    else:
        for p in model.parameters():
            dist.broadcast(p.data, src=0)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    steps = int(os.environ.get("STEPS", "6"))
    log.info("rank %d/%d (local_rank %s) starting %d steps, pid %d", rank, world, os.environ.get("LOCAL_RANK"), steps, os.getpid())
    fwd = model
    if KIND == "compile":
        if os.environ.get("COMPILE", "cxx") == "cxx" and mine_rank:
            import torch._inductor.config as icfg
            icfg.cpp.cxx = ("/nonexistent/g++",)  # this node's toolchain path is wrong
        log.info("rank %d: compiling model (fullgraph=%s)", rank, os.environ.get("COMPILE") == "fullgraph")
        fwd = torch.compile(model, fullgraph=os.environ.get("COMPILE") == "fullgraph")
    cache = []
    for step in range(steps):
        mine = mine_rank and step == BAD_STEP
        if mine and KIND == "sigkill":
            os.kill(os.getpid(), signal.SIGKILL)
        if KIND == "hostoom" and mine_rank and step >= BAD_STEP:
            # decoded-sample cache that is never evicted: grows by 256 MiB per chunk until the cgroup limit
            for _ in range(16):
                t = torch.empty(64 * 1024 * 1024, dtype=torch.float32)
                t.fill_(1.0)  # touch every page
                cache.append(t)
                log.info("rank %d: sample cache holds %d MiB", rank, 256 * len(cache))
        x, y = load_batch(rank, step, mine and KIND == "raise")
        loss = nn.functional.mse_loss(fwd(x), y)
        opt.zero_grad()
        loss.backward()
        if not use_ddp:
            for p in model.parameters():
                dist.all_reduce(p.grad)
                p.grad /= world
        opt.step()
        metric = torch.tensor([loss.item(), 1.0])
        if mine and KIND == "hang":
            time.sleep(float(os.environ.get("HANG_S", "90")))  # stuck (e.g. slow storage) before the collective
        if mine and KIND == "mismatch":
            if os.environ.get("MISMATCH", "size") == "size":
                metric = torch.tensor([loss.item(), 1.0, 0.0, 0.0, 0.0])  # extra stats only on this rank
            elif os.environ["MISMATCH"] == "hist":
                # only this rank appends a 62-bin target histogram to its metrics (64 elements instead of 2);
                # a 5-vs-2 mismatch passes silently in gloo, a large one trips its receive-size check
                metric = torch.cat([metric, torch.histc(y, bins=62)])
            else:
                dist.broadcast(torch.zeros(4), src=rank)  # an extra broadcast only this rank issues
        dist.all_reduce(metric)
        if rank == 0:
            log.info("step %d loss %.4f (mean over %d ranks)", step, metric[0].item() / world, world)
        time.sleep(0.3)
    dist.barrier()
    log.info("rank %d done", rank)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
