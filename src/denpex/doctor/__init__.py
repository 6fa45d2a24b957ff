"""`denpex doctor`: an offline probe of the machine a PyTorch 2 job compiles on.

It looks at what torch.compile depends on outside the job's code: the C/C++ compilers Inductor and Triton pick,
whether they build a Python extension, torch/Triton/CUDA versions and pins, the driver and the GPU's arch, the
Inductor and Triton cache dirs (resolved as torch resolves them), and the environment variables that change
compilation. Each problem names the catalog entry it explains and a fix for this machine.

Nothing leaves the machine. Facts about the job's interpreter come from two short subprocesses of that
interpreter (`--python`): one reads metadata without importing torch, one imports torch (skipped with
`import_torch=False`), so a broken torch or a hung CUDA init cannot take the probe down with it.

`fold(diagnosis, report)` is how `denpex diagnose --doctor` uses it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from importlib import resources
from typing import Any

from denpex.doctor import caches, envvars, gpu, toolchain, versions
from denpex.doctor.model import Check, DoctorReport, Problem
from denpex.errors import DenpexInputError

__all__ = ["Check", "DoctorReport", "Problem", "fold", "probe"]

INTERP_TIMEOUT = 30.0
TORCH_TIMEOUT = 120.0
_MARK = "DENPEX_PROBE_JSON:"
_ORDER = ("python", "torch", "toolchain", "gpu", "cache", "env")


def _script() -> str:
    return (resources.files("denpex.doctor") / "_probe_script.py").read_text(encoding="utf-8")


def run_script(python: str, what: str, env: Mapping[str, str], timeout: float) -> dict[str, Any]:
    """Run the probe script in the job's interpreter; {"error": ...} when it cannot say."""
    start = time.perf_counter()
    try:
        done = subprocess.run([python, "-c", _script(), what], capture_output=True, text=True, errors="replace",
                              timeout=timeout, env=dict(env), stdin=subprocess.DEVNULL)
    except FileNotFoundError:
        return {"error": f"{python}: not found"}
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout:.0f}s", "timed_out": True}
    except OSError as exc:
        return {"error": f"{python}: {exc}"}
    for line in reversed(done.stdout.splitlines()):
        if line.startswith(_MARK):
            try:
                facts = json.loads(line[len(_MARK):])
            except ValueError:
                break
            facts.setdefault("probe_s", round(time.perf_counter() - start, 3))
            return facts
    tail = (done.stderr or done.stdout).strip().splitlines()
    return {"error": tail[-1] if tail else f"exited {done.returncode} without an answer"}


def _part(fn: Callable[..., Any], *args: Any) -> DoctorReport:
    part = DoctorReport()
    try:
        fn(part, *args)
    except Exception as exc:  # noqa: BLE001 - one broken probe must not hide the others
        part.add(Check(getattr(fn, "__module__", "probe").rsplit(".", 1)[-1], "probe", "warning",
                       f"this check failed inside denpex: {type(exc).__name__}: {exc}"))
    return part


def _python_part(report: DoctorReport, interp: dict[str, Any]) -> None:
    if interp.get("error"):
        report.add(Check("python", "interpreter", "error", f"cannot probe the interpreter: {interp['error']}"))
        return
    ph = interp.get("python_h") or {}
    inc = (interp.get("include") or {}).get("torch", "?")
    report.add(Check("python", "interpreter", "ok", f"Python {interp.get('python')} at {interp.get('executable')}",
                     {k: interp.get(k) for k in ("python", "executable", "platform")}))
    report.add(Check("python", "Python.h", "ok" if ph.get("torch") else "warning",
                     f"{inc}/Python.h {'present' if ph.get('torch') else 'missing'}",
                     {"include": interp.get("include"), "present": ph}))


def _toolchain_part(report: DoctorReport, env: Mapping[str, str], interp: dict[str, Any], inductor: str) -> None:
    toolchain.probe_cxx(report, env, interp, inductor)
    toolchain.probe_cc(report, env, interp)
    toolchain.probe_ninja(report)


