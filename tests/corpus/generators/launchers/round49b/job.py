"""round49b job: a small gloo data-parallel training job whose log lines carry DIFFERENT numbers called "rank".

Where the rank comes from (--rank-src):
  env      torchrun: RANK / LOCAL_RANK / GROUP_RANK (node rank) / WORLD_SIZE
  ompi     mpirun: torch rank = a permutation of OMPI_COMM_WORLD_RANK (--perm rev: size-1-ompi, rot: ompi+1 mod size)
  slurm    a shell loop that fakes SLURM_PROCID / SLURM_LOCALID / SLURM_NODEID / SLURM_NTASKS
  spawn    mp.spawn on a fake "node": global rank = node_rank * nprocs + i
What the job prints as its rank (--fmt):
  global    "[rank G]"               local      "[local_rank L]"
  both      "[nodeN localL globalG]" localonly  "[rank L]"   (the common bug: LOCAL_RANK printed as the rank)
  logfilter logging with %(rank)s set by a logging.Filter, and %(processName)s
  logextra  logging with %(rank)s passed via extra=
One induced fault on the process whose GLOBAL rank (world group) is --bad (--fault):
  raise     its data loader raises (--exc key|value|index) at step --step
  sigkill   os.kill(own pid, SIGKILL) at step --step (no traceback)
  hang      sleeps --timeout+12 s before the collective at --where (world|group), the others time out
  mismatch  all_reduces a tensor of another size in the collective at --where
--group pairs|subgroups: every step also all_reduces a stats tensor inside a 2-rank group
  (pairs: dist.new_group for [0,1],[2,3],...; subgroups: dist.new_subgroups(group_size=2); node: new_group per node;
  the groups get --timeout unless --group-timeout default).
--catch exit: the job catches its own exception, logs it with ITS rank format and exits 1 (no torch traceback).
"""
import argparse, datetime, logging, os, signal, sys, time, warnings

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

p = argparse.ArgumentParser()
p.add_argument("--rank-src", default="env", choices=["env", "ompi", "slurm", "spawn"])
p.add_argument("--perm", default="rev", choices=["rev", "rot"])
p.add_argument("--fmt", default="global",
               choices=["global", "local", "both", "localonly", "logfilter", "logextra"])
p.add_argument("--fault", default="none", choices=["none", "raise", "sigkill", "hang", "mismatch"])
p.add_argument("--exc", default="key", choices=["key", "value", "index"])
p.add_argument("--bad", type=int, default=-1, help="GLOBAL rank (world group) of the faulty process")
p.add_argument("--step", type=int, default=3)
p.add_argument("--steps", type=int, default=6)
p.add_argument("--where", default="world", choices=["world", "group"])
p.add_argument("--group", default="none", choices=["none", "pairs", "subgroups", "node"])
p.add_argument("--timeout", type=int, default=20)
p.add_argument("--group-timeout", default="same", choices=["same", "default"],
               help="same: sub-groups get --timeout too; default: new_group()'s default timeout (30 min)")
p.add_argument("--catch", default="none", choices=["none", "exit"])
p.add_argument("--noisy", action="store_true", help="extra benign warnings / info lines (healthy runs)")
p.add_argument("--nprocs", type=int, default=2, help="spawn: processes per fake node")
p.add_argument("--nnodes", type=int, default=2, help="spawn: fake nodes")
p.add_argument("--node-rank", type=int, default=0, help="spawn: this fake node's rank")
args = p.parse_args()


def setup(i=None):
    """Return (global rank, local rank, node rank, world size) from the launcher's variables."""
    e = os.environ
    if args.rank_src == "env":
        return int(e["RANK"]), int(e["LOCAL_RANK"]), int(e.get("GROUP_RANK", 0)), int(e["WORLD_SIZE"])
    if args.rank_src == "ompi":
        o, n = int(e["OMPI_COMM_WORLD_RANK"]), int(e["OMPI_COMM_WORLD_SIZE"])
        r = n - 1 - o if args.perm == "rev" else (o + 1) % n
        return r, int(e["OMPI_COMM_WORLD_LOCAL_RANK"]), 0, n
    if args.rank_src == "slurm":
        return int(e["SLURM_PROCID"]), int(e["SLURM_LOCALID"]), int(e["SLURM_NODEID"]), int(e["SLURM_NTASKS"])
    return args.node_rank * args.nprocs + i, i, args.node_rank, args.nnodes * args.nprocs


def make_logger(g, l, n):
    if args.fmt in ("logfilter", "logextra"):
        log = logging.getLogger("train")
        if log.handlers:  # already configured (error path)
            return lambda lvl, msg: log.log(lvl, msg, extra={"rank": g})
        h = logging.StreamHandler(sys.stdout)
        h.setFormatter(logging.Formatter("%(asctime)s %(processName)s [rank=%(rank)s] %(levelname)s %(name)s: %(message)s"))
        log.addHandler(h)
        log.setLevel(logging.INFO)
        if args.fmt == "logfilter":
            class RankFilter(logging.Filter):
                def filter(self, rec):
                    rec.rank = g
                    return True
            log.addFilter(RankFilter())
            return lambda lvl, msg: log.log(lvl, msg)
        return lambda lvl, msg: log.log(lvl, msg, extra={"rank": g})
    tag = {"global": f"[rank {g}]", "local": f"[local_rank {l}]", "both": f"[node{n} local{l} global{g}]",
           "localonly": f"[rank {l}]"}[args.fmt]

    def emit(lvl, msg):
        print(f"{time.strftime('%H:%M:%S')} {logging.getLevelName(lvl)} {tag} {msg}", flush=True)
    return emit


