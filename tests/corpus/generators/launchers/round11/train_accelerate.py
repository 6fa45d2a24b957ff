"""Hugging Face Accelerate job on CPU (MULTI_CPU, gloo), started with
`accelerate launch --cpu --num_processes N --mpirun_hostfile H train_accelerate.py`
(accelerate wraps the script in mpirun; the ranks come from OMPI_COMM_WORLD_*).

The process-group timeout is set through InitProcessGroupKwargs(timeout=...).
Faults as in r11common (raise, sigkill, hang) on --fault-rank at --fault-step.
"""
import time
from datetime import timedelta

import torch
from accelerate import Accelerator
from accelerate.utils import InitProcessGroupKwargs
from torch.utils.data import DataLoader, Dataset

import r11common as c


class ShardDataset(Dataset):
    """Wraps r11common.ShardedData: item i is batch i of this rank's stride."""

    def __init__(self, shards, steps):
        self.shards, self.steps = shards, steps

    def __len__(self):
        return self.steps

    def __getitem__(self, i):
        return self.shards.get(i)


def main():
    args = c.base_parser(__doc__).parse_args()
    acc = Accelerator(cpu=True, kwargs_handlers=[
        InitProcessGroupKwargs(backend="gloo", timeout=timedelta(seconds=args.timeout_s))])
    rank, world = acc.process_index, acc.num_processes
    log = c.get_logger(rank)
    log.info("accelerator ready: %s, num_processes=%d, device=%s",
             acc.distributed_type, world, acc.device)

    model = c.make_model()
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    shards = c.ShardedData(rank, world, args.steps, fault=c.data_fault(args, rank),
                           fault_step=args.fault_step)
    # batch_size=None: every item is already a batch; each rank reads its own
    # shards, so the loader is not sharded by accelerate (it is not prepared)
    loader = DataLoader(ShardDataset(shards, args.steps), batch_size=None)
    model, opt = acc.prepare(model, opt)

    for step, (x, y) in enumerate(loader):
        c.maybe_fault(args, rank, step, log)
        loss = torch.nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        acc.backward(loss)
        opt.step()
        avg = acc.reduce(loss.detach(), reduction="mean")
        log.info("step %d/%d loss=%.4f avg_loss=%.4f", step + 1, args.steps, loss.item(), avg.item())
        time.sleep(0.2)
    acc.wait_for_everyone()
    log.info("training done")
    acc.end_training()


if __name__ == "__main__":
    main()
