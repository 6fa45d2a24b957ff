"""Round-8 real failure runs: a tiny training job (CPU, gloo) that induces one fault, chosen by --scenario.

Works under torch 2.2 / 2.5 / 2.8. One entry point for torchrun (RANK / WORLD_SIZE), mpirun
(OMPI_COMM_WORLD_RANK / _SIZE), a plain bash launcher (RANK / WORLD_SIZE / MASTER_* in the env) and
`--spawn N` (torch.multiprocessing.spawn, env:// rendezvous on MASTER_ADDR / MASTER_PORT).
Model: Linear 16-32-4, batches of 8, SGD; gradients all-reduced by hand every --accum steps, then the loss
metric is all-reduced and rank 0 logs it.

Scenarios (the faulty rank is --fault-rank, the step --fault-step, 0-based; the logs print 1-based "step k/N"):
  none          healthy run
  raise-key     the faulty rank's collate reads sample["attention_mask"] from a sample dict that lacks it: KeyError
  raise-value   the faulty rank's record validator raises ValueError (a record with 15 features, not 16)
  raise-zero    the faulty rank normalizes its metric by the number of valid tokens, which is 0: ZeroDivisionError
  raise-type    the faulty rank's augmentation adds a str to a tensor: TypeError
  sigkill       the faulty rank SIGKILLs itself (os.kill(os.getpid(), SIGKILL)), no traceback
  exit3         the faulty rank calls os._exit(3) (no traceback, no atexit handlers)
  segv          the faulty rank reads address 0 with ctypes.string_at(0): SIGSEGV, no traceback
  hang          the faulty rank sleeps --hang-seconds (silently) before the step's gradient all_reduce; the others
                time out in gloo after --pg-timeout seconds
  hang-mbarrier after the fault step every rank calls dist.monitored_barrier(timeout=--pg-timeout s) ("sync
                before eval"); the faulty rank first sleeps --hang-seconds, so rank 0 reports it as not responding
  mismatch-size at the fault step the faulty rank all-reduces its metric as a 2-element tensor (loss, n_samples),
                the others as a 1-element tensor (run with TORCH_DISTRIBUTED_DEBUG=DETAIL)
  mismatch-op   at the fault step the faulty rank broadcasts its metric (src=its rank) where the others all-reduce
                it (run with TORCH_DISTRIBUTED_DEBUG=DETAIL)
  twofail       two ranks fail independently during gradient accumulation (no collective before --accum steps):
                --fault-rank raises ValueError at --fault-step, logs it and writes an emergency checkpoint for
                --linger-seconds before re-raising; --fault-rank2 raises FileNotFoundError (a missing shard) at
                --fault-step2 and re-raises at once. Use --step-seconds so the two are ~1 s apart.
  hostoom       the faulty rank joins the memory cgroup named by $R8_OOM_CGROUP at startup (writes its pid to
                cgroup.procs); at the fault step it builds an in-memory "sample cache", allocating and touching
                256 MiB chunks until the kernel OOM killer SIGKILLs it
  (store/rendezvous faults need no scenario: the launcher gives one rank a wrong MASTER_PORT)

Logging (--log-style): plain (print, no timestamps) or asctime (`%(asctime)s %(levelname)s %(name)s: ...`).
"""
import argparse
import ctypes
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

SCENARIOS = ["none", "raise-key", "raise-value", "raise-zero", "raise-type", "sigkill", "exit3", "segv", "hang",
             "hang-mbarrier", "mismatch-size", "mismatch-op", "twofail", "hostoom"]


