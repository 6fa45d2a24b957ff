"""round79a: a long, noisy DDP training job (CPU, gloo) in which ONE rank fails late.

Every rank prints what real jobs print for minutes: an environment/config dump at start, a tqdm progress bar per
rank (stderr; not a TTY, so one long line of carriage returns), per-step logging lines with loss / lr / throughput,
a warning repeated every step (see --warn), periodic eval (all_reduce'd metrics) and checkpoint lines.

Launch with torchrun (env://) or `--spawn N` (torch.multiprocessing.spawn).  `--culprit R --at-step K` picks the rank
and step of the fault; `--mode`:
  none        healthy run, exits 0
  keyerror    the culprit's Dataset.__getitem__ meets a record without 'label' at step K -> KeyError: 'label'
  ragged      the culprit's collate_fn builds torch.tensor() from token lists of unequal length at step K
              -> ValueError: expected sequence of length 64 at dim 1 (got 63)
  index       the culprit indexes its feature table past its end at step K -> IndexError ... out of bounds
  ckpt-dir    (checkpointing rank 0) saves step K's checkpoint into a directory that does not exist
              -> RuntimeError: Parent directory ... does not exist.
  nan         the culprit's batch at step K contains NaN; the job's finite-loss check raises FloatingPointError
  sigkill     the culprit SIGKILLs itself at step K (no traceback)
  hang        the culprit sleeps 600 s at step K before its forward; the others time out in DDP's gradient
              all_reduce after the process-group timeout (--pg-timeout seconds)
  mismatch    from the eval at step K on, the culprit all_reduces a prediction histogram of 16 bins instead of 10
              (12 vs 18 floats: a different tensor size)
  hostoom     the culprit puts itself into a memory cgroup (path in $R79A_CGROUP) at start and, from step K on,
              keeps every batch's activations in a growing "debug cache" (32 MiB a step) until the OOM killer fires
Other knobs: --warn (comma list of per-step warnings: autocast = deprecated torch.cpu.amp.autocast, tensorcopy =
torch.tensor(tensor), getlr = scheduler.get_lr() outside step, strides = channels_last after DDP -> 'Grad strides do
not match bucket view strides' once), --warn-always CAT (warnings.filterwarnings('always', category=CAT), as some codebases do),
--bar-interval S (tqdm mininterval; 0 redraws every step), --no-ddp (hand-averaged gradients; TORCH_DISTRIBUTED_DEBUG=DETAIL makes DDP.__init__ crash on torch 2.13 CPU).
"""
import argparse
import datetime
import json
import logging
import math
import os
import signal
import sys
import time
import warnings

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler
from tqdm import tqdm

p = argparse.ArgumentParser()
p.add_argument("--spawn", type=int, default=0)
p.add_argument("--mode", default="none")
p.add_argument("--culprit", type=int, default=-1)
p.add_argument("--at-step", type=int, default=10**9)
p.add_argument("--steps", type=int, default=1000)
p.add_argument("--batch", type=int, default=16)
p.add_argument("--log-every", type=int, default=1)
p.add_argument("--eval-every", type=int, default=100)
p.add_argument("--ckpt-every", type=int, default=250)
p.add_argument("--ckpt-dir", default="ckpt")
p.add_argument("--pg-timeout", type=float, default=30.0)
p.add_argument("--warn", default="")
p.add_argument("--warn-always", default="", help="warning category to show every time (FutureWarning, UserWarning, all)")
p.add_argument("--bar", default="rank", choices=["rank", "position", "none"])
p.add_argument("--bar-interval", type=float, default=0.1, help="tqdm mininterval (0: redraw every step)")
p.add_argument("--no-ddp", action="store_true")
p.add_argument("--seed", type=int, default=1234)
p.add_argument("--record", action="store_true", help="wrap main in torchrun's @record (error.json)")
args = p.parse_args()
WARN = set(filter(None, args.warn.split(",")))


