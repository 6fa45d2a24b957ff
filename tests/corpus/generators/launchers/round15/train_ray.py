"""Ray Train job (TorchTrainer, CPU workers, gloo) with ONE induced fault on ONE worker.

A local Ray is started by this script (ray.init(num_cpus=8, include_dashboard=False)); a TorchTrainer with
ScalingConfig(num_workers=N, use_gpu=False) and TorchConfig(backend="gloo", timeout_s=20) trains a small MLP
for a few steps; every worker logs one line per step with its Ray Train world rank, as a real job does.

--mode (the fault is injected on world rank --bad-rank at step --step):
  ok               no fault
  raise            the worker's data loading looks up a corrupt sample id -> KeyError (uncaught)
  sigkill          the worker SIGKILLs itself (os.kill(os.getpid(), SIGKILL)), no traceback
  hang             the worker sleeps 90 s before the per-step loss all_reduce; the others time out (20 s)
  mismatch         the worker all_reduces 8 grad-norm stats where the others all_reduce 4
  mismatch-detail  same, with TORCH_DISTRIBUTED_DEBUG=DETAIL (gradients averaged by hand, no DDP wrapper)
  compile          the worker alone points inductor's C++ compiler at /nonexistent/g++ before torch.compile
  compile-fullgraph  the worker alone takes a data-dependent branch in a fullgraph=True compiled forward
  hostoom          the worker moves itself into a memory cgroup (path in $HOSTOOM_CGROUP) and allocates
                   host memory in 256 MiB steps until the kernel OOM killer SIGKILLs it

usage: python train_ray.py --mode MODE [--workers 4] [--bad-rank 2] [--step 3] [--steps 6]
"""
import argparse
import logging
import os
import signal
import time

import ray
import torch
import torch.distributed as dist
import torch.nn as nn
from ray.train import RunConfig, ScalingConfig
from ray.train.torch import TorchConfig, TorchTrainer


def train_func(cfg):
    import ray.train
    import ray.train.torch

    ctx = ray.train.get_context()
    rank, world = ctx.get_world_rank(), ctx.get_world_size()
    log = logging.getLogger("train")  # the job's own logger (Ray's loggers untouched)
    if not log.handlers:
        h = logging.StreamHandler()
        h.setFormatter(logging.Formatter(f"%(asctime)s %(levelname)s [rank {rank}/{world}] %(name)s: %(message)s"))
        log.addHandler(h)
        log.setLevel(logging.INFO)
        log.propagate = False
    mode, bad, kstep = cfg["mode"], cfg["bad_rank"], cfg["step"]
    me_bad = rank == bad

    if mode == "hostoom" and me_bad:
        # join the memory cgroup prepared by run_all.sh (only this worker's process)
        with open(os.path.join(os.environ["HOSTOOM_CGROUP"], "cgroup.procs"), "w") as f:
            f.write(str(os.getpid()))

    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 1))

    if mode.startswith("compile"):
        # each worker compiles with its own inductor cache (as on separate nodes; a shared warm cache would let
        # the bad worker skip its C++ build)
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(cfg["cache_root"], f"worker{rank}")
        if mode == "compile" and me_bad:
            import importlib  # (importlib: a plain `import torch._inductor.config` in this closure breaks cloudpickle)
            ic = importlib.import_module("torch._inductor.config")
            ic.cpp.cxx = ("/nonexistent/g++",)  # this worker's C++ toolchain is "missing"
        if mode == "compile-fullgraph":
            class Gate(nn.Module):
                def __init__(self, m, gate):
                    super().__init__()
                    self.m, self.gate = m, gate

                def forward(self, x):
                    y = self.m(x)
                    # data-dependent branch: only the bad worker has gate on
                    if self.gate and y.mean() > 0:
                        y = y * 2
                    return y
            model = torch.compile(Gate(model, me_bad), fullgraph=True)
        else:
            model = torch.compile(model)

    if mode == "mismatch-detail":
        pass  # average gradients by hand below (DDP's constructor crashes under DETAIL on torch 2.13.0 CPU)
    else:
        model = ray.train.torch.prepare_model(model)  # DDP over the gloo group

    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    shard_index = {f"sample-{i:05d}": i for i in range(512)}
    g = torch.Generator().manual_seed(1234 + rank)

    def load_batch(step):
        ids = [f"sample-{(step * 16 + j) % 512:05d}" for j in range(16)]
        if mode == "raise" and me_bad and step == kstep:
            # corrupt id in this worker's shard manifest
            ids[5] = "sample-9f3a1"
        idx = torch.tensor([shard_index[i] for i in ids], dtype=torch.float32)
        x = torch.randn(16, 32, generator=g) + idx[:, None] / 512
        return x, x.sum(dim=1, keepdim=True) * 0.1

    hog = []
    for step in range(1, cfg["steps"] + 1):
        x, y = load_batch(step)
        loss = nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        if mode == "mismatch-detail":
            for p in model.parameters():
                dist.all_reduce(p.grad)
                p.grad /= world
        opt.step()

        if mode == "sigkill" and me_bad and step == kstep:
            os.kill(os.getpid(), signal.SIGKILL)
        if mode == "hostoom" and me_bad and step >= kstep:
            # 256 MiB per chunk, touched, until the cgroup limit is hit
            for i in range(64):
                t = torch.ones(64 * 1024 * 1024, dtype=torch.float32)
                hog.append(t)
                log.info("cached feature buffer %d (%d MiB held)", len(hog), 256 * len(hog))
        if mode == "hang" and me_bad and step == kstep:
            # stalls (e.g. a stuck filesystem read) before the loss all_reduce
            time.sleep(90)

        avg = loss.detach().clone()
        dist.all_reduce(avg)
        avg /= world
        if mode.startswith("mismatch") and step == kstep:
            # grad-norm stats: the bad worker packs 8 values, the others 4
            n = 8 if me_bad else 4
            stats = torch.full((n,), float(rank))
            dist.all_reduce(stats)
        log.info("step %d/%d loss %.4f avg_loss %.4f", step, cfg["steps"], loss.item(), avg.item())
        ray.train.report({"step": step, "loss": avg.item()})
    log.info("training done")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mode", default="ok")
    ap.add_argument("--workers", type=int, default=4)
    ap.add_argument("--bad-rank", type=int, default=2)
    ap.add_argument("--step", type=int, default=3)
    ap.add_argument("--steps", type=int, default=6)
    ap.add_argument("--storage", default=os.path.join(os.getcwd(), "ray_results"))
    a = ap.parse_args()

    env = {}
    if a.mode == "mismatch-detail":
        env["TORCH_DISTRIBUTED_DEBUG"] = "DETAIL"
    if "HOSTOOM_CGROUP" in os.environ:
        env["HOSTOOM_CGROUP"] = os.environ["HOSTOOM_CGROUP"]
    ray.init(num_cpus=8, include_dashboard=False, runtime_env={"env_vars": env} if env else None)
    trainer = TorchTrainer(
        train_func,
        train_loop_config={"mode": a.mode, "bad_rank": a.bad_rank, "step": a.step, "steps": a.steps,
                           "cache_root": os.path.join(a.storage, f"inductor-{a.mode}-{os.getpid()}")},
        torch_config=TorchConfig(backend="gloo", timeout_s=20),
        scaling_config=ScalingConfig(num_workers=a.workers, use_gpu=False),
        run_config=RunConfig(name=f"ray15-{a.mode}", storage_path=a.storage),
    )
    result = trainer.fit()
    print("final metrics:", result.metrics)


if __name__ == "__main__":
    main()
