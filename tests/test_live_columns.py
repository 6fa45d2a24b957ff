"""`denpex run` and `denpex watch` read a log's host and rank columns as `denpex diagnose` does.

A saved log's columns (pdsh's and ClusterShell's `node-b: `, MPICH's `-prepend-pattern` `vm:2| `) are decided from
its first lines before any is framed; a live stream's first lines wait for that decision (ingest.lines.
StreamFraming). Real cluster-shell runs (round 32) and a real MPICH run (round 89) are replayed; the final reports
must name what `diagnose` names on the saved file.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from denpex.ingest.lines import StreamFraming
from tests.conftest import REPO, TESTS

DENPEX = [sys.executable, "-m", "denpex"]
TIMEOUT = 180
LOGS = [
    TESTS / "blind" / "dev32" / "run32a-pdsh-S-raise-nodea" / "log.txt",  # pdsh -S: `node-a: [rank1]: ...`
    TESTS / "blind" / "dev32" / "run32a-clush-mismatch" / "log.txt",  # clush: `node-b: ...`
    TESTS / "blind" / "dev89" / "run89-mpich-pattern-sigkill" / "log.txt",  # mpiexec -prepend-pattern `vm:1| `
]


def _root(report: dict) -> tuple:
    report = report.get("diagnosis", report)
    root = report["root_cause"]
    return root["id"], root["rank"], root.get("host"), root["evidence"]["line"], root["evidence"]["text"]


def _diagnosed(log: Path) -> dict:
    done = subprocess.run([*DENPEX, "diagnose", str(log), "--format", "json"], cwd=REPO, capture_output=True,
                          text=True, timeout=TIMEOUT)
    return json.loads(done.stdout)


@pytest.mark.parametrize("log", LOGS, ids=lambda p: p.parent.name)
def test_run_reads_the_columns_of_its_commands_output(log: Path, tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    subprocess.run([*DENPEX, "run", "--report-json", str(report), "--", "cat", str(log)], cwd=REPO,
                   capture_output=True, timeout=TIMEOUT)
    want = _diagnosed(log)
    assert want["root_cause"]["rank"] is not None
    assert _root(json.loads(report.read_text())) == _root(want)


@pytest.mark.parametrize("log", LOGS[1:], ids=lambda p: p.parent.name)
def test_watch_reads_the_columns_of_a_growing_log(log: Path, tmp_path: Path) -> None:
    watched = tmp_path / "job.log"
    watched.write_bytes(log.read_bytes())
    done = subprocess.run([*DENPEX, "watch", str(watched), "--idle", "2", "--format", "json"], cwd=REPO,
                          capture_output=True, text=True, timeout=TIMEOUT)
    assert _root(json.loads(done.stdout)) == _root(_diagnosed(watched))


def test_a_pause_before_enough_lines_frames_them_and_keeps_the_question_open() -> None:
    framing = StreamFraming("job.log")
    assert framing.push(b"node-a: starting", 1, 1) == []
    early = framing.settle()  # one line, then seconds of imports: shown as it is, nothing decided
    assert [line.host for _, line in early] == [None] and framing.columns is None
    lines = [f"node-{'ab'[i % 2]}: [rank{i % 2}]: step {i}".encode() for i in range(8)]
    framed = [pair for number, raw in enumerate(lines, start=2) for pair in framing.push(raw, number, number)]
    assert framed == []
    framed = framing.settle()  # enough lines now: the host column is decided and read off
    assert framing.columns == (True, None)
    assert [(line.number, line.host, line.rank) for _, line in framed][:2] == [(2, "node-a", 0), (3, "node-b", 1)]
