"""End-to-end checks against REAL PyTorch output (torch 2.13, CPU, Inductor C++ backend). Nothing is mocked.

Each scenario script under tests/scenarios/ runs in a subprocess with stdout and stderr on one pipe (what
a user sees in a terminal or a job log), the output is saved to a log file, and denpex diagnoses that file
through its CLI (JSON report and exit code) and its Python API. Every failure scenario also has a "fixed"
run (the same script with the fix applied) that denpex must call clean.

Each scenario runs once per session (the `lab` fixture caches runs). Every run gets its own empty
TORCHINDUCTOR_CACHE_DIR, so the user's default Inductor cache is neither used nor touched.

Set DENPEX_WRITE_FIXTURES=1 to copy every captured log to tests/fixtures/real_torch/<scenario>.log.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

pytest.importorskip("torch")

import denpex
from tests.denpex_report import Report  # noqa: E402

pytestmark = pytest.mark.torch

HERE = Path(__file__).resolve().parent
SCENARIOS = HERE / "scenarios"
FIXTURES = HERE / "fixtures" / "real_torch"
WRITE_FIXTURES = os.environ.get("DENPEX_WRITE_FIXTURES") == "1"
RUN_TIMEOUT = 300
EXIT_CODES = {"clean": 0, "failure": 1, "warning": 3}

# Variables that change what torch prints or compiles with; scenarios set the ones they need.
_SCRUB = ("CXX", "CC", "TORCH_LOGS", "TORCH_COMPILE_DEBUG", "PYTHONWARNINGS")
_SCRUB_PREFIXES = ("TORCHDYNAMO_", "TORCHINDUCTOR_", "TORCH_COMPILE_")


@dataclass
class Run:
    """One real run of a scenario script."""

    name: str
    rc: int
    log: Path
    text: str
    seconds: float
    cache_dir: Path


def _base_env(cache_dir: Path, extra: dict[str, str] | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _SCRUB and not k.startswith(_SCRUB_PREFIXES)}
    env["PYTHONUNBUFFERED"] = "1"  # interleave stdout and stderr as a terminal would show them
    env["TORCHINDUCTOR_CACHE_DIR"] = str(cache_dir)
    # compile in the process itself: a pool of compile workers (each imports torch) costs ~7 CPU-s per run on
    # this 2-core machine and changes nothing these scenarios print (tests/test_catalog_fixes.py's failing runs
    # keep torch's default pool)
    env["TORCHINDUCTOR_COMPILE_THREADS"] = "1"
    env.update(extra or {})
    return env


class Lab:
    """Runs scenario scripts (each name once per session) and diagnoses their logs."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.runs: dict[str, Run] = {}
        self.reports: dict[str, Report] = {}

    def run(
        self,
        name: str,
        script: str,
        *args: str,
        env: dict[str, str] | None = None,
        cache_dir: Path | None = None,
        prepare=None,
    ) -> Run:
        if name in self.runs:
            return self.runs[name]
        job = self.root / name
        job.mkdir(parents=True, exist_ok=True)
        cache = cache_dir or job / "inductor_cache"
        if prepare is not None:
            prepare(cache)
        t0 = time.monotonic()
        proc = subprocess.run(
            [sys.executable, str(SCENARIOS / script), *args],
            env=_base_env(cache, env),
            cwd=job,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            timeout=RUN_TIMEOUT,
        )
        seconds = time.monotonic() - t0
        log = job / f"{name}.log"
        log.write_bytes(proc.stdout)
        if WRITE_FIXTURES:
            FIXTURES.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(log, FIXTURES / f"{name}.log")
        run = Run(name, proc.returncode, log, proc.stdout.decode("utf-8", "replace"), seconds, cache)
        self.runs[name] = run
        return run

    def warm_cache(self) -> Path:
        """A cache dir shared by the scenarios that do not test the cache itself, as a user's default
        Inductor cache is. Seeded from the healthy compile, so the vec-ISA probe binaries are built once."""
        warm = self.root / "warm_inductor_cache"
        if not warm.exists():
            seed = _healthy_compile(self)
            _ran(seed, ok=True)
            shutil.copytree(seed.cache_dir, warm)
        return warm

    def diagnose(self, run: Run) -> Report:
        if run.name in self.reports:
            return self.reports[run.name]
        proc = subprocess.run(
            [sys.executable, "-m", "denpex", "diagnose", "--format", "json", str(run.log)],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert proc.returncode in (0, 1, 3), f"denpex failed on {run.log}: rc={proc.returncode}\n{proc.stderr}"
        report = Report(proc.returncode, json.loads(proc.stdout), denpex.diagnose(run.log))
        _check_report_consistency(run, report)
        self.reports[run.name] = report
        return report


def _check_report_consistency(run: Run, report: Report) -> None:
    """What holds for every report: exit code, API and CLI agree, and the evidence is a real log line."""
    assert report.rc == EXIT_CODES[report.verdict], report.summary()
    api = report.api
    assert api.verdict.value == report.verdict, report.summary()
    api_category = api.root_cause.category if api.root_cause else None
    assert api_category == report.category, report.summary()
    if report.root:
        ev = report.root["evidence"]
        lines = run.log.read_text(encoding="utf-8", errors="replace").splitlines()
        assert 1 <= ev["line"] <= len(lines), report.summary()
        assert lines[ev["line"] - 1].rstrip() == ev["text"].rstrip(), (
            f"evidence line {ev['line']} is not the quoted text: {lines[ev['line'] - 1]!r} vs {ev['text']!r}"
        )


@pytest.fixture(scope="session")
def lab(tmp_path_factory) -> Lab:
    return Lab(tmp_path_factory.mktemp("real_torch"))


def _ran(run: Run, *, ok: bool) -> None:
    """The scenario itself behaved as intended (else the denpex assertions would test nothing)."""
    tail = "\n".join(run.text.splitlines()[-30:])
    if ok:
        assert run.rc == 0 and run.text.rstrip().endswith("done"), f"{run.name}: rc={run.rc}\n{tail}"
    else:
        assert run.rc != 0 and not run.text.rstrip().endswith("done"), f"{run.name}: rc={run.rc}\n{tail}"


def _assert_root(report: Report, *, verdict: str, category: str, evidence: str) -> None:
    assert report.verdict == verdict, report.summary()
    assert report.category == category, report.summary()
    assert re.search(evidence, report.evidence_text), report.summary()


def _assert_clean(report: Report, gone: str) -> None:
    assert report.verdict == "clean", report.summary()
    assert report.rc == 0
    assert gone not in report.categories(), report.summary()


# ---------------------------------------------------------------------------------------------------------
# 1. C++ toolchain: torch 2.13 reads $CXX into torch._inductor.config.cpp.cxx at import time.


BAD_CXX = "/nonexistent/g++"


def _bad_cxx_env(lab: Lab) -> Run:
    return lab.run("cxx-missing-env", "compile_mlp.py", env={"CXX": BAD_CXX})


def _bad_cxx_config(lab: Lab) -> Run:
    return lab.run("cxx-missing-config", "compile_mlp.py", "--cxx", BAD_CXX)


def _healthy_compile(lab: Lab) -> Run:
    """The fix for both: no CXX override, g++ from PATH. Its cache dir seeds the corruption scenarios."""
    if shutil.which("g++") is None:
        pytest.skip("no g++ on PATH: Inductor cannot compile CPU kernels here")
    return lab.run("cxx-fixed", "compile_mlp.py")


def test_bad_cxx_env_var_is_toolchain_missing(lab: Lab) -> None:
    run = _bad_cxx_env(lab)
    _ran(run, ok=False)
    assert f"No working C++ compiler found in torch._inductor.config.cpp.cxx: (None, '{BAD_CXX}')" in run.text
    report = lab.diagnose(run)
    _assert_root(
        report,
        verdict="failure",
        category="compile.cpp_toolchain_missing",
        evidence=r"InvalidCxxCompiler: No working C\+\+ compiler found",
    )
    assert report.root["id"] == "cxx-compiler-missing"


def test_bad_cxx_inductor_config_is_toolchain_missing(lab: Lab) -> None:
    run = _bad_cxx_config(lab)
    _ran(run, ok=False)
    assert BAD_CXX in run.text
    _assert_root(
        lab.diagnose(run),
        verdict="failure",
        category="compile.cpp_toolchain_missing",
        evidence=r"InvalidCxxCompiler: No working C\+\+ compiler found",
    )


def test_cxx_fix_is_clean(lab: Lab) -> None:
    run = _healthy_compile(lab)
    _ran(run, ok=True)
    assert "InvalidCxxCompiler" not in run.text
    _assert_clean(lab.diagnose(run), "compile.cpp_toolchain_missing")


# ---------------------------------------------------------------------------------------------------------
# 2. Corrupt Inductor cache: copy the healthy run's cache, damage the copy, rerun in a new process.


def _damaged_cache_run(lab: Lab, name: str, damage) -> Run:
    seed = _healthy_compile(lab)
    _ran(seed, ok=True)

    def prepare(cache: Path) -> None:
        shutil.rmtree(cache, ignore_errors=True)
        shutil.copytree(seed.cache_dir, cache)
        assert damage(cache) > 0, f"{name}: nothing to damage in {cache}"

    return lab.run(name, "compile_mlp.py", prepare=prepare)


def _truncate_kernel_so(cache: Path) -> int:
    hits = sorted(cache.glob("*/*.main.so"))
    for f in hits:
        f.write_bytes(b"")  # a job killed while writing the compiled kernel
    return len(hits)


def _halve_output_code(cache: Path) -> int:
    hits = sorted(cache.glob("*/*.py"))
    for f in hits:
        data = f.read_text()
        f.write_text(data[: len(data) // 2])  # a half-written output-code module
    return len(hits)


def test_truncated_kernel_so_is_cache_corruption(lab: Lab) -> None:
    run = _damaged_cache_run(lab, "cache-truncated-kernel-so", _truncate_kernel_so)
    _ran(run, ok=False)
    assert "file too short" in run.text
    report = lab.diagnose(run)
    _assert_root(report, verdict="failure", category="compile.cache_corruption", evidence=r"\.so: file too short")
    damaged = Path(str(report.root["fields"].get("path")))
    assert damaged.name.endswith(".main.so") and damaged.parent.parent == run.cache_dir, report.root["fields"]


def test_half_written_output_code_is_cache_corruption(lab: Lab) -> None:
    run = _damaged_cache_run(lab, "cache-halved-output-py", _halve_output_code)
    _ran(run, ok=False)
    assert "SyntaxError" in run.text
    _assert_root(
        lab.diagnose(run),
        verdict="failure",
        category="compile.cache_corruption",
        evidence=r"SyntaxError|Failed to import \S+\.py",
    )


def test_cache_fix_fresh_dir_is_clean(lab: Lab) -> None:
    damaged = _damaged_cache_run(lab, "cache-truncated-kernel-so", _truncate_kernel_so)
    # the fix: throw the damaged cache away and run again with the same (now empty) cache dir
    run = lab.run(
        "cache-fixed-fresh-dir",
        "compile_mlp.py",
        cache_dir=damaged.cache_dir,
        prepare=lambda cache: shutil.rmtree(cache, ignore_errors=True),
    )
    _ran(run, ok=True)
    _assert_clean(lab.diagnose(run), "compile.cache_corruption")


# ---------------------------------------------------------------------------------------------------------
# 3. Data-dependent control flow. In 2.13, fullgraph=True turns on capture_scalar_outputs, so a bare
#    .item() compiles; what fails is Python control flow on the traced value.


def test_fullgraph_tensor_branch_is_data_dependent_break(lab: Lab) -> None:
    run = lab.run("dynamo-fullgraph-data-branch", "data_dependent.py", "branch", cache_dir=lab.warm_cache())
    _ran(run, ok=False)
    _assert_root(
        lab.diagnose(run),
        verdict="failure",
        category="compile.graph_break_data_dependent",
        evidence=r"Data-dependent branching",
    )


def test_fullgraph_item_guard_is_data_dependent_break(lab: Lab) -> None:
    run = lab.run("dynamo-fullgraph-item-guard", "data_dependent.py", "item-guard", cache_dir=lab.warm_cache())
    _ran(run, ok=False)
    _assert_root(
        lab.diagnose(run),
        verdict="failure",
        category="compile.graph_break_data_dependent",
        evidence=r"Could not guard on data-dependent expression",
    )


def test_item_graph_break_without_fullgraph_is_warning(lab: Lab) -> None:
    run = lab.run(
        "dynamo-item-graph-break-nonfatal",
        "data_dependent.py",
        "item-break",
        env={"TORCH_LOGS": "graph_breaks"},
        cache_dir=lab.warm_cache(),
    )
    _ran(run, ok=True)
    assert "Unsupported Tensor.item() call with capture_scalar_outputs=False" in run.text
    _assert_root(
        lab.diagnose(run),
        verdict="warning",
        category="compile.graph_break_data_dependent",
        evidence=r"Tensor\.item\(\)",
    )


def test_data_dependent_fix_torch_where_is_clean(lab: Lab) -> None:
    run = lab.run("dynamo-fullgraph-where-fixed", "data_dependent.py", "fixed", cache_dir=lab.warm_cache())
    _ran(run, ok=True)
    _assert_clean(lab.diagnose(run), "compile.graph_break_data_dependent")


# ---------------------------------------------------------------------------------------------------------
# 4. Recompile limit: a new sequence length on every call with dynamic=False.


def test_recompile_limit_default_is_warning(lab: Lab) -> None:
    # torch's default limit (8), no TORCH_LOGS: only the one W-line block tells
    run = lab.run("recompile-limit-warning", "recompile.py", cache_dir=lab.warm_cache())
    _ran(run, ok=True)
    assert "torch._dynamo hit config.recompile_limit (8)" in run.text
    report = lab.diagnose(run)
    _assert_root(
        report, verdict="warning", category="compile.recompile_limit", evidence=r"hit config\.recompile_limit \(8\)"
    )
    assert str(report.root["fields"].get("limit")) == "8", report.root["fields"]


def test_recompile_limit_fail_on_hit_is_failure(lab: Lab) -> None:
    run = lab.run(
        "recompile-limit-fatal",
        "recompile.py",
        "--limit",
        "3",
        "--fail",
        env={"TORCH_LOGS": "recompiles"},
        cache_dir=lab.warm_cache(),
    )
    _ran(run, ok=False)
    assert "FailOnRecompileLimitHit" in run.text
    report = lab.diagnose(run)
    _assert_root(
        report, verdict="failure", category="compile.recompile_limit", evidence=r"recompile_limit|[Rr]ecompile limit"
    )
    if "limit" in report.root["fields"]:
        assert str(report.root["fields"]["limit"]) == "3", report.root["fields"]


def test_recompile_fix_dynamic_shapes_is_clean(lab: Lab) -> None:
    run = lab.run("recompile-fixed-dynamic", "recompile.py", "--dynamic", cache_dir=lab.warm_cache())
    _ran(run, ok=True)
    assert "recompile_limit" not in run.text
    _assert_clean(lab.diagnose(run), "compile.recompile_limit")


# ---------------------------------------------------------------------------------------------------------
# 5. A healthy compiled run with genuine, harmless torch warnings.


def test_healthy_compile_with_benign_warnings_is_clean(lab: Lab) -> None:
    run = lab.run("healthy-benign-warnings", "healthy_warnings.py", cache_dir=lab.warm_cache())
    _ran(run, ok=True)
    assert run.text.count("UserWarning") >= 3
    report = lab.diagnose(run)
    assert report.verdict == "clean", report.summary()
    assert report.data["findings"] == [] or all(f["role"] == "context" for f in report.data["findings"]), (
        report.summary()
    )


def test_captured_logs_are_small(lab: Lab) -> None:
    """The logs double as catalog fixtures (tests/fixtures/real_torch): keep each under 200 KB."""
    if not lab.runs:
        pytest.skip("no scenario ran in this session")
    for run in lab.runs.values():
        assert run.log.stat().st_size < 200_000, run.name
