"""Round-7 real failure runs: a tiny training job (CPU, gloo) that induces one fault, chosen by --scenario.

One entry point for torchrun (RANK / WORLD_SIZE), mpirun (OMPI_COMM_WORLD_RANK / _SIZE) and
`--spawn N` (torch.multiprocessing.spawn, env:// rendezvous on MASTER_ADDR / MASTER_PORT).
Model: Linear 16-32-4, batches of 8, SGD; gradients all-reduced by hand every --accum steps, then the loss
metric is all-reduced and rank 0 logs it.

Scenarios (the faulty rank is --fault-rank, the step --fault-step, 0-based):
  none            healthy run
  raise-metric    the faulty rank picks the best checkpoint by metrics["val_accuracy"], a key that its
                  metrics dict does not have: KeyError: 'val_accuracy'
  raise-parse     the faulty rank parses a label string 'label_7' with int(): ValueError
  raise-none      the faulty rank's prefetch queue hands back None instead of a batch: AttributeError on .float()
  raise-index     the faulty rank pads its batch by writing one row past its end: IndexError
  raise-shape     the faulty rank's feature extractor yields 12 features, the model wants 16: RuntimeError
                  (mat1 and mat2 shapes cannot be multiplied)
  raise-missing   the faulty rank opens its data shard data/shard-<rank>.bin, which does not exist:
                  FileNotFoundError
  sigkill         the faulty rank SIGKILLs itself (os.kill(os.getpid(), SIGKILL)), no traceback
  hang            the faulty rank sleeps --hang-seconds (silently) before the step's collectives; with
                  --hang-barrier every rank calls dist.barrier() at the fault step ("sync before eval") and the
                  faulty rank sleeps before it
  twofail         rank 3 raises RuntimeError (view of a short batch) at step 2 and then spends 3 s writing an
                  emergency checkpoint before re-raising; rank 1 raises FileNotFoundError (a missing shard) at
                  step 4, while rank 3 is still alive (--linger-ranks 3,1: rank 1 also writes its emergency checkpoint
                  for 3 s, so rank 3 exits first). Run with --accum 8 --step-seconds 0.5, so no collective
                  happens before step 8 and both failures really happen.
  ckpt-perm       at the fault step the faulty rank saves the checkpoint (open(path, 'wb') + torch.save) into
                  checkpoints/step_<k>/ under a read-only (mode 555) checkpoints/ (run_all.sh drops
                  CAP_DAC_OVERRIDE, so root obeys the mode): PermissionError: [Errno 13]; the other ranks wait in the barrier after the save.

--destroy-on-error: the job runs inside `try: ... finally: dist.destroy_process_group()`, so a failing rank
closes its gloo connections right away (its peers fail at once) instead of only at interpreter exit.

Logging (--log-style):
  plain       print() lines, no timestamps, rank 0 prints the loss
  asctime     logging, `%(asctime)s %(levelname)s %(name)s: %(message)s`, rank 0 logs the loss
  rankfield   logging, `%(asctime)s [%(levelname)s] [RANK %(rank)s] %(message)s` (rank set by a logging.Filter);
              every rank logs every step; an exception is logged with logger.exception, then re-raised
  adapter     logging through a LoggerAdapter that prefixes `rank=N ` to each message, format
              `%(levelname)s %(name)s: %(message)s`; every rank logs; logger.exception, then re-raise
"""
import argparse
import logging
import os
import signal
import socket
import sys
import time
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn as nn

SCENARIOS = ["none", "raise-metric", "raise-parse", "raise-none", "raise-index", "raise-shape", "raise-missing",
             "sigkill", "hang", "twofail", "ckpt-perm"]


