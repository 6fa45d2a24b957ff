"""Round 34a: healthy jobs that look alarming, and failures that look like them.

A tiny DDP model (CPU, gloo, PG timeout 15 s, 8 steps, one logger line per step). --mode picks what the job also
does; --fault-rank / --step pick where. Healthy modes finish with exit 0; failure modes really fail.
Run under torchrun (RANK/WORLD_SIZE from env) or with --spawn N (torch.multiprocessing.spawn).

Healthy modes
  thread_upload     a metrics-uploader thread on the fault rank dies (real ConnectionRefusedError to 127.0.0.1:9),
                    Python prints 'Exception in thread Thread-1 (upload):' + traceback; training goes on.
  loader_skip       DataLoader worker hits a corrupt sample, logs it with logger.exception and skips it.
  retry_ok          a shard fetch from a local server that RSTs the first 2 connections (real ConnectionResetError),
                    'attempt 1/3 failed' with traceback, then success.
  autobatch_ok      'auto batch size' probe: real DefaultCPUAllocator failures for too-big workspaces, halves, goes on.
  warnings_noise    real torch UserWarnings with stack lines (custom showwarning), env dump, run with
                    TORCH_CPP_LOG_LEVEL=INFO TORCH_DISTRIBUTED_DEBUG=INFO.
  faulthandler_slow faulthandler.dump_traceback_later(2) fires during one slow step (3 s) on the fault rank.
  profiler_json     torch.profiler table + an eval record whose JSON string holds 'Traceback ...' text.
  metric_names      metrics / test names with error / FAILED / Exception in them.
  restart_ok        fault rank raises OSError on the first attempt only; torchrun --max-restarts 1 restarts, finishes.
  exit_ignored      after the final success line: __del__ raising at shutdown ('Exception ignored in') and an atexit
                    callback raising; exit code stays 0.
  ckpt_upload_warn  logger.exception for a failed (real PermissionError) checkpoint copy, 'will retry next epoch'.
  recompile_warn    torch.compile(backend=eager, dynamic=False) of a helper fed 10 shapes: dynamo's recompile_limit
                    warning, falls back to eager, job finishes.
  graph_break_warn  torch.compile(backend=eager) of a forward with a data-dependent branch, TORCH_LOGS=graph_breaks.
Failure modes
  thread_fatal      prefetch thread dies (JSONDecodeError), main loop's own q.get(timeout=8) -> RuntimeError.
  loader_fatal      DataLoader worker raises on a corrupt sample (not caught).
  retry_fail        every connection RST; after 3 attempts RuntimeError('giving up ...') from ConnectionResetError.
  autobatch_fail    fault rank's probe fails down to batch size 1 and gives up (RuntimeError with allocator msg).
  warnings_hang     warnings_noise, then the fault rank sleeps 40 s before a collective (PG timeout 15 s).
  faulthandler_kill faulthandler dump of a slow step, then the fault rank SIGKILLs itself.
  restart_fail      restart_ok but the OSError happens on every attempt.
  exit_ignored_fatal KeyError on the fault rank at --step, then the shutdown 'Exception ignored in' noise.
  mismatch_noise    uploader thread dies on rank 0 (noise), fault rank all_reduces a tensor of another size.
  nan_exit1         fault rank feeds NaNs: 'non-finite loss ... skipping batch' warnings, then error + sys.exit(1).
  validate_exit2    fault rank's eval check fails: logger.critical message, sys.exit(2).
"""
import argparse
import atexit
import faulthandler
import json
import logging
import os
import queue
import signal
import socket
import sys
import threading
import time
import traceback
import warnings
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

log = logging.getLogger("train")


def setup_logging(rank):
    logging.basicConfig(level=logging.INFO, stream=sys.stdout, force=True,
                        format=f"%(asctime)s %(levelname)s [rank{rank}] %(name)s: %(message)s")


# ---------------------------------------------------------------- helpers used by several modes
def upload(rank):
    """metrics uploader thread: pushes to a collector that is not running (real ConnectionRefusedError)."""
    time.sleep(0.8)
    payload = json.dumps({"rank": rank, "step": 2, "loss": 1.0}).encode()
    s = socket.create_connection(("127.0.0.1", 9), timeout=2)  # nothing listens on port 9
    s.sendall(payload)


