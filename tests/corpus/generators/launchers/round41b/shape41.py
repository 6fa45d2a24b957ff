"""Round 41b: a small training job whose failures print output of an unusual SHAPE.

One program for three launch modes:
  python shape41.py ...                      single process (rank 0 of 1, no process group)
  torchrun --nproc-per-node 3 shape41.py ... one gloo rank per worker (env:// rendezvous)
  python shape41.py --spawn 3 ...            torch.multiprocessing.spawn, 3 gloo ranks

--fault NAME --fault-rank R --fault-step K injects, on rank R at step K (nothing else is faked):
  recursion   a self-referencing config resolved recursively -> RecursionError, "[Previous line repeated N more times]"
  tensor      a ValueError whose message prints a whole 60x12 tensor (hundreds of lines, profile="full")
  bigdict     a KeyError whose message embeds a 400-entry sample dict (one line of thousands of chars)
  statedict   load_state_dict of a checkpoint from a wider config -> multi-line "size mismatch for ..." RuntimeError
  cppstack    nn.Embedding index out of range with TORCH_SHOW_CPP_STACKTRACES=1 (C++ frames in the message)
  del         a ValueError in data loading; a Prefetcher.__del__ raises while the frame unwinds ("Exception ignored in")
  weakref     a ValueError; a weakref.finalize callback raises during teardown
  sleep       the rank sleeps 600 s before the all_reduce (the driver then sends SIGINT/SIGTERM from outside)
  terminate   a C++ extension (load_inline) throws c10::Error in a std::thread -> "terminate called after throwing"
  caught-*    healthy variants: the error happens but is caught, logged (traceback shown) and the job recovers
--fmt plain|loguru|colorlog   (loguru/colorlog with colours forced on), --tqdm shows progress bars on stderr.
"""
import argparse
import datetime
import logging
import os
import sys
import time
import weakref

import torch
import torch.distributed as dist
import torch.nn as nn

p = argparse.ArgumentParser()
p.add_argument("--steps", type=int, default=8)
p.add_argument("--fault", default="none")
p.add_argument("--fault-rank", type=int, default=1)
p.add_argument("--fault-step", type=int, default=3)
p.add_argument("--fmt", default="plain", choices=["plain", "loguru", "colorlog"])
p.add_argument("--tqdm", action="store_true")
p.add_argument("--spawn", type=int, default=0)
p.add_argument("--port", type=int, default=29641)
p.add_argument("--step-sleep", type=float, default=0.3)
p.add_argument("--pg-timeout", type=int, default=300)
args = p.parse_args()


def make_logger(rank):
    if args.fmt == "loguru":
        from loguru import logger
        logger.remove()
        logger.add(sys.stderr, colorize=True, backtrace=True, diagnose=True,
                   format="<green>{time:YYYY-MM-DD HH:mm:ss.SSS}</green> | <level>{level: <8}</level> | "
                          "rank" + str(rank) + " | <cyan>{name}</cyan>:<cyan>{function}</cyan>:<cyan>{line}</cyan> - <level>{message}</level>")
        return logger
    lg = logging.getLogger("train")
    h = logging.StreamHandler(sys.stderr)
    if args.fmt == "colorlog":
        import colorlog
        h.setFormatter(colorlog.ColoredFormatter(
            "%(log_color)s%(asctime)s %(levelname)-8s%(reset)s [rank" + str(rank) + "] %(blue)s%(name)s%(reset)s %(message)s",
            force_color=True))
    else:
        h.setFormatter(logging.Formatter("%(asctime)s %(levelname)s [rank" + str(rank) + "] %(message)s"))
    lg.addHandler(h)
    lg.setLevel(logging.INFO)
    lg.propagate = False
    return lg


class Net(nn.Module):
    def __init__(self, width=16, vocab=50):
        super().__init__()
        self.emb = nn.Embedding(vocab, width)
        self.fc1 = nn.Linear(width, width * 2)
        self.fc2 = nn.Linear(width * 2, width)
        self.head = nn.Linear(width, 1)

    def forward(self, ids):
        h = self.emb(ids).mean(1)
        return self.head(torch.relu(self.fc2(torch.relu(self.fc1(h)))))


def resolve(node, depth=0):
    # walks "parent" links of a config node; a config whose parent is itself never ends
    return resolve(node["parent"], depth + 1) if node.get("parent") is not None else depth


class Prefetcher:
    def __init__(self, rank):
        self.rank = rank
        self.fh = open(os.devnull, "rb")

    def close(self):
        self.fh.close()

    def __del__(self):
        # drains the buffered reader one last time; fails when close() already ran
        self.fh.read(1)


def on_loader_collected(name):
    raise RuntimeError(f"shard cache for {name} was not flushed before the loader was collected")


def get_batch(rank, step, g):
    ids = torch.randint(0, 50, (8, 6), generator=g)
    y = torch.randn(8, 1, generator=g)
    return ids, y


