"""Round 27c: multi-rank CPU/gloo training loop whose log carries HARMLESS errors; optionally one real fault later.

Launch with torchrun (env:// rendezvous) or `--spawn 3` (torch.multiprocessing.spawn). Gradients are averaged by hand
with dist.all_reduce; a logger line per step.

--noise (comma list; all harmless, the run goes on):
  retry     rank 1 fetches a shard manifest from a local HTTP server that answers 503 the first time:
            urllib HTTPError logged with logger.exception(...), retried after 1 s, second try succeeds
  dlskip    the Dataset (1 DataLoader worker) fails to decode sample 7 (rank 1's shard): the worker's try/except logs
            the traceback and the sample is dropped from the batch by the collate function
  delexit   rank 2 holds a "shared cache" object whose __del__ raises at interpreter exit
            ("Exception ignored in: <function SharedCache.__del__ ...>")
  warnings  user warnings whose text contains error/failed/timeout/killed/OOM words (PYTHONWARNINGS=always)
  metrics   per-step metric names error_rate, loss/nan_count, oom_skipped, timeouts
  compile   torch.compile(backend="aot_eager") of the model; the last batch of an epoch is smaller -> recompile
            (shown with TORCH_LOGS=recompiles)
  ckpt      resume from ckpt/last.pt that does not exist: FileNotFoundError logged with traceback, then
            "no checkpoint found, starting from scratch"
  subproc   `git rev-parse HEAD` in a non-repo (CalledProcessError, logged with traceback) and `nvidia-smi` (not
            installed: FileNotFoundError, logged) on rank 0; both ignored
  envdump   rank 0 prints `python -m torch.utils.collect_env` and `pip freeze` before training
  ignored   rank 0's metrics flush raises RuntimeError at step 2, logged with logger.exception and ignored
--fault (the real failure, on --bad-rank at --fault-step):
  valueerror  ValueError in the rank's batch preprocessing
  runtime     RuntimeError in the rank's loss bookkeeping
  sigkill     the rank SIGKILLs itself (as the kernel OOM killer would), no traceback
  hang        the rank sleeps --hang-s seconds before the gradient all_reduce (> --pg-timeout): others time out
  mismatch    the rank all_reduces a 64-float stats tensor while the others all_reduce 3 floats
"""
import argparse
import datetime
import functools
import http.server
import logging
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.request
import warnings

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F

log = logging.getLogger("train")


def setup_logging(rank):
    logging.basicConfig(level=logging.INFO, stream=sys.stdout, force=True,
                        format=f"%(asctime)s [rank{rank}] %(levelname)s %(name)s: %(message)s")


def worker_logging(rank, worker_id):
    setup_logging(rank)  # DataLoader workers may be spawned: configure the same log format there


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.l1, self.l2 = nn.Linear(16, 32), nn.Linear(32, 1)

    def forward(self, x):
        return self.l2(torch.relu(self.l1(x)))


class ShardDataset(torch.utils.data.Dataset):
    """Sample 7 has a corrupt record: decoding raises, the worker logs it and returns None (dropped by collate)."""

    def __init__(self, n, corrupt):
        g = torch.Generator().manual_seed(0)
        self.x, self.y = torch.randn(n, 16, generator=g), torch.randn(n, 1, generator=g)
        self.corrupt = corrupt

    def __len__(self):
        return len(self.x)

    def decode(self, i):
        if self.corrupt and i == 7:
            raise ValueError(f"record {i} in shard train-00000.rec: bad magic 0x00000000 (expected 0x3ed7230a)")
        return self.x[i], self.y[i]

    def __getitem__(self, i):
        try:
            return self.decode(i)
        except ValueError:
            log.exception("skipping undecodable sample %d", i)
            return None


def collate_skip_none(items):
    return torch.utils.data.default_collate([it for it in items if it is not None])


class SharedCache:
    """Stands for a user cache that closes its backing file in __del__ and fails to at interpreter exit."""

    def __init__(self, path):
        self.path = path

    def __del__(self):
        raise OSError(9, "Bad file descriptor", self.path)


