"""round75a: a small DDP job (gloo, CPU) that checkpoints / resumes and uses object collectives.
One rank (--culprit) misbehaves in the checkpoint or object-collective code, as selected by --mode.

Launch with torchrun (reads RANK/WORLD_SIZE) or with --spawn N (torch.multiprocessing.spawn).

Modes (what each induces on rank --culprit, at training step --step):
  none              healthy: trains, saves with the selected --ckpt kind, resumes/validates, exits 0
  dcp-load-key      resume with dcp.load: the culprit's model has an extra layer (per-rank config), so its
                    state_dict holds a key that is not in the checkpoint
  dcp-load-shape    resume with dcp.load: the culprit builds its model with another hidden size
  dcp-planner-raise dcp.save with a custom SavePlanner whose key-renaming hook raises KeyError on the culprit
  dcp-writer-raise  dcp.save with a FileSystemWriter subclass whose write_data raises OSError(ENOSPC) on the culprit
  dcp-async-raise   dcp.async_save with that writer; the error surfaces at future.result()
  dcp-ro            dcp.save where the culprit's view of the checkpoint directory is a read-only mount
  dcp-load-missing  resume with dcp.load where the culprit's checkpoint path does not exist
  dcp-sigkill       the culprit SIGKILLs itself inside its storage writer's write_data (no traceback)
  dcp-resume        resume from an existing DCP checkpoint (--resume-from), e.g. one with a truncated .distcp file
  tsave-resume      resume each rank from its own torch.save file ckpt_rank{r}.pt in --resume-from
                    (the run_all script corrupts / removes / replaces one rank's file beforehand)
  obj-allgather-lock   all_gather_object of stats; the culprit's stats dict holds a threading.Lock
  obj-bcast-reduce     broadcast_object_list from src=culprit of a config object whose __reduce__ raises
  obj-gather-reduce    gather_object to rank 0; the culprit's object has a raising __reduce__
  obj-scatter-len      scatter_object_list from src=culprit with a list one element short
  obj-bcast-len        broadcast_object_list where the culprit passes a list of another length
"""
import argparse
import datetime
import logging
import os
import signal
import sys
import threading
import time

import torch
import torch.distributed as dist
import torch.distributed.checkpoint as dcp
import torch.nn as nn
from torch.distributed.checkpoint import FileSystemWriter
from torch.distributed.checkpoint.default_planner import DefaultSavePlanner
from torch.nn.parallel import DistributedDataParallel as DDP

log = logging.getLogger("train")
CKPT_PG = None


def parse():
    p = argparse.ArgumentParser()
    p.add_argument("--spawn", type=int, default=0)
    p.add_argument("--mode", default="none")
    p.add_argument("--ckpt", default="dcp", choices=["dcp", "tsave", "obj", "async"])
    p.add_argument("--culprit", type=int, default=1)
    p.add_argument("--step", type=int, default=3)
    p.add_argument("--steps", type=int, default=6)
    p.add_argument("--ckpt-dir", default="ckpt")
    p.add_argument("--ro-dir", default="ckpt_ro")
    p.add_argument("--resume-from", default=None)
    p.add_argument("--pg-timeout", type=int, default=30)
    p.add_argument("--hidden", type=int, default=32)
    p.add_argument("--find-unused", action="store_true", help="DDP(find_unused_parameters=True) (warns when none are unused)")
    p.add_argument("--no-ddp", action="store_true", help="average gradients by hand (DDP segfaults under TORCH_DISTRIBUTED_DEBUG=DETAIL on 2.13 CPU)")
    p.add_argument("--record", action="store_true", help="wrap main in torch.distributed.elastic @record")
    return p.parse_args()


class Net(nn.Module):
    def __init__(self, hidden, extra=False):
        super().__init__()
        self.inp = nn.Linear(16, hidden)
        self.act = nn.ReLU()
        if extra:  # per-rank config turned on an extra adapter layer
            self.adapter = nn.Linear(hidden, hidden)
        self.out = nn.Linear(hidden, 4)

    def forward(self, x):
        h = self.act(self.inp(x))
        if hasattr(self, "adapter"):
            h = h + self.adapter(h)
        return self.out(h)


class RenamingPlanner(DefaultSavePlanner):
    """Save planner that renames the top-level section of every (flattened) key through a table (export layout)."""

    def __init__(self, sections):
        super().__init__()
        self.sections = sections

    def rename(self, fqn):
        head, _, rest = fqn.partition(".")
        return self.sections[head] + "." + rest

    def create_local_plan(self):
        self.state_dict = {self.rename(k): v for k, v in self.state_dict.items()}
        return super().create_local_plan()


class QuotaWriter(FileSystemWriter):
    """FileSystemWriter that checks a per-rank quota before writing (the culprit's quota is exhausted)."""

    def __init__(self, path, rank, fail=False, kill=False):
        super().__init__(path, thread_count=1)
        self.my_rank, self.fail, self.kill = rank, fail, kill

    def write_data(self, plan, planner):
        if self.kill:
            log.info("rank %d: writing %d items", self.my_rank, len(plan.items))
            sys.stdout.flush(); sys.stderr.flush()
            os.kill(os.getpid(), signal.SIGKILL)
        if self.fail:
            raise OSError(28, "No space left on device", os.path.join(self.path, f"__{self.my_rank}_0.distcp"))
        return super().write_data(plan, planner)


