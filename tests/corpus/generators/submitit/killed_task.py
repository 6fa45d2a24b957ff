"""A submitit LocalExecutor job of two tasks whose task 1 is SIGKILLed mid-work; the driver waits for the results.

python killed_task.py FOLDER   # submitit's per-task logs go to FOLDER; the driver's output is the log
"""
import os
import signal
import sys
import time

import submitit


def work() -> int:
    env = submitit.JobEnvironment()
    print(f"task {env.global_rank} of {env.num_tasks} started", flush=True)
    time.sleep(1)
    if env.global_rank == 1:
        os.kill(os.getpid(), signal.SIGKILL)  # what the OOM killer does
    time.sleep(1)
    return env.global_rank


executor = submitit.LocalExecutor(folder=sys.argv[1])
executor.update_parameters(tasks_per_node=2, nodes=1, timeout_min=5)
job = executor.submit(work)
print(f"submitted job {job.job_id}", flush=True)
print(job.results())