def load_batch(g, step):
    """Synthetic data loader; the faulty rank hits a broken record at --step."""
    torch.manual_seed(1000 * g + step)
    if args.fault == "raise" and g == args.bad and step == args.step:
        rec = {"x": [0.1] * 16, "label": "n/a", "shard": 7}
        if args.exc == "key":
            rec["input_ids"]
        elif args.exc == "value":
            int(rec["label"])
        else:
            shards = [0, 1, 2, 3]
            shards[rec["shard"]]
    return torch.randn(32, 16), torch.randn(32, 4)


def train(g, l, n, w):
    log = make_logger(g, l, n)
    dist.init_process_group("gloo", rank=g, world_size=w, timeout=datetime.timedelta(seconds=args.timeout))
    log(logging.INFO, f"init done: backend=gloo world_size={w} local_rank={l} node_rank={n} pid={os.getpid()}")
    grp, granks = None, None
    gkw = {"timeout": datetime.timedelta(seconds=args.timeout)} if args.group_timeout == "same" else {}
    if args.group == "pairs":
        for s in range(0, w, 2):
            gg = dist.new_group(list(range(s, min(s + 2, w))), **gkw)
            if s <= g < s + 2:
                grp, granks = gg, list(range(s, min(s + 2, w)))
    elif args.group == "subgroups":
        grp, _ = dist.new_subgroups(group_size=2, **gkw)
        granks = dist.get_process_group_ranks(grp)
    elif args.group == "node":
        per = w // 2
        for s in range(0, w, per):
            gg = dist.new_group(list(range(s, s + per)), **gkw)
            if s <= g < s + per:
                grp, granks = gg, list(range(s, s + per))
    if grp is not None:
        log(logging.INFO, f"stats group ranks={granks} group_rank={dist.get_rank(grp)} group_size={dist.get_world_size(grp)}")
    if args.noisy:
        warnings.warn("grad clipping disabled because max_norm=0; this may slow convergence")
        log(logging.WARNING, "no checkpoint found in ./ckpt, starting from scratch (error budget 0.05)")
    torch.manual_seed(0)
    model = torch.nn.Linear(16, 4)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    for step in range(1, args.steps + 1):
        x, y = load_batch(g, step)
        loss = torch.nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        bad_now = g == args.bad and step == args.step
        if bad_now and args.fault == "sigkill":
            os.kill(os.getpid(), signal.SIGKILL)
        flat = torch.cat([q.grad.flatten() for q in model.parameters()])
        if bad_now and args.where == "world":
            if args.fault == "hang":
                time.sleep(args.timeout + 12)
            elif args.fault == "mismatch":
                flat = torch.cat([flat, torch.zeros(12)])
        dist.all_reduce(flat)
        flat /= w
        i = 0
        for q in model.parameters():
            q.grad.copy_(flat[i:i + q.numel()].view_as(q)); i += q.numel()
        opt.step()
        if grp is not None:
            stats = torch.tensor([loss.item(), float(g), 1.0, 0.0])
            if bad_now and args.where == "group":
                if args.fault == "hang":
                    time.sleep(args.timeout + 12)
                elif args.fault == "mismatch":
                    stats = torch.zeros(9)
            dist.all_reduce(stats, group=grp)
            log(logging.INFO, f"step {step} group {granks} mean_loss {stats[0].item() / len(granks):.4f}")
        log(logging.INFO, f"step {step}/{args.steps} loss {loss.item():.4f}")
        if args.noisy and step % 2 == 0:
            log(logging.WARNING, f"step {step}: dataloader slow (0.21s), eval error rate 0.{g + 10}")
        time.sleep(0.3)
    dist.barrier()
    log(logging.INFO, "training finished")
    dist.destroy_process_group()


def main(i=None):
    g, l, n, w = setup(i)
    if args.catch == "exit":
        try:
            train(g, l, n, w)
        except Exception as e:
            make_logger(g, l, n)(logging.ERROR, f"training failed: {type(e).__name__}: {e}")
            sys.exit(1)
    else:
        train(g, l, n, w)


def spawn_entry(i):
    main(i)


if __name__ == "__main__":
    if args.rank_src == "spawn":
        print(f"node {args.node_rank}: spawning {args.nprocs} processes (global ranks "
              f"{args.node_rank * args.nprocs}..{args.node_rank * args.nprocs + args.nprocs - 1})", flush=True)
        mp.spawn(spawn_entry, nprocs=args.nprocs, join=True)
    else:
        main()
