"""The command line as a user runs it: a subprocess, real corpus logs, documented exit codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

import denpex
from tests.conftest import CORPUS, REPO

GEN = CORPUS / "generated"
FAILURE_LOG = GEN / "gen-lowering-adaptive-maxpool-long" / "log.txt"
WARNING_LOG = GEN / "gen-recompile-limit-warning" / "log.txt"
CLEAN_LOG = GEN / "gen-neg-compile-benign-warnings" / "log.txt"
RANKS_DIR = GEN / "gen-dist-rank2-keyerror-logdir" / "ranks"


def run(*args: object, stdin: bytes | None = None, module: bool = True, columns: int = 120):
    exe = [sys.executable, "-m", "denpex"] if module else [str(Path(sys.executable).parent / "denpex")]
    env = {k: v for k, v in os.environ.items() if k != "DENPEX_DEBUG"}
    env["COLUMNS"] = str(columns)
    result = subprocess.run(
        [*exe, *(os.fspath(a) if isinstance(a, os.PathLike) else str(a) for a in args)],
        input=stdin,
        stdin=None if stdin is not None else subprocess.DEVNULL,
        capture_output=True,
        env=env,
        cwd=REPO,
        timeout=120,
    )
    return subprocess.CompletedProcess(
        result.args, result.returncode, result.stdout.decode("utf-8"), result.stderr.decode("utf-8")
    )


@pytest.fixture(scope="module")
def schema() -> dict:
    result = run("diagnose", "--print-schema")
    assert result.returncode == 0, result.stderr
    loaded = json.loads(result.stdout)
    jsonschema.Draft202012Validator.check_schema(loaded)
    return loaded


def diagnose_json(*args: str | os.PathLike[str], stdin: bytes | None = None) -> tuple[int, dict]:
    result = run("diagnose", "--format", "json", *args, stdin=stdin)
    assert result.returncode in (0, 1, 3), result.stderr
    assert "Traceback" not in result.stderr
    return result.returncode, json.loads(result.stdout)


# -- version, catalog, explain -------------------------------------------------------------------


def test_version():
    result = run("--version")
    assert result.returncode == 0
    assert result.stdout.strip() == f"denpex, version {denpex.__version__}"


def test_console_script_and_python_m_agree():
    script = Path(sys.executable).parent / "denpex"
    if not script.exists():
        pytest.skip("the denpex console script is not installed next to this Python")
    assert run("--version", module=False).stdout == run("--version").stdout


def test_help_lists_commands_and_exit_codes():
    result = run("--help")
    assert result.returncode == 0
    for word in ("diagnose", "explain", "catalog", "eval", "Exit codes"):
        assert word in result.stdout


def test_catalog_terminal():
    result = run("catalog")
    assert result.returncode == 0, result.stderr
    assert "catalog entries" in result.stdout
    assert "inductor-lowering-exception" in result.stdout


def test_catalog_json():
    result = run("catalog", "--format", "json")
    assert result.returncode == 0, result.stderr
    entries = json.loads(result.stdout)
    assert isinstance(entries, list) and len(entries) >= 10
    ids = [e["id"] for e in entries]
    assert len(ids) == len(set(ids))
    assert "inductor-lowering-exception" in ids
    for entry in entries:
        assert set(entry) >= {"id", "category", "layer", "role", "fatal", "title"}
        assert entry["role"] in {"cause", "symptom", "collateral", "wrapper", "warning", "context"}


def test_explain_known_entry():
    result = run("explain", "inductor-lowering-exception")
    assert result.returncode == 0, result.stderr
    assert "compile.lowering_error" in result.stdout
    markdown = run("explain", "inductor-lowering-exception", "--format", "markdown")
    assert markdown.returncode == 0
    assert markdown.stdout.startswith("# ")
    assert "`inductor-lowering-exception`" in markdown.stdout
    as_json = run("explain", "inductor-lowering-exception", "--format", "json")
    assert as_json.returncode == 0
    assert json.loads(as_json.stdout)["id"] == "inductor-lowering-exception"


def test_explain_unknown_entry_is_one_line_exit_2():
    result = run("explain", "no-such-entry-xyz")
    assert result.returncode == 2
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("denpex: error: no catalog entry 'no-such-entry-xyz'")


# -- diagnose ------------------------------------------------------------------------------------


def test_print_schema_is_a_valid_json_schema(schema):
    assert schema.get("type") == "object"
    assert {"verdict", "root_cause"} <= set(schema["properties"])


@pytest.mark.parametrize(
    ("log", "code", "verdict"),
    [(FAILURE_LOG, 1, "failure"), (WARNING_LOG, 3, "warning"), (CLEAN_LOG, 0, "clean")],
    ids=["failure", "warning", "clean"],
)
def test_json_report_validates_and_exit_code_matches_verdict(schema, log, code, verdict):
    returncode, report = diagnose_json(log)
    jsonschema.validate(report, schema, cls=jsonschema.Draft202012Validator)
    assert report["verdict"] == verdict
    assert returncode == code
    if verdict == "clean":
        assert report["root_cause"] is None
    else:
        evidence = report["root_cause"]["evidence"]
        assert evidence["file"] == os.fspath(log)
        lines = log.read_text().splitlines()
        assert lines[evidence["line"] - 1] == evidence["text"]  # 1-based, the line as it stands


def test_json_report_on_the_failure_names_the_lowering_error(schema):
    _, report = diagnose_json(FAILURE_LOG)
    assert report["root_cause"]["category"] == "compile.lowering_error"
    assert "adaptive_max_pool2d not implemented for Long" in report["root_cause"]["evidence"]["text"]


def test_json_report_on_a_directory_of_rank_logs(schema):
    returncode, report = diagnose_json(RANKS_DIR)
    jsonschema.validate(report, schema, cls=jsonschema.Draft202012Validator)
    assert returncode == 1
    root = report["root_cause"]
    assert root["rank"] == 2
    assert Path(root["evidence"]["file"]).name == "rank2_stderr.log"
    assert "KeyError: 'sample_02_00003'" in root["evidence"]["text"]


def test_stdin_gives_the_same_diagnosis_as_the_file(schema):
    _, from_file = diagnose_json(FAILURE_LOG)
    _, from_stdin = diagnose_json("-", stdin=FAILURE_LOG.read_bytes())
    jsonschema.validate(from_stdin, schema, cls=jsonschema.Draft202012Validator)
    assert from_stdin["root_cause"]["evidence"]["file"] == "<stdin>"
    for key in ("category", "id", "rank"):
        assert from_stdin["root_cause"][key] == from_file["root_cause"][key]
    assert from_stdin["root_cause"]["evidence"]["line"] == from_file["root_cause"]["evidence"]["line"]


def test_markdown_report():
    result = run("diagnose", "--format", "markdown", FAILURE_LOG)
    assert result.returncode == 1, result.stderr
    assert result.stdout.startswith("# denpex: failure")
    assert "inductor-lowering-exception" in result.stdout
    assert "adaptive_max_pool2d not implemented for Long" in result.stdout
    assert result.stdout.count("````") % 2 == 0  # fences are closed


def test_markdown_report_for_clean_and_warning():
    clean = run("diagnose", "--format", "markdown", CLEAN_LOG)
    assert clean.returncode == 0, clean.stderr
    assert clean.stdout.startswith("# denpex: clean")
    warning = run("diagnose", "--format", "markdown", WARNING_LOG)
    assert warning.returncode == 3, warning.stderr
    assert warning.stdout.startswith("# denpex: warning")


def test_terminal_report():
    result = run("diagnose", FAILURE_LOG)
    assert result.returncode == 1, result.stderr
    assert "FAILURE" in result.stdout
    assert "adaptive_max_pool2d" in result.stdout
    assert result.stderr == ""


def test_terminal_exit_codes_for_warning_and_clean():
    assert run("diagnose", WARNING_LOG).returncode == 3
    assert run("diagnose", CLEAN_LOG).returncode == 0


def test_workers_and_engine_options_give_the_same_report():
    # a user on a shared node limits the processes; the scanner choice never changes the diagnosis
    code, default = diagnose_json(RANKS_DIR)
    for args in (["--workers", "1"], ["--workers", "3", "--engine", "re2"], ["--engine", "python"],
                 ["--engine", "lines", "--workers", "2"]):
        again_code, again = diagnose_json(*args, RANKS_DIR)
        assert again_code == code == 1
        for key in ("verdict", "root_cause", "collateral"):
            assert again[key] == default[key], (args, key)
        # the fast path frames only the regions around findings: per-rank line counts differ (its note says so)
        assert [r["rank"] for r in again["ranks"]] == [r["rank"] for r in default["ranks"]] == [0, 1, 2, 3]
    bad = run("diagnose", "--workers", "0", RANKS_DIR)
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1 and "--workers" in bad.stderr


def test_python_m_denpex_diagnoses():
    result = run("diagnose", "--format", "json", FAILURE_LOG)
    assert result.returncode == 1
    assert json.loads(result.stdout)["verdict"] == "failure"


def test_output_into_a_closed_pipe_is_quiet():
    """`denpex diagnose log | head -1` when head has gone: no BrokenPipeError noise, no traceback."""
    for fmt in ("json", "markdown", "terminal", "html"):
        proc = subprocess.Popen(
            [sys.executable, "-m", "denpex", "diagnose", "--format", fmt, os.fspath(FAILURE_LOG)],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=REPO,
        )
        proc.stdout.close()  # the reader is gone before the report is written
        err = proc.stderr.read()
        proc.stderr.close()
        assert proc.wait(timeout=120) in (0, 1), err
        assert err == b"", err


def test_a_warm_run_does_not_import_pydantic(tmp_path):
    """Startup budget (issue 6): once the validated catalog is cached, diagnosing and printing a report
    needs no pydantic (its import alone is ~70 ms of the 0.3 s a pasted traceback may take)."""
    code = (
        "import sys\n"
        "from denpex.cli import main\n"
        "sys.argv = ['denpex', 'diagnose', '--example']\n"
        "try:\n"
        "    main()\n"
        "except SystemExit:\n"
        "    pass\n"
        "sys.stderr.write('PYDANTIC=%s' % ('pydantic' in sys.modules))\n"
    )
    env = {**os.environ, "DENPEX_CACHE_DIR": str(tmp_path)}
    cold = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert "PYDANTIC=True" in cold.stderr  # the first run validated the entry files
    warm = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert "PYDANTIC=False" in warm.stderr, warm.stderr
    assert "uncaught-user-exception" in warm.stdout