def rst_server(n_reset):
    """local 'shard server': RSTs the first n_reset connections (SO_LINGER 0), then serves 4 KiB."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)
    port = srv.getsockname()[1]

    def loop():
        k = 0
        while True:
            c, _ = srv.accept()
            c.recv(64)
            if n_reset < 0 or k < n_reset:
                c.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
            else:
                c.sendall(b"x" * 4096)
            c.close()
            k += 1
    threading.Thread(target=loop, daemon=True, name="shard-server").start()
    return port


def fetch_shard(port, name):
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    s.sendall(f"GET {name}\n".encode())
    time.sleep(0.05)
    data = s.recv(8192)
    s.close()
    return data


def fetch_with_retry(port, name, attempts=3):
    for i in range(1, attempts + 1):
        try:
            data = fetch_shard(port, name)
            log.info("fetched %s (%d bytes) on attempt %d/%d", name, len(data), i, attempts)
            return data
        except (ConnectionResetError, ConnectionRefusedError, TimeoutError) as e:
            log.warning("attempt %d/%d failed: %s: %s", i, attempts, type(e).__name__, e, exc_info=True)
            if i == attempts:
                raise RuntimeError(f"giving up on {name} after {attempts} attempts") from e
            time.sleep(0.2 * i)


def auto_batch_size(per_sample_bytes, start=4096):
    """probe: allocate the activation workspace for bs samples; on allocation failure halve bs."""
    bs = start
    while True:
        try:
            ws = torch.empty(bs * per_sample_bytes // 4, dtype=torch.float32)  # untouched, freed at once
            del ws
            log.info("auto batch size: bs=%d fits (%.1f GiB workspace)", bs, bs * per_sample_bytes / 2**30)
            return bs
        except RuntimeError as e:
            msg = str(e).strip().splitlines()[0]
            if bs == 1:
                raise RuntimeError(f"auto batch size: no batch size fits, even bs=1 failed: {msg}") from e
            log.warning("auto batch size: bs=%d does not fit: %s; halving", bs, msg)
            bs //= 2


class Tmp:
    """holds a scratch dir; its __del__ misbehaves at interpreter shutdown (mode exit_ignored*)."""
    def __init__(self, path):
        self.path = path

    def __del__(self):
        # NOTE (generator): already removed by the atexit cleanup -> FileNotFoundError, 'Exception ignored in'
        os.rmdir(self.path)


def cleanup_scratch(path):
    os.rmdir(path)
    raise OSError(f"scratch cleanup: lock file still held for {path}")


class DS(torch.utils.data.Dataset):
    def __init__(self, bad, skip):
        self.bad, self.skip = bad, skip

    def __len__(self):
        return 64

    def decode(self, i):
        if i == self.bad:
            raw = b"\x00\x00\x13\x37"
            raise ValueError(f"sample {i}: bad magic bytes {raw[:2]!r} (expected b'PK')")
        g = torch.Generator().manual_seed(i)
        return torch.randn(16, generator=g), torch.randn(4, generator=g)

    def __getitem__(self, i):
        if not self.skip:
            return self.decode(i)
        try:
            return self.decode(i)
        except ValueError:
            logging.getLogger("data").exception("skipping corrupt sample %d", i)
            return None


def collate_skip(batch):
    batch = [b for b in batch if b is not None]
    return torch.stack([b[0] for b in batch]), torch.stack([b[1] for b in batch])


def showwarning_with_stack(message, category, filename, lineno, file=None, line=None):
    stack = "".join(traceback.format_stack()[:-2][-3:])
    logging.getLogger("py.warnings").warning("%s:%d: %s: %s\nwarning raised at (most recent call last):\n%s",
                                             filename, lineno, category.__name__, message, stack.rstrip())


# ---------------------------------------------------------------- the job
def run(rank, world, a):
    setup_logging(rank)
    fr, mode = a.fault_rank, a.mode
    restart = int(os.environ.get("TORCHELASTIC_RESTART_COUNT", "0"))
    if mode in ("warnings_noise", "warnings_hang"):
        warnings.simplefilter("always")
        warnings.showwarning = showwarning_with_stack
        if rank == 0:
            env = {k: os.environ.get(k, "<unset>") for k in ("NCCL_DEBUG", "NCCL_IB_DISABLE", "NCCL_SOCKET_IFNAME",
                   "TORCH_NCCL_ASYNC_ERROR_HANDLING", "TORCH_CPP_LOG_LEVEL", "TORCH_DISTRIBUTED_DEBUG", "OMP_NUM_THREADS")}
            log.info("env: %s", " ".join(f"{k}={v}" for k, v in env.items()))
    if mode in ("restart_ok", "restart_fail"):
        # torch 2.13 + torchrun restart: the default env:// store keeps attempt 0's gloo addresses, and the restarted
        # group connects to dead ports (connectFullMesh: Connection refused). Namespace the store per attempt.
        base = dist.TCPStore(os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"]), world, False,
                             timeout=timedelta(seconds=30))
        dist.init_process_group("gloo", rank=rank, world_size=world, timeout=timedelta(seconds=15),
                                store=dist.PrefixStore(f"/attempt_{restart}", base))
    else:
        dist.init_process_group("gloo", rank=rank, world_size=world, timeout=timedelta(seconds=15))
    torch.manual_seed(0)
    model = DDP(nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4)))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    log.info("started: world=%d restart=%d", world, restart)

    if mode in ("thread_upload", "mismatch_noise") and rank == (0 if mode == "mismatch_noise" else fr):
        threading.Thread(target=upload, args=(rank,), daemon=True).start()
    if mode in ("retry_ok", "retry_fail") and rank == fr:
        port = rst_server(2 if mode == "retry_ok" else -1)
        fetch_with_retry(port, f"shard-{rank:04d}.bin")
    if mode == "autobatch_ok" or (mode == "autobatch_fail" and rank == fr):
        per, start_bs = (256 * 2**20, 1024) if mode == "autobatch_ok" else (64 * 2**40, 8)  # fault rank: bad seq_len
        bs = auto_batch_size(per, start=start_bs)
        log.info("using batch size %d", bs)
    if mode in ("exit_ignored", "exit_ignored_fatal"):
        scratch = f"/tmp/r34a-scratch-{os.getpid()}"
        os.makedirs(scratch)
        globals()["_scratch"] = Tmp(scratch)
        atexit.register(cleanup_scratch, scratch)
    if mode == "recompile_warn":
        norm = torch.compile(lambda t: t / t.norm(dim=-1, keepdim=True), backend="eager", dynamic=False)
        for n in range(1, 11):  # ten different shapes -> recompiles until the limit (8)
            norm(torch.randn(n, 16))
        log.info("feature normaliser warmed up")
    fwd = model
    if mode == "graph_break_warn":
        def prep_fn(x):  # input normalisation, compiled on its own (DDP stays eager)
            x = (x - x.mean(0)) / (x.std(0) + 1e-5)
            # NOTE (generator): a data-dependent Python branch, so dynamo breaks the graph here (not fullgraph)
            if x.abs().max() > 1e3:  # guard against exploding inputs
                x = x.clamp(-1e3, 1e3)
            return x * 0.5
        prep = torch.compile(prep_fn, backend="eager")
        fwd = lambda x: model(prep(x))
    q = None
    if mode == "thread_fatal" and rank == fr:
        q = queue.Queue(maxsize=4)

        def prefetch():
            recs = [json.dumps({"x": [0.1] * 16, "y": [0.0] * 4})] * 3 + [""]  # 4th record empty (truncated file)
            for r in recs:
                d = json.loads(r)
                q.put((torch.tensor(d["x"]).repeat(8, 1), torch.tensor(d["y"]).repeat(8, 1)))
        threading.Thread(target=prefetch, daemon=True).start()
    it = None
    if mode in ("loader_skip", "loader_fatal"):
        ds = DS(bad=13 if rank == fr else -1, skip=(mode == "loader_skip"))
        dl = torch.utils.data.DataLoader(ds, batch_size=8, num_workers=1, collate_fn=collate_skip)
        it = iter(dl)
    prof = None
    if mode == "profiler_json":
        prof = torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU])
        prof.__enter__()
    if mode in ("faulthandler_slow", "faulthandler_kill"):
        faulthandler.enable()
    bad_streak = 0

    g = torch.Generator().manual_seed(rank)
    for step in range(1, a.steps + 1):
        # ---- per-step faults / noise
        if mode in ("restart_ok", "restart_fail") and rank == fr and step == a.step and (restart == 0 or mode == "restart_fail"):
            raise OSError(5, "Input/output error", "/home/user/job/data/shard-0003.bin")
        if mode == "exit_ignored_fatal" and rank == fr and step == a.step:
            vocab = {"<pad>": 0, "<s>": 1}
            tok = vocab["<unk>"]
        if mode == "warnings_hang" and rank == fr and step == a.step:
            log.info("refreshing tokenizer cache")
            time.sleep(40)
        if mode in ("faulthandler_slow", "faulthandler_kill") and rank == fr:
            faulthandler.dump_traceback_later(2, exit=False)
            if step == a.step:
                time.sleep(3)  # slow step (e.g. a stalled read)
            faulthandler.cancel_dump_traceback_later()
            if mode == "faulthandler_kill" and step == a.step + 1:
                os.kill(os.getpid(), signal.SIGKILL)
        if mode in ("warnings_noise", "warnings_hang") and step in (1, 3):
            base = torch.randn(4)
            torch.tensor(base)  # UserWarning: To copy construct from a tensor ...
            torch.meshgrid(torch.arange(2), torch.arange(3))  # UserWarning: meshgrid indexing
        if mode == "ckpt_upload_warn" and step == a.step and rank == fr:
            try:
                dst = "/etc/hostname/ckpt"  # misconfigured upload dir: a file, not a dir (real NotADirectoryError)
                torch.save(model.state_dict(), f"{dst}/step{step}.pt")
            except (OSError, RuntimeError):
                log.exception("checkpoint upload for step %d failed; will retry next epoch", step)
        # ---- the batch
        if it is not None:
            x, y = next(it)
        elif q is not None:
            try:
                x, y = q.get(timeout=8)
            except queue.Empty:
                raise RuntimeError(f"timed out after 8s waiting for batch {step} from the prefetch queue") from None
        else:
            x, y = torch.randn(8, 16, generator=g), torch.randn(8, 4, generator=g)
        if mode == "nan_exit1" and rank == fr and step >= a.step:
            x = x * float("nan")  # the fault rank's shard holds NaN features from here on
        out = fwd(x)
        loss = nn.functional.mse_loss(out, y)
        if not torch.isfinite(loss):
            bad_streak += 1
            log.warning("non-finite loss at step %d (loss=%s); skipping batch (%d in a row)", step, loss.item(), bad_streak)
            if bad_streak >= 3:
                log.error("too many non-finite losses (%d in a row) on rank %d; stopping", bad_streak, rank)
                sys.exit(1)
            loss = loss * 0.0 + 0.0 * sum(p.sum() for p in model.parameters())  # keep DDP in step
            out = None
        else:
            bad_streak = 0
        opt.zero_grad()
        loss.backward()
        opt.step()
        if mode == "mismatch_noise" and step == a.step:
            n = 8 if rank == fr else 4  # fault rank built its histogram with 8 bins
            dist.all_reduce(torch.ones(n))
        if mode in ("warnings_noise", "warnings_hang"):
            dist.all_reduce(torch.tensor([loss.item()]))
        log.info("step %d loss %.4f", step, loss.item())
        if mode == "thread_upload" or mode == "mismatch_noise":
            time.sleep(0.3)
        if mode == "validate_exit2" and step == a.step and rank == fr:
            n_val = 0  # this rank's validation split came out empty after filtering
            log.critical("validation check failed: rank %d has %d validation samples after filtering "
                         "(min_len=4096 > longest sample 2048); aborting", rank, n_val)
            sys.exit(2)
        if prof is not None and step == 3:
            prof.__exit__(None, None, None)
            if rank == 0:
                print(prof.key_averages().table(sort_by="cpu_time_total", row_limit=8), flush=True)
            prof = None
    # ---- end of training
    if mode == "profiler_json" and rank == 0:
        rec = {"id": 17, "task": "humaneval/42", "passed": False,
               "stderr": "Traceback (most recent call last):\n  File \"solution.py\", line 3, in f\n    return a / b\nZeroDivisionError: division by zero"}
        log.info("eval sample: %s", json.dumps(rec))
        log.info("eval pass@1=0.50 (1/2)")
    if mode == "metric_names":
        log.info("val/error_rate=0.0312 val/loss=0.8841 test_failed=0 test_passed=12 exceptions_caught=0 nan_or_inf_FAILED=0")
        if rank == 0:
            for t in ("test_allreduce_error_path", "test_oom_recovery_raises_RuntimeError", "test_timeout_exception"):
                print(f"smoke/{t} PASSED", flush=True)
            print("==== 3 passed, 0 FAILED, 0 errors ====", flush=True)
    dist.barrier()
    if rank == 0:
        log.info("training finished: %d steps", a.steps)
    dist.destroy_process_group()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--mode", required=True)
    p.add_argument("--fault-rank", type=int, default=1)
    p.add_argument("--step", type=int, default=4)
    p.add_argument("--steps", type=int, default=8)
    p.add_argument("--spawn", type=int, default=0, help="world size for torch.multiprocessing.spawn")
    a = p.parse_args()
    if a.spawn:
        import torch.multiprocessing as mp
        os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
        os.environ.setdefault("MASTER_PORT", "29931")
        mp.spawn(run, args=(a.spawn, a), nprocs=a.spawn)
    else:
        run(int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]), a)


if __name__ == "__main__":
    main()
