"""The triage history: an SQLite file that remembers which jobs failed how, so a failure that comes back
is flagged ("seen 14 times in 7 days, first on 2026-11-24").

Why SQLite (the standard library's sqlite3, no new dependency): one file, safe with several writers (WAL
mode, a busy timeout, one transaction per batch of jobs, so a killed writer leaves every committed batch and
nothing half-written), and queryable by users with any SQLite tool. A job is recorded once per fingerprint
(job_id, fingerprint is unique): triaging the same folder again does not inflate the counts.

The file is never overwritten, truncated or deleted: a file that is not a Denpex history (random bytes, a
corrupt page, another program's database) or one written by a newer Denpex is an error, exit code 5, and the
file is left as it was. The schema is versioned (table schema_version); MIGRATIONS[i] takes version i to i+1,
so version 2 is one more function appended to it.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

from denpex.errors import DenpexInputError, ExitCode

DEFAULT_TIMEOUT = 10.0  # seconds a writer waits for another to finish before "locked"
_IN_CHUNK = 500  # values per `IN (...)`: SQLite's default limit of host parameters is 999 on old builds


class HistoryError(DenpexInputError):
    """The history file cannot be used as it is: one line, exit code 5, the file untouched."""

    exit_code = ExitCode.HISTORY


def default_path() -> Path:
    """$XDG_DATA_HOME/denpex/history.sqlite3, else ~/.local/share/denpex/history.sqlite3 (XDG base dirs)."""
    base = os.environ.get("XDG_DATA_HOME", "")
    root = Path(base) if base and os.path.isabs(base) else Path.home() / ".local" / "share"
    return root / "denpex" / "history.sqlite3"


def _v1(conn: sqlite3.Connection) -> None:
    _statements(conn, """
        CREATE TABLE runs (
            id INTEGER PRIMARY KEY,
            started_at TEXT NOT NULL,
            jobs INTEGER NOT NULL,
            denpex_version TEXT NOT NULL
        );
        CREATE TABLE sightings (
            id INTEGER PRIMARY KEY,
            run_id INTEGER NOT NULL REFERENCES runs(id),
            job_id TEXT NOT NULL,
            fingerprint TEXT NOT NULL,
            entry_id TEXT NOT NULL,
            category TEXT NOT NULL,
            line TEXT NOT NULL,
            seen_at TEXT NOT NULL,
            owner TEXT,
            gpu_hours REAL,
            UNIQUE (job_id, fingerprint)
        );
        CREATE INDEX sightings_by_fingerprint ON sightings (fingerprint, seen_at);
        CREATE INDEX sightings_by_time ON sightings (seen_at);
    """)


def _statements(conn: sqlite3.Connection, script: str) -> None:
    """Each statement on its own: executescript() would COMMIT the migration's transaction first."""
    for statement in script.split(";"):
        if statement.strip():
            conn.execute(statement)


# MIGRATIONS[i] migrates a version-i database to version i+1; each runs in its own transaction.
MIGRATIONS: list[Callable[[sqlite3.Connection], None]] = [_v1]
SCHEMA_VERSION = len(MIGRATIONS)


@dataclass(slots=True)
class Sighting:
    """One job's failure as the history records it."""

    job_id: str
    fingerprint: str
    entry_id: str
    category: str
    line: str  # the decisive line normalised (never the raw line: it may name people and machines)
    seen_at: datetime
    owner: str | None = None
    gpu_hours: float | None = None


@dataclass(slots=True)
class FingerprintStats:
    fingerprint: str
    entry_id: str
    category: str
    line: str
    jobs: int
    first_seen: datetime
    last_seen: datetime
    gpu_hours: float | None

    @property
    def days(self) -> int:
        return (self.last_seen.date() - self.first_seen.date()).days + 1

    def summary(self) -> str:
        if self.jobs == 1:
            return f"seen once, on {self.first_seen.date().isoformat()}"
        days = f"{self.days} day{'s' if self.days != 1 else ''}"
        return f"seen {self.jobs} times in {days}, first on {self.first_seen.date().isoformat()}"


def _stamp(moment: datetime) -> str:
    """UTC, fixed width: text order is time order, so SQL compares stamps as strings."""
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S+00:00")


def _time(stamp: str) -> datetime:
    return datetime.fromisoformat(stamp)


