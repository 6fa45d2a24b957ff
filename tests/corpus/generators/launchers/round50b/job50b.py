"""Round 50b: many ranks on one host (12-32 processes, CPU, gloo, torch 2.13.0).

A tiny data-parallel training loop with hand-written gradient sync: every step each rank loads a batch,
runs forward/backward, all_reduces its flattened gradients and its loss, and logs one line. From step
--eval-at on, a torch.compile'd eval pass runs every step (its first call compiles). One rank
(--culprit, never 0) can be made to fail at step --step (--fault):

  none      healthy run (--noisy adds ordinary noise: warnings, a handled-and-retried error, slow ranks)
  raise     culprit raises KeyError in its data loading at step --step
  sigkill   culprit SIGKILLs itself at step --step (no traceback, like an OOM kill)
  hang      culprit sleeps (stuck in a data fetch) for --timeout + 25 s before the gradient all_reduce
            at step --step; the others time out in the all_reduce
  mismatch  culprit all_reduces a gradient buffer one element longer at step --step
  compile   culprit alone has CXX=/nonexistent/g++; the compiled eval pass first runs at step --step on
            every rank (per-rank inductor cache dirs, so no rank reuses another's compiled code)

Launchers: torchrun (RANK/WORLD_SIZE), mp.spawn (--spawn N), mpirun (OMPI_COMM_WORLD_RANK/SIZE), or a shell
loop (RANK/WORLD_SIZE). MASTER_ADDR/MASTER_PORT from the env. Set OMP_NUM_THREADS=1 (32 ranks, 2 cores).
"""
import argparse
import logging
import os
import signal
import sys
import time
import warnings
from datetime import timedelta


def parse():
    p = argparse.ArgumentParser()
    p.add_argument("--fault", default="none")
    p.add_argument("--culprit", type=int, default=1)
    p.add_argument("--step", type=int, default=2, help="step at which the culprit fails")
    p.add_argument("--steps", type=int, default=5)
    p.add_argument("--timeout", type=int, default=45, help="process group timeout, seconds")
    p.add_argument("--spawn", type=int, default=0, help="mp.spawn this many ranks")
    p.add_argument("--noisy", action="store_true")
    return p.parse_args()


def train(rank, world, args):
    if args.fault == "compile":
        # per-rank inductor cache; the culprit's node image lacks a C++ compiler
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(os.getcwd(), "inductor_cache", f"rank{rank}")
        if rank == args.culprit:
            os.environ["CXX"] = "/nonexistent/g++"
    import torch
    import torch.distributed as dist
    import torch.nn as nn

    logging.basicConfig(level=logging.INFO, stream=sys.stdout, force=True,
                        format=f"%(asctime)s [rank {rank}/{world}] %(levelname)s %(name)s: %(message)s")
    log = logging.getLogger("trainer")
    torch.set_num_threads(1)
    me = rank == args.culprit and args.fault != "none"
    t_start = time.time()
    dist.init_process_group("gloo", rank=rank, world_size=world, timeout=timedelta(seconds=args.timeout))
    log.info("process group ready: backend=gloo world_size=%d pg_timeout=%ss (%.1fs)", world, args.timeout,
             time.time() - t_start)
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 4))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    params = list(model.parameters())
    eval_at = args.step if args.fault == "compile" else (3 if args.noisy else 10 ** 9)
    compiled_eval = torch.compile(model) if eval_at < args.steps else None
    g = torch.Generator().manual_seed(1000 + rank)
    index = {i: (torch.randn(16, 32, generator=g), torch.randn(16, 4, generator=g)) for i in range(args.steps)}
    if rank == 0:
        log.info("model: %d params, %d steps, global batch %d", sum(p.numel() for p in params), args.steps, 16 * world)

    for step in range(args.steps):
        t0 = time.time()
        key = step
        if me and args.fault == "raise" and step == args.step:
            key = f"shard-{rank:03d}/batch-{step:05d}"  # a key this rank's index never had
        x, y = index[key]
        if me and args.fault == "sigkill" and step == args.step:
            os.kill(os.getpid(), signal.SIGKILL)
        if args.noisy and rank == world // 2 and step == 1:
            try:
                raise ConnectionResetError(104, "Connection reset by peer")
            except OSError:
                log.warning("metrics push to http://metrics.internal:9091 failed, will retry in 1s", exc_info=True)
            log.info("metrics push retried: ok")
        if args.noisy and rank == world - 3 and step == 2:
            warnings.warn("batch contains 3 samples with NaN labels; they are masked out", UserWarning)
            time.sleep(1.5)
            log.warning("slow data step: %.1fs waiting for batch (threshold 1.0s)", 1.5)

        opt.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        flat = torch.cat([p.grad.reshape(-1) for p in params])
        if me and args.fault == "hang" and step == args.step:
            time.sleep(args.timeout + 25)  # stuck in a data fetch; no log line
        if me and args.fault == "mismatch" and step == args.step:
            flat = torch.cat([flat, loss.detach().reshape(1)])  # appends the loss: one element more
        dist.all_reduce(flat)
        flat /= world
        off = 0
        for p in params:
            n = p.numel()
            p.grad.copy_(flat[off:off + n].view_as(p))
            off += n
        opt.step()
        lt = loss.detach().clone().reshape(1)
        dist.all_reduce(lt)
        msg = "step %d/%d loss %.4f global_loss %.4f grad_norm %.4f (%.0f ms)"
        vals = [step, args.steps, loss.item(), lt.item() / world, flat.norm().item(), (time.time() - t0) * 1000]
        if step >= eval_at:
            with torch.no_grad():
                ev = nn.functional.mse_loss(compiled_eval(x), y).item()
            msg += " eval_loss %.4f"
            vals.append(ev)
        log.info(msg, *vals)

    dist.barrier()
    if rank == 0:
        log.info("training done in %.1fs, saving checkpoint to ckpt/final.pt", time.time() - t_start)
    dist.destroy_process_group()


def spawn_entry(local_rank, world, args):
    os.environ["OMP_NUM_THREADS"] = "1"
    train(local_rank, world, args)


def main():
    args = parse()
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    if args.spawn:
        import torch.multiprocessing as mp
        mp.spawn(spawn_entry, args=(args.spawn, args), nprocs=args.spawn, join=True)
        return
    if "OMPI_COMM_WORLD_RANK" in os.environ:  # mpirun: env:// rendezvous from Open MPI's variables
        rank = int(os.environ["OMPI_COMM_WORLD_RANK"])
        world = int(os.environ["OMPI_COMM_WORLD_SIZE"])
    else:  # torchrun or shell loop
        rank = int(os.environ["RANK"])
        world = int(os.environ["WORLD_SIZE"])
    train(rank, world, args)


if __name__ == "__main__":
    main()
