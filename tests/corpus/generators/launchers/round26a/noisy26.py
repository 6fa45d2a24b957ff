"""Round 26a: HEALTHY (or only-warning) multi-rank CPU/gloo jobs whose logs are noisy the way real jobs are.

Launch with torchrun / accelerate launch (env:// rendezvous) or `--spawn N` (torch.multiprocessing.spawn).
`--acc` uses HF Accelerate (Accelerator() on CPU, DDP-wrapped model); otherwise gradients are averaged by hand
with dist.all_reduce. `--what` picks the noise (nothing is fatal; every run ends with a summary table):
  upload     rank 1 tries to push metrics to 127.0.0.1:9 every 4th step, gets ConnectionRefusedError and logs it with
             logger.exception(...), then goes on
  tbwrite    rank 0 writes a tensorboard-style event file into a directory that is a regular file -> OSError,
             logged with logger.exception(...), training goes on
  warnings   every step: a broadcasting UserWarning (mse_loss shapes), a FutureWarning (torch.cpu.amp.autocast) and a
             DeprecationWarning (run with PYTHONWARNINGS=always)
  retry      each rank's checkpoint-sync "server" (a local thread) resets the first connection (RST) -> caught
             ConnectionResetError, "retrying in 1s", the second try succeeds
  nan        rank 2 gets an inf input at step 5 -> NaN loss; a guard logs an ERROR line and all ranks skip that step
  dlworker   rank 1's Dataset raises OSError in its DataLoader worker once; the loop catches it, restarts the workers
  restart    (torchrun --max-restarts 1) attempt 0: rank 1 raises RuntimeError at step 3; attempt 1 completes
  keywords   config dump and metrics whose names contain error/failed/timeout/killed/OOM (oom_retries=0, timeout=1800..)
  graphbreak torch.compile of a forward that calls .item() on a data-dependent value (graph break; TORCH_LOGS=graph_breaks)
  recompile  torch.compile(dynamic=False) of a function fed a new sequence length every step -> recompile limit hit,
             falls back to eager, training finishes
"""
import argparse
import datetime
import logging
import os
import socket
import struct
import sys
import threading
import time
import warnings

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F

log = logging.getLogger("train")


def setup_logging(rank):
    logging.basicConfig(level=logging.INFO, stream=sys.stdout,
                        format=f"%(asctime)s [rank{rank}] %(levelname)s %(name)s: %(message)s")


class Net(nn.Module):
    def __init__(self, compiled_item=False):
        super().__init__()
        self.l1, self.l2 = nn.Linear(16, 32), nn.Linear(32, 1)
        self.compiled_item = compiled_item

    def forward(self, x):
        h = torch.relu(self.l1(x))
        if self.compiled_item:
            # data-dependent Python branch on a tensor value: dynamo graph-breaks at .item()
            if h.mean().item() > 0.5:
                h = h * 0.5
        return self.l2(h)


class FlakyDataset(torch.utils.data.Dataset):
    """Index 13 fails once (marker file) with OSError, as a flaky network-mounted shard read would."""

    def __init__(self, n, marker):
        g = torch.Generator().manual_seed(0)
        self.x, self.y = torch.randn(n, 16, generator=g), torch.randn(n, 1, generator=g)
        self.marker = marker

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        if self.marker and i == 13 and not os.path.exists(self.marker):
            open(self.marker, "w").close()
            raise OSError(5, "Input/output error", "/data/shards/train-00013.bin")
        return self.x[i], self.y[i]