class History:
    """An open history file; use as a context manager (closes the connection)."""

    def __init__(self, path: Path, timeout: float = DEFAULT_TIMEOUT, readonly: bool = False) -> None:
        self.path = path
        self.timeout = timeout
        if path.exists() and not path.is_file():
            raise HistoryError(f"history database is not a file: {path}")
        try:
            if readonly:
                self.conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=timeout,
                                            isolation_level=None)
            else:
                path.parent.mkdir(parents=True, exist_ok=True)
                self.conn = sqlite3.connect(path, timeout=timeout, isolation_level=None)
        except (sqlite3.Error, OSError) as exc:
            raise self._error(exc) from None
        try:
            self.conn.execute(f"PRAGMA busy_timeout = {int(timeout * 1000)}")
            self.conn.execute("SELECT count(*) FROM sqlite_master").fetchone()  # reads the header: no write
            version = self._version()
            if version > SCHEMA_VERSION:
                raise HistoryError(f"history database {path} has schema version {version}, newer than this "
                                   f"Denpex knows ({SCHEMA_VERSION}): upgrade Denpex, or pass --db for another file")
            if not readonly:
                self.conn.execute("PRAGMA journal_mode = WAL")
                self.migrate()
        except sqlite3.Error as exc:
            self.conn.close()
            raise self._error(exc) from None
        except HistoryError:
            self.conn.close()
            raise

    def _error(self, exc: BaseException) -> HistoryError:
        message = " ".join(str(exc).split())
        if isinstance(exc, sqlite3.OperationalError) and ("locked" in message or "busy" in message):
            return HistoryError(f"history database is locked by another process (waited {self.timeout:g} s): "
                                f"{self.path}")
        if isinstance(exc, sqlite3.DatabaseError) and not isinstance(exc, sqlite3.OperationalError):
            return HistoryError(f"history database is not a readable SQLite file ({message}): {self.path}; "
                                "it was left as it is: move it away, or pass --db PATH or --no-history")
        return HistoryError(f"history database {self.path}: {message}")

    def _version(self) -> int:
        tables = {row[0] for row in self.conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if "schema_version" not in tables:
            if tables:
                raise HistoryError(f"{self.path} is an SQLite database but not a Denpex history (tables: "
                                   f"{', '.join(sorted(tables)[:5])}); it was left as it is")
            return 0
        row = self.conn.execute("SELECT max(version) FROM schema_version").fetchone()
        return int(row[0] or 0)

    def migrate(self) -> None:
        """Bring the file to SCHEMA_VERSION, one step per transaction (a crash leaves a whole version)."""
        while (version := self._version()) < SCHEMA_VERSION:
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                if self._version() == version:  # another process may have migrated it meanwhile
                    if version == 0:
                        self.conn.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
                    MIGRATIONS[version](self.conn)
                    self.conn.execute("DELETE FROM schema_version")
                    self.conn.execute("INSERT INTO schema_version (version) VALUES (?)", (version + 1,))
                self.conn.execute("COMMIT")
            except BaseException:
                self.conn.execute("ROLLBACK")
                raise

    def __enter__(self) -> History:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.conn.close()

    def record(self, sightings: Iterable[Sighting], run_id: int | None = None, jobs: int | None = None,
               started_at: datetime | None = None) -> int:
        """One batch of sightings in one transaction (a killed writer loses at most the batch it was in);
        the first batch of a run (run_id None) also records the run. Returns the run's id. A job already
        recorded with the same fingerprint is kept as first recorded."""
        from denpex import __version__

        rows = list(sightings)
        try:
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                if run_id is None:
                    run_id = self.conn.execute(
                        "INSERT INTO runs (started_at, jobs, denpex_version) VALUES (?, ?, ?)",
                        (_stamp(started_at or datetime.now(timezone.utc)), len(rows) if jobs is None else jobs,
                         __version__)).lastrowid
                self.conn.executemany(
                    "INSERT INTO sightings (run_id, job_id, fingerprint, entry_id, category, line, seen_at, owner,"
                    " gpu_hours) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (job_id, fingerprint) DO NOTHING",
                    [(run_id, s.job_id, s.fingerprint, s.entry_id, s.category, s.line, _stamp(s.seen_at), s.owner,
                      s.gpu_hours) for s in rows])
                self.conn.execute("COMMIT")
            except BaseException:
                if self.conn.in_transaction:
                    self.conn.execute("ROLLBACK")
                raise
        except sqlite3.Error as exc:
            raise self._error(exc) from None
        assert run_id is not None
        return run_id

    def stats(self, fingerprints: Iterable[str] | None = None, entry_id: str | None = None,
              since: datetime | None = None) -> list[FingerprintStats]:
        """Per fingerprint: jobs, first and last seen, GPU-hours; most jobs first, then the latest."""
        wanted = None if fingerprints is None else sorted(set(fingerprints))
        chunks = [None] if wanted is None else [wanted[i:i + _IN_CHUNK] for i in range(0, len(wanted), _IN_CHUNK)]
        out: list[FingerprintStats] = []
        for chunk in chunks:
            where, args = [], []
            if chunk is not None:
                where.append(f"fingerprint IN ({', '.join('?' * len(chunk))})")
                args.extend(chunk)
            if entry_id is not None:
                where.append("entry_id = ?")
                args.append(entry_id)
            if since is not None:
                where.append("seen_at >= ?")
                args.append(_stamp(since))
            query = ("SELECT fingerprint, min(entry_id), min(category), min(line), count(*), min(seen_at),"
                     " max(seen_at), sum(gpu_hours) FROM sightings"
                     + (f" WHERE {' AND '.join(where)}" if where else "") + " GROUP BY fingerprint")
            try:
                rows = self.conn.execute(query, args).fetchall()
            except sqlite3.Error as exc:
                raise self._error(exc) from None
            out.extend(FingerprintStats(fingerprint=r[0], entry_id=r[1], category=r[2], line=r[3], jobs=r[4],
                                        first_seen=_time(r[5]), last_seen=_time(r[6]), gpu_hours=r[7])
                       for r in rows)
        out.sort(key=lambda s: (-s.jobs, -s.last_seen.timestamp(), s.fingerprint))
        return out

    def count(self) -> int:
        return int(self.conn.execute("SELECT count(*) FROM sightings").fetchone()[0])


def since_days(days: float) -> datetime:
    return datetime.now(timezone.utc) - timedelta(days=days)
