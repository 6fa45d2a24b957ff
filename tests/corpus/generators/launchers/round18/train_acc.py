"""Small Accelerate job (CPU, gloo) for round 18, started by `accelerate launch --config_file multi_cpu.yaml`
(distributed_type MULTI_CPU, 3 processes; Accelerate 1.16 has no --multi_cpu flag and does not apply FSDP on CPU,
see README.md). Uses Accelerator() (process group timeout 20 s via
InitProcessGroupKwargs) and Accelerate's own logger `get_logger(__name__)` with main_process_only=False.

ONE induced fault on ONE rank, chosen by the environment variable TRAIN_FAULT="<mode>:<rank>:<step>" (never on a
command line). Modes:
  ok       no fault
  raise    at step <step> the rank's collate function looks up a sample id missing from its shard index -> KeyError
  sigkill  the rank SIGKILLs itself after its optimizer step at step <step>, no traceback
  hang     the rank sleeps 90 s before the per-step loss gather at step <step>; the others time out (20 s)
  compile  every rank torch.compiles its feature-normalisation function; the bad rank alone points inductor's C++
           compiler at /nonexistent/g++ first (own TORCHINDUCTOR_CACHE_DIR per rank, as on separate nodes)
"""
import logging
import os
import signal
import sys
import time
from datetime import timedelta

import torch
import torch.nn as nn
from accelerate import Accelerator, InitProcessGroupKwargs
from accelerate.logging import get_logger

logging.basicConfig(level=logging.INFO, stream=sys.stdout,
                    format="%(asctime)s %(levelname)s %(name)s: %(message)s")
log = get_logger(__name__)


def normalize(x):
    return (x - x.mean(dim=1, keepdim=True)) / (x.std(dim=1, keepdim=True) + 1e-5) * torch.sigmoid(x).mean()


def main():
    steps, bs = 6, 16
    mode, bad_rank, kstep = (os.environ.get("TRAIN_FAULT") or "ok:-1:0").split(":")
    bad_rank, kstep = int(bad_rank), int(kstep)
    rank = int(os.environ.get("RANK", "0"))
    if mode == "compile":
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(os.environ.get("TRAIN_CACHE_ROOT", "/tmp/ind"),
                                                             f"rank{rank}")
    # cpu=True: under `accelerate launch` on a CPU-only host Accelerate 1.16 otherwise picks DistributedType.NO
    acc = Accelerator(cpu=True, kwargs_handlers=[InitProcessGroupKwargs(timeout=timedelta(seconds=20))])
    rank = acc.process_index
    me_bad = rank == bad_rank
    log.info("accelerator ready: %s, num_processes=%d, distributed_type=%s", acc.device, acc.num_processes,
             acc.distributed_type, main_process_only=False)

    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 4))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    model, opt = acc.prepare(model, opt)
    norm = normalize
    if mode == "compile":
        if me_bad:
            import torch._inductor.config as ic
            ic.cpp.cxx = ("/nonexistent/g++",)  # this rank's C++ toolchain is "missing"
        norm = torch.compile(normalize)

    g = torch.Generator().manual_seed(100 + rank)
    index = {f"sample-{rank}-{i:05d}": i for i in range(steps * bs)}
    table = torch.randn(len(index), 32, generator=g)
    labels = torch.randint(0, 4, (len(index),), generator=g)

    def collate(step):
        ids = [f"sample-{rank}-{(step - 1) * bs + j:05d}" for j in range(bs)]
        if mode == "raise" and me_bad and step == kstep:
            ids[9] = "sample-3b0f1"  # a corrupt id in this rank's manifest
        rows = [index[i] for i in ids]
        return table[rows], labels[rows]

    log.info("starting training: %d steps, batch %d", steps, bs, main_process_only=False)
    for step in range(1, steps + 1):
        t0 = time.time()
        x, y = collate(step)
        loss = nn.functional.cross_entropy(model(norm(x)), y)
        opt.zero_grad()
        acc.backward(loss)
        opt.step()
        if mode == "sigkill" and me_bad and step == kstep:
            os.kill(os.getpid(), signal.SIGKILL)
        if mode == "hang" and me_bad and step == kstep:
            time.sleep(90)  # stalls (e.g. a stuck filesystem read) before the loss gather
        avg = acc.gather(loss.detach()[None]).mean()
        log.info("step %d/%d loss %.4f avg_loss %.4f (%.2fs)", step, steps, loss.item(), avg.item(),
                 time.time() - t0, main_process_only=False)
        time.sleep(0.3)
    acc.wait_for_everyone()
    log.info("training done", main_process_only=False)
    acc.end_training()


if __name__ == "__main__":
    main()
