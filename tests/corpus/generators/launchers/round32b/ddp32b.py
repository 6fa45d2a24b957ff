"""Round 32b: DistributedDataParallel / autograd failures at run time on CPU (gloo).

One small training loop (a tiny MLP with a main and an aux branch on synthetic data, wrapped in DDP) and a --fault
switch that breaks it in one way, usually on --bad-rank only, at step --at. Launch with torchrun /
python -m torch.distributed.run (env:// rendezvous), or with --spawn N for torch.multiprocessing.spawn.

Faults (what each induces):
  none            healthy run
  noisy           healthy, with harmless noise: DDP(find_unused_parameters=True) with no unused parameter
                  (DDP warning), cpu autocast with an unsupported dtype (warning: autocast disabled), and
                  --bad-rank logs a handled ValueError traceback for one corrupt sample and substitutes it
  join            healthy: uneven inputs (--bad-rank has fewer batches) handled with dist.algorithms.Join
  ckpt_twice      every rank: the same block is run twice under torch.utils.checkpoint(use_reentrant=True)
                  -> DDP "Expected to mark a variable ready only once"
  unused          --bad-rank skips the aux branch at step --at with find_unused_parameters=False
  static_graph    DDP(static_graph=True), --bad-rank skips the aux branch at step --at
  inplace         --bad-rank modifies a tensor saved for backward in place at step --at
  backward_twice  --bad-rank calls backward a second time on the same graph at step --at
  uneven_exit     --bad-rank has fewer batches, logs "done" and exits; the others keep calling all_reduce
  uneven_eval     --bad-rank has fewer batches, then runs a long local evaluation (no collectives)
  commhook        a DDP communication hook that raises on --bad-rank at step --at
  zero_state      ZeroRedundancyOptimizer: rank --bad-rank calls optimizer.state_dict() without consolidate_state_dict()
  syncbn          SyncBatchNorm layers on CPU tensors
  reqgrad         --bad-rank freezes one layer (requires_grad=False) before wrapping in DDP
  extra_param     --bad-rank's model has one extra parameter (construction-time check in DDP)
  extra_buffer    --bad-rank's model registers one extra buffer (a running statistic) before DDP
  nan_check       --bad-rank gets a NaN in its batch at step --at; the job's own finite-loss check raises
  anomaly         like nan_check, but the job runs under torch.autograd.detect_anomaly()
  scaler_twice    torch.amp.GradScaler('cpu'): --bad-rank calls scaler.unscale_(opt) twice at step --at
"""
import argparse, contextlib, logging, os, sys, time
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP

p = argparse.ArgumentParser()
p.add_argument("--fault", default="none")
p.add_argument("--bad-rank", type=int, default=1)
p.add_argument("--at", type=int, default=3)
p.add_argument("--steps", type=int, default=8)
p.add_argument("--timeout", type=int, default=20, help="process group timeout, seconds")
p.add_argument("--spawn", type=int, default=0, help="launch N ranks with torch.multiprocessing.spawn")
p.add_argument("--port", type=int, default=29532)
args = p.parse_args()

log = logging.getLogger("train")


class Net(nn.Module):
    def __init__(self, extra=False, bn=False):
        super().__init__()
        self.inp = nn.Linear(16, 32)
        self.block = nn.Linear(32, 32)
        self.bn = nn.BatchNorm1d(32) if bn else nn.Identity()
        self.head = nn.Linear(32, 4)
        self.aux = nn.Linear(32, 4)
        if extra:
            self.temperature = nn.Parameter(torch.ones(1))

    def forward(self, x, use_aux=True, inplace=False, ckpt_twice=False):
        h = torch.sigmoid(self.inp(x))
        if inplace:
            h.mul_(0.5)  # sigmoid saved its output for backward: in-place change breaks autograd
        if ckpt_twice:
            from torch.utils.checkpoint import checkpoint
            h = checkpoint(self.block, h, use_reentrant=True)
            h = checkpoint(self.block, F.relu(h), use_reentrant=True)
        else:
            h = F.relu(self.block(h))
        h = self.bn(h)
        out = self.head(h)
        if use_aux:
            out = out + 0.1 * self.aux(h)
        return out


def batches(rank, n):
    g = torch.Generator().manual_seed(1234 + rank)
    for _ in range(n):
        x = torch.randn(8, 16, generator=g)
        yield x, (x[:, :4].sum(1) > 0).long()


