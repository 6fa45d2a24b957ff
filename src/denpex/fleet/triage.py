"""Diagnose many jobs with the library (as `denpex diagnose` reads them), group them by failure fingerprint.

Why a process pool of whole jobs: jobs are independent and most are small, so one job per task keeps every
core busy without the fast path's own pool (each job runs with workers=1); `workers=1` runs in this process
(tests, debugging, a machine already loaded). A job that cannot be diagnosed becomes an error result with
its one-line message: one bad folder among 10,000 must not stop the run.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import TYPE_CHECKING

from denpex.errors import DenpexInputError
from denpex.fleet.fingerprint import fingerprint, normalise_line
from denpex.fleet.history import History, Sighting
from denpex.fleet.manifest import Job
from denpex.fleet.remote import as_given, is_url, staged
from denpex.fleet.schema import GroupOut, JobErrorOut, RecurrenceOut, TriageOut

if TYPE_CHECKING:
    from denpex.report.json_schema import DiagnosisOut

SORTS = ("count", "gpu-hours", "recent")
EXAMPLES = 3


@dataclass(slots=True)
class JobResult:
    """What triage keeps of one job's diagnosis (small and picklable: it crosses the process pool)."""

    job_id: str
    paths: list[str]
    seen_at: datetime
    owner: str | None = None
    gpu_hours: float | None = None
    verdict: str = ""  # failure | warning | clean; "" when error is set
    entry_id: str = ""
    category: str = ""
    title: str = ""
    line: str = ""  # the decisive line as it stands in the log
    normalised: str = ""
    fingerprint: str = ""
    fix: str = ""
    verify: str = ""
    error: str | None = None


def diagnose_job(job: Job) -> JobResult:
    """One job through the library; bad input (and, so one job cannot end the run, a bug) becomes `error`."""
    result = JobResult(job_id=job.job_id, paths=job.paths, seen_at=_seen_at(job), owner=job.owner,
                       gpu_hours=job.gpu_hours)
    if job.error is not None:
        result.error = job.error
        return result
    try:
        with staged(job.paths) as paths:  # URLs (s3://, gs://, memory://) copied to a temporary folder
            if paths is not job.paths:
                result.seen_at = _seen_at(job, paths)
            report = _report(paths)
        if paths is not job.paths and report.root_cause is not None:
            report.root_cause.verify = as_given(report.root_cause.verify, job.paths, paths)
    except DenpexInputError as exc:
        result.error = " ".join(str(exc).split())
        return result
    except Exception as exc:  # a Denpex bug on this job's logs: report it with the job, go on with the rest
        result.error = f"internal error: {type(exc).__name__}: {' '.join(str(exc).split())[:300]}"
        return result
    result.verdict = report.verdict
    root = report.root_cause
    if root is not None:
        result.entry_id, result.category, result.title = root.id, root.category, root.title
        result.line = root.evidence.text
        result.normalised = normalise_line(root.evidence.text)
        result.fingerprint = fingerprint(root.id, result.normalised)
        result.fix, result.verify = root.fix, root.verify
    return result


def _report(paths: list[str]) -> DiagnosisOut:
    """One job's local logs as `denpex diagnose --format json` would report them."""
    from denpex.api import diagnose_sources
    from denpex.catalog import load
    from denpex.ingest import resolve
    from denpex.report.json_schema import build

    catalog = load()
    # as `denpex diagnose` reads them: an empty or unreadable file among a job's logs is left out
    sources = resolve(paths, left_out=[])
    return build(diagnose_sources(sources, catalog=catalog, workers=1), catalog)


def _seen_at(job: Job, paths: list[str] | None = None) -> datetime:
    """When the job failed: the manifest's end (else start), else its newest log file's modification time
    (`paths`: where its logs are, when a URL's were copied to a temporary folder)."""
    moment = job.end or job.start
    if moment is not None:
        return moment.astimezone(timezone.utc)
    newest = 0.0
    for path in job.paths if paths is None else paths:
        if is_url(path):
            continue
        try:
            newest = max(newest, os.stat(path).st_mtime)
            for folder, _, files in os.walk(path):
                for name in files:
                    newest = max(newest, os.stat(os.path.join(folder, name)).st_mtime)
        except OSError:
            continue
    return datetime.fromtimestamp(newest, timezone.utc) if newest else datetime.now(timezone.utc)


def run_jobs(jobs: list[Job], workers: int | None = None,
             progress: Callable[[JobResult], None] | None = None) -> list[JobResult]:
    """Every job's result, in the order the jobs were given; `progress` is told each as it finishes."""
    workers = max(1, min(workers or os.cpu_count() or 1, len(jobs) or 1))
    if workers == 1:
        results = []
        for job in jobs:
            results.append(diagnose_job(job))
            if progress is not None:
                progress(results[-1])
        return results
    done: dict[int, JobResult] = {}
    try:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            futures = {pool.submit(diagnose_job, job): i for i, job in enumerate(jobs)}
            for future in as_completed(futures):
                done[futures[future]] = future.result()
                if progress is not None:
                    progress(done[futures[future]])
    except BrokenProcessPool:  # a worker was killed (out of memory?): the jobs it left are errors, not lost
        pass
    for i, job in enumerate(jobs):
        if i not in done:
            done[i] = failed_result(job, "its worker process died (killed, or out of memory) before it finished")
    return [done[i] for i in range(len(jobs))]


