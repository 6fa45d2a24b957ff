"""Round 42b: ONE rank catches and logs an error, carries on, and falls out of step with the other ranks.

Each step: load a batch, forward/backward, all_reduce the flattened gradients (one gloo collective per step),
log the loss. Every --val-every steps: a validation loop with an all_reduce of a [sum, count] metric per batch.
At the end: a barrier and destroy_process_group.

--fault picks what happens on --fault-rank at --fault-step (the caught error is the real first cause):
  skip-batch     ValueError from a corrupt sample, caught, logged, the batch (and its gradient all_reduce) skipped
  retry-shard    OSError reading a shard, caught, logged, retried with back-off sleeps -> others wait in all_reduce
  val-keyerror   KeyError in a metric inside validation, caught, logged, validation returns early
                 (the remaining validation all_reduces are skipped)
  nan-guard      non-finite loss guard raises FloatingPointError, caught, printed, backward + all_reduce skipped
  skip-noreduce  the rank catches the ValueError and skips only the all_reduce (keeps its local optimizer step)
 healthy variants (category none):
  all-skip       every rank hits the same corrupt sample at the same step, all skip it together
  synced-skip    one rank's ValueError is caught, then all ranks agree (all_reduce of a skip flag) and skip together
  outside        OSError writing a metrics file on one rank, caught and logged, outside any collective
--report: how the caught error is logged: exception (logger.exception, ERROR + full traceback),
  warning-tb (logger.warning with exc_info), warning (logger.warning one line, no traceback),
  error-short (logger.error + traceback.format_exc(limit=1)), print (bare print of the exception),
  print-tb (print + traceback.print_exc()).
"""
import argparse, logging, math, os, sys, time, traceback
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn as nn

p = argparse.ArgumentParser()
p.add_argument("--fault", default="none")
p.add_argument("--fault-rank", type=int, default=1)
p.add_argument("--fault-step", type=int, default=3)
p.add_argument("--report", default="exception")
p.add_argument("--steps", type=int, default=8)
p.add_argument("--val-every", type=int, default=4)
p.add_argument("--val-batches", type=int, default=3)
p.add_argument("--timeout", type=int, default=12)
p.add_argument("--spawn", type=int, default=0, help="use torch.multiprocessing.spawn with this many ranks")
p.add_argument("--accelerate", action="store_true", help="use accelerate.Accelerator (under accelerate launch)")
args = p.parse_args()

log = logging.getLogger("train")


def report(msg, exc):
    """Log a caught exception in the style picked by --report, then carry on."""
    r = args.report
    if r == "exception":
        log.exception(msg)
    elif r == "warning-tb":
        log.warning(msg, exc_info=True)
    elif r == "warning":
        log.warning("%s: %s: %s", msg, type(exc).__name__, exc)
    elif r == "error-short":
        log.error("%s\n%s", msg, traceback.format_exc(limit=1).rstrip())
    elif r == "print":
        print(f"{msg}: {exc!r}", flush=True)
    elif r == "print-tb":
        print(msg, flush=True)
        traceback.print_exc()
        sys.stderr.flush()


def load_batch(rank, step, attempt=0):
    g = torch.Generator().manual_seed(1000 * step + rank)
    x = torch.randn(16, 32, generator=g)
    y = torch.randn(16, 1, generator=g)
    if args.fault in ("skip-batch", "skip-noreduce", "synced-skip") and rank == args.fault_rank and step == args.fault_step:
        parse_record(b"\x00\x13" + bytes(13), idx=16 * step + 7)
    if args.fault == "all-skip" and step == args.fault_step:  # same bad sample in every rank's batch
        parse_record(b"\x00\x13" + bytes(13), idx=16 * step + 7)
    if args.fault == "retry-shard" and rank == args.fault_rank and step == args.fault_step:
        open_shard(f"/data/shards/train-{step:05d}-of-00064.tar")
    return x, y


def parse_record(raw, idx):
    n = raw[1]
    if n != 16:
        raise ValueError(f"corrupt sample {idx}: expected 16 features, got {n} (record length {len(raw)})")


def open_shard(path):
    with open(path, "rb") as f:  # the shard is missing on this rank's mount
        return f.read()


def compute_metrics(out, y, rank, vstep, step):
    m = {"mse": ((out - y) ** 2).mean().item(), "n": float(len(y))}
    if args.fault == "val-keyerror" and rank == args.fault_rank and step == args.fault_step and vstep == 1:
        return m["mae"]  # KeyError: 'mae'
    return m["mse"]


