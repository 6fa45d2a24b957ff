"""The versioned JSON output of `denpex triage --format json` (`denpex triage --print-schema` prints it).

Pydantic models, so the schema and its field descriptions come from one place. Bump SCHEMA_VERSION's major
number when a field is removed or changes meaning; add fields freely in a minor version.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from denpex import __version__

SCHEMA_VERSION = "1.0"


class RecurrenceOut(BaseModel):
    """What the history store knows about this fingerprint, this run included."""

    jobs: int = Field(description="distinct jobs ever recorded with this fingerprint")
    first_seen: str = Field(description="ISO-8601 time of the earliest recorded job")
    last_seen: str = Field(description="ISO-8601 time of the latest recorded job")
    days: int = Field(description="calendar days from first_seen to last_seen, both counted")
    earlier_runs: bool = Field(description="true when jobs other than this run's were recorded with it: it recurs")
    summary: str = Field(description="e.g. 'seen 14 times in 7 days, first on 2026-11-24'")


class GroupOut(BaseModel):
    """Jobs that failed the same way: same catalog entry, same decisive line once masked."""

    fingerprint: str = Field(description="entry id, ':' and 12 hex digits of the normalised decisive line's hash")
    entry_id: str = Field(description="catalog entry of the root cause")
    category: str = Field(description="root-cause category (see `denpex catalog`)")
    title: str
    verdict: str = Field(description="failure | warning")
    count: int = Field(description="jobs in this group")
    gpu_hours: float | None = Field(description="GPU-hours the group's jobs held, where the manifest gives gpus, "
                                                "start and end (null when no job has them)")
    first_seen: str = Field(description="ISO-8601: earliest job (manifest end, else start, else newest log file)")
    last_seen: str = Field(description="ISO-8601: latest job")
    example_jobs: list[str] = Field(description="up to 3 job ids, latest first")
    jobs: list[str] = Field(description="every job id in the group, latest first")
    owners: list[str] = Field(description="owners the manifest names for these jobs, sorted")
    decisive_line: str = Field(description="the decisive line normalised: numbers, paths, hex, hosts, IPs masked")
    example_line: str = Field(description="the decisive line of the first example job, as it stands in its log")
    fix: str = Field(description="from the catalog entry of the root cause")
    verify: str = Field(description="command that proves the fix, for the first example job")
    history: RecurrenceOut | None = Field(default=None, description="null with --no-history")


class JobErrorOut(BaseModel):
    """A job that could not be diagnosed: missing or unreadable logs, a bad manifest row."""

    job_id: str
    paths: list[str]
    message: str = Field(description="one line, as `denpex diagnose` would say it")


class TriageOut(BaseModel):
    schema_version: str = SCHEMA_VERSION
    denpex_version: str = __version__
    jobs: int = Field(description="jobs given, errors included")
    diagnosed: int = Field(description="jobs diagnosed (failed, warned or clean)")
    sort: str = Field(description="how groups are ranked: count | gpu-hours | recent")
    groups: list[GroupOut] = Field(description="ranked by `sort`, ties broken by the other two keys")
    clean_jobs: list[str] = Field(description="jobs whose logs show no problem")
    errors: list[JobErrorOut]
    history_db: str | None = Field(default=None, description="the history store used; null with --no-history")


class FingerprintOut(BaseModel):
    """One fingerprint as `denpex history --format json` lists it."""

    fingerprint: str
    entry_id: str
    category: str
    decisive_line: str = Field(description="normalised: numbers, paths, hex, hosts, IPs masked")
    jobs: int = Field(description="distinct jobs recorded with it (in the --since window)")
    first_seen: str
    last_seen: str
    gpu_hours: float | None
    summary: str


class HistoryOut(BaseModel):
    schema_version: str = SCHEMA_VERSION
    db: str
    fingerprints: list[FingerprintOut] = Field(description="most jobs first, then the most recent")