def reset_server():
    """A local TCP 'checkpoint sync' endpoint: resets (RST) the first connection, answers OK afterwards."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(4)
    state = {"n": 0}

    def serve():
        while True:
            c, _ = srv.accept()
            state["n"] += 1
            if state["n"] == 1:
                c.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                c.recv(64)
                c.close()  # RST
            else:
                c.recv(64)
                c.sendall(b"OK\n")
                c.close()

    threading.Thread(target=serve, daemon=True).start()
    return srv.getsockname()[1]


def sync_checkpoint(port, rank, step):
    for attempt in range(1, 4):
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
                s.sendall(b"PUT ckpt step=%d\n" % step)
                reply = s.recv(16)
                if not reply:
                    raise ConnectionResetError(104, "Connection reset by peer")
            log.info("checkpoint sync step %d ok (attempt %d)", step, attempt)
            return
        except ConnectionResetError as e:
            log.warning("checkpoint sync step %d: %r, retrying in 1s (attempt %d/3)", step, e, attempt)
            time.sleep(1)


def train(rank, world, args):
    setup_logging(rank)
    torch.manual_seed(0)
    torch.set_num_threads(1)
    acc = None
    if args.acc:
        from accelerate import Accelerator
        from accelerate.utils import InitProcessGroupKwargs
        acc = Accelerator(cpu=True, kwargs_handlers=[InitProcessGroupKwargs(backend="gloo",
                                                                            timeout=datetime.timedelta(seconds=args.pg_timeout))])
    elif args.spawn:
        os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
        os.environ["MASTER_PORT"] = str(args.port)
        dist.init_process_group("gloo", rank=rank, world_size=world, timeout=datetime.timedelta(seconds=args.pg_timeout))
    else:
        dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=args.pg_timeout))
    rank, world = dist.get_rank(), dist.get_world_size()
    what = args.what
    cfg = dict(lr=0.05, steps=args.steps, batch_size=16, seed=0, timeout=1800, oom_retries=0, max_failed_batches=3,
               kill_on_error=False, error_feedback=True, nccl_blocking_wait=0, restart_count=os.environ.get("TORCHELASTIC_RESTART_COUNT", "n/a"))
    if rank == 0:
        log.info("config: %s", " ".join(f"{k}={v}" for k, v in cfg.items()))
    model = Net(compiled_item=(what == "graphbreak"))
    if what == "graphbreak":
        model = torch.compile(model, backend=args.backend)
    opt = torch.optim.SGD(model.parameters(), lr=cfg["lr"])
    marker = f"{args.workdir}/.r26a_dl_once_{os.getppid()}" if (what == "dlworker" and rank == 1) else None
    ds = FlakyDataset(16 * args.steps * 2, marker)
    sampler = torch.utils.data.distributed.DistributedSampler(ds, num_replicas=world, rank=rank, shuffle=False)
    dl = torch.utils.data.DataLoader(ds, batch_size=16, sampler=sampler, num_workers=1 if what == "dlworker" else 0)
    if acc is not None:
        model, opt = acc.prepare(model, opt)
    port = reset_server() if what == "retry" else None

    if what == "recompile":
        @torch.compile(dynamic=False, backend=args.backend)
        def seq_score(tokens):
            return (tokens.float().softmax(-1) * torch.arange(tokens.shape[-1])).sum(-1).mean()

    it = iter(dl)
    skipped, fails, t0, losses = 0, 0, time.time(), []
    step = 0
    while step < args.steps:
        try:
            x, y = next(it)
        except StopIteration:
            it = iter(dl)
            continue
        except OSError:
            # the worker's OSError is re-raised here; a fresh iterator restarts the worker processes
            log.exception("DataLoader worker failed at step %d; restarting workers and retrying the batch", step)
            it = iter(dl)
            continue
        if what == "nan" and rank == 2 and step == 5:
            x = x.clone()
            x[0, 0] = float("inf")
        if what == "restart" and rank == 1 and step == 3 and os.environ.get("TORCHELASTIC_RESTART_COUNT") == "0":
            raise RuntimeError("shard index for rank 1 not ready yet (epoch 0 manifest missing)")
        if what == "warnings":
            with torch.cpu.amp.autocast(enabled=False):  # FutureWarning: torch.cpu.amp.autocast(args...) is deprecated
                out = model(x)
            loss = F.mse_loss(out, y.squeeze(1))  # UserWarning: target size differs from input size (broadcast)
            warnings.warn("`sampler.set_epoch()` called without an epoch argument is deprecated and will be removed "
                          "in v3.0", DeprecationWarning)
        else:
            out = model(x)
            loss = F.mse_loss(out, y)
        if what == "recompile":
            seqlen = 8 + 4 * step
            loss = loss + 0.0 * seq_score(torch.randint(0, 100, (4, seqlen)))
        if what == "nan":
            finite = torch.tensor([1.0 if torch.isfinite(loss) else 0.0])
            if not finite.item():
                log.error("loss is nan at step %d (non-finite input in batch); skipping this step, "
                          "nan_skip_count=%d", step, skipped + 1)
            dist.all_reduce(finite, op=dist.ReduceOp.MIN)
            if finite.item() == 0.0:
                if rank != 2:
                    log.warning("step %d skipped on all ranks (non-finite loss on a peer)", step)
                skipped += 1
                opt.zero_grad()
                step += 1
                continue
        opt.zero_grad()
        if acc is not None:
            acc.backward(loss)
        else:
            loss.backward()
            for p in model.parameters():
                dist.all_reduce(p.grad)
                p.grad /= world
        opt.step()
        losses.append(loss.item())
        if what == "keywords":
            log.info("step %d loss=%.4f error_rate=%.2f failed_batches=0 oom_retries=0 killed_workers=0 "
                     "timeout_s=1800 grad_norm_error=%.3f", step, loss.item(), 0.01, 0.002)
        else:
            log.info("step %d loss=%.4f lr=%.3f", step, loss.item(), cfg["lr"])
        if what == "upload" and rank == 1 and step % 4 == 0:
            try:
                with socket.create_connection(("127.0.0.1", 9), timeout=2) as s:
                    s.sendall(b"loss %f\n" % loss.item())
            except OSError:
                fails += 1
                log.exception("metrics upload failed (step %d), continuing without remote metrics", step)
        if what == "tbwrite" and rank == 0 and step in (2, 6):
            try:
                with open(f"{args.workdir}/r26a_tb_not_a_dir/events.out.tfevents", "ab") as f:
                    f.write(b"%d %f" % (step, loss.item()))
            except OSError:
                log.exception("tensorboard write failed at step %d; scalars for this step are dropped", step)
        if what == "retry" and step == 4:
            sync_checkpoint(port, rank, step)
        step += 1
    dist.barrier()
    if rank == 0:
        dt = time.time() - t0
        print("+------------------+------------+", flush=True)
        print("| metric           | value      |")
        print("+------------------+------------+")
        for k, v in [("steps", args.steps), ("final_loss", f"{losses[-1]:.4f}"), ("skipped_steps", skipped),
                     ("error_rate", "0.00"), ("failed_uploads", fails),
                     ("oom_events", 0), ("timeouts", 0), ("wall_s", f"{dt:.1f}")]:
            print(f"| {k:<16} | {str(v):<10} |")
        print("+------------------+------------+", flush=True)
        log.info("training complete: %d steps on %d ranks", args.steps, world)
    if acc is not None:
        acc.end_training()
    else:
        dist.destroy_process_group()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--what", default="keywords")
    ap.add_argument("--spawn", type=int, default=0)
    ap.add_argument("--port", type=int, default=29700)
    ap.add_argument("--acc", action="store_true")
    ap.add_argument("--pg-timeout", type=int, default=60)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--backend", default="aot_eager")
    ap.add_argument("--workdir", default=os.getcwd())
    args = ap.parse_args()
    if args.what == "tbwrite":
        p = f"{args.workdir}/r26a_tb_not_a_dir"
        if not os.path.exists(p):
            open(p, "w").close()
    if args.spawn:
        import torch.multiprocessing as mp
        mp.spawn(train, args=(args.spawn, args), nprocs=args.spawn, join=True)
    else:
        train(int(os.environ.get("RANK", 0)), int(os.environ.get("WORLD_SIZE", 1)), args)


if __name__ == "__main__":
    main()
