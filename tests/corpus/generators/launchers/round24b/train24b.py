"""Round 24b: small DDP training job (CPU, gloo) with one induced fault on one rank.

Launch with torchrun (RANK/WORLD_SIZE/... from env), a shell loop (launch24b.sh, same env), or
`--spawn N` (torch.multiprocessing.spawn in this file).  --fault picks what rank --bad-rank does at --step:
  ckpt_missing  every rank resumes from ckpt/step_100/rank_<r>.pt; that rank's shard was deleted (FileNotFoundError)
  ckpt_corrupt  same, but that rank's shard was truncated (torch.load fails on the broken zip)
  unused        from --step on, that rank skips the aux head (its params get no grad) -> DDP's
                "Expected to have finished reduction in the prior iteration" on the next step
  shape         that rank builds its model with hidden=48 instead of 32 -> DDP's param-shape check at construction
  early_exit    at --step that rank's (rank-local) early-stopping check fires: it leaves the loop, calls
                dist.destroy_process_group() and exits 0 while the others keep training
  osexit        at --step that rank logs an error record and calls os._exit(1) in a finally block (no traceback)
  autograd      at --step that rank's custom autograd.Function backward hits a shape error (off-by-one mask)
  compile       every rank runs torch.compile(fullgraph=True); only that rank has debug range checks on, which
                add a data-dependent `if` in forward -> Dynamo error
  ok_metrics    healthy: at --step that rank fails to push metrics (connection refused), logs it with
                logger.exception and goes on
  ok_sample     healthy: at --step that rank hits a malformed JSON record, logs it with logger.exception, skips it
The checkpoint shards are made (and broken) with --make-ckpt DIR before the run (see run_all.sh).
"""
import argparse, json, logging, os, socket, sys, time
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

log = logging.getLogger("train")


class MaskedScale(torch.autograd.Function):
    """y = x * mask * scale; backward re-builds the mask from ctx (the off-by-one lives in `width`)."""

    @staticmethod
    def forward(ctx, x, keep, width):
        ctx.keep, ctx.width = keep, width
        return x * keep / keep.mean()

    @staticmethod
    def backward(ctx, grad_out):
        mask = ctx.keep[: ctx.width]          # width == hidden normally; hidden-1 when the bug triggers
        return grad_out * mask / mask.mean(), None, None


class Net(nn.Module):
    def __init__(self, hidden=32, range_checks=False):
        super().__init__()
        self.fc1 = nn.Linear(16, hidden)
        self.fc2 = nn.Linear(hidden, 4)
        self.aux = nn.Linear(hidden, 1)       # auxiliary regression head
        self.range_checks = range_checks
        self.use_aux = True
        self.mask_width = hidden

    def forward(self, x):
        h = torch.relu(self.fc1(x))
        if self.range_checks and h.abs().max() > 50.0:   # data-dependent branch (only with range checks on)
            h = h.clamp(-50.0, 50.0)
        keep = (torch.arange(h.shape[-1]) % 8 != 7).float()
        h = MaskedScale.apply(h, keep, self.mask_width)
        out = self.fc2(h)
        if self.use_aux:
            return out, self.aux(h).squeeze(-1)
        return out, None


def make_ckpt(d, world):
    os.makedirs(d, exist_ok=True)
    torch.manual_seed(0)
    sd = Net().state_dict()
    for r in range(world):
        torch.save({"model": sd, "step": 100, "rank": r, "rng": torch.get_rng_state()}, os.path.join(d, f"rank_{r}.pt"))


def push_metrics(step, loss):
    # metrics sidecar expected on localhost:9 (nothing listens there) -> ConnectionRefusedError
    with socket.create_connection(("127.0.0.1", 9), timeout=2) as s:
        s.sendall(json.dumps({"step": step, "loss": loss}).encode())


