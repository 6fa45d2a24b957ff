"""torch.multiprocessing.spawn job (gloo, DDP): the parent spawns --nprocs ranks.

Faults (only on --fault-rank at --fault-step), besides those of r11common:
  mismatch_shape  the rank all_reduces a 3-element metrics tensor while the
                  others all_reduce the usual 2-element one [loss, samples]
  mismatch_bcast  the rank calls broadcast(src=0) where the others call
                  all_reduce
Run with TORCH_DISTRIBUTED_DEBUG=DETAIL to have the collectives checked.

--grad-sync manual averages the gradients with one all_reduce per parameter
instead of wrapping the model in DDP.  The DETAIL runs use it: on this build
(torch 2.13.0+cpu, gloo) the DDP constructor itself segfaults a rank under
TORCH_DISTRIBUTED_DEBUG=DETAIL, before any step runs.
"""
import os
import time
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.nn.parallel import DistributedDataParallel as DDP

import r11common as c


def worker(rank, world, args):
    log = c.get_logger(rank)
    dist.init_process_group("gloo", rank=rank, world_size=world,
                            timeout=timedelta(seconds=args.timeout_s))
    log.info("joined process group: world_size=%d pid=%d", world, os.getpid())
    model = DDP(c.make_model()) if args.grad_sync == "ddp" else c.make_model()
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    data = c.ShardedData(rank, world, args.steps, fault=c.data_fault(args, rank),
                         fault_step=args.fault_step)
    faulty_now = lambda step: rank == args.fault_rank and step == args.fault_step

    for step in range(args.steps):
        c.maybe_fault(args, rank, step, log)
        x, y = data.get(step)
        loss = torch.nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        if args.grad_sync == "manual":
            for prm in model.parameters():
                dist.all_reduce(prm.grad)
                prm.grad /= world
        opt.step()
        metrics = torch.tensor([loss.item() * len(x), float(len(x))])
        if args.fault == "mismatch_shape" and faulty_now(step):
            # this rank also reports a grad-norm metric: 3 elements, not 2
            metrics = torch.tensor([loss.item() * len(x), float(len(x)), 1.0])
            dist.all_reduce(metrics)
        elif args.fault == "mismatch_bcast" and faulty_now(step):
            dist.broadcast(metrics, src=0)
        else:
            dist.all_reduce(metrics)
        log.info("step %d/%d loss=%.4f avg_loss=%.4f", step + 1, args.steps, loss.item(),
                 (metrics[0] / metrics[1]).item())
        time.sleep(0.2)
    log.info("training done")
    dist.destroy_process_group()


def main():
    p = c.base_parser(__doc__)
    p.add_argument("--nprocs", type=int, default=4)
    p.add_argument("--port", default="29620")
    p.add_argument("--grad-sync", default="ddp", choices=["ddp", "manual"])
    args = p.parse_args()
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ["MASTER_PORT"] = args.port
    print(f"launching {args.nprocs} ranks with mp.spawn", flush=True)
    mp.spawn(worker, args=(args.nprocs, args), nprocs=args.nprocs, join=True)


if __name__ == "__main__":
    main()
