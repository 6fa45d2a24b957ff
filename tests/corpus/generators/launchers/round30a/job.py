"""Ray Train (TorchTrainer, 3 CPU workers, DDP over gloo) job used to induce one fault per run.

Usage: python job.py <scenario>
Scenarios (what each induces):
  healthy       - no fault, 3 epochs x 4 steps, ray.train.report per epoch
  healthy_noisy - no fault, plus deprecated-API usage that makes Ray print warnings
  raise1/raise2 - worker with world rank 1/2 raises KeyError at step 3 (bad batch key)
  valueerr2     - worker with world rank 2 raises ValueError at step 2 (bad shape)
  sigkill1      - worker with world rank 1 SIGKILLs itself at step 3
  hang2         - worker with world rank 2 sleeps 60 s before its all_reduce; TorchConfig(timeout_s=20)
  mismatch1     - worker with world rank 1 all_reduces a 256-element tensor where the others all_reduce 1 element (step 2)
  hostoom2      - worker with world rank 2 moves itself into a 1 GiB memory cgroup (path in $OOM_CGROUP)
                  and allocates memory until the kernel OOM killer SIGKILLs it
  badrunconfig  - driver passes RunConfig(verbose=2), deprecated and rejected before training starts
  badconfig     - driver passes a misspelled keyword (num_worker=) to ScalingConfig before training starts
  deprecated_api - every worker calls ray.train.torch.prepare_optimizer, which Ray Train v2 rejects
  dataload      - every worker fails loading its dataset file (missing file)
"""
import os
import signal
import sys
import time
import logging

import torch
import torch.nn as nn
import torch.distributed as dist

import ray
import ray.train
import ray.train.torch
from ray.train import ScalingConfig, RunConfig
from ray.train.torch import TorchTrainer, TorchConfig

SCENARIO = sys.argv[1] if len(sys.argv) > 1 else "healthy"
STEPS = 4
EPOCHS = 3

logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")


def load_dataset(rank):
    if SCENARIO == "dataload":
        path = "/home/user/job/data/train_shard.pt"
        return torch.load(path)  # the file does not exist on any worker
    g = torch.Generator().manual_seed(rank)
    return [{"x": torch.randn(8, 16, generator=g), "y": torch.randn(8, 1, generator=g)} for _ in range(STEPS)]


def train_loop(config):
    log = logging.getLogger("train")
    log.setLevel(logging.INFO)
    rank = ray.train.get_context().get_world_rank()
    world = ray.train.get_context().get_world_size()
    if SCENARIO == "hostoom2" and rank == 2:
        with open(os.path.join(os.environ["OOM_CGROUP"], "cgroup.procs"), "w") as f:
            f.write(str(os.getpid()))
        print(f"rank={rank} pid={os.getpid()} joined memory cgroup {os.environ['OOM_CGROUP']}", flush=True)
    model = ray.train.torch.prepare_model(nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 1)))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    if SCENARIO == "healthy_noisy":
        # legacy/deprecated helpers that Ray still accepts but warns about, plus a prepared DataLoader
        ray.train.torch.enable_reproducibility(seed=rank)
        ds = torch.utils.data.TensorDataset(torch.randn(24, 16), torch.randn(24, 1))
        loader = ray.train.torch.prepare_data_loader(torch.utils.data.DataLoader(ds, batch_size=8))
        print(f"rank={rank} prepared loader with {len(loader)} batches", flush=True)
    if SCENARIO == "deprecated_api":
        # ray.train.torch.prepare_optimizer is deprecated in Ray Train v2 and raises on every worker
        opt = ray.train.torch.prepare_optimizer(opt)
    data = load_dataset(rank)
    print(f"rank={rank} world_size={world} loaded {len(data)} batches", flush=True)
    hog = []
    for epoch in range(EPOCHS):
        for step, batch in enumerate(data):
            gstep = epoch * STEPS + step
            if rank == 1 and SCENARIO == "raise1" and gstep == 3:
                batch = {"inputs": batch["x"]}
            if rank == 2 and SCENARIO == "raise2" and gstep == 3:
                batch = {"inputs": batch["x"]}
            if rank == 2 and SCENARIO == "valueerr2" and gstep == 2:
                raise ValueError(f"batch {gstep}: expected input of shape (8, 16), got (8, 15)")
            if rank == 1 and SCENARIO == "sigkill1" and gstep == 3:
                os.kill(os.getpid(), signal.SIGKILL)
            if rank == 2 and SCENARIO == "hostoom2" and gstep == 2:
                for i in range(64):  # 64 x 256 MiB, touched; the 1 GiB cgroup kills us early
                    hog.append(torch.ones(64 * 1024 * 1024))
                    print(f"rank={rank} allocated {(i + 1) * 256} MiB", flush=True)
            x, y = batch["x"], batch["y"]
            loss = nn.functional.mse_loss(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            # an explicit metric all_reduce per step (where the hang / mismatch are induced)
            t = loss.detach().clone().reshape(1)
            if rank == 2 and SCENARIO == "hang2" and gstep == 2:
                print(f"rank={rank} step={gstep} stalling before all_reduce", flush=True)
                time.sleep(60)
            if rank == 1 and SCENARIO == "mismatch1" and gstep == 2:
                t = t.repeat(256)  # 256 floats where the peers all_reduce 1
            dist.all_reduce(t)
            log.info("rank=%d epoch=%d step=%d loss=%.4f mean_loss=%.4f", rank, epoch, gstep, loss.item(), t.sum().item() / world)
            print(f"rank={rank} epoch={epoch} step={gstep} loss={loss.item():.4f}", flush=True)
        ray.train.report({"epoch": epoch, "loss": loss.item()})


def main():
    if SCENARIO == "healthy_noisy":
        ray.init(num_cpus=4)  # default: tries to start the dashboard (deps may be missing -> notice)
    else:
        ray.init(num_cpus=4, include_dashboard=False)
    kwargs = dict(num_workers=3, use_gpu=False)
    if SCENARIO == "badconfig":
        kwargs["num_worker"] = kwargs.pop("num_workers")  # typo'd keyword -> TypeError in the driver
    run_kwargs = {}
    if SCENARIO == "badrunconfig":
        run_kwargs["verbose"] = 2  # a Ray Tune-era RunConfig argument, rejected by Ray Train v2
    scaling = ScalingConfig(**kwargs)
    torch_cfg = TorchConfig(backend="gloo", timeout_s=20)
    trainer = TorchTrainer(
        train_loop,
        scaling_config=scaling,
        torch_config=torch_cfg,
        run_config=RunConfig(name=f"run30a_{SCENARIO}", storage_path="/tmp/run30a_results", **run_kwargs),
    )
    result = trainer.fit()
    print(f"Training finished: {result.metrics}")
    ray.shutdown()


if __name__ == "__main__":
    main()
