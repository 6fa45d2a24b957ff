"""Which jobs to triage: job folders, globs of them, or a manifest (CSV or JSONL) that lists jobs.

A manifest row: job_id, paths (one path, a `;`-separated list or a JSON list; relative to the manifest's
folder, or URLs such as s3://bucket/job-7/ read through fsspec), and optionally owner, gpus, start, end
(ISO-8601; a time without a zone is UTC). Why a manifest: schedulers know what a folder does not: whose
job it was and how many GPUs it held for how long, which is what ranks groups by GPU-hours lost. A row that
cannot be read becomes a job with an error (listed, the run goes on); a manifest that cannot be read at all
(no such file, no job_id column) is bad input.
"""

from __future__ import annotations

import csv
import glob
import io
import json
import os
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from denpex.errors import DenpexInputError
from denpex.fleet.remote import expand_glob, is_url

MANIFEST_SUFFIXES = {".csv": "csv", ".jsonl": "jsonl", ".ndjson": "jsonl"}
_GLOB_CHARS = set("*?[")


@dataclass(slots=True)
class Job:
    """One job to diagnose; `error` set when its manifest row could not be read (it is reported, not run)."""

    job_id: str
    paths: list[str]
    owner: str | None = None
    gpus: float | None = None
    start: datetime | None = None
    end: datetime | None = None
    error: str | None = None
    extra: dict[str, str] = field(default_factory=dict)  # "given": the argument a folder job came from

    @property
    def gpu_hours(self) -> float | None:
        """GPUs times wall hours, when the manifest gives gpus, start and end (the cost of the failure)."""
        if self.gpus is None or self.start is None or self.end is None:
            return None
        return max(self.gpus * (self.end - self.start).total_seconds() / 3600, 0.0)


def jobs_from_inputs(inputs: list[str]) -> list[Job]:
    """Every argument as jobs: a manifest file gives its rows, a glob its matches, anything else is one job
    (a folder of one job's logs, or one log file). Job ids must be unique: a repeated one is an error job."""
    if not inputs:
        raise DenpexInputError("no jobs: give job folders, a glob, or a manifest (.csv or .jsonl)")
    jobs: list[Job] = []
    for item in inputs:
        kind = MANIFEST_SUFFIXES.get(Path(item).suffix.lower())
        if kind is not None and Path(item).is_file():
            jobs.extend(read_manifest(Path(item), kind))
        elif _GLOB_CHARS & set(item) and not os.path.exists(item):
            matches = expand_glob(item) if is_url(item) else sorted(glob.glob(item))
            if not matches:
                raise DenpexInputError(f"no jobs match the glob: {item}")
            jobs.extend(_folder_job(match) for match in matches)
        else:
            jobs.append(_folder_job(item))
    return _unique(jobs)


def _folder_job(path: str) -> Job:
    """A folder (or file) on the command line: its name is the job id; its time is the newest log's."""
    name = Path(path.rstrip("/\\")).name or path
    return Job(job_id=name, paths=[path], extra={"given": path})


def _unique(jobs: list[Job]) -> list[Job]:
    """Folders of the same name (`runs/*/logs`) are told apart by their path as given; a manifest's
    repeated job id is an error on the later rows."""
    names: dict[str, int] = {}
    for job in jobs:
        if "given" in job.extra:
            names[job.job_id] = names.get(job.job_id, 0) + 1
    for job in jobs:
        if "given" in job.extra and names[job.job_id] > 1:
            job.job_id = job.extra["given"]
    seen: set[str] = set()
    for job in jobs:
        if job.job_id in seen and job.error is None:
            job.error = f"job id {job.job_id!r} given more than once (this one: {', '.join(job.paths)})"
        seen.add(job.job_id)
    return jobs


def read_manifest(path: Path, kind: str) -> list[Job]:
    """The manifest's rows as jobs; paths relative to the manifest's folder."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise DenpexInputError(f"cannot read manifest {path}: {getattr(exc, 'strerror', None) or exc}") from None
    rows = _csv_rows(text, path) if kind == "csv" else _jsonl_rows(text, path)
    if not rows:
        raise DenpexInputError(f"manifest {path} lists no jobs")
    return [_job(row, where, path.parent) for where, row in rows]


def _csv_rows(text: str, path: Path) -> list[tuple[str, dict[str, object]]]:
    reader = csv.DictReader(io.StringIO(text))
    columns = [c.strip().lower() for c in reader.fieldnames or []]
    if "job_id" not in columns or "paths" not in columns:
        raise DenpexInputError(f"manifest {path}: needs job_id and paths columns (has: {', '.join(columns)})")
    rows = []
    for number, row in enumerate(reader, start=2):
        rows.append((f"{path.name}:{number}", {(k or "").strip().lower(): v for k, v in row.items()}))
    return rows


def _jsonl_rows(text: str, path: Path) -> list[tuple[str, dict[str, object]]]:
    rows: list[tuple[str, dict[str, object]]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{path.name}:{number}"
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            rows.append((where, {"_error": f"not JSON ({exc.msg})"}))
            continue
        if not isinstance(row, dict):
            rows.append((where, {"_error": "not a JSON object"}))
            continue
        rows.append((where, {str(k).lower(): v for k, v in row.items()}))
    return rows


def _job(row: dict[str, object], where: str, base: Path) -> Job:
    job_id = str(row.get("job_id") or "").strip()
    job = Job(job_id=job_id or where, paths=[])
    try:
        if "_error" in row:
            raise ValueError(str(row["_error"]))
        if not job_id:
            raise ValueError("no job_id")
        job.paths = [p if is_url(p) else str(base / p) for p in _paths(row.get("paths"))]
        owner = row.get("owner")
        job.owner = str(owner).strip() or None if owner is not None else None
        job.gpus = _number(row.get("gpus"), "gpus")
        job.start = _time(row.get("start"), "start")
        job.end = _time(row.get("end"), "end")
    except ValueError as exc:
        job.error = f"manifest row {where}: {exc}"
    return job


def _paths(value: object) -> list[str]:
    if isinstance(value, list):
        paths = [str(p) for p in value]
    elif isinstance(value, str) and value.strip().startswith("["):
        try:
            parsed = json.loads(value)
        except json.JSONDecodeError:
            raise ValueError("paths is not a valid JSON list") from None
        paths = [str(p) for p in parsed] if isinstance(parsed, list) else []
    elif isinstance(value, str):
        paths = value.split(";")
    else:
        paths = []
    paths = [p.strip() for p in paths if p.strip()]
    if not paths:
        raise ValueError("no paths")
    return paths


def _number(value: object, name: str) -> float | None:
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise ValueError(f"{name} is not a number: {value!r}") from None
    if number < 0 or number != number:
        raise ValueError(f"{name} must be a number >= 0: {value!r}")
    return number


def _time(value: object, name: str) -> datetime | None:
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    text = str(value).strip()
    try:
        moment = datetime.fromisoformat(text[:-1] + "+00:00" if text.endswith(("Z", "z")) else text)
    except ValueError:
        raise ValueError(f"{name} is not an ISO-8601 time: {text!r}") from None
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)
