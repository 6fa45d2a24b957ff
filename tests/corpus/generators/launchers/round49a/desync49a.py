"""Round 49a: ranks that fall out of step in their sequence of collectives (CPU, gloo, torch 2.13.0).

A tiny data-parallel training loop with hand-written gradient sync: every step each rank runs
forward/backward, all_reduces its flattened gradients, all_reduces its loss for logging, and every
3rd step rank 0 broadcasts a learning-rate scale. One rank (--culprit, never 0) can be made to fall out
of step with the others (--fault):

  none        healthy run, all ranks in step
  skip        culprit skips the gradient all_reduce at step --step (a "local grad is tiny, skip sync"
              shortcut only it takes) and goes on to the loss all_reduce
  order       culprit calls the lr broadcast before the gradient all_reduce at step --step
              (the others: all_reduce, then broadcast)
  dtype       culprit all_reduces its loss as float64 at step --step (others: float32)
  op          culprit all_gathers its loss at step --step (others: all_reduce)
  count       culprit all_reduces a loss tensor of 2 elements at step --step (others: 1)
  short       culprit's data shard is one batch shorter: it leaves the loop after --step steps, then
              waits in the final end-of-training barrier while the others are still in the next step
  exit0       like short, but the culprit exits 0 at once after leaving the loop (no barrier)
  extra_barrier   culprit calls an extra dist.barrier() at step --step (a debug sync only it runs)
  extra_reduce    culprit all_reduces an extra metric (grad norm) only it computes at step --step
  monitored   at step --step every rank calls dist.monitored_barrier(timeout=..., wait_all_ranks=True);
              the culprit(s) (--culprit, comma list) are stuck in a slow data fetch instead

Launchers: torchrun (RANK/WORLD_SIZE env), mp.spawn (--spawn N), mpirun (OMPI_COMM_WORLD_RANK/SIZE),
or a shell loop (RANK/WORLD_SIZE env). MASTER_ADDR/MASTER_PORT come from the env.
"""
import argparse
import logging
import os
import sys
import time
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn as nn

log = logging.getLogger("trainer")


def parse():
    p = argparse.ArgumentParser()
    p.add_argument("--fault", default="none")
    p.add_argument("--culprit", default="1", help="rank, or comma list for monitored")
    p.add_argument("--step", type=int, default=3, help="step at which the culprit falls out of step")
    p.add_argument("--steps", type=int, default=6)
    p.add_argument("--timeout", type=int, default=20, help="process group timeout, seconds")
    p.add_argument("--spawn", type=int, default=0, help="mp.spawn this many ranks")
    return p.parse_args()


def setup_logging(rank):
    logging.basicConfig(
        level=logging.INFO,
        format=f"%(asctime)s [rank{rank}] %(levelname)s %(name)s: %(message)s",
        stream=sys.stdout,
        force=True,
    )


def make_shard(rank, n_batches, seed=0):
    g = torch.Generator().manual_seed(seed + rank)
    return [(torch.randn(16, 32, generator=g), torch.randn(16, 4, generator=g)) for _ in range(n_batches)]


def train(rank, world, args):
    setup_logging(rank)
    culprits = [int(c) for c in args.culprit.split(",")]
    culprit = culprits[0]
    dist.init_process_group("gloo", rank=rank, world_size=world, timeout=timedelta(seconds=args.timeout))
    log.info("process group up: backend=gloo world_size=%d timeout=%ss", world, args.timeout)
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 4))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    n_batches = args.steps
    if args.fault in ("short", "exit0") and rank == culprit:
        n_batches = args.step  # uneven data: this rank's shard is shorter
    shard = make_shard(rank, n_batches)
    log.info("data shard: %d batches of 16 samples", len(shard))

    lr_scale = torch.ones(1)
    for step, (x, y) in enumerate(shard):
        t0 = time.time()
        me = rank == culprit and step == args.step  # the culprit's different step
        if args.fault == "monitored" and step == args.step:
            if rank in culprits:
                log.info("fetching remote batch for step %d ...", step)
                time.sleep(args.timeout * 2.5)  # stuck in a slow data fetch
            log.info("step %d: entering monitored_barrier", step)
            dist.monitored_barrier(timeout=timedelta(seconds=args.timeout), wait_all_ranks=True)
        opt.zero_grad(set_to_none=True)
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        flat = torch.cat([p.grad.reshape(-1) for p in model.parameters()])
        log.info("step %d: local loss %.4f, grad elements %d", step, loss.item(), flat.numel())

        if args.fault == "order" and me:
            dist.broadcast(lr_scale, src=0)  # out of order: broadcast first
        if args.fault == "skip" and me:
            log.info("step %d: grad norm %.2e below threshold, skipping gradient sync", step, flat.norm())
        else:
            dist.all_reduce(flat)  # gradient sync
            flat /= world
        i = 0
        for p in model.parameters():
            n = p.numel()
            p.grad.copy_(flat[i:i + n].view_as(p))
            i += n
        opt.step()

        if args.fault == "extra_barrier" and me:
            log.info("step %d: debug sync before metrics", step)
            dist.barrier()
        if args.fault == "extra_reduce" and me:
            gnorm = flat.norm().reshape(1)
            dist.all_reduce(gnorm)  # a metric only this rank computes
            log.info("step %d: global grad norm %.4f", step, gnorm.item())

        # loss for logging
        lt = loss.detach().reshape(1)
        if args.fault == "dtype" and me:
            lt = lt.double()
            dist.all_reduce(lt)
        elif args.fault == "op" and me:
            out = [torch.zeros(1) for _ in range(world)]
            dist.all_gather(out, lt)
            lt = torch.stack(out).sum().reshape(1)
        elif args.fault == "count" and me:
            lt = torch.cat([lt, torch.tensor([float(len(x))])])
            dist.all_reduce(lt)
        else:
            dist.all_reduce(lt)

        if step % 3 == 2 and not (args.fault == "order" and me):
            dist.broadcast(lr_scale, src=0)
        log.info("step %d: mean loss %.4f lr_scale %.2f (%.1f ms)", step, lt[0].item() / world,
                 lr_scale.item(), (time.time() - t0) * 1000)

    log.info("training finished after %d steps", len(shard))
    if args.fault == "exit0" and rank == culprit:
        sys.exit(0)  # leaves without the final barrier
    dist.barrier()  # end-of-training sync
    if rank == 0:
        log.info("saving checkpoint to ckpt/final.pt")
    dist.destroy_process_group()
    log.info("done")


def spawn_entry(local_rank, world, args):
    train(local_rank, world, args)


def main():
    args = parse()
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    if args.spawn:
        import torch.multiprocessing as mp
        mp.spawn(spawn_entry, args=(args.spawn, args), nprocs=args.spawn, join=True)
        return
    if "OMPI_COMM_WORLD_RANK" in os.environ:  # mpirun
        rank = int(os.environ["OMPI_COMM_WORLD_RANK"])
        world = int(os.environ["OMPI_COMM_WORLD_SIZE"])
    else:  # torchrun or shell loop
        rank = int(os.environ["RANK"])
        world = int(os.environ["WORLD_SIZE"])
    train(rank, world, args)


if __name__ == "__main__":
    main()