def parse_args(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("--scenario", default="none", choices=SCENARIOS)
    p.add_argument("--fault-rank", type=int, default=1)
    p.add_argument("--fault-step", type=int, default=3)
    p.add_argument("--steps", type=int, default=8)
    p.add_argument("--accum", type=int, default=1)
    p.add_argument("--step-seconds", type=float, default=0.0, help="simulated compute per step")
    p.add_argument("--pg-timeout", type=int, default=30, help="process group timeout, seconds")
    p.add_argument("--hang-seconds", type=float, default=60.0)
    p.add_argument("--hang-barrier", action="store_true")
    p.add_argument("--linger-ranks", default="3", help="twofail: ranks that write an emergency checkpoint (3 s) "
                   "before re-raising, comma-separated")
    p.add_argument("--log-style", default="plain", choices=["plain", "asctime", "rankfield", "adapter"])
    p.add_argument("--destroy-on-error", action="store_true",
                   help="wrap the job in try/finally: dist.destroy_process_group()")
    p.add_argument("--spawn", type=int, default=0, help="start this many ranks with mp.spawn")
    return p.parse_args(argv)


# ----------------------------------------------------------------------------------------- logging
class RankFilter(logging.Filter):
    def __init__(self, rank):
        super().__init__()
        self.rank = rank

    def filter(self, record):
        record.rank = self.rank
        return True


class RankAdapter(logging.LoggerAdapter):
    def process(self, msg, kwargs):
        return "rank=%d %s" % (self.extra["rank"], msg), kwargs


class PrintLog:
    """print()-based stand-in for a logger (style 'plain')."""

    def info(self, msg, *a):
        print(msg % a if a else msg, flush=True)

    error = warning = info

    def exception(self, msg, *a):
        import traceback
        print(msg % a if a else msg, flush=True)
        traceback.print_exc()


def setup_logging(rank, style):
    if style == "plain":
        return PrintLog()
    h = logging.StreamHandler(sys.stdout)
    if style == "asctime":
        h.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    elif style == "rankfield":
        h.addFilter(RankFilter(rank))
        h.setFormatter(logging.Formatter("%(asctime)s [%(levelname)s] [RANK %(rank)s] %(message)s"))
    else:
        h.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [h]
    root.setLevel(logging.INFO)
    log = logging.getLogger("trainer")
    if style == "adapter":
        return RankAdapter(log, {"rank": rank})
    return log


# ----------------------------------------------------------------------------------------- model/data
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(16, 32)
        self.fc2 = nn.Linear(32, 4)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


def batch(rank, step, n=8, feat=16):
    g = torch.Generator().manual_seed(1000 * rank + step)
    return torch.randn(n, feat, generator=g), torch.randint(0, 4, (n,), generator=g)


def step_batch(sc, rank, step, args, log):
    x, y = batch(rank, step)
    faulty = rank == args.fault_rank and step == args.fault_step
    if sc == "twofail":
        if rank == 3 and step == 2:
            flat = torch.randn(120)  # the last packed sequence of the shard is short: 120 values, not 128
            x = flat.view(8, 16)
        if rank == 1 and step == 4:
            path = os.path.join(os.getcwd(), "data", "shard-00041.bin")
            with open(path, "rb") as f:
                f.read()
        return x, y
    if not faulty:
        return x, y
    if sc == "raise-parse":
        raw_labels = ["2", "0", "3", "label_7", "1", "1", "0", "2"]  # one record from an un-mapped label file
        y = torch.tensor([int(v) for v in raw_labels])
    elif sc == "raise-none":
        prefetched = None  # the prefetch thread timed out and queued None
        x = prefetched.float()
    elif sc == "raise-index":
        pad_row = x.shape[0]  # off by one: the padding sample should go into row x.shape[0] - 1
        x[pad_row] = 0.0
    elif sc == "raise-shape":
        x = x[:, :12]  # this host's feature extractor is an older version that emits 12 features
    elif sc == "raise-missing":
        path = os.path.join(os.getcwd(), "data", "shard-%05d.bin" % rank)
        with open(path, "rb") as f:
            f.read()
    return x, y


def save_checkpoint(net, opt, step, log):
    d = os.path.join(os.getcwd(), "checkpoints", "step_%06d" % step)
    path = os.path.join(d, "model.pt")
    log.info("saving checkpoint to %s", path)
    os.makedirs(d, exist_ok=True)
    with open(path, "wb") as f:
        torch.save({"model": net.state_dict(), "optimizer": opt.state_dict(), "step": step}, f)
    log.info("checkpoint saved")


# ----------------------------------------------------------------------------------------- the job
def run(rank, world_size, args):
    log = setup_logging(rank, args.log_style)
    sc = args.scenario
    every_rank_logs = args.log_style in ("rankfield", "adapter")
    torch.set_num_threads(1)
    torch.manual_seed(0)
    timeout = timedelta(seconds=args.pg_timeout)

    log.info("rank %d: init_process_group(gloo, world_size=%d) pid=%d host=%s local_rank=%s group_rank=%s", rank,
             world_size, os.getpid(), os.environ.get("NODE_NAME", socket.gethostname()),
             os.environ.get("LOCAL_RANK", "-"), os.environ.get("GROUP_RANK", "-"))
    dist.init_process_group("gloo", rank=rank, world_size=world_size, timeout=timeout)
    log.info("rank %d/%d initialized", rank, world_size)

    net = Net()
    for p in net.parameters():
        dist.broadcast(p.data, src=0)
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    loss_fn = nn.CrossEntropyLoss()

    for step in range(args.steps):
        t0 = time.time()
        faulty = rank == args.fault_rank and step == args.fault_step
        if args.step_seconds:
            time.sleep(args.step_seconds)
        try:
            x, y = step_batch(sc, rank, step, args, log)
            loss = loss_fn(net(x), y) / args.accum
            loss.backward()
            if sc == "raise-metric" and faulty:
                metrics = {"val_loss": loss.item() * args.accum, "step": step}
                best = metrics["val_accuracy"]  # the eval hook was renamed; rank 0 tracks the best checkpoint
        except Exception:
            if args.log_style in ("rankfield", "adapter", "asctime") or sc == "twofail":
                log.exception("rank %d: training step %d failed", rank, step)
            if sc == "twofail" and str(rank) in args.linger_ranks.split(","):
                log.info("rank %d: writing emergency checkpoint", rank)
                torch.save({"model": net.state_dict()}, os.path.join(os.getcwd(), "emergency_rank%d.pt" % rank))
                time.sleep(3)  # (slow shared filesystem)
                log.info("rank %d: emergency checkpoint written", rank)
            raise
        if sc == "sigkill" and faulty:
            os.kill(os.getpid(), signal.SIGKILL)
        if sc == "hang" and faulty and not args.hang_barrier:
            time.sleep(args.hang_seconds)

        if args.accum > 1:
            log.info("rank %d micro-step %d/%d local_loss %.4f", rank, step + 1, args.steps, loss.item() * args.accum)
            if (step + 1) % args.accum:
                continue
        for p in net.parameters():
            dist.all_reduce(p.grad)
            p.grad /= world_size
        opt.step()
        opt.zero_grad()
        metric = (loss.detach() * args.accum).reshape(1)
        dist.all_reduce(metric)
        if rank == 0 or every_rank_logs:
            log.info("step %d/%d loss %.4f step_time %.3fs", step + 1, args.steps, metric.item() / world_size,
                     time.time() - t0)

        if sc == "hang" and args.hang_barrier and step == args.fault_step:
            if rank == args.fault_rank:
                time.sleep(args.hang_seconds)
            dist.barrier()  # sync before eval
            if rank == 0:
                log.info("running eval after step %d", step + 1)
        if sc == "ckpt-perm" and step == args.fault_step:
            if rank == args.fault_rank:
                save_checkpoint(net, opt, step + 1, log)
            dist.barrier()

    dist.barrier()
    if rank == 0:
        log.info("training finished")
    dist.destroy_process_group()


def _spawn_entry(rank, world_size, args):
    if not args.destroy_on_error:
        run(rank, world_size, args)
        return
    try:
        run(rank, world_size, args)
    finally:  # the common `try: train() finally: destroy_process_group()` pattern
        if dist.is_initialized():
            dist.destroy_process_group()


def main():
    args = parse_args()
    if args.spawn:
        import torch.multiprocessing as mp
        mp.spawn(_spawn_entry, args=(args.spawn, args), nprocs=args.spawn)
        return
    if "OMPI_COMM_WORLD_RANK" in os.environ:
        os.environ.setdefault("RANK", os.environ["OMPI_COMM_WORLD_RANK"])
        os.environ.setdefault("WORLD_SIZE", os.environ["OMPI_COMM_WORLD_SIZE"])
    _spawn_entry(int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]), args)


if __name__ == "__main__":
    main()
