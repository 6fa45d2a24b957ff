"""Round 21: a small data-parallel regression job (gloo, CPU) whose logs look alarming while it is healthy, or where
something goes wrong and the job goes on, plus a few ordinary failures for contrast.

Started by torchrun / accelerate launch (RANK, WORLD_SIZE), mpirun (OMPI_COMM_WORLD_RANK/SIZE, MASTER_ADDR/PORT passed
with -x) or torch.multiprocessing.spawn (spawn_job21.py calls run(rank, world, argv)).

What happens on which rank comes from env R21_JOB=<mode>:<rank>:<step> (never on the command line), modes:
  ok        nothing special
  badbatch  record <step> of <rank>'s shard is truncated: zlib.error while decoding; the loop logs it with
            logger.exception(...), skips to the next record and trains on (NOT fatal)
  retry     at <step>, <rank> fetches its batch from a local feature-cache server that only starts listening ~1 s
            later: ConnectionRefusedError on attempt 1, logged as a warning, attempt 2 succeeds (NOT fatal)
  raise     <rank> raises KeyError in data loading at <step> (fatal)
  raise0    same, but only in torchrun attempt 0 (TORCHELASTIC_RESTART_COUNT=0): a restarted attempt completes
  sigkill   <rank> SIGKILLs itself after the log line of <step> (fatal, no traceback)
  sigkill0  same, only in attempt 0
  item      (with --compile) <rank>'s config enables activation clipping, which branches on x.abs().max().item()
            inside the compiled forward: a Dynamo graph break (no fullgraph), training goes on
  shapes    (with --compile, dynamic=False) <rank> gets a different batch size every step: it recompiles until
            torch._dynamo.config.recompile_limit (set by --recompile-limit) is hit and then runs in eager
--noisy   prints what looks alarming but is harmless: a FutureWarning and a DeprecationWarning from this code, torch
          UserWarnings (lr_scheduler.step() before optimizer.step(), copy-constructing a tensor), and log messages
          with the words error/failed/timeout ("validation error: 0.23", "0 failed samples", ...).
--no-ddp  average gradients by hand (all_reduce per parameter) instead of DDP
--compile print  torch.compile of the model whose forward has a debug print() (graph break) on every rank; the last
          batch is smaller (one recompile).
"""
import argparse, logging, os, signal, socket, sys, threading, time, warnings, zlib
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

log = logging.getLogger("train")


def job_spec():
    m, r, s = (os.environ.get("R21_JOB", "ok:-1:0").split(":") + ["-1", "0"])[:3]
    return m, int(r), int(s)


def parse(argv):
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=8)
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--timeout", type=int, default=60, help="process group timeout, s")
    p.add_argument("--noisy", action="store_true")
    p.add_argument("--tqdm", action="store_true", help="tqdm bar on rank 0")
    p.add_argument("--compile", choices=["none", "print", "model"], default="none")
    p.add_argument("--dynamic", choices=["auto", "false"], default="auto")
    p.add_argument("--recompile-limit", type=int, default=8)
    p.add_argument("--no-ddp", action="store_true", help="no DDP wrapper: average gradients with all_reduce by hand")
    p.add_argument("--accelerate", action="store_true", help="use accelerate.Accelerator(cpu=True)")
    p.add_argument("--attempt-store", action="store_true",
                   help="join through PrefixStore('attempt<TORCHELASTIC_RESTART_COUNT>') on torchrun's store, so a "
                        "restarted group does not trip over the keys of the failed attempt")
    return p.parse_args(argv)


class Net(nn.Module):
    def __init__(self, debug_print=False, clip=False):
        super().__init__()
        self.l1, self.l2 = nn.Linear(16, 64), nn.Linear(64, 1)
        self.debug_print, self.clip = debug_print, clip

    def forward(self, x):
        h = torch.relu(self.l1(x))
        if self.debug_print:
            print(f"forward: batch {tuple(x.shape)} act mean {h.mean()}")
        if self.clip:
            peak = h.abs().max().item()
            if peak > 4.0:
                h = h * (4.0 / peak)
        return self.l2(h)


# ------------------------------------------------------------------ data: one shard of zlib-compressed records per rank
def make_shard(rank, n, batch, truncate=None, sizes=None):
    g = torch.Generator().manual_seed(100 + rank)
    recs = []
    for i in range(n):
        b = sizes[i] if sizes else batch
        x = torch.randn(b, 16, generator=g)
        y = x[:, :1] * 0.5 + 0.1 * torch.randn(b, 1, generator=g)
        raw = zlib.compress(torch.cat([x, y], 1).numpy().tobytes())
        if truncate is not None and i == truncate:
            raw = raw[: len(raw) // 2]
        recs.append(raw)
    return recs


def decode(raw):
    import numpy as np
    a = torch.from_numpy(np.frombuffer(zlib.decompress(raw), dtype=np.float32).copy()).view(-1, 17)
    return a[:, :16], a[:, 16:]


def serve_once(port, payload, delay):
    """A tiny local 'feature cache' that starts listening only after `delay` seconds and serves one record."""
    def srv():
        time.sleep(delay)
        s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("127.0.0.1", port)); s.listen(1)
        c, _ = s.accept(); c.sendall(payload); c.close(); s.close()
    threading.Thread(target=srv, daemon=True).start()


def fetch(port, tries=3):
    for attempt in range(1, tries + 1):
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=5) as c:
                buf = b""
                while chunk := c.recv(65536):
                    buf += chunk
            if attempt > 1:
                log.info("feature cache fetch succeeded on attempt %d/%d (%d bytes)", attempt, tries, len(buf))
            return buf
        except OSError as e:
            if attempt == tries:
                raise
            log.warning("feature cache fetch failed (attempt %d/%d): %s; retrying in 1.5s", attempt, tries, e)
            time.sleep(1.5)