class Shard(Dataset):
    """Synthetic 'tokenized' records: dict(tokens=list[int] (64), feat_idx=int, label=int)."""

    def __init__(self, n, rank, culprit_bad_idx=None):
        g = torch.Generator().manual_seed(args.seed)
        self.tokens = torch.randint(0, 512, (n, 64), generator=g)
        self.labels = torch.randint(0, 10, (n,), generator=g)
        self.rank = rank
        self.bad_idx = culprit_bad_idx  # set of indices whose record is "corrupt" on this rank

    def __len__(self):
        return len(self.tokens)

    def __getitem__(self, i):
        rec = {"tokens": self.tokens[i].tolist(), "feat_idx": int(i) % 4096, "label": int(self.labels[i])}
        if self.bad_idx and i in self.bad_idx:
            if args.mode == "keyerror":
                del rec["label"]  # a record written by an old exporter has no label field
            elif args.mode == "ragged":
                rec["tokens"] = rec["tokens"][:-1]  # a truncated record: 63 tokens
            elif args.mode == "index":
                rec["feat_idx"] = 5000 + i % 7  # an id from a newer feature table
        return {"tokens": rec["tokens"], "feat_idx": rec["feat_idx"], "label": rec["label"]}


def collate(batch):
    return {"tokens": torch.tensor([b["tokens"] for b in batch]),
            "feat_idx": torch.tensor([b["feat_idx"] for b in batch]),
            "label": torch.tensor([b["label"] for b in batch])}


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(512, 32)
        self.conv = nn.Conv2d(1, 4, 3, padding=1)
        self.feat = nn.Parameter(torch.randn(4096, 8) * 0.1, requires_grad=False)  # frozen feature table
        self.fc1 = nn.Linear(32 * 4 + 8, 64)
        self.fc2 = nn.Linear(64, 10)

    def forward(self, tokens, feat_idx):
        e = self.emb(tokens)  # B,64,32
        h = self.conv(e.unsqueeze(1))  # B,4,64,32
        h = h.mean(2).flatten(1)  # B,128
        f = self.feat[feat_idx]  # B,8
        return self.fc2(F.relu(self.fc1(torch.cat([h, f], 1))))


def setup_logging(rank):
    fmt = f"%(asctime)s [rank{rank}] %(levelname)s %(name)s: %(message)s"
    logging.basicConfig(level=logging.INFO, format=fmt, stream=sys.stderr, force=True)
    logging.captureWarnings(False)
    return logging.getLogger("train")


def env_dump(log, rank, world):
    keys = sorted(k for k in os.environ if k.startswith(("NCCL_", "GLOO_", "TORCH_", "MASTER_", "OMP_", "LOCAL_",
                                                           "WORLD_", "RANK", "GROUP_", "ROLE_", "TORCHELASTIC_",
                                                           "PYTHON", "CUDA_", "KMP_", "MKL_")))
    log.info("distributed env (%d vars):", len(keys))
    for k in keys:
        log.info("  %s=%s", k, os.environ[k])
    log.info("torch %s, gloo available=%s, nccl available=%s, num_threads=%d, host=%s pid=%d",
             torch.__version__, dist.is_gloo_available(), dist.is_nccl_available(), torch.get_num_threads(),
             os.uname().nodename, os.getpid())
    if rank == 0:
        for line in torch.__config__.show().splitlines():
            log.info("build: %s", line)
        cfg = {k: v for k, v in vars(args).items() if k not in ("mode", "culprit", "at_step")}
        cfg.update(world_size=world, optimizer="AdamW", lr=3e-4, weight_decay=0.01, warmup=50, schedule="cosine")
        log.info("config:\n%s", json.dumps(cfg, indent=2, sort_keys=True))


def join_cgroup(log):
    cg = os.environ.get("R79A_CGROUP")
    if cg:
        with open(os.path.join(cg, "cgroup.procs"), "w") as f:
            f.write(str(os.getpid()))
        lim = int(open(os.path.join(cg, "memory.limit_in_bytes")).read())
        log.info("joined memory cgroup %s (limit %.1f GiB)", cg, lim / 2**30)