def parse_args(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("--scenario", default="none", choices=SCENARIOS)
    p.add_argument("--fault-rank", type=int, default=1)
    p.add_argument("--fault-step", type=int, default=3)
    p.add_argument("--fault-rank2", type=int, default=-1)
    p.add_argument("--fault-step2", type=int, default=-1)
    p.add_argument("--linger-seconds", type=float, default=3.0)
    p.add_argument("--steps", type=int, default=8)
    p.add_argument("--accum", type=int, default=1)
    p.add_argument("--step-seconds", type=float, default=0.0, help="simulated compute per step")
    p.add_argument("--pg-timeout", type=int, default=30, help="process group timeout, seconds")
    p.add_argument("--hang-seconds", type=float, default=60.0)
    p.add_argument("--log-style", default="plain", choices=["plain", "asctime"])
    p.add_argument("--spawn", type=int, default=0, help="start this many ranks with mp.spawn")
    return p.parse_args(argv)


class PrintLog:
    """print()-based stand-in for a logger (style 'plain')."""

    def info(self, msg, *a):
        print(msg % a if a else msg, flush=True)

    error = warning = info

    def exception(self, msg, *a):
        import traceback
        print(msg % a if a else msg, flush=True)
        traceback.print_exc()
        sys.stderr.flush()


def setup_logging(style):
    if style == "plain":
        return PrintLog()
    h = logging.StreamHandler(sys.stdout)
    h.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [h]
    root.setLevel(logging.INFO)
    return logging.getLogger("trainer")


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


def validate_record(rec, idx, feat=16):
    if rec.shape[-1] != feat:
        raise ValueError("record %d of shard train-%05d: expected %d features, got %d" % (idx, 7, feat, rec.shape[-1]))


def step_batch(sc, rank, step, args):
    x, y = batch(rank, step)
    if sc == "twofail":
        if rank == args.fault_rank and step == args.fault_step:
            validate_record(torch.randn(15), 4093)
        if rank == args.fault_rank2 and step == args.fault_step2:
            path = os.path.join(os.getcwd(), "data", "shard-00041.bin")
            with open(path, "rb") as f:
                f.read()
        return x, y
    if not (rank == args.fault_rank and step == args.fault_step):
        return x, y
    if sc == "raise-key":
        samples = [{"input": x[i], "label": y[i]} for i in range(x.shape[0])]  # this shard has no attention masks
        masks = torch.stack([s["attention_mask"] for s in samples])
    elif sc == "raise-value":
        validate_record(x[:, :15], 4093)
    elif sc == "raise-type":
        jitter = os.environ.get("AUG_JITTER", "0.05")  # read from the env as a string, never converted
        x = x + jitter
    return x, y


def grow_cache(log, rank):
    cache = []
    for i in range(64):
        chunk = torch.ones(256 * 1024 * 1024 // 4)  # 256 MiB, touched
        cache.append(chunk)
        log.info("rank %d: sample cache %d MiB", rank, 256 * (i + 1))
    return cache


def run(rank, world_size, args):
    log = setup_logging(args.log_style)
    sc = args.scenario
    torch.set_num_threads(1)
    torch.manual_seed(0)
    if sc == "hostoom" and rank == args.fault_rank and os.environ.get("R8_OOM_CGROUP"):
        with open(os.path.join(os.environ["R8_OOM_CGROUP"], "cgroup.procs"), "w") as f:
            f.write(str(os.getpid()))

    log.info("rank %d: init_process_group(gloo, world_size=%d) pid=%d host=%s master=%s:%s", rank, world_size,
             os.getpid(), socket.gethostname(), os.environ.get("MASTER_ADDR"), os.environ.get("MASTER_PORT"))
    dist.init_process_group("gloo", rank=rank, world_size=world_size, timeout=timedelta(seconds=args.pg_timeout))
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
            x, y = step_batch(sc, rank, step, args)
            loss = loss_fn(net(x), y) / args.accum
            loss.backward()
            if sc == "raise-zero" and faulty:
                n_valid = int((y < 0).sum())  # the ignore_index mask drops every token of this batch
                tok_loss = loss.item() / n_valid
        except Exception:
            if sc == "twofail":
                log.exception("rank %d: training step %d failed", rank, step + 1)
                if rank == args.fault_rank:
                    log.info("rank %d: writing emergency checkpoint", rank)
                    torch.save({"model": net.state_dict()}, os.path.join(os.getcwd(), "emergency_rank%d.pt" % rank))
                    time.sleep(args.linger_seconds)  # (slow shared filesystem)
                    log.info("rank %d: emergency checkpoint written", rank)
            raise
        if faulty:
            if sc == "sigkill":
                os.kill(os.getpid(), signal.SIGKILL)
            elif sc == "exit3":
                os._exit(3)
            elif sc == "segv":
                ctypes.string_at(0)
            elif sc == "hang":
                time.sleep(args.hang_seconds)
            elif sc == "hostoom":
                log.info("rank %d: building in-memory sample cache", rank)
                cache = grow_cache(log, rank)

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
        if sc == "mismatch-size" and faulty:
            metric = torch.cat([metric, torch.tensor([float(x.shape[0])])])  # (loss, n_samples)
        if sc == "mismatch-op" and faulty:
            dist.broadcast(metric, src=rank)
        else:
            dist.all_reduce(metric)
        if rank == 0:
            log.info("step %d/%d loss %.4f step_time %.3fs", step + 1, args.steps, metric[0].item() / world_size,
                     time.time() - t0)
        if sc == "hang-mbarrier" and step == args.fault_step:
            if rank == args.fault_rank:
                time.sleep(args.hang_seconds)
            dist.monitored_barrier(timeout=timedelta(seconds=args.pg_timeout))  # sync before eval
            if rank == 0:
                log.info("running eval after step %d", step + 1)

    dist.barrier()
    if rank == 0:
        log.info("training finished")
    dist.destroy_process_group()


def main():
    args = parse_args()
    if args.spawn:
        import torch.multiprocessing as mp
        mp.spawn(run, args=(args.spawn, args), nprocs=args.spawn)
        return
    if "OMPI_COMM_WORLD_RANK" in os.environ:
        os.environ.setdefault("RANK", os.environ["OMPI_COMM_WORLD_RANK"])
        os.environ.setdefault("WORLD_SIZE", os.environ["OMPI_COMM_WORLD_SIZE"])
    run(int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]), args)


if __name__ == "__main__":
    main()