def run(rank, a):
    world = a.world
    logging.basicConfig(level=logging.INFO, stream=sys.stdout, force=True,
                        format=f"%(asctime)s %(levelname)s [rank{rank}] %(name)s: %(message)s")
    bad = rank == a.bad_rank
    dist.init_process_group("gloo", rank=rank, world_size=world, timeout=timedelta(seconds=a.pg_timeout))
    log.info("process group ready: rank %d / world %d (gloo)", rank, world)
    torch.manual_seed(1234 + rank)

    hidden = 48 if (a.fault == "shape" and bad) else 32
    net = Net(hidden=hidden, range_checks=(a.fault == "compile" and bad))
    if a.resume:
        path = os.path.join(a.resume, f"rank_{rank}.pt")
        log.info("resuming from %s", path)
        ck = torch.load(path, map_location="cpu", weights_only=True)
        net.load_state_dict(ck["model"])
        log.info("restored step %d", ck["step"])
    if a.fault == "compile":
        net = torch.compile(net, fullgraph=True)
        log.info("model compiled (fullgraph=True%s)", ", range checks on" if bad else "")
    model = DDP(net)
    log.info("DDP model ready: %d parameters", sum(p.numel() for p in model.parameters()))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    inner = net._orig_mod if hasattr(net, "_orig_mod") else net

    for step in range(a.steps):
        x = torch.randn(32, 16)
        y = torch.randint(0, 4, (32,))
        if bad and step == a.step and a.fault == "ok_sample":
            raw = '{"features": [0.1, 0.2, 0.3], "label": 2'      # truncated record in the shard
            try:
                json.loads(raw)
            except Exception:
                log.exception("skipping malformed record %d in shard-%05d.jsonl", step * 32 + 5, rank)
        if bad and step >= a.step and a.fault == "unused":
            inner.use_aux = False          # "aux targets missing for this shard" -> aux head unused
        if bad and step == a.step and a.fault == "autograd":
            inner.mask_width = inner.fc1.out_features - 1
        out, aux = model(x)
        loss = nn.functional.cross_entropy(out, y)
        if aux is not None:
            loss = loss + 0.1 * aux.pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        inner.mask_width = inner.fc1.out_features
        lv = loss.item()
        log.info("step %d/%d loss %.4f", step + 1, a.steps, lv)
        if bad and step == a.step and a.fault == "ok_metrics":
            try:
                push_metrics(step, lv)
            except Exception:
                log.exception("metrics push failed at step %d; continuing without metrics", step + 1)
        if bad and step == a.step and a.fault == "osexit":
            failed = True
            try:
                gn = torch.stack([p.grad.norm() for p in model.parameters()]).norm().item()
                failed = gn > a.grad_limit
                if failed:
                    log.error("gradient health check failed at step %d: grad norm %.3f above limit %.2f on this rank; "
                              "aborting worker", step + 1, gn, a.grad_limit)
            finally:
                if failed:
                    logging.shutdown()
                    os._exit(1)
        if bad and step == a.step and a.fault == "early_exit":
            log.info("early stopping: local validation loss %.4f has not improved for 3 evals (patience 3), "
                     "stopping training at step %d", lv, step + 1)
            break
        time.sleep(0.2)
    dist.destroy_process_group()
    log.info("training done")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--fault", default="none")
    p.add_argument("--bad-rank", type=int, default=-1)
    p.add_argument("--step", type=int, default=2)
    p.add_argument("--steps", type=int, default=6)
    p.add_argument("--resume", default=None, help="checkpoint dir with rank_<r>.pt shards")
    p.add_argument("--grad-limit", type=float, default=0.1, help="osexit: grad-norm limit of the health check")
    p.add_argument("--pg-timeout", type=int, default=30)
    p.add_argument("--spawn", type=int, default=0, help="start N ranks with torch.multiprocessing.spawn")
    p.add_argument("--make-ckpt", default=None)
    p.add_argument("--world", type=int, default=0)
    a = p.parse_args()
    if a.make_ckpt:
        make_ckpt(a.make_ckpt, a.world)
        return
    if a.spawn:
        import torch.multiprocessing as mp
        a.world = a.spawn
        os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
        print(f"spawning {a.spawn} workers (master {os.environ['MASTER_ADDR']}:{os.environ['MASTER_PORT']})", flush=True)
        mp.spawn(run, args=(a,), nprocs=a.spawn, join=True)
        print("all workers finished", flush=True)
    else:
        a.world = int(os.environ["WORLD_SIZE"])
        run(int(os.environ["RANK"]), a)


if __name__ == "__main__":
    main()