def main(rank, world):
    torch.set_num_threads(1)
    if args.warn_always == "all":
        warnings.simplefilter("always")
    elif args.warn_always:  # e.g. a codebase that wants to see every FutureWarning
        warnings.filterwarnings("always", category={"FutureWarning": FutureWarning, "UserWarning": UserWarning,
                                                    "DeprecationWarning": DeprecationWarning}[args.warn_always])
    log = setup_logging(rank)
    if args.mode == "hostoom" and rank == args.culprit:
        join_cgroup(log)
    env_dump(log, rank, world)
    dist.init_process_group("gloo", rank=rank, world_size=world,
                            timeout=datetime.timedelta(seconds=args.pg_timeout))
    log.info("process group initialized: backend=%s rank=%d/%d timeout=%ss", dist.get_backend(), rank, world,
             args.pg_timeout)
    torch.manual_seed(args.seed)
    model = Net()
    if args.no_ddp:
        for prm in model.parameters():
            dist.broadcast(prm.data, 0)
        ddp = model
    else:
        ddp = nn.parallel.DistributedDataParallel(model)
    if "strides" in WARN:
        model.conv.to(memory_format=torch.channels_last)  # after DDP was built: grad layout != bucket view
    opt = torch.optim.AdamW([q for q in model.parameters() if q.requires_grad], lr=3e-4, weight_decay=0.01)
    total = args.steps
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min(1.0, (s + 1) / 50) * 0.5 * (1 + math.cos(math.pi * min(s, total) / total)))

    n = args.steps * args.batch * world + 64
    spe = n // (args.batch * world)  # steps per epoch (DistributedSampler shards n records)
    bad = None
    if rank == args.culprit and args.mode in ("keyerror", "ragged", "index"):
        # which of this rank's samples does step K read? (sampler order for the epoch containing K)
        s = DistributedSampler(range(n), num_replicas=world, rank=rank, shuffle=True, seed=args.seed)
        s.set_epoch(args.at_step // spe)
        order = list(s)
        j = (args.at_step % spe) * args.batch
        bad = {order[j + 3]}
    ds = Shard(n, rank, bad)
    sampler = DistributedSampler(ds, num_replicas=world, rank=rank, shuffle=True, seed=args.seed)
    dl = DataLoader(ds, batch_size=args.batch, sampler=sampler, collate_fn=collate, drop_last=True)
    ev_x = torch.randint(0, 512, (64, 64), generator=torch.Generator().manual_seed(7 + rank))
    ev_y = torch.randint(0, 10, (64,), generator=torch.Generator().manual_seed(8 + rank))
    log.info("model: %s params (%d trainable), %d records on this rank, %d steps/epoch, %d steps",
             sum(q.numel() for q in model.parameters()), sum(q.numel() for q in model.parameters() if q.requires_grad),
             len(sampler), spe, total)
    if args.bar == "none":
        bar = None
    else:
        bar = tqdm(total=total, desc=f"[rank{rank}] train", position=rank if args.bar == "position" else None,
                   file=sys.stderr, dynamic_ncols=False, ncols=110, mininterval=args.bar_interval)
    leak = []
    step, epoch, t_last, samples = 0, 0, time.time(), 0
    while step < total:
        sampler.set_epoch(epoch)
        for batch in dl:
            if step >= total:
                break
            t0 = time.time()
            x, fi, y = batch["tokens"], batch["feat_idx"], batch["label"]
            culprit = rank == args.culprit and step == args.at_step
            if culprit and args.mode == "nan":
                x = x.clone()
                fi = fi.clone()
                model.feat.data[fi[5]] = float("nan")  # a corrupted feature row read by this batch
            if culprit and args.mode == "sigkill":
                log.info("step %d: loading next shard", step)
                os.kill(os.getpid(), signal.SIGKILL)
            if culprit and args.mode == "hang":
                time.sleep(600)  # e.g. a stuck read on a network filesystem, never returns in time
            if rank == args.culprit and args.mode == "hostoom" and step >= args.at_step:
                leak.append(torch.ones(8 * 2**20))  # keeps 32 MiB of "debug activations" per step
                if step % 5 == 0:
                    log.info("debug cache: %d entries", len(leak))
            if "autocast" in WARN:
                ctx = torch.cpu.amp.autocast(enabled=False)  # deprecated spelling -> FutureWarning
            else:
                ctx = torch.autocast("cpu", enabled=False)
            with ctx:
                out = ddp(x, fi)
                loss = F.cross_entropy(out, y)
            if not torch.isfinite(loss):
                raise FloatingPointError(f"non-finite loss ({loss.item()}) at step {step} on rank {rank}; "
                                         f"aborting before backward")
            opt.zero_grad(set_to_none=True)
            loss.backward()
            if args.no_ddp:
                for q in model.parameters():
                    if q.grad is not None:
                        dist.all_reduce(q.grad)
                        q.grad /= world
            gn = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            sched.step()
            if "tensorcopy" in WARN:
                loss_t = torch.tensor(loss.detach())  # copy-construct -> UserWarning
            else:
                loss_t = loss.detach().clone()
            lr = sched.get_lr()[0] if "getlr" in WARN else sched.get_last_lr()[0]
            samples += x.shape[0]
            dt = time.time() - t0
            if step % args.log_every == 0:
                el = time.time() - t_last
                log.info("epoch %d step %d/%d | loss %.4f | lr %.3e | grad_norm %.3f | %.0f samples/s | %.0f tok/s | "
                         "step %.1f ms", epoch, step, total, loss_t.item(), lr, gn.item(), samples / max(el, 1e-6),
                         samples * 64 / max(el, 1e-6), dt * 1e3)
                t_last, samples = time.time(), 0
            if bar is not None:
                bar.update(1)
                bar.set_postfix(loss=f"{loss_t.item():.3f}", lr=f"{lr:.2e}", refresh=False)
            step += 1
            if step % args.eval_every == 0:
                model.eval()
                with torch.no_grad():
                    eo = model(ev_x, torch.arange(64))
                    el_, acc = F.cross_entropy(eo, ev_y), (eo.argmax(1) == ev_y).float().mean()
                model.train()
                ncls = 10
                if args.mode == "mismatch" and rank == args.culprit and step >= args.at_step:
                    ncls = 16  # this rank re-read a stale label map with 16 classes: histogram of 16 bins, not 10
                hist = torch.bincount(eo.argmax(1), minlength=ncls).float()
                m = torch.cat([torch.stack([el_, acc]), hist])  # [val_loss, val_acc, prediction histogram]
                dist.all_reduce(m)
                m[:2] /= world
                if rank == 0:
                    log.info("eval @ step %d: val_loss %.4f val_acc %.3f pred_hist %s (over %d ranks)", step, m[0], m[1],
                             m[2:].int().tolist(), world)
            if step % args.ckpt_every == 0:
                if rank == 0:
                    t1 = time.time()
                    d = args.ckpt_dir
                    if args.mode == "ckpt-dir" and rank == args.culprit and step >= args.at_step:
                        d = os.path.join(args.ckpt_dir, f"run-{os.getpid() % 7}", "latest")  # never created
                    path = os.path.join(d, f"step_{step:06d}.pt")
                    torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "step": step}, path)
                    log.info("saved checkpoint %s (%.1f KiB) in %.3fs", path, os.path.getsize(path) / 1024,
                             time.time() - t1)
                dist.barrier()
        epoch += 1
    if bar is not None:
        bar.close()
    dist.barrier()
    log.info("training finished: %d steps", step)
    dist.destroy_process_group()


def spawn_entry(rank, world, port):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(rank), WORLD_SIZE=str(world),
                      LOCAL_RANK=str(rank))
    main(rank, world)


if __name__ == "__main__":
    os.makedirs(args.ckpt_dir, exist_ok=True)
    if args.spawn:
        import socket
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        s.close()
        torch.multiprocessing.spawn(spawn_entry, args=(args.spawn, port), nprocs=args.spawn)
    else:
        entry = main
        if args.record:
            from torch.distributed.elastic.multiprocessing.errors import record
            entry = record(main)
        entry(int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]))