class RunConfig:
    """Config object broadcast from one rank; the culprit's copy carries an open handle it cannot serialize."""

    def __init__(self, lr, handle=None):
        self.lr, self.handle = lr, handle

    def __reduce__(self):
        if self.handle is not None:
            raise TypeError(f"RunConfig cannot be pickled while it holds an open handle ({self.handle!r})")
        return (RunConfig, (self.lr,))


class EvalStats:
    def __init__(self, rank, loss, broken=False):
        self.rank, self.loss, self.broken = rank, loss, broken

    def __reduce__(self):
        if self.broken:
            raise RuntimeError(f"EvalStats for rank {self.rank} is not serializable: loss tensor still requires grad")
        return (EvalStats, (self.rank, self.loss))


class TrainState:  # custom class saved in one rank's resume file (refused by weights_only=True)
    def __init__(self, step, seed):
        self.step, self.seed = step, seed


def build(args, rank, mode):
    hidden = args.hidden + (16 if mode == "dcp-load-shape" and rank == args.culprit else 0)
    extra = mode == "dcp-load-key" and rank == args.culprit
    torch.manual_seed(0)
    model = Net(hidden, extra=extra)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    return model, opt


def train_steps(ddp, opt, rank, start, stop):
    g = torch.Generator().manual_seed(100 + rank)
    for step in range(start, stop + 1):
        x = torch.randn(8, 16, generator=g)
        y = torch.randn(8, 4, generator=g)
        loss = nn.functional.mse_loss(ddp(x), y)
        opt.zero_grad()
        loss.backward()
        if not isinstance(ddp, DDP):  # --no-ddp: average gradients by hand
            ws = dist.get_world_size()
            for p in ddp.parameters():
                dist.all_reduce(p.grad)
                p.grad /= ws
        opt.step()
        log.info("rank %d step %d loss %.4f", rank, step, loss.item())
        time.sleep(0.1)
    return loss


def loader_state(rank):
    """Per-rank data-loader state (shuffle order of this rank's shard); only this rank saves/loads it."""
    return {f"rank{rank}": {"perm": torch.randperm(8192, generator=torch.Generator().manual_seed(rank)), "cursor": torch.tensor(0)}}


def ckpt_path(args, rank):
    if args.mode == "dcp-ro" and rank == args.culprit:
        return os.path.join(args.ro_dir, "step_%d" % args.step)
    return os.path.join(args.ckpt_dir, "step_%d" % args.step)


def do_checkpoint(args, rank, ws, model, opt, loss):
    mode, c = args.mode, args.culprit
    if args.ckpt == "tsave":
        os.makedirs(args.ckpt_dir, exist_ok=True)
        path = os.path.join(args.ckpt_dir, f"ckpt_rank{rank}.pt")
        torch.save({"model": model.state_dict(), "optim": opt.state_dict(), "step": args.step}, path)
        log.info("rank %d: saved %s", rank, path)
        dist.barrier()
        return
    if args.ckpt == "obj":
        stats = {"rank": rank, "loss": float(loss), "samples": 8 * args.step}
        out = [None] * ws
        dist.all_gather_object(out, stats)
        if rank == 0:
            log.info("gathered stats: %s", out)
        return
    sd = {"model": model.state_dict(), "optim": opt.state_dict(), "loader": loader_state(rank)}
    path = ckpt_path(args, rank)
    log.info("rank %d: saving checkpoint to %s", rank, path)
    if mode == "dcp-planner-raise":
        mapping = {"model": "module", "optim": "optimizer", "loader": "dataloader"}
        if rank == c:
            sd["ema"] = {k: v.clone() for k, v in model.state_dict().items()}  # only this rank keeps an EMA copy
        dcp.save(sd, storage_writer=FileSystemWriter(path), planner=RenamingPlanner(mapping))
    elif mode in ("dcp-writer-raise", "dcp-sigkill"):
        w = QuotaWriter(path, rank, fail=(mode == "dcp-writer-raise" and rank == c),
                        kill=(mode == "dcp-sigkill" and rank == c))
        dcp.save(sd, storage_writer=w)
    elif args.ckpt == "async" or mode == "dcp-async-raise":
        w = QuotaWriter(path, rank, fail=(mode == "dcp-async-raise" and rank == c))
        # separate gloo group so the background save's collectives don't interleave with DDP's all_reduce
        fut = dcp.async_save(sd, storage_writer=w, process_group=CKPT_PG)
        log.info("rank %d: async checkpoint started", rank)
        return fut
    else:
        dcp.save(sd, checkpoint_id=path)
    log.info("rank %d: checkpoint step %d saved", rank, args.step)


