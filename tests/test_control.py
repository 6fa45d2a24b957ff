"""`denpex run`, `denpex bisect` and `denpex verify` on real programs under real torch (CPU), nothing mocked.

Scenarios (runs shared through tests/control_lab.py):
  * CXX points nowhere: bisect says inductor owns it (eager, Dynamo, aot_eager pass); verify fails while CXX is
    broken and passes once it is unset;
  * a damaged Inductor cache (garbage written into a warm cache): bisect's fresh-cache control passes and the
    cache owns it; verify passes after the cache is cleared;
  * run: exit code passed through, the whole log kept, a finding flagged while the command still runs.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import threading
import time
from pathlib import Path

import pytest

from tests import control_lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> control_lab.Lab:
    shared = control_lab.lab(tmp_path_factory.getbasetemp())
    request.addfinalizer(shared.join)
    return shared


# -- usage --------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("args", [
    ("run",), ("run", "--"), ("bisect", "--"), ("verify", "--entry", "cxx-compiler-missing"),
    ("verify", "--entry", "no-such-entry", "--", "true"), ("run", "--no-such-option", "--", "true"),
])
def test_bad_usage_is_one_line_and_exit_2(lab: control_lab.Lab, args: tuple[str, ...]) -> None:
    done = lab.denpex(*args, env=lab.env())
    assert done.rc == 2, (done.out, done.err)
    lines = done.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("denpex: error:"), done.err


def test_help_documents_exit_codes(lab: control_lab.Lab) -> None:
    for command in ("run", "bisect", "verify", "doctor"):
        done = lab.denpex(command, "--help", env=lab.env())
        assert done.rc == 0 and "Exit codes" in done.out, command


def test_run_missing_program_exits_127(lab: control_lab.Lab) -> None:
    done = lab.denpex("run", "--", "/nonexistent/program", env=lab.env())
    assert done.rc == 127 and "denpex: error: /nonexistent/program: command not found" in done.err


# -- run ----------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("script", "timeout", "rc", "fields"), [
    ("echo loading; kill -9 $$", None, 137, {"signal": "SIGKILL", "exitcode": -9}),
    ("echo step 1; exit 3", None, 3, {"exitcode": 3}),
    ("echo waiting for peers; exec sleep 60", "2", 143, {"timed_out": True}),
])
def test_run_reports_a_failure_when_the_output_explains_nothing(
    lab: control_lab.Lab, tmp_path: Path, script: str, timeout: str | None, rc: int, fields: dict,
) -> None:
    # a command killed by a signal, stopped at --timeout, or exiting non-zero in silence is not `clean`
    report = tmp_path / "report.json"
    extra = ("--timeout", timeout) if timeout else ()
    done = lab.denpex("run", "--log", str(tmp_path / "run.log"), "--report-json", str(report), *extra, "--",
                      "bash", "-c", script, env=lab.env())
    assert done.rc == rc, (done.out, done.err)
    diagnosis = json.loads(report.read_text())
    assert diagnosis["verdict"] == "failure", diagnosis
    root = diagnosis["root_cause"]
    assert root["id"] == "command-failed-unexplained" and root["fields"] == fields
    assert root["evidence"]["text"] == script.split(";")[0].removeprefix("echo ")  # its last line of output
    assert "failure" in done.err and "command-failed-unexplained" in done.err


@pytest.mark.torch
def test_run_flags_live_passes_the_exit_code_and_keeps_the_log(lab: control_lab.Lab, tmp_path: Path) -> None:
    pytest.importorskip("torch")
    log = tmp_path / "early.log"
    sleep = 8.0
    proc = subprocess.Popen([control_lab.PY, "-m", "denpex", "run", "--log", str(log), "--",
                             control_lab.PY, str(lab.early), str(sleep)],
                            env=lab.env(), cwd=lab.root, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    seen: list[tuple[float, str]] = []

    def read_stderr() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            seen.append((time.monotonic(), line))

    reader = threading.Thread(target=read_stderr)
    reader.start()
    stdout = proc.stdout.read() if proc.stdout else ""
    rc = proc.wait(timeout=300)
    exited = time.monotonic()
    reader.join()
    assert rc == 3, "".join(line for _, line in seen)[-3000:]
    flag = next(((t, line) for t, line in seen if line.startswith("[denpex] cpu-alloc-failure")), None)
    assert flag is not None, "".join(line for _, line in seen)[-3000:]
    assert exited - flag[0] > sleep - 3, f"the flag came {exited - flag[0]:.1f}s before exit"
    # the command's stdout passed through untouched, its stderr too, and the log holds every line of both
    assert "step 2999 loss 0.2999" in stdout
    text = log.read_text()
    assert "DefaultCPUAllocator: can't allocate memory" in text
    assert all(f"step {i} loss" in text for i in (0, 1500, 2999))
    assert len(text.splitlines()) >= 3000 + 4
    meta = json.loads(Path(str(log) + ".json").read_text())
    assert meta["exit_code"] == 3 and meta["root_cause"]["id"] == "cpu-alloc-failure"
    assert meta["flags"][0]["entry_id"] == "cpu-alloc-failure"
    assert meta["ended"] - meta["flags"][0]["wall"] > sleep - 3
    assert "[denpex] exit code 3, failure" in "".join(line for _, line in seen)


# -- CXX points nowhere -------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def cxx_bisect(lab: control_lab.Lab) -> dict:
    pytest.importorskip("torch")
    lab.start_background()  # the damaged-cache scenario compiles meanwhile
    env = lab.env(lab.root / "cxx_cache", CXX="/nonexistent/g++")
    done = lab.denpex("bisect", "--format", "json", "--jobs", "2", "--", control_lab.PY, str(lab.small), env=env,
                      name="bisect (CXX, 2 at a time)")
    assert done.rc == 0, (done.out, done.err[-3000:])
    return done.json()


@pytest.mark.torch
def test_bisect_says_inductor_owns_a_missing_compiler(cxx_bisect: dict) -> None:
    controls = {c["name"]: c for c in cxx_bisect["controls"]}
    assert cxx_bisect["owner"] == "inductor", cxx_bisect["summary"]
    assert controls["baseline"]["status"] == "same" and controls["baseline"]["signature"] == "cxx-compiler-missing"
    assert "InvalidCxxCompiler" in controls["baseline"]["decisive_line"]
    assert controls["fresh-cache"]["status"] == "same"
    for name in ("eager", "dynamo", "aot_eager", "aot_eager_decomp_partition"):
        assert controls[name]["status"] == "pass", controls[name]
    for name in ("dynamo", "aot_eager", "aot_eager_decomp_partition"):  # the hook really switched the backend
        assert controls[name]["hook"]["compiles"] >= 1 and controls[name]["hook"]["requested"] == ["inductor"]
    steps = "\n".join(cxx_bisect["next_steps"])
    assert "TORCHDYNAMO_REPRO_AFTER=aot TORCHDYNAMO_REPRO_LEVEL=2" in steps
    assert "denpex doctor" in steps and "denpex verify --log" in steps


@pytest.mark.torch
def test_verify_fails_before_and_passes_after_fixing_cxx(lab: control_lab.Lab, cxx_bisect: dict) -> None:
    """Before the fix by catalog entry (its signatures are the "before"), after it by the old log."""
    broken = lab.env(lab.root / "cxx_cache", CXX="/nonexistent/g++")
    before = lab.denpex("verify", "--format", "json", "--entry", "cxx-compiler-missing", "--", control_lab.PY,
                        str(lab.small), env=broken, name="verify (CXX still broken)")
    data = before.json()
    assert before.rc == 1 and not data["verified"] and not data["signature_gone"], data
    assert data["before"]["source"] == "entry" and any("InvalidCxxCompiler" in q for q in data["before"]["quotes"])
    assert "InvalidCxxCompiler: No working C++ compiler" in data["after"][0]
    assert data["command_exit_code"] != 0
    old_log = next(c["log"] for c in cxx_bisect["controls"] if c["name"] == "baseline")
    fixed = lab.env(lab.warm_cache())  # CXX unset: torch uses g++ (the warm cache keeps this run short)
    after = lab.denpex("verify", "--format", "json", "--log", old_log, "--", control_lab.PY, str(lab.small),
                       env=fixed, name="verify (CXX fixed)")
    data = after.json()
    assert after.rc == 0 and data["verified"] and data["command_exit_code"] == 0, data
    assert data["before"]["entry"] == "cxx-compiler-missing" and data["before"]["where"].startswith(old_log)
    assert "InvalidCxxCompiler" in data["before"]["quotes"][0]
    assert data["after"][0].startswith("no cxx-compiler-missing finding")


# -- a damaged Inductor cache -------------------------------------------------------------------------------------
@pytest.mark.torch
def test_fresh_cache_control_owns_a_damaged_cache_and_verify_passes_after_clearing(lab: control_lab.Lab) -> None:
    pytest.importorskip("torch")
    cache, done = lab.damaged_bisect()  # `denpex bisect --format json -- python small.py`, run in background
    env = lab.env(cache)
    data = done.json()
    controls = {c["name"]: c for c in data["controls"]}
    assert done.rc == 0 and data["owner"] == "cache", (data["summary"], done.err[-3000:])
    assert controls["baseline"]["status"] == "same" and controls["baseline"]["exit_code"] != 0
    assert controls["fresh-cache"]["status"] == "pass" and controls["fresh-cache"]["exit_code"] == 0
    assert "eager" not in controls  # stopped once the owner was known
    assert any(step.startswith("clear the caches: rm -rf") for step in data["next_steps"])
    old_log = controls["baseline"]["log"]
    shutil.rmtree(cache)  # the fix: clear the cache
    after = lab.denpex("verify", "--format", "json", "--log", old_log, "--", control_lab.PY, str(lab.small),
                       env=env, name="verify (cache cleared)")
    verdict = after.json()
    assert after.rc == 0 and verdict["verified"], verdict
    assert verdict["before"]["quotes"] and verdict["before"]["where"].startswith(old_log)


def test_zz_report_timings(lab: control_lab.Lab) -> None:
    """Not a check: prints how long the expensive runs took (pytest -s shows it)."""
    for name, seconds in lab.timings.items():
        print(f"{name}: {seconds:.1f}s")


def test_run_logs_are_private_and_shared_folders_are_refused(lab: control_lab.Lab, tmp_path: Path) -> None:
    # issue 14, item 13: a run's log holds the job's output; it goes to a private folder, 0600
    env = lab.env()
    env.pop("DENPEX_RUNS_DIR", None)
    env["XDG_STATE_HOME"] = str(tmp_path / "state")
    done = lab.denpex("run", "-q", "--", "bash", "-c", "echo token=abc", env=env)
    assert done.rc == 0, done.err
    runs = tmp_path / "state" / "denpex" / "runs"
    (log,) = runs.glob("*.log")
    assert (runs.stat().st_mode & 0o777, log.stat().st_mode & 0o777) == (0o700, 0o600)
    assert (log.with_name(log.name + ".json").stat().st_mode & 0o777) == 0o600
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    env["DENPEX_RUNS_DIR"] = str(shared)
    refused = lab.denpex("run", "--", "true", env=env)
    assert refused.rc == 2 and "others can write to it" in refused.err and not list(shared.iterdir())
