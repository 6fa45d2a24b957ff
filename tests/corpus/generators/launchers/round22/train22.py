#!/usr/bin/env python
"""Round 22: a HEALTHY small DDP (gloo, CPU) training job whose output carries alarming-looking but
normal noise. Nothing here is a failure: every run must exit 0.

Launch modes:
  torchrun --nproc-per-node N train22.py ...        (env:// rendezvous, RANK/WORLD_SIZE from torchrun)
  python train22.py --spawn N ...                   (torch.multiprocessing.spawn, MASTER_ADDR/PORT set here)
  python train22.py ...                             (single process, no process group unless --spawn/torchrun)

Noise switches (each one a handled, harmless event):
  --warn            Python warnings from user code and torch (UserWarning/FutureWarning/DeprecationWarning
                    with words like "failed", "timeout", "out of memory")
  --bad R:I,...     sample I on rank R is a corrupted record: decoding raises, the dataset logs the traceback
                    (logger.exception, or traceback.print_exc() with --print-exc) and the sample is skipped
  --workers K       DataLoader with K worker processes that log their start and stop
  --nan-at R:S      rank R produces a NaN loss at step S: "NaN loss detected, skipping batch" (all ranks skip)
  --http-retry      rank 0 uploads metrics to a local HTTP endpoint that answers 503 once; retried, succeeds
  --early-stop P    stop when val_error has not improved for P evaluations (logger.warning)
  --ckpt PATH       save a checkpoint at the end (rank 0);  --resume PATH: resume from one
  --compile B       torch.compile(model, backend=B); --dyn-shapes varies the batch size (recompiles),
                    --graph-break puts a print() in forward (graph break)
  --progress tqdm|rich   progress bar on rank 0
  --logger logging|loguru|structlog
"""
import argparse
import http.server
import json
import logging
import multiprocessing.util
import os
import sys
import threading
import time
import traceback
import urllib.error
import urllib.request
import warnings
import zlib

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

p = argparse.ArgumentParser()
p.add_argument("--spawn", type=int, default=0)
p.add_argument("--steps", type=int, default=8)
p.add_argument("--epochs", type=int, default=1)
p.add_argument("--batch", type=int, default=8)
p.add_argument("--workers", type=int, default=0)
p.add_argument("--bad", default="")
p.add_argument("--print-exc", action="store_true")
p.add_argument("--warn", action="store_true")
p.add_argument("--nan-at", default="")
p.add_argument("--http-retry", action="store_true")
p.add_argument("--early-stop", type=int, default=0)
p.add_argument("--ckpt", default="")
p.add_argument("--resume", default="")
p.add_argument("--compile", default="")
p.add_argument("--dyn-shapes", action="store_true")
p.add_argument("--graph-break", action="store_true")
p.add_argument("--progress", default="")
p.add_argument("--logger", default="logging")
p.add_argument("--eval-every", type=int, default=2)
args = p.parse_args()


def make_logger(rank):
    if args.logger == "loguru":
        from loguru import logger as lg
        lg.remove()
        lg.add(sys.stderr, format="{time:YYYY-MM-DD HH:mm:ss.SSS} | {level: <8} | rank%d | {name}:{function}:{line} - {message}" % rank)
        return lg
    if args.logger == "structlog":
        import structlog
        structlog.configure(processors=[structlog.processors.add_log_level,
                                        structlog.processors.TimeStamper(fmt="iso"),
                                        structlog.processors.format_exc_info,
                                        structlog.dev.ConsoleRenderer(colors=False)])
        return structlog.get_logger("train22").bind(rank=rank)
    logging.basicConfig(level=logging.INFO, stream=sys.stderr,
                        format=f"%(asctime)s %(levelname)s [rank{rank}] %(name)s: %(message)s", force=True)
    return logging.getLogger("train22")


