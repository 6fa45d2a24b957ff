"""`denpex triage --engine ray`: the local engine's per-job function (triage.diagnose_job) as Ray Core tasks.

Why batches: a Ray task costs about a millisecond of scheduling and a round trip, and a typical job takes a
few milliseconds to diagnose, so one task per job would spend much of the cluster on overhead; a batch of up
to 64 jobs a task amortises it, while at least 4 tasks per CPU keep every CPU busy to the end. Results come
back per batch and are put in the jobs' order, so the report is the one `--engine local` makes, byte for byte.
Ray is imported only here, so the core install does not need it (`pip install 'denpex[ray]'`).
"""

from __future__ import annotations

import math
import os
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from denpex.errors import DenpexInputError
from denpex.fleet.manifest import Job
from denpex.fleet.triage import JobResult, diagnose_job, failed_result

MAX_BATCH = 64
TASKS_PER_CPU = 4
IN_PROCESS = "the Ray cluster this process is connected to"
CONNECT_TIMEOUT = 5.0  # seconds to reach a --ray-address before saying no cluster is there


@dataclass(slots=True)
class RayRun:
    """What the run did, for the note on stderr: where the cluster was, how the work was cut."""

    cluster: str = ""
    started: bool = False  # a local cluster started for this run (and shut down after it)
    cpus: float = 0.0
    batch: int = 0
    tasks: int = 0
    worker_pids: set[int] = field(default_factory=set)
    seconds: float = 0.0  # from the first task submitted to the last result back: the work, not the start
    cpu_seconds: float = 0.0  # CPU time in the tasks, summed

    def note(self) -> str:
        cpus = f"{self.cpus:g} CPU{'' if self.cpus == 1 else 's'}"
        where = f"a local Ray cluster started with {cpus}" if self.started else \
            f"{self.cluster} ({cpus})" if self.cluster == IN_PROCESS else f"the Ray cluster at {self.cluster} ({cpus})"
        return (f"denpex: note: ray: {self.tasks} tasks (at most {self.batch} jobs each) on {where}, "
                f"in {len(self.worker_pids)} worker processes, {self.seconds:.2f} s, "
                f"{self.cpu_seconds:.2f} CPU s in tasks")


def import_ray() -> Any:
    """Ray, or the one-line error `--engine ray` gives without it (exit code 2, bad usage)."""
    try:
        import ray
    except ImportError:
        raise DenpexInputError("--engine ray needs Ray, which is not installed: pip install 'denpex[ray]'") from None
    return ray


def diagnose_batch(jobs: list[Job]) -> tuple[int, float, list[JobResult]]:
    """One Ray task: the worker's pid (how many workers did the work), the CPU seconds it took (the cost of
    a job, whatever else the machine runs) and the batch's jobs' results in order."""
    start = time.process_time()
    results = [diagnose_job(job) for job in jobs]
    return os.getpid(), time.process_time() - start, results


def batch_size(jobs: int, cpus: float) -> int:
    """Jobs per task: as many as fit 4 tasks per CPU, at most MAX_BATCH."""
    return max(1, min(MAX_BATCH, math.ceil(jobs / max(1.0, cpus * TASKS_PER_CPU))))


def run_jobs_ray(jobs: list[Job], address: str | None = None, cpus: int | None = None, batch: int | None = None,
                 progress: Callable[[JobResult], None] | None = None) -> tuple[list[JobResult], RayRun]:
    """Every job's result in the order given, as run_jobs returns them, computed by Ray tasks.

    `address`: a cluster to join (`auto`: the one running on this machine, an error if none); None joins
    one if running, else starts a local one with `cpus` CPUs (default every core) and shuts it down after.
    In a process where Ray is already initialised (a library caller, the tests), that cluster is used.
    """
    ray = import_ray()
    run = RayRun()
    if ray.is_initialized():
        run.cluster = IN_PROCESS
    else:
        run.started = _connect(ray, address, cpus)
        run.cluster = "" if run.started else address or "auto"
    try:
        run.cpus = float(ray.cluster_resources().get("CPU", 1.0))
        run.batch = batch or batch_size(len(jobs), run.cpus)
        task = ray.remote(num_cpus=1, max_retries=0)(diagnose_batch)
        started = time.perf_counter()
        refs = {task.remote(jobs[i:i + run.batch]): i for i in range(0, len(jobs), run.batch)}
        run.tasks = len(refs)
        done: dict[int, JobResult] = {}
        pending = list(refs)
        while pending:
            ready, pending = ray.wait(pending, num_returns=1)
            start = refs[ready[0]]
            try:
                pid, cpu, results = ray.get(ready[0])
            except ray.exceptions.RayError as exc:  # the task's worker died: its jobs are errors, not lost
                reason = " ".join(str(exc).split()[:12])
                results = [failed_result(job, f"its Ray task failed ({reason})")
                           for job in jobs[start:start + run.batch]]
            else:
                run.worker_pids.add(pid)
                run.cpu_seconds += cpu
            for offset, result in enumerate(results):
                done[start + offset] = result
                if progress is not None:
                    progress(result)
        run.seconds = time.perf_counter() - started
        return [done[i] for i in range(len(jobs))], run
    finally:
        if run.started:
            ray.shutdown()


def _connect(ray: Any, address: str | None, cpus: int | None) -> bool:
    """Join the cluster at `address`, or the running one, or start a local one; True when started here."""
    quiet = {"log_to_driver": False, "include_dashboard": False, "configure_logging": False}
    if address is not None:
        _reachable(address)
        try:
            ray.init(address=address, **quiet)
        except (ConnectionError, ValueError, RuntimeError) as exc:
            raise DenpexInputError(f"--ray-address {address}: no Ray cluster there "
                                   f"({' '.join(str(exc).split())[:200]})") from None
        return False
    try:
        ray.init(address="auto", **quiet)
        return False
    except (ConnectionError, ValueError, RuntimeError):
        pass
    ray.init(num_cpus=cpus or os.cpu_count() or 1, **quiet)
    return True


def _reachable(address: str) -> None:
    """A `host:port` nobody listens on fails here in seconds; ray.init would retry it for minutes."""
    host, _, port = address.rpartition(":")
    if "://" in address or not host or not port.isdigit():
        return  # `auto`, `ray://...`: Ray's own checks
    try:
        socket.create_connection((host, int(port)), timeout=CONNECT_TIMEOUT).close()
    except OSError as exc:
        raise DenpexInputError(f"--ray-address {address}: no Ray cluster there ({exc.strerror or exc})") from None
