"""The triage history: real SQLite files, real concurrent processes, a real SIGKILL, corrupt and newer files."""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import sqlite3
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

import pytest

from denpex.fleet.history import SCHEMA_VERSION, History, HistoryError, Sighting, default_path
from tests.conftest import REPO
from tests.test_triage import GEN, GPU, make_job, run

T0 = datetime(2026, 11, 24, 10, tzinfo=timezone.utc)


def sightings(writer: int, count: int, start: int = 0) -> list[Sighting]:
    return [Sighting(job_id=f"w{writer}-{i}", fingerprint=f"cuda-oom:{i % 7:012x}", entry_id="cuda-oom",
                     category="mem.cuda_oom", line="CUDA out of memory", seen_at=T0) for i in range(start, count)]


def _write(path: str, writer: int) -> None:
    with History(Path(path), timeout=60) as history:
        run_id = None
        for start in range(0, 200, 20):  # 10 transactions, interleaved with the other writers'
            run_id = history.record(sightings(writer, start + 20, start), run_id=run_id)


def test_concurrent_writers_lose_nothing(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite3"
    History(path).close()
    context = multiprocessing.get_context("spawn")
    writers = [context.Process(target=_write, args=(str(path), w)) for w in range(4)]
    for p in writers:
        p.start()
    for p in writers:
        p.join(120)
        assert p.exitcode == 0
    with History(path) as history:
        assert history.count() == 800
        assert sum(s.jobs for s in history.stats()) == 800
        assert history.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


KILLED_WRITER = """
import sys
from datetime import datetime, timezone
from pathlib import Path
from denpex.fleet.history import History, Sighting

with History(Path(sys.argv[1])) as history:
    batch = 0
    while True:
        rows = [Sighting(job_id=f"b{batch}-{i}", fingerprint="x:1", entry_id="x", category="c", line="l",
                         seen_at=datetime.now(timezone.utc)) for i in range(50)]
        history.record(rows)
        print(batch, flush=True)
        batch += 1
"""


def test_a_killed_writer_leaves_every_committed_batch(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite3"
    writer = subprocess.Popen([sys.executable, "-c", KILLED_WRITER, str(path)], stdout=subprocess.PIPE, text=True,
                              cwd=REPO)
    assert writer.stdout is not None
    committed = -1
    while committed < 20:
        committed = int(writer.stdout.readline())
    writer.send_signal(signal.SIGKILL)  # mid-loop: most likely inside a transaction
    writer.wait(30)
    assert writer.returncode == -signal.SIGKILL
    with History(path) as history:
        assert history.conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        jobs = {row[0] for row in history.conn.execute("SELECT job_id FROM sightings")}
        runs = history.conn.execute("SELECT count(*) FROM runs").fetchone()[0]
    assert {f"b{b}-{i}" for b in range(committed + 1) for i in range(50)} <= jobs
    assert len(jobs) == 50 * runs  # no half batch


def test_a_corrupt_file_is_an_error_and_left_as_it_is(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite3"
    junk = os.urandom(8192)
    path.write_bytes(junk)
    job = make_job(GEN / "gen-cpp-compile-error", tmp_path / "jobs")
    for args in (("triage", job, "--workers", "1"), ("history",)):
        result = run(*args, "--db", path)
        assert result.returncode == 5, result.stderr
        assert result.stderr.count("\n") == 1 and "not a readable SQLite file" in result.stderr
        assert result.stdout == ""  # failed before any work
        assert path.read_bytes() == junk
    assert sorted(p.name for p in tmp_path.iterdir()) == ["history.sqlite3", "jobs"]  # no -wal, no -shm


def test_another_programs_database_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "other.db"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE users (name TEXT)")
    before = path.read_bytes()
    with pytest.raises(HistoryError, match="not a Denpex history"):
        History(path)
    assert path.read_bytes() == before


def test_a_v1_file_opens_and_a_newer_one_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite3"
    assert SCHEMA_VERSION == 1
    with History(path) as history:
        history.record(sightings(0, 3))
    with History(path) as history:  # a v1 file opens as it is, records and reads
        history.record(sightings(1, 2))
        assert history.count() == 5
        assert history.conn.execute("SELECT version FROM schema_version").fetchall() == [(1,)]
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE schema_version SET version = 2")
    before = path.read_bytes()
    result = run("history", "--db", path)
    assert result.returncode == 5 and result.stderr.count("\n") == 1
    assert "schema version 2, newer than this Denpex knows (1)" in result.stderr
    with pytest.raises(HistoryError, match="newer"):
        History(path)
    assert path.read_bytes() == before


def test_a_locked_file_is_an_error_after_the_report(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite3"
    History(path).close()
    job = make_job(GEN / "gen-cpp-compile-error", tmp_path / "jobs")
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        result = run("triage", job, "--workers", "1", "--db", path, "--db-timeout", "0.3", "--format", "json")
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert result.returncode == 5
    assert result.stderr.count("\n") == 1 and "locked by another process" in result.stderr
    assert json.loads(result.stdout)["history_db"] is None  # the work is not lost: the report came first
    with History(path) as history:
        assert history.count() == 0


def test_recurrence_across_runs(tmp_path: Path) -> None:
    """Two runs on two jobs of the same failure: the second says "seen 2 times"; triaging a job again does
    not count it twice; `denpex history` lists it, filtered by entry and age."""
    db = tmp_path / "h.sqlite3"
    first = make_job(GPU / "gpu-cuda-oom", tmp_path / "jobs", "job-1")
    second = make_job(GPU / "gpu-cuda-oom-compiled", tmp_path / "jobs", "job-2")
    one = json.loads(run("triage", first, "--workers", "1", "--db", db, "--format", "json").stdout)
    assert one["groups"][0]["history"]["summary"].startswith("seen once, on ")
    assert one["groups"][0]["history"]["earlier_runs"] is False
    two = run("triage", second, "--workers", "1", "--db", db)
    assert two.returncode == 1
    assert "  history: RECURRING: seen 2 times in 1 day, first on 20" in two.stdout
    again = json.loads(run("triage", second, "--workers", "1", "--db", db, "--format", "json").stdout)
    assert again["groups"][0]["history"]["jobs"] == 2
    listed = json.loads(run("history", "--db", db, "--format", "json").stdout)["fingerprints"]
    assert [(f["entry_id"], f["jobs"]) for f in listed] == [("cuda-oom", 2)]
    assert listed[0]["fingerprint"] == one["groups"][0]["fingerprint"]
    def listed_with(*args: str) -> list[dict]:
        return json.loads(run("history", "--db", db, "--format", "json", *args).stdout)["fingerprints"]

    assert listed_with("--entry", "nccl-x") == [] and len(listed_with("--entry", "cuda-oom")) == 1
    assert len(listed_with("--since", "3650")) == 1
    table = run("history", "--db", db)
    assert table.returncode == 0 and "cuda-oom" in table.stdout
    skipped = run("triage", first, "--workers", "1", "--db", tmp_path / "unused.sqlite3", "--no-history")
    assert skipped.returncode == 1 and not (tmp_path / "unused.sqlite3").exists()


def test_default_location_follows_xdg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    assert default_path() == tmp_path / "denpex" / "history.sqlite3"
    monkeypatch.setenv("XDG_DATA_HOME", "relative/ignored")
    assert default_path() == Path.home() / ".local" / "share" / "denpex" / "history.sqlite3"
    env = {**os.environ, "XDG_DATA_HOME": str(tmp_path / "xdg")}
    job = make_job(GEN / "gen-cpp-compile-error", tmp_path / "jobs")
    subprocess.run([sys.executable, "-m", "denpex", "triage", str(job), "--workers", "1"], env=env, cwd=REPO,
                   capture_output=True, timeout=120)
    assert (tmp_path / "xdg" / "denpex" / "history.sqlite3").is_file()
