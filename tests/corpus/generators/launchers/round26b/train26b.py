"""Round 26b: a tiny DDP job (gloo, CPU) with an induced fault on one rank at a chosen PHASE of the job.

  --phase init      before init_process_group returns (parsing this rank's shard spec / joining the group)
  --phase resume    while loading this rank's checkpoint shard (after init; ranks then agree on the step)
  --phase step1     in the first training step (before backward)
  --phase valid     in the validation loop after epoch 1 (--val-on all: every rank validates and all-reduces
                    the val loss per batch; --val-on rank0: only rank 0 validates, the others go straight on
                    into epoch 2's DDP all-reduce)
  --phase save      while saving the final checkpoint (every rank writes its shard + manifest, then a barrier)
  --phase teardown  after training: --fault raise/hang in cleanup before the final barrier +
                    destroy_process_group; --fault sigkill in an atexit handler after destroy_process_group
  --fault raise | sigkill | hang      (hang: sleep 90 s, process-group timeout --pg-timeout s)
  --bad-rank R

Launch with torchrun (env ranks) or --spawn N (torch.multiprocessing.spawn).
"""
import argparse
import atexit
import datetime
import json
import logging
import os
import signal
import sys
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

EPOCHS, STEPS, VAL_STEPS, BATCH = 2, 3, 2, 8
log = logging.getLogger("train")


def get_args():
    p = argparse.ArgumentParser()
    p.add_argument("--phase", required=True, choices=["init", "resume", "step1", "valid", "save", "teardown"])
    p.add_argument("--fault", required=True, choices=["raise", "sigkill", "hang", "none"])
    p.add_argument("--bad-rank", type=int, default=1)
    p.add_argument("--val-on", default="all", choices=["all", "rank0"])
    p.add_argument("--pg-timeout", type=int, default=15)
    p.add_argument("--ckpt-dir", default="ckpt")
    p.add_argument("--spawn", type=int, default=0)
    p.add_argument("--attempt-store", action="store_true",
                   help="join through PrefixStore('attempt<TORCHELASTIC_RESTART_COUNT>') on torchrun's store: without "
                        "it a group restarted by --max-restarts fails in gloo connectFullMesh (stale addresses of "
                        "the previous attempt) on torch 2.13 before it reaches the fault again")
    return p.parse_args()


def hit(args, rank, phase):
    """True on the bad rank at the bad phase; sigkill/hang are carried out right here."""
    if args.phase != phase or rank != args.bad_rank:
        return False
    if args.fault == "sigkill":
        os.kill(os.getpid(), signal.SIGKILL)
    if args.fault == "hang":
        log.info("[rank %d] %s: waiting on shared storage ...", rank, phase)
        time.sleep(90)
    return args.fault == "raise"


def shard_size(rank, args):
    # every rank reads its own entry of a shard spec; induced (init/raise): the bad rank's entry is malformed
    spec = ["256", "256", "256"]
    if args.phase == "init" and args.fault == "raise":
        spec[args.bad_rank] = "25six"
    return int(spec[rank])


def load_shard(rank, world, model, opt, args):
    path = os.path.join(args.ckpt_dir, f"shard{rank}.pt")
    state = torch.load(path)
    if hit(args, rank, "resume"):
        del state["optimizer"]          # induced: this rank's shard was written without optimizer state
    model.module.load_state_dict(state["model"])
    opt.load_state_dict(state["optimizer"])
    step = torch.tensor([state["step"]])
    dist.all_reduce(step, op=dist.ReduceOp.MAX)   # ranks agree on the step they resume from
    log.info("[rank %d] resumed from %s at step %d", rank, path, step.item())


def save_shard(rank, model, opt, step, args):
    os.makedirs(args.ckpt_dir, exist_ok=True)
    state = {"model": model.module.state_dict(), "optimizer": opt.state_dict(), "step": step}
    torch.save(state, os.path.join(args.ckpt_dir, f"shard{rank}.pt"))
    manifest = {"rank": rank, "step": step, "file": f"shard{rank}.pt"}
    if hit(args, rank, "save"):
        manifest["last_loss"] = torch.tensor(0.1234)   # induced: a tensor slips into the json manifest
    with open(os.path.join(args.ckpt_dir, f"manifest{rank}.json"), "w") as f:
        json.dump(manifest, f)