def failed_result(job: Job, error: str) -> JobResult:
    """A job whose worker died: listed with the reason (an engine must not lose jobs silently)."""
    return JobResult(job_id=job.job_id, paths=job.paths, seen_at=_seen_at(job), owner=job.owner,
                     gpu_hours=job.gpu_hours, error=error)


def summarise(results: list[JobResult], sort: str = "count",
              history: dict[str, RecurrenceOut] | None = None, history_db: str | None = None) -> TriageOut:
    """Group failed and warned jobs by fingerprint and rank the groups; clean jobs and errors are listed."""
    if sort not in SORTS:
        raise ValueError(f"sort must be one of {SORTS}")
    by_print: dict[str, list[JobResult]] = {}
    for result in results:
        if result.error is None and result.fingerprint:
            by_print.setdefault(result.fingerprint, []).append(result)
    groups = [_group(members, history) for members in by_print.values()]
    groups.sort(key=_ranking(sort))
    return TriageOut(
        jobs=len(results),
        diagnosed=sum(r.error is None for r in results),
        sort=sort,
        groups=groups,
        clean_jobs=[r.job_id for r in results if r.error is None and not r.fingerprint],
        errors=[JobErrorOut(job_id=r.job_id, paths=r.paths, message=r.error) for r in results if r.error],
        history_db=history_db,
    )


def _group(members: list[JobResult], history: dict[str, RecurrenceOut] | None) -> GroupOut:
    latest = sorted(members, key=lambda r: r.seen_at, reverse=True)
    first = latest[0]
    hours = [r.gpu_hours for r in members if r.gpu_hours is not None]
    return GroupOut(
        fingerprint=first.fingerprint,
        entry_id=first.entry_id,
        category=first.category,
        title=first.title,
        verdict=first.verdict,
        count=len(members),
        gpu_hours=round(sum(hours), 3) if hours else None,
        first_seen=latest[-1].seen_at.isoformat(timespec="seconds"),
        last_seen=first.seen_at.isoformat(timespec="seconds"),
        example_jobs=[r.job_id for r in latest[:EXAMPLES]],
        jobs=[r.job_id for r in latest],
        owners=sorted({r.owner for r in members if r.owner}),
        decisive_line=first.normalised,
        example_line=first.line,
        fix=first.fix,
        verify=first.verify,
        history=(history or {}).get(first.fingerprint),
    )


def _ranking(sort: str) -> Callable[[GroupOut], tuple[float | str, ...]]:
    """The chosen key first, the other two as tie-breakers, then the fingerprint (a stable order)."""
    order = [sort, *[s for s in SORTS if s != sort]]

    def key(group: GroupOut) -> tuple[float | str, ...]:
        values = {"count": -group.count, "gpu-hours": -(group.gpu_hours or 0.0),
                  "recent": -datetime.fromisoformat(group.last_seen).timestamp()}
        return (*(values[s] for s in order), group.fingerprint)

    return key


def triage(jobs: Iterable[Job], workers: int | None = None, sort: str = "count") -> TriageOut:
    """Jobs in, ranked groups out, without history (the library's one-call entry point)."""
    return summarise(run_jobs(list(jobs), workers), sort)


BATCH = 1000  # sightings per history transaction


def record(history: History, results: list[JobResult]) -> dict[str, RecurrenceOut]:
    """Record this run's failed and warned jobs, then say per fingerprint what the history knows."""
    failed = [r for r in results if r.error is None and r.fingerprint]
    sightings = [Sighting(job_id=r.job_id, fingerprint=r.fingerprint, entry_id=r.entry_id, category=r.category,
                          line=r.normalised, seen_at=r.seen_at, owner=r.owner, gpu_hours=r.gpu_hours)
                 for r in failed]
    run_id = None
    for start in range(0, max(len(sightings), 1), BATCH):
        run_id = history.record(sightings[start:start + BATCH], run_id=run_id, jobs=len(results))
    here: dict[str, set[str]] = {}
    for r in failed:
        here.setdefault(r.fingerprint, set()).add(r.job_id)
    return {
        s.fingerprint: RecurrenceOut(jobs=s.jobs, first_seen=s.first_seen.isoformat(),
                                     last_seen=s.last_seen.isoformat(), days=s.days,
                                     earlier_runs=s.jobs > len(here.get(s.fingerprint, ())),
                                     summary=s.summary())
        for s in history.stats(here)
    }
