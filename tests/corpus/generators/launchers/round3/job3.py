"""Round-3 real failure runs: a tiny training job (CPU, gloo) that induces one fault, chosen by --scenario.

One entry point for every launcher: under torchrun the rank comes from RANK, under mpirun from
OMPI_COMM_WORLD_RANK, and `--spawn N` starts N ranks with torch.multiprocessing.spawn.
Model: Linear 16-32-4, batches of 8, SGD, gradients all-reduced by hand, a logger line per step on rank 0.

Scenarios (--scenario; the faulty rank is --fault-rank, the step --fault-step):
  twofail        gradient accumulation over --accum steps (no collective before the first optimizer step);
                 rank 2 raises ValueError at step 3, rank 1 raises KeyError at step 5. Each logs its
                 exception (logger.exception) and writes a crash dump for ~3 s before re-raising, so the
                 second failure happens while the first rank is still alive. Timestamps in every line.
  target-oob     the faulty rank's batch at --fault-step carries label 7 (4 classes): cross_entropy raises
                 `IndexError: Target 7 is out of bounds.`
  sigkill        the faulty rank SIGKILLs itself at --fault-step (no traceback)
  rankfield-raise  logging format `asctime | rank=N | LEVEL | name | message` (rank set by a logging.Filter);
                 the faulty rank's collate function misses the 'input_ids' key (KeyError); the training loop
                 logs it with logger.exception, then re-raises
  jsonlog-raise  JSON-lines logging ({"ts", "level", "rank", "logger", "msg", "exc_info"}); an excepthook logs
                 the uncaught exception as one JSON line; the faulty rank decodes a corrupt text record
                 (UnicodeDecodeError)
  zerodiv        the faulty rank computes tokens-per-sample of an empty batch: ZeroDivisionError. main() is
                 decorated with torch.distributed.elastic's @record (traceback in torchrun's summary)
  cat-none       the faulty rank's feature cache returns None for one block: torch.cat raises TypeError
  logerror-exit  the faulty rank logs an ERROR (checkpoint shard checksum mismatch) and calls sys.exit(1),
                 no traceback
  nanloss        the faulty rank's batch has an inf feature; the loss is NaN, a finiteness check raises ValueError
  skip-barrier   end of --fault-step: every rank but the faulty one calls dist.barrier() (the faulty rank's
                 "is there an eval this step" check disagrees); the next collectives are misaligned
  bcast-src      at --fault-step the ranks re-sync the parameters with dist.broadcast; the faulty rank uses
                 src=<its own rank> instead of src=0
  dtype-mismatch at --fault-step the faulty rank all-reduces its loss metric as float64 (others float32)
                 (run with TORCH_DISTRIBUTED_DEBUG=DETAIL)
  store-rank0    rank 0 (which hosts the env:// TCPStore) is SIGKILLed 4 s after it starts, while it waits
                 in init_process_group; rank 1 is connected and waiting; rank --fault-rank loads its data
                 index for 10 s before init
  dl-raise       DataLoader(num_workers=2); the faulty rank's dataset raises ValueError in __getitem__ for a
                 truncated record (re-raised in the main process by the DataLoader)
  restart-diff   torchrun --max-restarts 1: on attempt 0 rank 1 raises RuntimeError at step 2; on attempt 1
                 rank 3 indexes one row past its batch at step 4 (IndexError) (each attempt joins its own PrefixStore namespace of the
                 agent's store, so the restarted group forms)
  none           healthy run
"""
import argparse
import ctypes
import json
import logging
import os
import signal
import sys
import threading
import time
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn as nn

SCENARIOS = ["none", "twofail", "target-oob", "sigkill", "rankfield-raise", "jsonlog-raise", "zerodiv",
             "cat-none", "logerror-exit", "nanloss", "skip-barrier", "bcast-src", "dtype-mismatch",
             "store-rank0", "dl-raise", "restart-diff"]