def probe(env: Mapping[str, str] | None = None, python: str | None = None, *, import_torch: bool = True,
          deep: bool = False) -> DoctorReport:
    """Probe this machine for the job that runs `python` (default: this interpreter) with `env`."""
    env = os.environ if env is None else env
    python = python or sys.executable
    if os.sep in python and not os.path.exists(python):
        raise DenpexInputError(f"--python {python}: no such file")
    start = time.perf_counter()
    budget = None if deep else caches.SCAN_BUDGET_S
    inductor = caches.inductor_dir(env)
    parts: dict[str, DoctorReport] = {}
    with ThreadPoolExecutor(max_workers=4) as pool:
        f_interp = pool.submit(run_script, python, "interp", env, INTERP_TIMEOUT)
        f_torch = pool.submit(run_script, python, "torch", env, TORCH_TIMEOUT) if import_torch else None
        f_cache = pool.submit(_part, caches.probe, env, None, budget)
        parts["env"] = _part(envvars.probe, env)
        interp = f_interp.result()
        if str(interp.get("error", "")).endswith(": not found"):
            raise DenpexInputError(f"--python {python}: not found")
        installed = "torch" in (interp.get("dists") or {}) or bool(interp.get("torch_version"))
        f_tool = pool.submit(_part, _toolchain_part, env, interp, inductor)
        parts["python"] = _part(_python_part, interp)
        torch = f_torch.result() if f_torch is not None and installed else None
        if torch is not None and torch.get("error") and "No module named 'torch'" in torch["error"]:
            torch = None
        parts["toolchain"] = f_tool.result()
        parts["torch"] = _part(versions.probe, interp, torch)
        parts["gpu"] = _part(gpu.probe, env, interp, torch)
        parts["cache"] = f_cache.result()
    report = DoctorReport(python=python)
    for name in _ORDER:
        part = parts.get(name)
        if part is None:
            continue
        report.checks.extend(part.checks)
        report.problems.extend(part.problems)
        report.notes.extend(part.notes)
        if part.torch_installed is not None:
            report.torch_installed = part.torch_installed
    if report.torch_installed is None:
        report.torch_installed = installed
    if not import_torch:
        report.notes.append("torch was not imported (--no-import): whether it imports and its CUDA arch list "
                            "were not checked")
    elif torch and torch.get("timed_out"):
        report.notes.append(f"importing torch took longer than {TORCH_TIMEOUT:.0f}s: torch-side facts are missing")
    elif torch and torch.get("error"):
        report.notes.append(f"importing torch failed: {torch['error']}")
    report.elapsed_s = time.perf_counter() - start
    return report


def fold(diagnosis: Any, report: DoctorReport) -> list[str]:
    """Add what the doctor saw to a log's diagnosis (denpex.model.Diagnosis): a confirmation on the root cause
    when a doctor problem explains the same catalog entry, a note for every other problem. Returns the notes."""
    from denpex.catalog import load

    catalog = load()
    notes: list[str] = []
    root = diagnosis.root_cause
    used: set[int] = set()
    if root is not None:
        same = [p for p in report.problems if p.entry_id == root.entry_id]
        root_entry = catalog.get(root.entry_id)
        related = [p for p in report.problems if p not in same and root_entry is not None
                   and (catalog.get(p.entry_id) or root_entry).category == root_entry.category]
        for p in same:
            used.add(id(p))
            text = f"doctor confirms: {p.evidence or p.title}"
            root.reason = f"{root.reason}; {text}" if root.reason else text
            root.fields.setdefault("doctor", p.evidence or p.title)
            notes.append(f"{text} [{p.entry_id}]; fix: {p.fix}")
        for p in related:
            used.add(id(p))
            notes.append(f"doctor found a related problem [{p.entry_id}]: {p.evidence or p.title}; fix: {p.fix}")
        if root_entry is not None and not same and not related and root_entry.layer in ("cpp_toolchain", "cache"):
            notes.append(f"doctor found nothing on this machine that explains {root.entry_id}: the log may come "
                         "from another machine or an environment that has since changed")
    for p in report.problems:
        if id(p) not in used:
            notes.append(f"doctor: {p.title} [{p.entry_id}]: {p.evidence or p.detail}")
    diagnosis.notes.extend(notes)
    return notes
