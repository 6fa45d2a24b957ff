"""Plain torch.distributed (gloo) DDP job, started by torchrun or by mpirun.

Rank and world size come from torchrun's RANK/WORLD_SIZE or from Open MPI's
OMPI_COMM_WORLD_RANK/SIZE (then MASTER_ADDR/MASTER_PORT must be exported).
Each step: forward/backward through DDP (gradient all_reduce), optimizer step,
then an all_reduce of the loss for the log line.

Faults (only on --fault-rank, or --fault-local-rank), besides those of r11common (raise, sigkill,
hang, exit3):
  barrier_skip  at --fault-step the rank calls dist.barrier() that no other
                rank calls; the others go straight on to the loss all_reduce
  late_init     the rank sleeps --late-init-s seconds before it calls
                init_process_group, so the others wait for it inside init
"""
import os
import time
from datetime import timedelta

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

import r11common as c


def env_int(*names, default=None):
    for n in names:
        if n in os.environ:
            return int(os.environ[n])
    return default


def main():
    p = c.base_parser(__doc__)
    p.add_argument("--late-init-s", type=int, default=60)
    p.add_argument("--fault-local-rank", type=int, default=-1,
                   help="pick the faulty rank by LOCAL_RANK instead (two-agent torchrun: "
                        "only node 1's agent is given the fault)")
    args = p.parse_args()

    rank = env_int("RANK", "OMPI_COMM_WORLD_RANK")
    world = env_int("WORLD_SIZE", "OMPI_COMM_WORLD_SIZE")
    if args.fault_local_rank >= 0:
        local = env_int("LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK")
        args.fault_rank = rank if local == args.fault_local_rank else -1
    log = c.get_logger(rank)
    log.info("starting: world_size=%d pid=%d host=%s", world, os.getpid(), os.uname().nodename)

    if args.fault == "late_init" and rank == args.fault_rank:
        # e.g. this rank is still staging its data set: init comes far too late
        time.sleep(args.late_init_s)

    dist.init_process_group("gloo", init_method="env://", rank=rank, world_size=world,
                            timeout=timedelta(seconds=args.timeout_s))
    log.info("process group ready (backend=%s, timeout=%ds)", dist.get_backend(), args.timeout_s)

    model = DDP(c.make_model())
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    data = c.ShardedData(rank, world, args.steps, fault=c.data_fault(args, rank),
                         fault_step=args.fault_step)

    for step in range(args.steps):
        c.maybe_fault(args, rank, step, log)
        x, y = data.get(step)
        loss = torch.nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if args.fault == "barrier_skip" and rank == args.fault_rank and step == args.fault_step:
            dist.barrier()  # only this rank synchronises here
        t = loss.detach().clone()
        dist.all_reduce(t)
        log.info("step %d/%d loss=%.4f avg_loss=%.4f", step + 1, args.steps, loss.item(),
                 t.item() / world)
        time.sleep(0.2)

    log.info("training done")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