def parse_args(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("--scenario", default="none", choices=SCENARIOS)
    p.add_argument("--fault-rank", type=int, default=2)
    p.add_argument("--fault-step", type=int, default=3)
    p.add_argument("--steps", type=int, default=8)
    p.add_argument("--accum", type=int, default=1)
    p.add_argument("--step-seconds", type=float, default=0.0, help="simulated compute per step")
    p.add_argument("--pg-timeout", type=int, default=30, help="process group timeout, seconds")
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


class JsonFormatter(logging.Formatter):
    def format(self, record):
        d = {"ts": self.formatTime(record), "level": record.levelname, "rank": getattr(record, "rank", None),
             "logger": record.name, "msg": record.getMessage()}
        if record.exc_info:
            d["exc_info"] = self.formatException(record.exc_info)
        return json.dumps(d)


def setup_logging(rank, scenario):
    h = logging.StreamHandler(sys.stdout)
    h.addFilter(RankFilter(rank))
    if scenario == "rankfield-raise":
        h.setFormatter(logging.Formatter("%(asctime)s | rank=%(rank)s | %(levelname)s | %(name)s | %(message)s"))
    elif scenario == "jsonlog-raise":
        h.setFormatter(JsonFormatter())
    else:
        h.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [h]
    root.setLevel(logging.INFO)
    log = logging.getLogger("train")
    if scenario == "jsonlog-raise":
        def hook(tp, val, tb):
            log.critical("uncaught exception, exiting", exc_info=(tp, val, tb))
        sys.excepthook = hook
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


class RecordDataset(torch.utils.data.Dataset):
    """Fixed-length records; on the faulty rank one record is truncated."""

    def __init__(self, rank, n, bad_index=None):
        self.rank, self.n, self.bad_index = rank, n, bad_index

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(1000 * self.rank + i)
        feats = torch.randn(16, generator=g)
        if i == self.bad_index:
            feats = feats[:9]  # the record on disk ends early
        if feats.numel() != 16:
            raise ValueError(f"record {i} of shard-{self.rank:05d}.bin is truncated: expected 16 features, "
                             f"got {feats.numel()}")
        return feats, int(torch.randint(0, 4, (1,), generator=g))


def collate_tokens(samples):
    return {"input_ids": torch.stack([s["input_ids"] for s in samples]), "labels": torch.tensor([s["labels"] for s in samples])}


def write_crash_dump(log, rank, net):
    path = os.path.join(os.getcwd(), f"crash_rank{rank}.pt")
    log.info("rank %d: writing crash dump to %s", rank, path)
    torch.save({"model": net.state_dict()}, path)
    time.sleep(3)  # (slow shared filesystem)
    log.info("rank %d: crash dump written", rank)


# ----------------------------------------------------------------------------------------- the job
def run(rank, world_size, args):
    log = setup_logging(rank, args.scenario)
    sc = args.scenario
    faulty = rank == args.fault_rank
    torch.set_num_threads(1)
    torch.manual_seed(0)
    attempt = int(os.environ.get("TORCHELASTIC_RESTART_COUNT", "0"))
    timeout = timedelta(seconds=args.pg_timeout)

    if sc == "store-rank0":
        if rank == 0:
            def oom_kill():  # stands in for the kernel OOM killer
                time.sleep(4)
                os.kill(os.getpid(), signal.SIGKILL)
            threading.Thread(target=oom_kill, daemon=True).start()
        if faulty:
            log.info("rank %d: loading data index", rank)
            time.sleep(10)

    log.info("rank %d: init_process_group(gloo, world_size=%d, attempt=%d, pid=%d)", rank, world_size, attempt,
             os.getpid())
    if sc == "restart-diff":
        base = dist.TCPStore(os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"]), is_master=False,
                             timeout=timeout)
        dist.init_process_group("gloo", store=dist.PrefixStore(f"attempt{attempt}", base), rank=rank,
                                world_size=world_size, timeout=timeout)
    else:
        dist.init_process_group("gloo", rank=rank, world_size=world_size, timeout=timeout)
    log.info("rank %d/%d initialized", rank, world_size)

    net = Net()
    for p in net.parameters():
        dist.broadcast(p.data, src=0)
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    loss_fn = nn.CrossEntropyLoss()

    loader_iter = None
    if sc == "dl-raise":
        ds = RecordDataset(rank, 8 * args.steps, bad_index=(8 * args.fault_step + 5 if faulty else None))
        loader_iter = iter(torch.utils.data.DataLoader(ds, batch_size=8, num_workers=2))

    for step in range(args.steps):
        t0 = time.time()
        if args.step_seconds:
            time.sleep(args.step_seconds)
        try:
            x, y = step_batch(sc, rank, step, args, faulty, attempt, loader_iter, log)
            out = net(x)
            loss = loss_fn(out, y) / args.accum
            if sc == "nanloss" and not torch.isfinite(loss):
                raise ValueError(f"Loss is {loss.item()} at step {step}, stopping training")
            loss.backward()
        except Exception:
            if sc in ("twofail", "rankfield-raise"):
                log.exception("rank %d: step %d failed", rank, step)
            if sc == "twofail":
                write_crash_dump(log, rank, net)
            raise
        if sc == "logerror-exit" and faulty and step == args.fault_step:
            log.error("rank %d: checkpoint shard /data/ckpt/step_%05d/shard-%05d.safetensors failed checksum "
                      "(expected 9f3c2a71, got 00000000); aborting", rank, 1000, rank)
            sys.exit(1)
        if sc == "sigkill" and faulty and step == args.fault_step:
            os.kill(os.getpid(), signal.SIGKILL)

        if (step + 1) % args.accum == 0:
            for p in net.parameters():
                dist.all_reduce(p.grad)
                p.grad /= world_size
            opt.step()
            opt.zero_grad()
        if args.accum > 1:  # micro-steps: only a local log line, no collective
            log.info("rank %d micro-step %d/%d local_loss %.4f", rank, step + 1, args.steps, loss.item() * args.accum)
            if (step + 1) % args.accum:
                continue
        metric = (loss.detach() * args.accum).reshape(1)
        if sc == "dtype-mismatch" and faulty and step == args.fault_step:
            metric = metric.double()  # a float64 loss metric on this rank only
        dist.all_reduce(metric)
        if rank == 0:
            log.info("step %d/%d loss %.4f step_time %.3fs", step + 1, args.steps, metric.item() / world_size,
                     time.time() - t0)

        if sc == "skip-barrier" and step == args.fault_step:
            eval_now = not faulty  # the faulty rank's eval schedule check disagrees
            if eval_now:
                log.info("rank %d: eval checkpoint at step %d, waiting at barrier", rank, step + 1)
                dist.barrier()
        if sc == "bcast-src" and step == args.fault_step:
            src = rank if faulty else 0
            log.info("rank %d: re-syncing parameters from rank %d", rank, src)
            for p in net.parameters():
                dist.broadcast(p.data, src=src)

    dist.barrier()
    if rank == 0:
        log.info("training finished")
    dist.destroy_process_group()


def step_batch(sc, rank, step, args, faulty, attempt, loader_iter, log):
    if loader_iter is not None:
        return next(loader_iter)
    x, y = batch(rank, step)
    if sc == "restart-diff":
        restart_diff_fault(rank, step, attempt)
    if sc == "twofail":
        if rank == 2 and step == 3:
            raise ValueError("tokenized sample 1841 of shard 12 has length 0 (min_len=1)")
        if rank == 1 and step == 5:
            sample = {"input_ids": x[0]}
            y = sample["attention_mask"]
    if not (faulty and step == args.fault_step):
        return x, y
    if sc == "target-oob":
        y[5] = 7  # a label from a newer label map (8 classes)
    elif sc == "rankfield-raise":
        samples = [{"input_ids": x[i], "labels": int(y[i])} for i in range(8)]
        samples[3] = {"inputs": samples[3]["input_ids"], "labels": samples[3]["labels"]}  # old-schema record
        b = collate_tokens(samples)
        x, y = b["input_ids"], b["labels"]
    elif sc == "jsonlog-raise":
        raw = b"\xff\xfe" + b"caption: a dog on a beach"  # a UTF-16 file among UTF-8 ones
        log.info("rank %d: decoding caption record %d", rank, 8 * step + 2)
        raw.decode("utf-8")
    elif sc == "zerodiv":
        lengths = []  # every sample of this batch was filtered out as too long
        log.info("rank %d: batch stats: %d tokens / %d samples", rank, sum(lengths), len(lengths))
        _ = sum(lengths) / len(lengths)
    elif sc == "cat-none":
        blocks = [x[:4], None]  # the feature cache missed the second block
        x = torch.cat(blocks)
    elif sc == "nanloss":
        x[2, 7] = float("inf")
    return x, y


def restart_diff_fault(rank, step, attempt):
    if attempt == 0 and rank == 1 and step == 2:
        raise RuntimeError("expected all shards of epoch 0 to be staged, shard 3 is missing on this host")
    if attempt == 1 and rank == 3 and step == 4:
        x, _ = batch(rank, step)
        pad_row = x.shape[0]  # off by one: the pad sample should go to the last row, x.shape[0] - 1
        x[pad_row] = 0.0


def _spawn_entry(rank, world_size, args):
    run(rank, world_size, args)


def main():
    args = parse_args()
    if args.spawn:
        import torch.multiprocessing as mp
        mp.spawn(_spawn_entry, args=(args.spawn, args), nprocs=args.spawn)
        return
    if "OMPI_COMM_WORLD_RANK" in os.environ:
        os.environ.setdefault("RANK", os.environ["OMPI_COMM_WORLD_RANK"])
        os.environ.setdefault("WORLD_SIZE", os.environ["OMPI_COMM_WORLD_SIZE"])
    run(int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]), args)


if __name__ == "__main__":
    if os.environ.get("JOB3_RECORD") == "1":
        from torch.distributed.elastic.multiprocessing.errors import record
        main = record(main)
    main()
