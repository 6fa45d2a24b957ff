"""round68b: a small gloo CPU training job whose only interesting part is HOW its process group is started.

Rendezvous (--init):
  env         init_process_group("gloo", init_method="env://")   (MASTER_ADDR/MASTER_PORT/RANK/WORLD_SIZE)
  tcp         init_method="tcp://ADDR:PORT", rank=, world_size=
  file        init_method="file:///PATH", rank=, world_size=       (FileStore)
  store-tcp   store=TCPStore(ADDR, PORT, world_size, is_master=(rank == 0))
  store-file  store=FileStore(PATH, world_size)
  store-hash  store=HashStore()                                   (in-process only: never shared)
Rank/world come from RANK/WORLD_SIZE (shell loop, torchrun) or from the mp.spawn index (--spawn N).

Per-rank mistakes are injected with --fault RANK:KIND[:ARG] (repeatable).  Most of them model a rank reading
a stale per-host override (the job's 'host overrides' line) before it joins:
  port:P        that rank uses port P (MASTER_PORT / tcp:// / TCPStore) instead of the job's
  addr:H        that rank uses host H as MASTER_ADDR / store host
  file:PATH     that rank uses another FileStore path
  world:N       that rank believes world_size is N
  rank:R        that rank believes it is rank R (duplicate rank)
  hash          that rank builds its process group on a HashStore ("local debug" code path)
  master        that rank also creates the TCPStore with is_master=True (tries to host it)
  exit0         that rank finds no data shard for itself and returns (exit 0) before init_process_group
  twice:K       at step K that rank calls setup_distributed() again -> init_process_group a second time
  newgroup      that rank computes its data-parallel group from a stale TP size -> new_group(ranks out of range)
Every rank logs one line per step (loss) like a real job.
"""
import argparse, datetime, logging, os, sys, time

import torch
import torch.distributed as dist
import torch.nn as nn

p = argparse.ArgumentParser()
p.add_argument("--init", default="env",
               choices=["env", "tcp", "file", "store-tcp", "store-file", "store-hash"])
p.add_argument("--spawn", type=int, default=0, help="start N ranks with torch.multiprocessing.spawn")
p.add_argument("--addr", default=os.environ.get("MASTER_ADDR", "127.0.0.1"))
p.add_argument("--port", type=int, default=int(os.environ.get("MASTER_PORT", "29500")))
p.add_argument("--file", default="/tmp/h68b/initstore")
p.add_argument("--steps", type=int, default=6)
p.add_argument("--timeout", type=int, default=20, help="process group timeout, seconds")
p.add_argument("--groups", action="store_true", help="also build data-parallel sub-groups (TP size 2)")
p.add_argument("--fault", action="append", default=[], help="RANK:KIND[:ARG]")
args = p.parse_args()


def faults_for(rank):
    out = {}
    for f in args.fault:
        r, kind, *rest = f.split(":", 2)
        if int(r) == rank:
            out[kind] = rest[0] if rest else ""
    return out


def make_log(rank):
    log = logging.getLogger("train")
    h = logging.StreamHandler(sys.stdout)
    h.setFormatter(logging.Formatter(f"%(asctime)s %(levelname)s [rank{rank}] %(name)s: %(message)s"))
    log.handlers[:] = [h]
    log.setLevel(logging.INFO)
    log.propagate = False
    return log


