"""Ray Train TorchTrainer on CPU workers (4 workers, gloo, process group timeout 20 s).

Logs come out as `(RayTrainWorker pid=N)` lines; the job logs world_rank/local_rank/node_rank from
ray.train.get_context(). The bad worker is world rank BAD_RANK (== torch.distributed.get_rank()).
Fault: see common.py. Run: python ray_job.py (ray.init starts a local cluster with 4 logical CPUs).
"""
import logging
import os

import ray
import ray.train
import torch
import torch.distributed as dist
import torch.nn as nn
from ray.train import RunConfig, ScalingConfig
from ray.train.torch import TorchConfig, TorchTrainer, prepare_model


def train_loop(config):
    # common.py is shipped to the workers via runtime_env working_dir
    from common import fault_before_step, load_batch, reduce_metric
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s train_loop: %(message)s", force=True)
    log = logging.getLogger("train_loop")
    ctx = ray.train.get_context()
    is_bad = dist.get_rank() == int(os.environ.get("BAD_RANK", 2))
    log.info("worker world_rank=%d local_rank=%d node_rank=%d world_size=%d",
             ctx.get_world_rank(), ctx.get_local_rank(), ctx.get_node_rank(), ctx.get_world_size())
    torch.manual_seed(0)
    model = prepare_model(nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 1)))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    gen = torch.Generator().manual_seed(100 + ctx.get_world_rank())
    for step in range(6):
        fault_before_step(step, is_bad)
        x, y = load_batch(step, is_bad, gen)
        loss = nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        mean = reduce_metric(loss, step, is_bad)
        log.info("local_rank %d step %d loss=%.4f mean=%.4f", ctx.get_local_rank(), step, loss.item(), mean)
        ray.train.report({"step": step, "loss": mean})


if __name__ == "__main__":
    env = {k: os.environ[k] for k in ("FAULT", "STEP", "HANG_S", "BAD_RANK") if k in os.environ}
    ray.init(num_cpus=4, include_dashboard=False,
             runtime_env={"working_dir": os.path.dirname(os.path.abspath(__file__)), "env_vars": env,
                          "excludes": ["*.txt", "logs", "storage"]})
    trainer = TorchTrainer(train_loop,
                           scaling_config=ScalingConfig(num_workers=4, use_gpu=False, resources_per_worker={"CPU": 1}),
                           torch_config=TorchConfig(backend="gloo", timeout_s=20),
                           run_config=RunConfig(name="r50a", storage_path=os.path.abspath("storage")))
    result = trainer.fit()
    print("result:", result.metrics)
