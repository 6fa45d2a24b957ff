"""Submit train38c.train as one submitit LocalExecutor job with N tasks (one per rank).

usage: python submitit_driver.py NTASKS {jobenv|tde}
  jobenv: rank/world from submitit.JobEnvironment(), rendezvous tcp://127.0.0.1:$PORT
  tde:    submitit.helpers.TorchDistributedEnvironment().export() then init_method env://
Per-task logs land in ./submitit_logs/<jobid>/<jobid>_<task>_log.{out,err}.
The fault is chosen by the FAULT/FAIL_RANK/... env vars (see train38c.py), inherited by the tasks.
"""
import os
import sys

import submitit

import train38c


def run_task(mode):
    if mode == "tde":
        env = submitit.helpers.TorchDistributedEnvironment().export()
        print(f"TorchDistributedEnvironment: rank={env.rank} world_size={env.world_size} "
              f"master={env.master_addr}:{env.master_port}", flush=True)
        return train38c.train(env.rank, env.world_size, "env://")
    env = submitit.JobEnvironment()
    print(f"submitit JobEnvironment: {env}", flush=True)
    return train38c.train(env.global_rank, env.num_tasks, f"tcp://127.0.0.1:{os.environ.get('PORT', '29538')}")


def main():
    ntasks, mode = int(sys.argv[1]), sys.argv[2]
    ex = submitit.LocalExecutor(folder="submitit_logs/%j")
    ex.update_parameters(tasks_per_node=ntasks, nodes=1, timeout_min=4)
    job = ex.submit(run_task, mode)
    print(f"submitted job {job.job_id} ({ntasks} tasks, mode={mode})", flush=True)
    try:
        results = job.results()
    except Exception:
        for t in range(ntasks):
            exc = job.task(t).exception()
            head = "" if exc is None else " ".join(l for l in str(exc).splitlines()[:2] if not l.startswith("---"))
            print(f"task {t}: {'OK' if exc is None else type(exc).__name__ + ': ' + head}", flush=True)
        raise
    print(f"job {job.job_id} done, final losses per task: {results}", flush=True)


if __name__ == "__main__":
    main()