class Flaky503(http.server.BaseHTTPRequestHandler):
    n = 0

    def do_GET(self):
        Flaky503.n += 1
        if Flaky503.n == 1:
            self.send_error(503, "Service Unavailable")
            return
        body = b'{"shards": ["train-00000.rec", "train-00001.rec"]}'
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *a):
        pass


def fetch_manifest():
    srv = http.server.HTTPServer(("127.0.0.1", 0), Flaky503)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{srv.server_address[1]}/datasets/train/manifest.json"
    for attempt in range(1, 4):
        try:
            with urllib.request.urlopen(url, timeout=5) as r:
                data = r.read()
            log.info("fetched shard manifest (%d bytes) on attempt %d", len(data), attempt)
            break
        except Exception:
            log.exception("fetching shard manifest failed (attempt %d/3), retrying in 1s", attempt)
            time.sleep(1)
    srv.shutdown()


def run_subprocs():
    try:
        sha = subprocess.run(["git", "rev-parse", "HEAD"], check=True, capture_output=True, text=True).stdout.strip()
    except subprocess.CalledProcessError as e:
        log.exception("could not read git commit (stderr: %s); recording commit=unknown", e.stderr.strip())
        sha = "unknown"
    try:
        gpus = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"], capture_output=True,
                              text=True).stdout.strip()
    except FileNotFoundError as e:
        log.warning("nvidia-smi failed: %s; hardware info not recorded", e)
        gpus = "none"
    log.info("run metadata: commit=%s gpus=%s host_cpus=%d", sha, gpus, os.cpu_count())


def env_dump():
    print("==== environment (collect_env) ====", flush=True)
    subprocess.run([sys.executable, "-m", "torch.utils.collect_env"], check=False)
    print("==== pip freeze ====", flush=True)
    subprocess.run([sys.executable, "-m", "pip", "freeze", "--disable-pip-version-check"], check=False)
    print("==== end of environment ====", flush=True)


def try_resume(model, opt, workdir):
    path = os.path.join(workdir, "ckpt", "last.pt")
    try:
        state = torch.load(path, map_location="cpu")
        model.load_state_dict(state["model"])
        opt.load_state_dict(state["opt"])
        log.info("resumed from %s", path)
    except FileNotFoundError:
        log.exception("could not load checkpoint %s", path)
        log.info("no checkpoint found, starting from scratch")


