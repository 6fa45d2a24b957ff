"""Tiny DDP job (Linear 16->4, gloo, CPU) for LARGE world sizes (8-16 ranks on one host).
One rank (--bad-rank, never 0 nor the last) gets the fault chosen by --fault at step --step:
  raise       IndexError in that rank's data path            sigkill  os.kill(own pid, SIGKILL)
  segv        ctypes.string_at(0) (SIGSEGV)                   hang     sleeps --hang-s before the step's all_reduce
  size        all_reduce of a tensor of another size          dtype    all_reduce of a float64 tensor (others float32)
  op          broadcast where the others all_reduce           exit     sys.exit(0) / --exit-return: returns from train()
  hostoom     joins the memory cgroup $OOM_CGROUP, then allocates+touches 256 MiB chunks until the OOM killer hits
  none        healthy; --noisy adds a warning on every rank, a caught+logged exception on the bad rank, progress lines
Launcher is detected: torchrun (RANK/LOCAL_RANK env), mpirun (OMPI_COMM_WORLD_*), or --spawn N (mp.spawn).
"""
import argparse, ctypes, datetime, logging, os, signal, sys, time, warnings
import torch, torch.distributed as dist, torch.nn as nn

p = argparse.ArgumentParser()
p.add_argument("--fault", default="none"); p.add_argument("--bad-rank", type=int, default=-1)
p.add_argument("--step", type=int, default=3); p.add_argument("--steps", type=int, default=6)
p.add_argument("--pg-timeout", type=int, default=30); p.add_argument("--hang-s", type=int, default=120)
p.add_argument("--spawn", type=int, default=0); p.add_argument("--noisy", action="store_true")
p.add_argument("--exit-return", action="store_true")
p.add_argument("--no-ddp", action="store_true")  # average gradients by hand (DDP's constructor segfaults under
                                                 # TORCH_DISTRIBUTED_DEBUG=DETAIL in this torch 2.13.0 CPU build)
args = p.parse_args()


def setup_logging(rank):
    logging.basicConfig(level=logging.INFO, stream=sys.stdout,
                        format=f"%(asctime)s [rank{rank}] %(levelname)s %(name)s: %(message)s")
    return logging.getLogger("train")


def batch_for(rank, step, log):
    """Data path: each rank reads its own shard; the bad rank's shard index runs past the end (fault=raise)."""
    shards = [list(range(8)) for _ in range(4)]
    idx = step % 4
    if args.fault == "raise" and rank == args.bad_rank and step == args.step:
        idx = 4 + rank            # an off-by-rank shard index: IndexError: list index out of range
    shard = shards[idx]
    g = torch.Generator().manual_seed(1000 * rank + step + len(shard))
    return torch.randn(32, 16, generator=g), torch.randint(0, 4, (32,), generator=g)


def hostoom(log):
    cg = os.environ["OOM_CGROUP"]
    with open(os.path.join(cg, "cgroup.procs"), "w") as f:
        f.write(str(os.getpid()))
    log.info("preloading feature cache into memory")
    chunks = []
    for i in range(64):
        chunks.append(torch.ones(64 * 1024 * 1024))          # 256 MiB, touched
        log.info("feature cache: %d MiB resident", 256 * (i + 1))


def train(rank, world, local_rank):
    log = setup_logging(rank)
    torch.set_num_threads(1)
    dist.init_process_group("gloo", rank=rank, world_size=world, timeout=datetime.timedelta(seconds=args.pg_timeout))
    log.info("initialized process group: world_size=%d local_rank=%d", world, local_rank)
    torch.manual_seed(0)
    model = nn.Linear(16, 4) if args.no_ddp else nn.parallel.DistributedDataParallel(nn.Linear(16, 4))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    bad = rank == args.bad_rank
    if args.noisy:
        warnings.warn(f"rank {rank}: dataloader num_workers=0 on a {world}-rank job; throughput may be low", UserWarning)
    for step in range(args.steps):
        x, y = batch_for(rank, step, log)
        if bad and step == args.step:
            if args.fault == "sigkill":
                os.kill(os.getpid(), signal.SIGKILL)
            elif args.fault == "segv":
                ctypes.string_at(0)
            elif args.fault == "hostoom":
                hostoom(log)
            elif args.fault == "exit":
                log.info("no more batches in my shard, leaving the training loop")
                if args.exit_return:
                    return
                sys.exit(0)
        loss = nn.functional.cross_entropy(model(x), y)
        opt.zero_grad(); loss.backward()
        if args.no_ddp:
            for prm in model.parameters():
                dist.all_reduce(prm.grad); prm.grad /= world
        opt.step()
        # average the loss over all ranks for logging (a separate collective every step)
        metric = torch.tensor([loss.item(), 1.0])
        if bad and step == args.step:
            if args.fault == "hang":
                log.info("refreshing shard index from remote storage")
                time.sleep(args.hang_s)
            elif args.fault == "size":
                metric = torch.tensor([loss.item(), 1.0, float(x.shape[0])])
            elif args.fault == "dtype":
                metric = metric.double()
            elif args.fault == "op":
                dist.broadcast(metric, src=0)
                metric = None
        if metric is not None:
            dist.all_reduce(metric)
        if args.noisy and bad and step == 2:
            try:
                raise ConnectionResetError("metrics push to http://metrics.local:9091 failed: connection reset")
            except ConnectionResetError:
                log.exception("could not push metrics, continuing without them")
        if metric is not None:
            log.info("step %d loss %.4f avg_loss %.4f", step, loss.item(), metric[0].item() / world)
        if args.noisy:
            log.info("progress %d/%d", step + 1, args.steps)
    dist.barrier()
    log.info("training finished")
    dist.destroy_process_group()


def spawn_main(local_rank, world):
    train(local_rank, world, local_rank)


if __name__ == "__main__":
    if args.spawn:
        import torch.multiprocessing as mp
        mp.spawn(spawn_main, args=(args.spawn,), nprocs=args.spawn)
    elif "OMPI_COMM_WORLD_RANK" in os.environ:
        train(int(os.environ["OMPI_COMM_WORLD_RANK"]), int(os.environ["OMPI_COMM_WORLD_SIZE"]),
              int(os.environ["OMPI_COMM_WORLD_LOCAL_RANK"]))
    else:
        train(int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]), int(os.environ["LOCAL_RANK"]))