def resume(args, rank, ws):
    """Rebuild the model and resume from a checkpoint (dcp or per-rank torch.save)."""
    model, opt = build(args, rank, args.mode)
    if args.ckpt == "tsave" or args.mode == "tsave-resume":
        path = os.path.join(args.resume_from, f"ckpt_rank{rank}.pt")
        log.info("rank %d: loading %s", rank, path)
        st = torch.load(path, map_location="cpu", weights_only=True)
        model.load_state_dict(st["model"]); opt.load_state_dict(st["optim"])
        start = int(st["step"]) if not isinstance(st["step"], TrainState) else st["step"].step
    else:
        path = args.resume_from
        if args.mode == "dcp-load-missing" and rank == args.culprit:
            path = path.replace("step_", "step-")  # this rank's launcher config has an old naming scheme
        log.info("rank %d: loading checkpoint %s", rank, path)
        sd = {"model": model.state_dict(), "optim": opt.state_dict(), "loader": loader_state(rank)}
        dcp.load(sd, checkpoint_id=path)
        model.load_state_dict(sd["model"]); opt.load_state_dict(sd["optim"])
        start = args.step
    log.info("rank %d: resumed at step %d", rank, start)
    return model, DDP(model), opt, start  # wrap after loading


def object_collective(args, rank, ws, loss):
    mode, c = args.mode, args.culprit
    if mode == "obj-allgather-lock":
        stats = {"rank": rank, "loss": float(loss), "samples": 8 * args.step}
        if rank == c:
            stats["progress_lock"] = threading.Lock()  # leaked from the rank's prefetch helper
        out = [None] * ws
        dist.all_gather_object(out, stats)
        log.info("rank %d: gathered %d stats", rank, len(out))
    elif mode == "obj-bcast-reduce":
        cfg = [RunConfig(0.05, handle=open(os.devnull) if rank == c else None)]
        dist.broadcast_object_list(cfg, src=c)
        log.info("rank %d: got config lr=%s", rank, cfg[0].lr)
    elif mode == "obj-gather-reduce":
        obj = EvalStats(rank, float(loss), broken=(rank == c))
        out = [None] * ws if rank == 0 else None
        dist.gather_object(obj, out, dst=0)
        if rank == 0:
            log.info("eval stats gathered from %d ranks", len(out))
    elif mode == "obj-scatter-len":
        shards = None
        if rank == c:
            files = [f"shard-{i:03d}.jsonl" for i in range(ws - 1)]  # one data shard short of world size
            shards = [files[i::ws] for i in range(ws - 1)]
        out = [None]
        dist.scatter_object_list(out, shards, src=c)
        log.info("rank %d: got shards %s", rank, out[0])
    elif mode == "obj-bcast-len":
        n = 3 if rank != c else 2  # this rank's config lists one schedule entry fewer
        objs = [{"lr": 0.05}, {"warmup": 10}, {"decay": 0.9}][:n] if rank == 0 else [None] * n
        dist.broadcast_object_list(objs, src=0)
        log.info("rank %d: got schedule %s", rank, objs)


def main_worker(rank, ws, args):
    logging.basicConfig(level=logging.INFO, format=f"%(asctime)s [rank{rank}] %(levelname)s %(name)s: %(message)s",
                        stream=sys.stdout, force=True)
    if args.spawn:
        os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
        os.environ.setdefault("MASTER_PORT", "29575")
    dist.init_process_group("gloo", rank=rank, world_size=ws, timeout=datetime.timedelta(seconds=args.pg_timeout))
    mode = args.mode
    global CKPT_PG
    CKPT_PG = dist.new_group(backend="gloo") if (args.ckpt == "async" or mode == "dcp-async-raise") else None
    log.info("rank %d/%d started (mode=%s ckpt=%s)", rank, ws, mode, args.ckpt)
    if args.resume_from:
        model, ddp, opt, start = resume(args, rank, ws)
        train_steps(ddp, opt, rank, start + 1, args.steps)
    else:
        model, opt = build(args, rank, mode)
        ddp = model if args.no_ddp else DDP(model, find_unused_parameters=args.find_unused)
        loss = train_steps(ddp, opt, rank, 1, args.step)
        if mode.startswith("obj-"):
            object_collective(args, rank, ws, loss)
            fut = None
        else:
            fut = do_checkpoint(args, rank, ws, model, opt, loss)
        loss = train_steps(ddp, opt, rank, args.step + 1, args.steps)
        if fut is not None:
            fut.result()
            log.info("rank %d: async checkpoint step %d finished", rank, args.step)
    dist.barrier()
    log.info("rank %d: done", rank)
    dist.destroy_process_group()


def main():
    args = parse()
    if args.spawn:
        torch.multiprocessing.spawn(main_worker, args=(args.spawn, args), nprocs=args.spawn, join=True)
    else:
        fn = main_worker
        if args.record:
            from torch.distributed.elastic.multiprocessing.errors import record
            fn = record(fn)
        fn(int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]), args)


if __name__ == "__main__":
    main()
