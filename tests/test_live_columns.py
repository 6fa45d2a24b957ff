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
    TESTS / "blind" / "dev89" / "run89-mpich-pattern-hostoom" / "log.txt",  # mpiexec -prepend-pattern `vm:1| `
    TESTS / "fixtures" / "mechanisms" / "mpich_hosted_column.log",  # `-prepend-pattern '%h:%r| '`: `node02:3| `
]
# replays a log line by line, pausing where asked (`4:0.7` pauses 0.7 s after line 4), as the job printed it
REPLAY = r"""
import sys, time
path, pauses = sys.argv[1], dict(p.split(":") for p in sys.argv[2].split(",") if p)
for number, line in enumerate(open(path, "rb"), start=1):
    sys.stdout.buffer.write(line)
    sys.stdout.flush()
    time.sleep(float(pauses.get(str(number), 0.0)))
"""


def _root(report: dict) -> tuple:
    report = report.get("diagnosis", report)
    root = report["root_cause"]
    ranks = sorted((r["rank"], r.get("host")) for r in report.get("ranks", []))
    return root["id"], root["rank"], root.get("host"), root["evidence"]["line"], root["evidence"]["text"], ranks


def _diagnosed(log: Path) -> dict:
    done = subprocess.run([*DENPEX, "diagnose", str(log), "--format", "json"], cwd=REPO, capture_output=True,
                          text=True, timeout=TIMEOUT)
    return json.loads(done.stdout)


@pytest.mark.parametrize("log", LOGS, ids=lambda p: p.parent.name if p.name == "log.txt" else p.stem)
def test_run_reads_the_columns_of_its_commands_output(log: Path, tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    subprocess.run([*DENPEX, "run", "--report-json", str(report), "--", "cat", str(log)], cwd=REPO,
                   capture_output=True, timeout=TIMEOUT)
    want = _diagnosed(log)
    assert want["ranks"]
    assert _root(json.loads(report.read_text())) == _root(want)


def test_run_reads_a_rank_column_that_arrives_after_its_output_paused(tmp_path: Path) -> None:
    # the MPICH job printed its first lines, then paused while the ranks imported torch: the first lines are read at
    # once, without a column; once enough lines came to learn `vm:<rank>| `, every line is read again with it
    log = LOGS[2]
    report = tmp_path / "report.json"
    subprocess.run([*DENPEX, "run", "--report-json", str(report), "--", sys.executable, "-c", REPLAY, str(log),
                    "2:0.8,4:0.8,6:0.8"], cwd=REPO, capture_output=True, timeout=TIMEOUT)
    assert _root(json.loads(report.read_text())) == _root(_diagnosed(log))


@pytest.mark.parametrize("log", LOGS[1:], ids=lambda p: p.parent.name if p.name == "log.txt" else p.stem)
def test_watch_reads_the_columns_of_a_growing_log(log: Path, tmp_path: Path) -> None:
    watched = tmp_path / "job.log"
    watched.write_bytes(log.read_bytes())
    done = subprocess.run([*DENPEX, "watch", str(watched), "--idle", "2", "--format", "json"], cwd=REPO,
                          capture_output=True, text=True, timeout=TIMEOUT)
    assert _root(json.loads(done.stdout)) == _root(_diagnosed(watched))


def test_lines_held_too_long_are_read_without_a_column_and_read_again_once_it_is_learned() -> None:
    framing = StreamFraming("job.log")
    framing.HOLD_S = 0.0
    lines = [f"node-{'ab'[i % 2]}: [rank{i % 2}]: step {i}".encode() for i in range(8)]
    assert framing.push(lines[0], 1, 1) == [] and framing.due()
    early = framing.settle()  # held too long: read as it is, nothing decided
    assert [(line.host, line.rank) for _, line in early] == [(None, 0)] and framing.columns is None
    assert [pair for number, raw in enumerate(lines[1:], start=2) for pair in framing.push(raw, number, number)] == []
    later = framing.settle()  # held past HOLD_S again: read as they came, still undecided
    assert [line.number for _, line in later] == list(range(2, 9)) and framing.columns is None
    again = framing.flush()  # the stream ended: the host column is learned, every line is read again with it
    assert framing.columns == (True, None) and framing.restarted
    assert [(line.number, line.host, line.rank) for _, line in again][:2] == [(1, "node-a", 0), (2, "node-b", 1)]


def test_a_finding_is_flagged_while_a_progress_bar_keeps_the_output_busy(tmp_path: Path) -> None:
    # a traceback, then a bar redrawn with carriage returns for 6 s (bytes, never a newline): the held lines are
    # read once they waited StreamFraming.HOLD_S, not when the command ends
    from denpex.control.runner import run

    job = ("import sys, time\n"
           "print('[rank1]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB', flush=True)\n"
           "for i in range(60):\n"
           "    sys.stdout.write(f'\\r {i}%|####| {i}/100'); sys.stdout.flush(); time.sleep(0.1)\n")
    result = run([sys.executable, "-c", job], log_path=tmp_path / "run.log", echo=False)
    flags = [f for f in result.flags if f.entry_id == "cuda-oom"]
    assert flags and flags[0].elapsed < (result.ended - result.started) - 2.0