def train(rank, world, args):
    setup_logging(rank)
    noise = set(filter(None, args.noise.split(",")))
    torch.manual_seed(0)
    torch.set_num_threads(1)
    timeout = datetime.timedelta(seconds=args.pg_timeout)
    if args.spawn:
        os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
        os.environ["MASTER_PORT"] = str(args.port)
        dist.init_process_group("gloo", rank=rank, world_size=world, timeout=timeout)
    else:
        dist.init_process_group("gloo", timeout=timeout)
    rank, world = dist.get_rank(), dist.get_world_size()
    if rank == 0:
        log.info("starting: world_size=%d steps=%d noise=%s", world, args.steps, ",".join(sorted(noise)) or "-")
    if "envdump" in noise and rank == 0:
        env_dump()
    if "subproc" in noise and rank == 0:
        run_subprocs()
    if "delexit" in noise and rank == 2:
        global _CACHE
        _CACHE = SharedCache(os.path.join(args.workdir, ".cache", "tokens.bin"))
        log.info("opened shared token cache")
    model = Net()
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    if "ckpt" in noise:
        try_resume(model, opt, args.workdir)
    fwd = torch.compile(model, backend="aot_eager") if "compile" in noise else model
    if "retry" in noise and rank == 1:
        fetch_manifest()
    # 13 batches of 16 and a last one of 12 per rank (each rank holds 220 samples)
    ds = ShardDataset(220 * world, corrupt="dlskip" in noise)
    sampler = torch.utils.data.distributed.DistributedSampler(ds, num_replicas=world, rank=rank, shuffle=False)
    dl = torch.utils.data.DataLoader(ds, batch_size=16, sampler=sampler, collate_fn=collate_skip_none,
                                     num_workers=1 if "dlskip" in noise else 0,
                                     worker_init_fn=functools.partial(worker_logging, rank))
    it = iter(dl)
    t0, loss = time.time(), None
    for step in range(args.steps):
        try:
            x, y = next(it)
        except StopIteration:
            it = iter(dl)
            x, y = next(it)
        if "compile" in noise and step == args.steps - 2:
            x, y = x[:12], y[:12]  # a short batch (end of a shard): new shape -> dynamo recompiles
        bad = args.fault and rank == args.bad_rank and step == args.fault_step
        if bad and args.fault == "valueerror":
            n_tok = int(x.abs().sum().item() * 10)
            raise ValueError(f"sequence length {n_tok} exceeds max_position_embeddings=512 (sample {step * 16})")
        if "warnings" in noise and step == 1:
            warnings.warn("eval OOM-safe mode: eval batch halved to 8 after failed allocation attempt", UserWarning)
            warnings.warn("dataloader timeout raised to 120s because a worker was killed by the previous job; "
                          "this will become an error in v2.0", FutureWarning)
        out = fwd(x)
        loss = F.mse_loss(out, y)
        opt.zero_grad()
        loss.backward()
        if bad and args.fault == "hang":
            log.info("rank %d: refreshing shard cache before sync", rank)
            time.sleep(args.hang_s)
        for p in model.parameters():
            dist.all_reduce(p.grad)
            p.grad /= world
        opt.step()
        if args.fault == "mismatch" or "metrics" in noise:
            stats = torch.tensor([loss.item(), 0.0, 1.0])
            if bad and args.fault == "mismatch":
                stats = torch.zeros(64)  # extra per-rank fields on this rank only
            dist.all_reduce(stats)
        if bad and args.fault == "sigkill":
            os.kill(os.getpid(), signal.SIGKILL)
        if bad and args.fault == "runtime":
            raise RuntimeError(f"loss history buffer overflow: {step + 1} entries > capacity {step} "
                               "(increase --history-size)")
        if "ignored" in noise and rank == 0 and step == 2:
            try:
                raise RuntimeError("metrics flush failed: remote writer closed the stream (HTTP 502)")
            except RuntimeError:
                log.exception("metrics flush failed at step %d; metrics will be buffered and retried", step)
        if "metrics" in noise:
            log.info("step %d loss=%.4f error_rate=%.3f loss/nan_count=0 oom_skipped=0 timeouts=0",
                     step, loss.item(), 0.25 / (step + 1))
        else:
            log.info("step %d loss=%.4f lr=0.050", step, loss.item())
        if "warnings" in noise and step == 2 and rank == 1:
            warnings.warn("grad clip: error norm 1.3e-07 below threshold, clipping skipped (killed=0)", UserWarning)
    dist.barrier()
    if rank == 0:
        log.info("training complete: %d steps on %d ranks in %.1fs, final loss %.4f", args.steps, world,
                 time.time() - t0, loss.item())
    dist.destroy_process_group()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--noise", default="")
    ap.add_argument("--fault", default="")
    ap.add_argument("--bad-rank", type=int, default=1)
    ap.add_argument("--fault-step", type=int, default=5)
    ap.add_argument("--hang-s", type=int, default=60)
    ap.add_argument("--spawn", type=int, default=0)
    ap.add_argument("--port", type=int, default=29800)
    ap.add_argument("--pg-timeout", type=int, default=60)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--workdir", default=os.getcwd())
    args = ap.parse_args()
    if args.spawn:
        import torch.multiprocessing as mp
        mp.spawn(train, args=(args.spawn, args), nprocs=args.spawn, join=True)
    else:
        train(int(os.environ.get("RANK", 0)), int(os.environ.get("WORLD_SIZE", 1)), args)


if __name__ == "__main__":
    main()
