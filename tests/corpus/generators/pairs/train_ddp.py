"""Small DDP classifier (gloo, CPU) used for healthy/failed pairs.

The healthy and failed runs of a pair use the same command line except ONE flag, --fault (not logged):
  hang:R:K      rank R blocks (stuck "prefetch") at step K and stops logging; the others time out
  exit0:R:K     rank R leaves the train loop at step K and exits 0 (no error printed)
  nan:R:K       rank R gets a corrupted (NaN) sample at step K; loss NaN -> the script's own assert
  shard:R:K     rank R's data code raises shards.ShardIndexError (custom exception) at step K
  cfgskew:R     rank R picks up a different lr from its config; replicas diverge -> checksum check fails
  keyerror:R:K  rank R's sample record lacks the "label" key at step K -> KeyError
  sigkill:R:K   rank R SIGKILLs itself at step K (no traceback)
  metric:R:K    rank R all_reduces a metrics tensor of a different size at step K
  hostoom:R:K   rank R joins the memory cgroup $OOM_CGROUP (1 GiB limit, made by run_pairs.sh) at startup and,
                from step K, grows an in-memory sample cache until the kernel OOM killer SIGKILLs it
"""
import argparse, datetime, logging, os, signal, sys, time
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP

import shards

p = argparse.ArgumentParser()
p.add_argument("--steps", type=int, default=12)
p.add_argument("--batch", type=int, default=32)
p.add_argument("--lr", type=float, default=0.05)
p.add_argument("--seed", type=int, default=42)
p.add_argument("--pg-timeout", type=int, default=20)
p.add_argument("--fault", default="none")
args = p.parse_args()

rank = int(os.environ["RANK"])
world = int(os.environ["WORLD_SIZE"])
logging.basicConfig(level=logging.INFO, stream=sys.stdout,
                    format=f"%(asctime)s [rank{rank}] %(levelname)s %(name)s: %(message)s")
log = logging.getLogger("trainer")

kind, frank, fstep = "none", -1, -1
if args.fault != "none":
    parts = args.fault.split(":")
    kind, frank = parts[0], int(parts[1])
    fstep = int(parts[2]) if len(parts) > 2 else -1
mine = rank == frank


def main():
    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=args.pg_timeout))
    torch.manual_seed(args.seed)
    lr = args.lr * (10.0 if kind == "cfgskew" and mine else 1.0)
    log.info("process group up: backend=%s world_size=%d pid=%d", dist.get_backend(), world, os.getpid())
    log.info("config: steps=%d batch=%d lr=%g seed=%d pg_timeout=%ds", args.steps, args.batch, lr, args.seed,
             args.pg_timeout)
    data = shards.ShardedDataset(rank, world, seed=args.seed)
    model = DDP(nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10)))
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    if kind == "hostoom" and mine:
        with open(os.path.join(os.environ["OOM_CGROUP"], "cgroup.procs"), "w") as f:
            f.write(str(os.getpid()))
    cache = []
    for step in range(args.steps):
        t0 = time.time()
        if kind == "hostoom" and mine and step >= fstep:
            for _ in range(8):  # 8 x 128 MiB per step, every page touched
                cache.append(torch.ones(32 * 2**20))
            log.info("sample cache: %d MiB", 128 * len(cache))
        if kind == "sigkill" and mine and step == fstep:
            os.kill(os.getpid(), signal.SIGKILL)
        if kind == "hang" and mine and step == fstep:
            time.sleep(3600)  # stuck prefetch: never returns within the job's lifetime
        if kind == "exit0" and mine and step == fstep:
            break
        idx_step = step + (10_000 if kind == "shard" and mine and step == fstep else 0)
        x, y = data.batch(idx_step, args.batch)
        if kind == "keyerror" and mine and step == fstep:
            data.meta[step * args.batch + 5] = {"lbl": 3, "src": f"shard{rank}"}
            y = torch.tensor([data.meta[step * args.batch + j]["label"] for j in range(args.batch)])
        if kind == "nan" and mine and step == fstep:
            x[7, 3] = float("nan")
        out = model(x)
        loss = F.cross_entropy(out, y)
        acc = (out.argmax(1) == y).float().mean()
        log.info("step %d/%d loss=%.4f acc=%.3f lr=%g time=%.3fs", step + 1, args.steps, loss.item(), acc.item(),
                 lr, time.time() - t0)
        assert torch.isfinite(loss).item(), (
            f"loss is {loss.item()} at step {step + 1} on rank {rank}: refusing to continue with a non-finite loss")
        opt.zero_grad()
        loss.backward()
        opt.step()
        stats = torch.tensor([loss.item(), acc.item()])
        if kind == "metric" and mine and step == fstep:
            stats = torch.tensor([loss.item(), acc.item(), float(args.batch)])
        dist.all_reduce(stats)
        if rank == 0:
            log.info("global: mean_loss=%.4f mean_acc=%.3f", stats[0].item() / world, stats[1].item() / world)
        if (step + 1) % 4 == 0:  # replica consistency check
            csum = torch.tensor([sum(p.detach().double().sum().item() for p in model.parameters())])
            allc = [torch.zeros(1, dtype=torch.float64) for _ in range(world)]
            dist.all_gather(allc, csum.double())
            vals = [c.item() for c in allc]
            if max(vals) - min(vals) > 1e-6:
                raise RuntimeError(f"model replicas diverged at step {step + 1}: parameter checksums per rank {vals}")
            log.info("replica check ok at step %d (checksum %.6f)", step + 1, vals[0])
    log.info("training finished after %d steps", step + 1 if kind != "exit0" or not mine else step)
    if not (kind == "exit0" and mine):
        dist.barrier()
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
