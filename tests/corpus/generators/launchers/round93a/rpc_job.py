"""torch.distributed.rpc job (TensorPipe on localhost): worker0 is a parameter server that asks every other
worker for a gradient on its data shard each step, averages them and updates the weights.

  python rpc_job.py --spawn 3 --port P      # mp.spawn launches the 3 workers
  torchrun --nproc-per-node 3 rpc_job.py    # torchrun launches them (env:// rendezvous)

Faults (env SCENARIO, FAIL_RANK, FAIL_STEP; see common.py):
  healthy          every step completes, rpc.shutdown() on all workers
  raise            the remote function raises ValueError on worker FAIL_RANK at step FAIL_STEP
                   (re-raised on worker0 by rpc_sync as "On WorkerInfo(id=N, name=workerN)")
  raise_async      same, but via rpc_async + torch.futures.wait_all
  deadworker       worker FAIL_RANK is SIGKILLed while serving the step-FAIL_STEP RPC; the caller's rpc_sync
                   is left talking to a dead worker
  timeout          worker FAIL_RANK sleeps 60 s in the remote function; the caller uses rpc_sync(timeout=10)
  shutdown_sigkill after the last step, worker FAIL_RANK is SIGKILLed before it reaches rpc.shutdown()
  shutdown_raise   after the last step, worker FAIL_RANK raises in its own post-processing before rpc.shutdown()
"""
import argparse
import logging
import os
import threading
import time

import torch
import torch.distributed.rpc as rpc
import torch.multiprocessing as mp

from common import FAIL_RANK, FAIL_STEP, SCENARIO, setup_logging, sigkill_self

STEPS = 6
RPC_CALL_TIMEOUT = 10  # seconds, per rpc_sync call
_done = threading.Event()
_state = {}


def compute_grad(step, w):
    """Runs on a worker: gradient of a least-squares loss on this worker's shard."""
    rank = rpc.get_worker_info().id
    log = logging.getLogger("rpc_job")
    log.info("step %d: computing gradient on shard %d", step, rank)
    g = torch.Generator().manual_seed(rank * 100 + step)
    x = torch.randn(64, 8, generator=g)
    y = x @ torch.arange(8.0) + 0.1 * torch.randn(64, generator=g)
    if rank == FAIL_RANK and step == FAIL_STEP:
        if SCENARIO in ("raise", "raise_async"):
            bad = int(torch.isnan(x).sum()) + 17
            raise ValueError(f"shard {rank}: feature row {bad} has 9 columns, expected 8 (malformed record)")
        if SCENARIO == "timeout":
            time.sleep(60)  # stuck reading the shard from a slow filesystem
        if SCENARIO == "deadworker":
            sigkill_self()  # killed (OOM-killer style) while serving the RPC: the caller never gets a reply
    w = w.detach().requires_grad_(True)
    loss = ((x @ w - y) ** 2).mean()
    loss.backward()
    log.info("step %d: gradient ready (local loss %.4f)", step, loss.item())
    return w.grad, loss.item()


def finish():
    _done.set()


def run_server(world, log):
    w = torch.zeros(8)
    workers = [f"worker{r}" for r in range(1, world)]
    for step in range(1, STEPS + 1):
        if SCENARIO == "raise_async":
            futs = [rpc.rpc_async(n, compute_grad, args=(step, w), timeout=RPC_CALL_TIMEOUT) for n in workers]
            results = torch.futures.wait_all(futs)
        else:
            results = [rpc.rpc_sync(n, compute_grad, args=(step, w), timeout=RPC_CALL_TIMEOUT) for n in workers]
        grad = torch.stack([g for g, _ in results]).mean(0)
        loss = sum(l for _, l in results) / len(results)
        w -= 0.05 * grad
        time.sleep(0.5)  # evaluation / checkpoint bookkeeping between steps
        log.info("step %d/%d loss=%.4f |w|=%.3f", step, STEPS, loss, w.norm().item())
    for n in workers:
        rpc.rpc_sync(n, finish, timeout=RPC_CALL_TIMEOUT)
    log.info("training finished, shutting down RPC")


def run_worker(rank, log):
    _done.wait()
    # local post-processing before leaving the RPC group
    if rank == FAIL_RANK and SCENARIO == "shutdown_sigkill":
        log.info("writing shard statistics ...")
        sigkill_self()
    if rank == FAIL_RANK and SCENARIO == "shutdown_raise":
        stats = {"rows": 64 * STEPS}
        log.info("writing shard statistics ...")
        log.info("mean rows per step %.1f", stats["rows"] / stats["steps"])
    log.info("worker%d done", rank)


def worker(rank, world, port):
    log = setup_logging(rank, "rpc_job")
    opts = rpc.TensorPipeRpcBackendOptions(num_worker_threads=8, rpc_timeout=30,
                                           init_method=f"tcp://127.0.0.1:{port}" if port else "env://")
    rpc.init_rpc(f"worker{rank}", rank=rank, world_size=world, rpc_backend_options=opts)
    log.info("worker%d joined RPC group (world_size=%d, scenario=%s)", rank, world, SCENARIO)
    if rank == 0:
        run_server(world, log)
    else:
        run_worker(rank, log)
    rpc.shutdown()
    log.info("rpc shutdown complete")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--spawn", type=int, default=0, help="mp.spawn this many workers")
    p.add_argument("--port", type=int, default=29500)
    a = p.parse_args()
    if a.spawn:
        mp.spawn(worker, args=(a.spawn, a.port), nprocs=a.spawn, join=True)
    else:
        worker(int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]), None)


if __name__ == "__main__":
    main()
