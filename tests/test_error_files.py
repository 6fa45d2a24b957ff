"""torchelastic error files as evidence: a real torchrun run (torch 2.13 CPU, 3 gloo ranks, @record, rank 1 raises
IndexError at step 2; tests/corpus/generators/error_files/) with its --log-dir tree, each rank's error.json and
torchrun's own $TORCHELASTIC_ERROR_FILE; and the earlier real runs of tests/corpus and tests/fixtures."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from denpex.ingest.error_files import ErrorFileError, parse_error_file, read_error_file
from tests.conftest import CORPUS, REPO

CASE = CORPUS / "generated" / "gen-dist-rank1-indexerror-errorfile"
ATTEMPT = next(CASE.glob("logdir/*/attempt_0"))
LABEL = json.loads((CASE / "label.json").read_text())


def diagnose_json(*args: str | os.PathLike[str]) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "DENPEX_DEBUG"}
    result = subprocess.run([sys.executable, "-m", "denpex", "diagnose", "--format", "json", *map(os.fspath, args)],
                            capture_output=True, text=True, env=env, cwd=REPO, timeout=120, stdin=subprocess.DEVNULL)
    assert result.returncode in (0, 1, 3), result.stderr
    assert "Traceback" not in result.stderr
    return json.loads(result.stdout)


def _stamp(path: Path) -> float:
    return float(json.loads(path.read_text())["message"]["extraInfo"]["timestamp"])


def test_the_run_is_real_and_wrote_error_files():
    assert "torch 2.13.0+cpu" in LABEL["source"] and "tests/corpus/generators/error_files/run.sh" in LABEL["source"]
    assert (CASE / "rc.txt").read_text().strip() == "torchrun exit code: 1"
    assert sorted(p.parent.name for p in ATTEMPT.glob("*/error.json")) == ["0", "1", "2"]
    assert "Root Cause (first observed failure)" in (CASE / "log.txt").read_text()


def test_reader_reads_the_child_and_the_agent_layouts():
    child = read_error_file(ATTEMPT / "1" / "error.json", "error.json")
    assert child.message == "IndexError: list index out of range"
    assert child.traceback.startswith("Traceback (most recent call last):")
    assert child.timestamp == _stamp(ATTEMPT / "1" / "error.json") and child.error_code is None
    agent = read_error_file(CASE / "agent_error.json", "agent_error.json")  # the child's, copied, with errorCode
    assert agent.message == child.message and agent.error_code == 1
    # the older layout torch still reads (elastic/multiprocessing/errors: a string message, a top-level timestamp)
    old = parse_error_file(b'{"message": "Signal 9 (SIGKILL) received by PID 7", "timestamp": 1796174685}', "e")
    assert old.traceback == old.message and old.timestamp == 1796174685.0
    with pytest.raises(ErrorFileError):
        parse_error_file(b'{"message": {"message": "cut', "e")


def test_error_file_alone_gives_rank_cause_and_time():
    error = ATTEMPT / "1" / "error.json"
    report = diagnose_json(error)
    root = report["root_cause"]
    assert root["category"] == LABEL["category"] == "user.code_error"
    assert root["rank"] == LABEL["initiating_rank"] == 1  # from the path: attempt_0/1/error.json
    assert root["evidence"]["text"] == "IndexError: list index out of range"
    assert root["evidence"]["file"].endswith("attempt_0/1/error.json")
    assert root["evidence"]["timestamp"] == _stamp(error)


def test_every_error_file_together_names_rank_1():
    """Ranks 0 and 2 also raised (gloo: Connection closed by peer) and wrote error files: echoes, not the cause."""
    report = diagnose_json(*sorted(ATTEMPT.glob("*/error.json")), CASE / "agent_error.json")
    root = report["root_cause"]
    assert root["rank"] == 1 and root["category"] == "user.code_error"
    echoes = {f["rank"] for f in report["findings"] if f["role"] == "collateral"}
    assert {0, 2} <= echoes


def test_log_dir_tree_uses_the_error_file_time():
    report = diagnose_json(CASE / "logdir")
    root = report["root_cause"]
    assert root["rank"] == 1 and root["category"] == "user.code_error"
    assert LABEL["also_acceptable"][0] in root["evidence"]["text"]
    assert root["evidence"]["timestamp"] == _stamp(ATTEMPT / "1" / "error.json")


def test_console_log_and_error_files_give_one_root_cause():
    report = diagnose_json(CASE)  # log.txt, logdir/ (stdout, stderr, error.json) and agent_error.json
    root = report["root_cause"]
    assert root["rank"] == 1 and root["category"] == "user.code_error"
    assert LABEL["decisive_line"] in root["evidence"]["text"] or LABEL["also_acceptable"][0] in root["evidence"][
        "text"]
    # the line from the logs, the time from rank 1's error file (the same traceback's findings are counted once)
    assert not root["evidence"]["file"].endswith("error.json")
    assert root["evidence"]["timestamp"] == _stamp(ATTEMPT / "1" / "error.json")
    assert any(i.endswith("error.json") for i in report["inputs"]) and any(i.endswith("log.txt")
                                                                            for i in report["inputs"])
    # torchrun's first observed failure is rank 1 too: no contradiction to report
    assert not [n for n in report["notes"] if "first observed failure" in n]


def test_older_record_run_error_files_in_ranks():
    """gen-dist-rank2-keyerror-record keeps its error files as ranks/rank<r>_error.json."""
    case = CORPUS / "generated" / "gen-dist-rank2-keyerror-record"
    report = diagnose_json(case / "ranks" / "rank2_error.json")
    assert report["root_cause"]["rank"] == 2
    assert report["root_cause"]["evidence"]["text"] == "KeyError: 'sample_02_00003'"
    assert report["root_cause"]["evidence"]["timestamp"] == _stamp(case / "ranks" / "rank2_error.json")


def test_launcher_contradiction_is_noted():
    """gpu-multi-fr-straggler: torchrun's summary names rank 0 (it exited first), the evidence rank 1."""
    report = diagnose_json(CORPUS / "gpu-multi" / "gpu-multi-fr-straggler" / "log.txt")
    assert report["root_cause"]["rank"] == 1
    notes = [n for n in report["notes"] if "first observed failure" in n]
    assert len(notes) == 1 and "is rank 0" in notes[0] and "names rank 1" in notes[0]


def test_an_error_file_that_is_not_one_is_a_one_line_error(tmp_path):
    bad = tmp_path / "error.json"
    bad.write_text('{"message": {"message": "KeyError')  # cut off mid-write
    env = {k: v for k, v in os.environ.items() if k != "DENPEX_DEBUG"}
    result = subprocess.run([sys.executable, "-m", "denpex", "diagnose", str(bad)], capture_output=True, text=True,
                            env=env, cwd=REPO, timeout=120, stdin=subprocess.DEVNULL)
    assert result.returncode == 2 and result.stderr.count("\n") == 1 and "error file" in result.stderr