def setup_distributed(rank, world, f, log):
    """Start the default process group the way --init says, with this rank's (possibly wrong) overrides."""
    addr = f.get("addr", args.addr)
    port = int(f.get("port", args.port))
    path = f.get("file", args.file)
    if "world" in f:
        world = int(f["world"])
    if "rank" in f:
        rank = int(f["rank"])
    if f and not ({"exit0", "twice", "newgroup"} & set(f)):
        log.info("host overrides: %s", ", ".join(f"{k}={v}" for k, v in f.items() if v) or "local store")
    timeout = datetime.timedelta(seconds=args.timeout)
    kw = dict(backend="gloo", timeout=timeout)
    how = args.init
    if "hash" in f:
        how = "store-hash"
    if how == "env":
        os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"] = addr, str(port)
        os.environ["RANK"], os.environ["WORLD_SIZE"] = str(rank), str(world)
        desc = f"init_method=env:// (MASTER_ADDR={addr} MASTER_PORT={port} RANK={rank} WORLD_SIZE={world})"
        kw.update(init_method="env://")
    elif how == "tcp":
        desc = f"init_method=tcp://{addr}:{port}, rank={rank}, world_size={world}"
        kw.update(init_method=f"tcp://{addr}:{port}", rank=rank, world_size=world)
    elif how == "file":
        desc = f"init_method=file://{path}, rank={rank}, world_size={world}"
        kw.update(init_method=f"file://{path}", rank=rank, world_size=world)
    elif how == "store-tcp":
        master = rank == 0 or "master" in f
        desc = f"store=TCPStore({addr}, {port}, world_size={world}, is_master={master}), rank={rank}"
        log.info("process group: %s, timeout=%ss", desc, args.timeout)
        store = dist.TCPStore(addr, port, world, is_master=master, timeout=timeout)
        kw.update(store=store, rank=rank, world_size=world)
    elif how == "store-file":
        desc = f"store=FileStore({path}, {world}), rank={rank}"
        log.info("process group: %s, timeout=%ss", desc, args.timeout)
        kw.update(store=dist.FileStore(path, world), rank=rank, world_size=world)
    else:  # store-hash
        desc = f"store=HashStore(), rank={rank}, world_size={world}"
        log.info("process group: %s, timeout=%ss", desc, args.timeout)
        kw.update(store=dist.HashStore(), rank=rank, world_size=world)
    if not how.startswith("store"):
        log.info("process group: %s, timeout=%ss", desc, args.timeout)
    dist.init_process_group(**kw)
    log.info("joined process group: rank %d/%d (backend %s)", dist.get_rank(), dist.get_world_size(),
             dist.get_backend())


def build_groups(rank, world, f, log):
    """Data-parallel sub-groups for tensor-parallel size 2: ranks with the same rank % 2 form one group.
    The layout world size comes from the checkpoint meta; with the newgroup fault that meta is stale."""
    tp, layout_world = 2, world
    if "newgroup" in f:
        layout_world = int(f["newgroup"] or 2 * world)
        log.info("parallel layout from checkpoint meta: world_size=%d tensor_parallel=%d", layout_world, tp)
    groups = {}
    for start in range(tp):
        ranks = list(range(start, layout_world, tp))
        groups[start] = dist.new_group(ranks=ranks)
        if rank in ranks:
            log.info("data-parallel group %d: ranks %s", start, ranks)
    return groups[rank % tp]


def worker(rank, world):
    f = faults_for(rank)
    log = make_log(rank)
    torch.manual_seed(0)
    log.info("starting on pid %d (world %d, init %s)", os.getpid(), world, args.init)
    if "exit0" in f:
        log.warning("no data shard assigned to rank %d (found %d shards for %d ranks); nothing to do, exiting",
                    rank, world - 1, world)
        return
    setup_distributed(rank, world, f, log)
    dp = build_groups(rank, world, f, log) if args.groups else None
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 1))
    for prm in model.parameters():
        dist.broadcast(prm.data, 0)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    g = torch.Generator().manual_seed(100 + rank)
    for step in range(1, args.steps + 1):
        if f.get("twice") and step == int(f["twice"]):
            log.info("step %d: rebuilding the eval loader (re-running distributed setup)", step)
            setup_distributed(rank, world, f, log)
        x = torch.randn(32, 16, generator=g)
        y = x.sum(1, keepdim=True)
        loss = nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        for prm in model.parameters():
            dist.all_reduce(prm.grad)
            prm.grad /= world
        if dp is not None:
            t = loss.detach().clone()
            dist.all_reduce(t, group=dp)
        opt.step()
        log.info("step %d/%d loss %.4f", step, args.steps, loss.item())
        time.sleep(0.3)
    dist.barrier()
    log.info("training done")
    dist.destroy_process_group()


def spawn_main(rank, world):
    worker(rank, world)


if __name__ == "__main__":
    if args.spawn:
        import torch.multiprocessing as mp
        mp.spawn(spawn_main, args=(args.spawn,), nprocs=args.spawn, join=True)
    else:
        worker(int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]))