def train(rank, world):
    logging.basicConfig(level=logging.INFO, stream=sys.stdout,
                        format=f"%(asctime)s [rank{rank}] %(levelname)s %(name)s: %(message)s")
    f, bad = args.fault, rank == args.bad_rank
    dist.init_process_group("gloo", rank=rank, world_size=world, timeout=timedelta(seconds=args.timeout))
    torch.manual_seed(0)
    model = Net(extra=(f == "extra_param" and bad), bn=(f == "syncbn"))
    if f == "extra_buffer" and bad:
        model.register_buffer("ema_loss", torch.zeros(4))  # this rank alone tracks an EMA of the loss
    if f == "syncbn":
        model = nn.SyncBatchNorm.convert_sync_batchnorm(model)
    if f == "reqgrad" and bad:
        model.block.requires_grad_(False)  # this rank "freezes the backbone" on its own
    ddp_kw = {}
    if f == "noisy":
        ddp_kw["find_unused_parameters"] = True
    if f == "static_graph":
        ddp_kw["static_graph"] = True
    model = DDP(model, **ddp_kw)
    log.info("DDP model ready: %d parameters, world size %d", sum(p.numel() for p in model.parameters()), world)

    if f == "commhook":
        def checked_allreduce(state, bucket):
            # a "gradient sanity" hook; its size check is wrong for the last bucket on this rank
            t = bucket.buffer()
            if bad and state["step"] >= args.at:
                raise RuntimeError(f"comm hook: bucket {bucket.index()} has {t.numel()} elements, expected a multiple of 64")
            fut = dist.all_reduce(t.div_(world), async_op=True).get_future()
            return fut.then(lambda fu: fu.value()[0])
        hook_state = {"step": 0}
        model.register_comm_hook(hook_state, checked_allreduce)

    if f == "zero_state":
        from torch.distributed.optim import ZeroRedundancyOptimizer
        opt = ZeroRedundancyOptimizer(model.parameters(), optimizer_class=torch.optim.SGD, lr=0.05)
    else:
        opt = torch.optim.SGD(model.parameters(), lr=0.05)
    scaler = torch.amp.GradScaler("cpu") if f == "scaler_twice" else None

    n = args.steps
    if f in ("join", "uneven_exit", "uneven_eval") and bad:
        n = args.steps - 3  # this rank's data shard is shorter
    join_ctx = contextlib.nullcontext()
    if f == "join":
        from torch.distributed.algorithms.join import Join
        join_ctx = Join([model])
    anomaly = torch.autograd.detect_anomaly() if f == "anomaly" else contextlib.nullcontext()

    with join_ctx, anomaly:
        for step, (x, y) in enumerate(batches(rank, n)):
            at = bad and step == args.at
            if f == "commhook":
                hook_state["step"] = step
            if f == "noisy" and at:
                try:
                    raise ValueError(f"corrupt sample idx={step * 8 + 5}: could not decode record (crc mismatch)")
                except ValueError:
                    log.exception("skipping bad sample, substituting a zero sample")
                    x = x.clone(); x[5] = 0
            if f == "nan_check" and at:
                x = x.clone(); x[2, 3] = float("nan")  # a bad record with a NaN feature
            if f == "anomaly" and at:
                x = x.clone(); x[2, 3] = float("inf")  # a bad record with an inf feature
            kw = {}
            if f in ("unused", "static_graph") and at:
                kw["use_aux"] = False
            if f == "inplace" and at:
                kw["inplace"] = True
            if f == "ckpt_twice":
                kw["ckpt_twice"] = True
            ac = torch.autocast("cpu", dtype=torch.float64) if f == "noisy" else contextlib.nullcontext()
            with ac:
                out = model(x, **kw)
            loss = F.cross_entropy(out.float(), y)
            if f == "nan_check" and not torch.isfinite(loss):
                raise FloatingPointError(f"non-finite loss {loss.item()} at step {step} on rank {rank}")
            opt.zero_grad(set_to_none=True)
            if scaler is not None:
                scaler.scale(loss).backward()
                scaler.unscale_(opt)
                if at:
                    scaler.unscale_(opt)  # a second clipping helper unscales again
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                scaler.step(opt); scaler.update()
            else:
                loss.backward()
                if f == "backward_twice" and at:
                    # a "debug" second backward for a gradient-norm probe on this rank only
                    loss.backward()
                opt.step()
            log.info("step %d/%d loss %.4f", step + 1, n, loss.item())
            if f == "zero_state" and bad and step == args.at:
                log.info("saving checkpoint")
                torch.save({"model": model.state_dict(), "optim": opt.state_dict()}, f"/tmp/r32b_ckpt_{rank}.pt")

    if f == "uneven_eval" and bad:
        log.info("train shard exhausted after %d steps, running local evaluation", n)
        time.sleep(120)
    if f == "uneven_exit" and bad:
        log.info("done: %d steps, leaving without the final barrier", n)
        return
    dist.barrier()
    log.info("training complete (%d steps)", n)
    dist.destroy_process_group()


def spawn_main(rank, world):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(args.port)
    train(rank, world)


if __name__ == "__main__":
    if args.spawn:
        import torch.multiprocessing as mp
        mp.spawn(spawn_main, args=(args.spawn,), nprocs=args.spawn, join=True)
    else:
        train(int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]))