def main(rank, world):
    fmt = f"%(asctime)s [rank{rank}] %(levelname)s %(name)s: %(message)s"
    logging.basicConfig(level=logging.INFO, format=fmt, stream=sys.stdout, force=True)
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    log.info("world_size=%d fault=%s fault_rank=%d fault_step=%d timeout=%ds", world, args.fault,
             args.fault_rank, args.fault_step, args.timeout)

    def allreduce_grads():
        flat = torch.cat([q.grad.reshape(-1) for q in model.parameters()])
        dist.all_reduce(flat)
        flat /= world
        off = 0
        for q in model.parameters():
            n = q.numel(); q.grad.copy_(flat[off:off + n].view_as(q)); off += n

    def validate(step):
        model.eval()
        tot = 0.0
        with torch.no_grad():
            for v in range(args.val_batches):
                x, y = load_batch(rank, 10000 + v)
                out = model(x)
                try:
                    mse = compute_metrics(out, y, rank, v, step)
                except KeyError as e:
                    report(f"metric computation failed at val batch {v}; skipping rest of validation", e)
                    model.train()
                    return None
                t = torch.tensor([mse * len(y), float(len(y))])
                dist.all_reduce(t)
                tot = (t[0] / t[1]).item()
        model.train()
        log.info("step %d val_mse %.4f", step, tot)
        return tot

    for step in range(args.steps):
        attempt = 0
        while True:
            try:
                x, y = load_batch(rank, step, attempt)
                bad = 0.0
                break
            except ValueError as e:
                report(f"skipping batch at step {step}", e)
                bad = 1.0
                break
            except OSError as e:
                attempt += 1
                report(f"reading shard failed at step {step} (attempt {attempt}/6), retrying in {2 ** attempt}s", e)
                time.sleep(2 ** attempt)
                if attempt >= 6:
                    raise
        if args.fault == "synced-skip":  # correct pattern: agree on skipping
            flag = torch.tensor([bad]); dist.all_reduce(flag)
            if flag.item() > 0:
                log.info("step %d skipped on all ranks (%d rank(s) had a bad batch)", step, int(flag.item()))
                continue
        elif bad and args.fault != "skip-noreduce":
            continue
        opt.zero_grad()
        if bad:  # skip-noreduce: train on a fallback batch but skip the all_reduce
            x, y = load_batch(rank, step + 500)
        loss = nn.functional.mse_loss(model(x), y)
        if args.fault == "nan-guard" and rank == args.fault_rank and step == args.fault_step:
            loss = loss * float("nan")
        try:
            if not math.isfinite(loss.item()):
                raise FloatingPointError(f"non-finite loss {loss.item()} at step {step}")
        except FloatingPointError as e:
            report("loss guard tripped, skipping step", e)
            continue
        loss.backward()
        if not bad:
            allreduce_grads()
        opt.step()
        log.info("step %d loss %.4f", step, loss.item())
        if args.fault == "outside" and rank == args.fault_rank and step == args.fault_step:
            try:
                with open("/nonexistent/metrics/step.jsonl", "a") as f:
                    f.write(f'{{"step": {step}, "loss": {loss.item()}}}\n')
            except OSError as e:
                report("could not write metrics file", e)
        if (step + 1) % args.val_every == 0:
            validate(step)
        time.sleep(0.2)
    dist.barrier()
    log.info("training done")
    dist.destroy_process_group()


def spawn_entry(rank, world):
    os.environ["RANK"] = str(rank)
    dist.init_process_group("gloo", rank=rank, world_size=world, timeout=timedelta(seconds=args.timeout))
    main(rank, world)


if __name__ == "__main__":
    if args.spawn:
        import torch.multiprocessing as mp
        os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
        os.environ.setdefault("MASTER_PORT", "29742")
        mp.spawn(spawn_entry, args=(args.spawn,), nprocs=args.spawn)
    elif args.accelerate:
        from accelerate import Accelerator
        from accelerate.utils import InitProcessGroupKwargs
        acc = Accelerator(cpu=True, kwargs_handlers=[InitProcessGroupKwargs(backend="gloo", timeout=timedelta(seconds=args.timeout))])
        main(acc.process_index, acc.num_processes)
    else:
        dist.init_process_group("gloo", timeout=timedelta(seconds=args.timeout))
        main(dist.get_rank(), dist.get_world_size())