def fault_here(rank, step, model, g, log):
    f = args.fault
    if f == "recursion":
        cfg = {"name": f"model-r{rank}", "lr": 0.01}
        cfg["parent"] = cfg  # a config that inherits from itself
        resolve(cfg)
    elif f == "tensor":
        torch.set_printoptions(profile="full")
        x = torch.randn(60, 12, generator=g)
        x[37, 5] = float("nan")
        raise ValueError(f"rank {rank} step {step}: batch features contain non-finite values; features =\n{x}")
    elif f == "bigdict":
        sample = {f"feat_{i:03d}": round(float(v), 6) for i, v in enumerate(torch.randn(400, generator=g))}
        raise KeyError(f"label 'target' missing from sample {step:05d} of shard {rank}: {sample}")
    elif f == "statedict":
        ckpt = Net(width=24).state_dict()  # written by a run with a different width
        model.load_state_dict(ckpt)
    elif f == "cppstack":
        ids = torch.full((8, 6), 50 + rank * 7)  # token ids past the vocabulary
        model(ids)
    elif f == "del":
        pf = Prefetcher(rank)
        pf.close()
        raise ValueError(f"shard {rank}: record {step} has 13 fields, expected 12")
    elif f == "weakref":
        loader = Prefetcher(rank)
        loader.close()
        loader.__class__ = type("Loader", (), {})  # plain object, no __del__
        weakref.finalize(loader, on_loader_collected, f"shard-{rank}")
        raise ValueError(f"shard {rank}: record {step} has 13 fields, expected 12")
    elif f == "sleep":
        log.info(f"step {step} waiting for shard refresh")
        time.sleep(600)
    elif f == "terminate":
        from torch.utils.cpp_extension import load_inline
        src = r"""
#include <torch/extension.h>
#include <thread>
void check_shard(int64_t n) {
  std::thread t([n]() {
    TORCH_CHECK(n % 2 == 0, "shard record count must be even, got ", n);
  });
  t.join();
}
"""
        mod = load_inline("shardcheck41", cpp_sources=src, functions=["check_shard"],
                          build_directory=os.environ["EXT_DIR"], verbose=False)
        mod.check_shard(1001)
    elif f == "caught-recursion":
        import traceback
        cfg = {"name": "model"}
        cfg["parent"] = cfg
        try:
            resolve(cfg)
        except RecursionError:
            log.warning("config inheritance loop; falling back to the flat config. Traceback:\n" + traceback.format_exc())
    elif f == "caught-exception":
        try:
            raise ConnectionResetError(104, "Connection reset by peer (shard server)")
        except ConnectionResetError:
            log.exception(f"fetch of shard {rank} failed at step {step}; retrying in 0.1 s")
            time.sleep(0.1)
            log.info(f"retry of shard {rank} succeeded")


def train(rank, world):
    if world > 1 and not dist.is_initialized():
        dist.init_process_group("gloo", rank=rank, world_size=world,
                                timeout=datetime.timedelta(seconds=args.pg_timeout))
    log = make_logger(rank)
    if os.environ.get("PIDDIR"):  # lets the driver signal one rank from outside
        open(os.path.join(os.environ["PIDDIR"], f"rank{rank}.pid"), "w").write(str(os.getpid()))
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(100 + rank)
    model = Net()
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    log.info(f"start world_size={world} steps={args.steps} fault={args.fault}")
    steps = range(args.steps)
    if args.tqdm:
        from tqdm import tqdm
        steps = tqdm(steps, desc=f"rank{rank} train", position=rank, mininterval=0, ncols=100)
    for step in steps:
        ids, y = get_batch(rank, step, g)
        if step == args.fault_step and rank == args.fault_rank and args.fault != "none":
            try:
                fault_here(rank, step, model, g, log)
            except Exception:
                if args.fmt == "plain":
                    raise
                log.exception(f"step {step} failed on rank {rank}")  # loguru/colorlog: logged, then re-raised
                raise
        loss = nn.functional.mse_loss(model(ids), y)
        opt.zero_grad()
        loss.backward()
        if world > 1:
            for prm in model.parameters():
                dist.all_reduce(prm.grad)
                prm.grad /= world
        opt.step()
        if args.tqdm:
            steps.set_postfix(loss=f"{loss.item():.4f}")
            if step % 3 == 2:
                steps.write(f"rank{rank} step {step} loss {loss.item():.4f}", file=sys.stderr)
        else:
            log.info(f"step {step} loss {loss.item():.4f}")
        time.sleep(args.step_sleep)
    if args.tqdm:
        steps.close()
    if world > 1:
        dist.barrier()
        dist.destroy_process_group()
    log.info("training done")


def spawn_main(rank, world):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(args.port)
    train(rank, world)


if __name__ == "__main__":
    if args.spawn:
        import torch.multiprocessing as mp
        mp.spawn(spawn_main, args=(args.spawn,), nprocs=args.spawn, join=True)
    elif "RANK" in os.environ:
        train(int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]))
    else:
        train(0, 1)