class ShardDataset(Dataset):
    """Records are zlib-compressed JSON; a 'bad' record is truncated and fails to decode (handled)."""

    def __init__(self, rank, n, bad, log):
        self.rank, self.log = rank, log
        g = torch.Generator().manual_seed(1234 + rank)
        self.x = torch.randn(n, 16, generator=g)
        self.y = (self.x.sum(1, keepdim=True) > 0).float()
        self.blobs = []
        for i in range(n):
            blob = zlib.compress(json.dumps({"x": self.x[i].tolist(), "y": self.y[i].item()}).encode())
            if i in bad:
                blob = blob[: len(blob) // 2]          # truncated record on disk
            self.blobs.append(blob)

    def __len__(self):
        return len(self.blobs)

    def __getitem__(self, i):
        try:
            rec = json.loads(zlib.decompress(self.blobs[i]))
        except zlib.error:
            if args.print_exc:
                print(f"[rank{self.rank}] could not decode record {i}; skipping sample", file=sys.stderr, flush=True)
                traceback.print_exc()
            else:
                self.log.exception(f"could not decode record {i} of shard {self.rank}; skipping sample")
            return None
        return torch.tensor(rec["x"]), torch.tensor([rec["y"]])


def winit(wid):
    # module level so that it pickles for spawn-started workers (mp.spawn children); re-configures logging there
    wlog = make_logger(int(os.environ.get("RANK", 0)))
    wlog.info(f"dataloader worker {wid} started (pid {os.getpid()})")
    multiprocessing.util.Finalize(None, wlog.info, args=(f"dataloader worker {wid} stopping (pid {os.getpid()})",), exitpriority=10)


def collate_skip_none(batch):
    batch = [b for b in batch if b is not None]
    return torch.utils.data.default_collate(batch)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 1))

    def forward(self, x):
        h = self.body(x)
        if args.graph_break:
            print(f"forward: batch of {x.shape[0]}")   # graph break under torch.compile
        return h


class FlakyMetricsHandler(http.server.BaseHTTPRequestHandler):
    calls = 0

    def do_POST(self):
        FlakyMetricsHandler.calls += 1
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        code = 503 if FlakyMetricsHandler.calls == 1 else 200
        self.send_response(code)
        self.end_headers()
        self.wfile.write(b"{}")

    def log_message(self, *a):
        pass


def upload_metrics(url, payload, log, attempts=3):
    for a in range(1, attempts + 1):
        try:
            req = urllib.request.Request(url, data=json.dumps(payload).encode(), method="POST")
            with urllib.request.urlopen(req, timeout=5) as r:
                log.info(f"metrics upload ok (HTTP {r.status}, attempt {a}/{attempts})")
                return True
        except urllib.error.HTTPError as e:
            log.error(f"metrics upload failed: {e} (attempt {a}/{attempts}); retrying in 0.5s")
            time.sleep(0.5)
    log.error("metrics upload failed after all attempts; continuing without remote metrics")
    return False


