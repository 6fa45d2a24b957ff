"""Tiny Hugging Face Accelerate training loop on CPU (Accelerator(cpu=True), gloo).

Launched with `accelerate launch --multi_gpu --num_processes 3 ... acc_job.py` (see run_all.sh): on a
machine without GPUs and with cpu=True the state is DistributedType.MULTI_CPU, backend gloo; the
processes are started by torch.distributed.run inside accelerate launch.
The fault of each scenario is chosen with SCENARIO/FAULT_RANK/FAULT_STEP (see faults.py).
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import faults  # noqa: E402

faults.pre_import_setup()

from datetime import timedelta  # noqa: E402

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
from torch.utils.data import DataLoader, Dataset  # noqa: E402

from accelerate import Accelerator, InitProcessGroupKwargs  # noqa: E402
from accelerate.logging import get_logger  # noqa: E402
from accelerate.utils import broadcast, set_seed  # noqa: E402
import logging  # noqa: E402

torch.set_num_threads(1)
logging.basicConfig(level=logging.INFO, format="%(asctime)s - %(levelname)s - %(name)s - %(message)s")
logger = get_logger("train")

BATCH = 4


class RankLog:
    """faults.py logs through this: every rank's message, not only the main process's."""

    def info(self, msg, *args):
        logger.info(msg, *args, main_process_only=False)


class ShardDataset(Dataset):
    """Records as dicts, like a decoded jsonl shard."""

    def __init__(self, rank, n=24):
        g = torch.Generator().manual_seed(rank)
        self.rank = rank
        self.x = torch.randn(n, 8, generator=g)
        self.y = torch.randint(0, 2, (n,), generator=g)
        self.n_loaded = 0

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        if self.n_loaded % BATCH == 0:
            faults.on_load(self.rank, self.n_loaded // BATCH, RankLog())
        rec = {"features": self.x[i], "label": self.y[i]}
        if faults.record_is_broken(self.rank, self.n_loaded // BATCH):
            rec = {"features": self.x[i], "lable": self.y[i]}  # a record written with a misspelt key
        self.n_loaded += 1
        return rec["features"], rec["label"]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--max-steps", type=int, default=8)
    p.add_argument("--timeout", type=int, default=20, help="process group timeout (s)")
    p.add_argument("--compile", action="store_true", help="torch.compile the model before accelerator.prepare")
    a = p.parse_args()

    accelerator = Accelerator(cpu=True, kwargs_handlers=[InitProcessGroupKwargs(timeout=timedelta(seconds=a.timeout))])
    rank = accelerator.process_index
    logger.info(accelerator.state, main_process_only=False)
    set_seed(42)
    faults.join_oom_cgroup(rank, RankLog())

    # class weights computed on the main process from its label map, shared with all ranks
    class_weights = broadcast(torch.ones(faults.n_classes(rank)), from_process=0)[:2].clone()

    hidden = faults.hidden_size(rank)
    model = nn.Sequential(nn.Linear(8, hidden), nn.ReLU(), nn.Linear(hidden, 2))
    if a.compile:
        # compiled by hand before prepare: accelerate's own --dynamo_backend inductor compiles the
        # DDP-wrapped model, and in torch 2.13.0 Dynamo then breaks the graph inside DDP's forward and
        # never compiles the inner model (no Inductor code at all), so it could not show this fault
        model = torch.compile(model)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    # each rank reads its own shard (split_batches off, no sharding by accelerate of this loader's content)
    loader = DataLoader(ShardDataset(rank), batch_size=BATCH, shuffle=False)
    model, optimizer = accelerator.prepare(model, optimizer)

    step = 0
    for epoch in range(100):
        for x, y in loader:
            faults.at_step(rank, step, RankLog())
            loss = nn.functional.cross_entropy(model(x), y, weight=class_weights)
            accelerator.backward(loss)
            optimizer.step()
            optimizer.zero_grad()
            mean_loss = accelerator.reduce(loss.detach(), reduction="mean")
            logger.info("epoch %d step %d loss %.4f mean_loss %.4f", epoch, step, loss.item(),
                        mean_loss.item(), main_process_only=False)
            step += 1
            if step >= a.max_steps:
                break
        if step >= a.max_steps:
            break
    accelerator.wait_for_everyone()
    logger.info("training finished")
    accelerator.end_training()


if __name__ == "__main__":
    main()