def run(rank=None, world=None, argv=None):
    a = parse(sys.argv[1:] if argv is None else argv)
    mode, frank, fstep = job_spec()
    attempt = int(os.environ.get("TORCHELASTIC_RESTART_COUNT", "0"))
    acc = None
    if a.accelerate:
        from accelerate import Accelerator, InitProcessGroupKwargs
        acc = Accelerator(cpu=True, kwargs_handlers=[InitProcessGroupKwargs(backend="gloo",
                                                                            timeout=timedelta(seconds=a.timeout))])
        rank, world = acc.process_index, acc.num_processes
    elif rank is None:
        if "OMPI_COMM_WORLD_RANK" in os.environ:
            rank, world = int(os.environ["OMPI_COMM_WORLD_RANK"]), int(os.environ["OMPI_COMM_WORLD_SIZE"])
        else:
            rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    logging.basicConfig(level=logging.INFO, stream=sys.stdout, force=True,
                        format=f"%(asctime)s %(levelname)s [rank {rank}] %(name)s: %(message)s")
    mine = rank == frank
    if a.noisy:
        warnings.simplefilter("default")         # show DeprecationWarnings too (as `python -W default` would)
    if acc is None:
        if a.attempt_store:
            base = dist.TCPStore(os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"]), is_master=False,
                                 timeout=timedelta(seconds=a.timeout))
            store = dist.PrefixStore(f"attempt{attempt}", base)
            dist.init_process_group("gloo", store=store, rank=rank, world_size=world,
                                    timeout=timedelta(seconds=a.timeout))
        else:
            dist.init_process_group("gloo", init_method="env://", rank=rank, world_size=world,
                                    timeout=timedelta(seconds=a.timeout))
    log.info("process group ready: backend=gloo world_size=%d pid=%d host=%s attempt=%d timeout=%ds",
             world, os.getpid(), socket.gethostname(), attempt, a.timeout)

    torch._dynamo.config.recompile_limit = a.recompile_limit
    torch.manual_seed(0)
    net = Net(debug_print=(a.compile == "print"), clip=(mode == "item" and mine))
    opt = torch.optim.SGD(net.parameters(), lr=0.05)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=4, gamma=0.5)
    if acc is not None:
        model, opt = acc.prepare(net, opt)
    else:
        model = net if a.no_ddp else DDP(net)
    if a.compile != "none":
        model = torch.compile(model, dynamic=(False if a.dynamic == "false" else None))

    sizes = None
    if a.compile == "print":
        sizes = [a.batch] * (a.steps - 1) + [a.batch // 2] * 3   # short last batch -> one recompile
    if mode == "shapes" and mine:
        sizes = [a.batch + 4 * i for i in range(a.steps + 2)]    # this rank's bucketing yields a new size every step
    truncate = fstep if (mode == "badbatch" and mine) else None
    recs = make_shard(rank, a.steps + 2, a.batch, truncate=truncate, sizes=sizes)
    log.info("shard %d: %d records, %.1f KiB, 0 failed samples at load", rank, len(recs), sum(map(len, recs)) / 1024)

    if a.noisy:
        warnings.warn("`lr_schedule='step'` is deprecated and will be removed in a future release; "
                      "use `scheduler: {name: step}` instead", FutureWarning)
        warnings.warn("Trainer.log_every is deprecated, use log_interval", DeprecationWarning)
        # harmless noise: scheduler stepped before the first optimizer.step(); copy-constructing a tensor
        sched.step()
        _ = torch.tensor(torch.ones(2))

    steps = range(a.steps)
    if a.tqdm and rank == 0:
        from tqdm import tqdm
        steps = tqdm(steps, desc="epoch 0", unit="step", ncols=100, mininterval=0)
    skipped, ri = 0, 0
    for step in steps:
        if mode in ("raise", "raise0") and mine and step == fstep and (mode == "raise" or attempt == 0):
            table = {f"shard_{rank:02d}.rec": len(recs)}
            # (the fault: the index entry of this shard is missing from the table)
            n = table[f"shard_{rank:02d}.idx"]
        raw = recs[ri]; ri += 1
        if mode == "retry" and mine and step == fstep:
            port = 41000 + rank
            serve_once(port, raw, delay=1.0)
            raw = fetch(port)
        try:
            x, y = decode(raw)
        except Exception:
            log.exception("could not decode record %d of shard %d; skipping this batch", ri - 1, rank)
            skipped += 1
            raw = recs[ri]; ri += 1
            x, y = decode(raw)
        t0 = time.time()
        loss = nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        if acc is not None:
            acc.backward(loss)
        else:
            loss.backward()
        if a.no_ddp:
            for prm in net.parameters():
                dist.all_reduce(prm.grad)
                prm.grad /= world
        opt.step()
        sched.step()
        g = loss.detach().clone()
        dist.all_reduce(g)
        log.info("step %d/%d loss %.4f global_loss %.4f lr %.4f (%.2fs)", step + 1, a.steps, loss.item(),
                 g.item() / world, sched.get_last_lr()[0], time.time() - t0)
        if mode in ("sigkill", "sigkill0") and mine and step == fstep and (mode == "sigkill" or attempt == 0):
            os.kill(os.getpid(), signal.SIGKILL)
        if a.noisy and step == a.steps // 2:
            log.info("validation error: 0.23 (mae), 0 failed samples, timeout budget 30s unused")
        time.sleep(0.2)
    dist.barrier()
    log.info("epoch 0 done: %d steps, %d batches skipped, errors=0", a.steps, skipped)
    if rank == 0:
        log.info("training complete")
    if acc is not None:
        acc.end_training()
    else:
        dist.destroy_process_group()


if __name__ == "__main__":
    run()
