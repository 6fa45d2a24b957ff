"""Small gloo training job for multi-node torchrun runs (several torchrun agents on localhost act as nodes).

Every line it logs names the GLOBAL rank (RANK) and the node/local rank, so the per-node log tree shows
which global rank did what.  Faults are induced on ONE global rank, chosen by env vars:
  FAULT       none | raise | sigkill | hang | mismatch | compile | record
  FAULT_RANK  global rank that misbehaves
  FAULT_STEP  step at which it misbehaves
  PG_TIMEOUT  process-group timeout in seconds (hang case)
raise     -> that rank raises KeyError in its data loading at FAULT_STEP
sigkill   -> that rank SIGKILLs itself at FAULT_STEP (no traceback)
hang      -> that rank sleeps past the process-group timeout before the gradient all_reduce
mismatch  -> that rank all_reduces a tensor of another size (run with/without TORCH_DISTRIBUTED_DEBUG=DETAIL)
compile   -> that rank alone sets CXX=/nonexistent/g++ before torch.compile of the model runs
record    -> like raise (ValueError), main is wrapped in @record so torchrun writes error.json
"""
import logging
import os
import signal
import sys
import time
from datetime import timedelta

if os.environ.get("FAULT") == "compile":  # own inductor cache per rank: no reuse of another rank's build
    os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", f"/tmp/inductor_r101_rank{os.environ['RANK']}_{os.getpid()}")
import torch
import torch.distributed as dist
from torch.distributed.elastic.multiprocessing.errors import record

RANK = int(os.environ["RANK"])
LOCAL_RANK = int(os.environ["LOCAL_RANK"])
NODE = int(os.environ.get("GROUP_RANK", "0"))
WORLD = int(os.environ["WORLD_SIZE"])
FAULT = os.environ.get("FAULT", "none")
FAULT_RANK = int(os.environ.get("FAULT_RANK", "-1"))
FAULT_STEP = int(os.environ.get("FAULT_STEP", "3"))
STEPS = int(os.environ.get("STEPS", "6"))
ME = RANK == FAULT_RANK

logging.basicConfig(level=logging.INFO, stream=sys.stdout,
                    format=f"%(asctime)s %(levelname)s [rank{RANK} node{NODE} local{LOCAL_RANK}] %(message)s")
log = logging.getLogger("train")


def batch(step):
    if ME and FAULT == "raise" and step == FAULT_STEP:
        shard = {"input": None}
        return shard["labels"]  # KeyError: 'labels' on this rank only
    if ME and FAULT == "record" and step == FAULT_STEP:
        raise ValueError(f"corrupt sample 1733 in shard {RANK}: expected 16 features, got 15")
    g = torch.Generator().manual_seed(step * 100 + RANK)
    x = torch.randn(32, 16, generator=g)
    return x, x.sum(1, keepdim=True)


def main():
    timeout = timedelta(seconds=int(os.environ.get("PG_TIMEOUT", "60")))
    dist.init_process_group("gloo", timeout=timeout)
    log.info("joined world of %d (global rank %d = node %d local rank %d)", WORLD, RANK, NODE, LOCAL_RANK)
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    fwd = model
    if FAULT == "compile":
        if ME:
            os.environ["CXX"] = "/nonexistent/g++"  # the broken toolchain exists only on this rank
            import torch._inductor.config as icfg
            icfg.cpp.cxx = (os.environ["CXX"],)  # inductor read CXX at import already: point its config too
            log.info("CXX=%s", os.environ["CXX"])
        fwd = torch.compile(model)
    for step in range(STEPS):
        x, y = batch(step)
        loss = torch.nn.functional.mse_loss(fwd(x), y)
        opt.zero_grad()
        loss.backward()
        if ME and FAULT == "sigkill" and step == FAULT_STEP:
            os.kill(os.getpid(), signal.SIGKILL)
        if ME and FAULT == "hang" and step == FAULT_STEP:
            time.sleep(int(os.environ.get("HANG_S", "45")))  # silent: no log line
        for p in model.parameters():
            g = p.grad
            if ME and FAULT == "mismatch" and step == FAULT_STEP and p.dim() == 1 and p.numel() == 32:
                g = torch.zeros(33)  # another size than the other ranks
            dist.all_reduce(g)
            if g is p.grad:
                p.grad /= WORLD
        opt.step()
        log.info("step %d loss %.4f", step, loss.item())
    dist.barrier()
    log.info("training done")
    dist.destroy_process_group()


if __name__ == "__main__":
    if FAULT == "record":
        record(main)()
    else:
        main()