def main(local_rank=0, spawn_world=0):
    if spawn_world:
        os.environ["RANK"] = str(local_rank)
        os.environ["WORLD_SIZE"] = str(spawn_world)
        os.environ["LOCAL_RANK"] = str(local_rank)
    distributed = "WORLD_SIZE" in os.environ
    if distributed:
        dist.init_process_group("gloo")
        rank, world = dist.get_rank(), dist.get_world_size()
    else:
        rank, world = 0, 1
    log = make_logger(rank)
    torch.manual_seed(0)
    log.info(f"starting: world_size={world} pid={os.getpid()} torch={torch.__version__}")

    if args.warn:
        warnings.warn("checkpoint upload to s3 failed on a previous run; falling back to local disk", UserWarning)
        warnings.warn("`--timeout` will be renamed to `--collective-timeout` in a future release", FutureWarning)
        warnings.simplefilter("always", DeprecationWarning)
        warnings.warn("config key 'error_threshold' is deprecated; use 'val_error_threshold'", DeprecationWarning)
        warnings.warn("could not pin memory: CUDA out of memory is not applicable on CPU; pin_memory ignored", UserWarning)
        # torch's own warnings: a non-writable numpy array and torch.tensor(tensor)
        import numpy as np
        arr = np.arange(4.0)
        arr.setflags(write=False)
        torch.from_numpy(arr)
        t = torch.ones(2)
        torch.tensor(t)

    bad = {}
    for item in filter(None, args.bad.split(",")):
        r, i = item.split(":")
        bad.setdefault(int(r), set()).add(int(i))
    nan_at = {}
    for item in filter(None, args.nan_at.split(",")):
        r, s = item.split(":")
        nan_at.setdefault(int(r), set()).add(int(s))

    model = Net()
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    start_step = 0
    if args.resume:
        ck = torch.load(args.resume, map_location="cpu", weights_only=True)
        model.load_state_dict(ck["model"])
        opt.load_state_dict(ck["opt"])
        start_step = int(ck["step"])
        log.info(f"resumed from checkpoint {args.resume} at step {start_step} (saved loss={ck['loss']:.4f})")
    ddp = nn.parallel.DistributedDataParallel(model) if distributed else model
    fwd = torch.compile(ddp, backend=args.compile) if args.compile else ddp

    n = args.batch * args.steps
    ds = ShardDataset(rank, n, bad.get(rank, set()), log)

    dl = DataLoader(ds, batch_size=args.batch, num_workers=args.workers, collate_fn=collate_skip_none,
                    worker_init_fn=winit if args.workers else None)

    url = None
    if args.http_retry and rank == 0:
        srv = http.server.HTTPServer(("127.0.0.1", 0), FlakyMetricsHandler)
        threading.Thread(target=srv.serve_forever, daemon=True).start()
        url = f"http://127.0.0.1:{srv.server_address[1]}/api/v1/metrics"

    total = args.epochs * args.steps
    bar = None
    if rank == 0 and args.progress == "tqdm":
        from tqdm import tqdm
        bar = tqdm(total=total, initial=min(start_step, total), desc="train", file=sys.stderr, mininterval=0)
    elif rank == 0 and args.progress == "rich":
        from rich.progress import Progress
        bar = Progress(transient=False)
        bar.start()
        task = bar.add_task("train", total=total, completed=min(start_step, total))

    step = start_step
    best, since_best, skipped, loss_v = float("inf"), 0, 0, float("nan")
    lossf = nn.BCEWithLogitsLoss()
    stopped = False
    for epoch in range(args.epochs):
        for bi, (x, y) in enumerate(dl):
            if step >= start_step + total:
                break
            if args.dyn_shapes and bi % 3 == 2:
                x, y = x[:5], y[:5]                   # ragged tail batch -> recompile
            if step in nan_at.get(rank, ()):
                x = x * float("nan")                  # a bad batch that makes the loss NaN
            out = fwd(x)
            loss = lossf(out, y)
            bad_flag = torch.tensor([0.0 if torch.isfinite(loss) else 1.0])
            if distributed:
                dist.all_reduce(bad_flag)
            if bad_flag.item() > 0:
                skipped += 1
                log.warning(f"NaN loss detected at step {step} (on {int(bad_flag.item())} rank(s)), skipping batch")
                opt.zero_grad(set_to_none=True)
                step += 1
                if bar is not None and args.progress == "tqdm":
                    bar.update(1)
                elif bar is not None:
                    bar.update(task, advance=1)
                continue
            opt.zero_grad()
            loss.backward()
            opt.step()
            loss_v = loss.item()
            step += 1
            if bar is not None and args.progress == "tqdm":
                bar.update(1)
                bar.set_postfix(loss=f"{loss_v:.3f}")
            elif bar is not None:
                bar.update(task, advance=1)
            log.info(f"epoch {epoch} step {step} loss={loss_v:.4f} grad_norm_error=0.000 oom_retries=0")
            if step % args.eval_every == 0:
                with torch.no_grad():
                    val_error = float(((ddp(ds.x) > 0).float() != ds.y).float().mean())
                t = torch.tensor([val_error])
                if distributed:
                    dist.all_reduce(t)
                val_error = t.item() / world
                log.info(f"eval step {step}: val_loss={loss_v:.4f} val_error={val_error:.3f} "
                         f"failed_samples={len(bad.get(rank, ()))} skipped_nan_batches={skipped}")
                if url:
                    upload_metrics(url, {"step": step, "val_error": val_error}, log)
                if args.early_stop:
                    if val_error < best - 1e-4:
                        best, since_best = val_error, 0
                    else:
                        since_best += 1
                        if since_best >= args.early_stop:
                            log.warning(f"early stopping: val_error did not improve for {since_best} evaluations "
                                        f"(best={best:.3f}); stopping at step {step}")
                            stopped = True
                            break
        if stopped:
            break

    if bar is not None:
        if args.progress == "tqdm":
            bar.close()
        else:
            bar.stop()
    if args.ckpt and rank == 0:
        torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "step": step, "loss": loss_v}, args.ckpt)
        log.info(f"saved checkpoint to {args.ckpt} (step {step})")
    if distributed:
        dist.barrier()
    log.info(f"training complete: steps={step} final_loss={loss_v:.4f} skipped_nan_batches={skipped} errors=0")
    if distributed:
        dist.destroy_process_group()
        log.info("process group destroyed, exiting cleanly")


if __name__ == "__main__":
    if args.spawn:
        import torch.multiprocessing as mp
        os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
        os.environ.setdefault("MASTER_PORT", "29622")
        mp.spawn(main, args=(args.spawn,), nprocs=args.spawn, join=True)
        print("mp.spawn: all processes exited", flush=True)
    else:
        main()