def validate(rank, world, model, args, data):
    model.eval()
    total, n = 0.0, 0
    batches = data if not hit(args, rank, "valid") else []   # induced (raise): this rank's val shard is empty
    with torch.no_grad():
        for x, y in batches:
            loss = nn.functional.mse_loss(model(x), y)
            if args.val_on == "all":
                t = torch.tensor([loss.item()])
                dist.all_reduce(t)            # eval all-reduce of the val loss, per batch
                total += t.item() / world
            else:
                total += loss.item()
            n += 1
    val = total / n
    model.train()
    return val


def train(rank, world, args):
    logging.basicConfig(level=logging.INFO, stream=sys.stdout,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    n_samples = shard_size(rank, args)
    hit(args, rank, "init")             # sigkill / hang before joining the process group
    timeout = datetime.timedelta(seconds=args.pg_timeout)
    if args.attempt_store:
        base = dist.TCPStore(os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"]), is_master=False, timeout=timeout)
        store = dist.PrefixStore("attempt" + os.environ.get("TORCHELASTIC_RESTART_COUNT", "0"), base)
        dist.init_process_group("gloo", store=store, rank=rank, world_size=world, timeout=timeout)
    else:
        dist.init_process_group("gloo", rank=rank, world_size=world, timeout=timeout)
    log.info("[rank %d] process group ready: world_size=%d backend=gloo samples=%d attempt=%s", rank, world,
             n_samples, os.environ.get("TORCHELASTIC_RESTART_COUNT", "-"))
    torch.manual_seed(0)
    model = DDP(nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 1)))
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    if args.phase == "resume":
        load_shard(rank, world, model, opt, args)
    g = torch.Generator().manual_seed(rank)
    data = [(torch.randn(BATCH, 16, generator=g), torch.randn(BATCH, 1, generator=g)) for _ in range(STEPS)]
    val_data = data[:VAL_STEPS]
    step = 0
    for epoch in range(1, EPOCHS + 1):
        for i, (x, y) in enumerate(data):
            if step == 0 and hit(args, rank, "step1"):
                raise ValueError(f"batch 0: targets have shape {tuple(y.shape)} but {BATCH} class ids were expected")
            loss = nn.functional.mse_loss(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            step += 1
            log.info("[rank %d] epoch %d step %d/%d loss %.4f", rank, epoch, i + 1, STEPS, loss.item())
        if epoch == 1 and (args.val_on == "all" or rank == 0):
            val = validate(rank, world, model, args, val_data)
            log.info("[rank %d] epoch %d val_loss %.4f", rank, epoch, val)
    save_shard(rank, model, opt, step, args)
    log.info("[rank %d] saved checkpoint shard at step %d", rank, step)
    if args.phase == "teardown" and args.fault == "sigkill" and rank == args.bad_rank:
        atexit.register(hit, args, rank, "teardown")   # the handler runs after destroy_process_group
    elif hit(args, rank, "teardown"):
        raise RuntimeError(f"rank {rank}: metrics sink closed before final flush ({step} records pending)")
    dist.barrier()
    dist.destroy_process_group()
    log.info("[rank %d] training done", rank)


def make_ckpt(world):
    """Write the checkpoint shards the resume cases start from (no process group needed)."""
    os.makedirs("ckpt", exist_ok=True)
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    model(torch.randn(2, 16)).sum().backward()
    opt.step()
    for r in range(world):
        torch.save({"model": model.state_dict(), "optimizer": opt.state_dict(), "step": 3}, f"ckpt/shard{r}.pt")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--make-ckpt"]:
        make_ckpt(int(sys.argv[2]))
        sys.exit(0)
    args = get_args()
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    if args.spawn:
        mp.spawn(train, args=(args.spawn, args), nprocs=args.spawn, join=True)
    else:
        train(int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]), args)
