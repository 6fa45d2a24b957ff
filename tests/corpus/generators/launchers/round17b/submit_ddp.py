"""submitit driver: submits ONE Slurm job with 3 tasks on 1 node (AutoExecutor, tasks_per_node=3) running a gloo DDP
training function; each task takes its rank from submitit (TorchDistributedEnvironment -> JobEnvironment:
SLURM_PROCID / SLURM_NTASKS / hostnames, MASTER_PORT derived from the job id). submitit writes per-task logs
<folder>/<jobid>_<task>_log.out / .err (its sbatch script runs `srun --unbuffered --output ... --error ...`).
The driver then waits with job.results(), which re-raises the failure of the lowest failing task (uncaught here,
so the driver's output ends with submitit's exception).

One fault on ONE rank (--bad-rank) at step --step (same faults as train17.py):
  raise   : the rank's data loader looks a sample id up in its shard index, which lacks it -> KeyError.
  sigkill : the rank SIGKILLs itself after logging the step (no traceback, no result pickle).
  hang    : the rank sleeps --sleep s before the per-step loss all_reduce (process-group timeout --timeout s).
Needs Slurm accounting (slurm_up.sh acct): submitit polls `sacct` for the state of tasks that never write a result.
"""
import argparse
import logging
import os
import signal
import sys
import time
from datetime import timedelta

import submitit


def train(mode, bad_rank, fault_step, steps, timeout, sleep_s):
    import torch
    import torch.distributed as dist
    import torch.nn as nn
    from torch.nn.parallel import DistributedDataParallel as DDP

    denv = submitit.helpers.TorchDistributedEnvironment().export()
    rank, world = denv.rank, denv.world_size
    logging.basicConfig(level=logging.INFO, stream=sys.stdout, force=True,
                        format=f"%(asctime)s %(levelname)s train [rank{rank}] %(message)s")
    log = logging.getLogger("train")
    dist.init_process_group("gloo", timeout=timedelta(seconds=timeout))
    log.info("process group ready (gloo, world_size=%d, master=%s:%d, job=%s)", world, denv.master_addr,
             denv.master_port, submitit.JobEnvironment().job_id)
    index = {f"rec-{i:05d}": i for i in range(4096)}
    torch.manual_seed(0)
    model = DDP(nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 1)))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    for step in range(steps):
        ids = [f"rec-{(rank * 512 + step * 32 + j):05d}" for j in range(32)]
        if mode == "raise" and rank == bad_rank and step == fault_step:
            ids[5] = "rec-f00d7"                     # induced: a corrupt id in this rank's shard manifest
        _ = [index[i] for i in ids]
        g = torch.Generator().manual_seed(1000 * rank + step)
        x = torch.randn(32, 16, generator=g)
        loss = nn.functional.mse_loss(model(x), x.sum(1, keepdim=True) * 0.1)
        opt.zero_grad()
        loss.backward()
        opt.step()
        avg = loss.detach().clone()
        if mode == "hang" and rank == bad_rank and step == fault_step:
            time.sleep(sleep_s)                      # induced: a silent stall before the collective
        dist.all_reduce(avg)
        log.info("step %d/%d loss=%.4f avg_loss=%.4f", step, steps, loss.item(), avg.item() / world)
        if mode == "sigkill" and rank == bad_rank and step == fault_step:
            os.kill(os.getpid(), signal.SIGKILL)     # induced: killed, no traceback
        time.sleep(0.3)
    dist.barrier()
    log.info("training done")
    dist.destroy_process_group()
    return float(avg)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--mode", required=True, choices=["raise", "sigkill", "hang", "none"])
    p.add_argument("--bad-rank", type=int, required=True)
    p.add_argument("--step", type=int, default=3)
    p.add_argument("--steps", type=int, default=8)
    p.add_argument("--timeout", type=int, default=20)
    p.add_argument("--sleep", type=float, default=45)
    p.add_argument("--folder", required=True)
    p.add_argument("--name", default="r17-ddp", help="Slurm job name")
    args = p.parse_args()
    executor = submitit.AutoExecutor(folder=args.folder)
    executor.update_parameters(name=args.name, nodes=1, tasks_per_node=3, cpus_per_task=1, timeout_min=10,
                               slurm_partition="debug")
    job = executor.submit(train, args.mode, args.bad_rank, args.step, args.steps, args.timeout, args.sleep)
    print(f"submitted job {job.job_id} (1 node x 3 tasks), logs in {args.folder}", flush=True)
    results = job.results()                          # raises if any task failed
    print(f"job {job.job_id} finished: {results}", flush=True)


if __name__ == "__main__":
    main()
