"""The C/C++ compilers torch and Triton will use, found the way they find them, and whether they build an extension.

Inductor (torch/_inductor/cpp_builder.py, torch 2.13, non-Windows, non-fbcode):
    search = torch._inductor.config.cpp.cxx          # default (None, os.environ.get("CXX", "g++")), clang++ on macOS
    for cxx in search:
        None -> only with TORCH_INDUCTOR_INSTALL_GXX on Linux: <cache_dir>/gcc/bin/g++ (installed by conda)
        subprocess.check_output([cxx, "--version"]); the first that runs wins
        SubprocessError / FileNotFoundError -> next; any other error (PermissionError) propagates
    none -> InvalidCxxCompiler
So a CXX that is set but broken is *not* replaced by g++: torch raises InvalidCxxCompiler.
Triton (triton/runtime/build.py) builds its launcher with $CC, else gcc, else clang, including Python.h from the
interpreter's default sysconfig scheme.
"""

from __future__ import annotations

import os
import re
import sys
import tempfile
from collections.abc import Mapping
from typing import Any

from denpex.doctor.model import Check, DoctorReport, Problem
from denpex.doctor.tools import Ran, describe_missing, run, where

SECTION = "toolchain"

_CXX_SOURCE = """#include <Python.h>
#include <algorithm>
#include <vector>
extern "C" int denpex_probe() { std::vector<int> v{3, 1, 2}; std::sort(v.begin(), v.end()); return v[0]; }
"""
_C_SOURCE = """#include <Python.h>
int denpex_probe(void) { return PY_MAJOR_VERSION; }
"""
_OMP_SOURCE = """#include <omp.h>
extern "C" int denpex_probe() { return omp_get_max_threads(); }
"""
_MISSING_HEADER = re.compile(r"fatal error: (?P<header>[^:\s]+): No such file or directory")


def default_cxx_search(env: Mapping[str, str]) -> list[str | None]:
    """torch._inductor.config.cpp.cxx as torch computes it at import time."""
    return [None, env.get("CXX", "clang++" if sys.platform == "darwin" else "g++")]


def resolve_cxx(search: list[str | None], env: Mapping[str, str], inductor_cache: str) -> dict[str, Any]:
    """Mirror cpp_compiler_search: which candidate torch picks, and why each other one was skipped."""
    tried: list[dict[str, Any]] = []
    for cand in search:
        if cand is None:
            if not sys.platform.startswith("linux"):
                tried.append({"candidate": None, "skipped": "conda gcc is only tried on Linux"})
                continue
            if not env.get("TORCH_INDUCTOR_INSTALL_GXX"):
                tried.append({"candidate": None,
                              "skipped": "conda gcc download is off (TORCH_INDUCTOR_INSTALL_GXX unset)"})
                continue
            cand = os.path.join(inductor_cache, "gcc", "bin", "g++")
            if not os.path.exists(cand):
                tried.append({"candidate": cand,
                              "skipped": "not installed yet: torch would run `conda create ... gxx`"})
                continue
        ran = run([cand, "--version"])
        row: dict[str, Any] = {"candidate": cand, "path": where(cand)}
        if ran.not_executable:
            row["error"] = ran.error
            row["fatal"] = True  # torch does not catch PermissionError here: the compile dies with it
            tried.append(row)
            return {"chosen": None, "tried": tried, "fatal": row}
        if not ran.ok:
            row["error"] = ran.error or f"`{cand} --version` exited {ran.rc}"
            row["why"] = describe_missing(cand) if ran.not_found else row["error"]
            tried.append(row)
            continue
        row["version"] = ran.first_line
        tried.append(row)
        return {"chosen": cand, "path": where(cand), "version": ran.first_line, "tried": tried}
    return {"chosen": None, "tried": tried}


def _compile(compiler: str, source: str, lang: str, flags: list[str]) -> Ran:
    with tempfile.TemporaryDirectory(prefix="denpex-doctor-") as tmp:
        src = os.path.join(tmp, f"probe.{'cpp' if lang == 'c++' else 'c'}")
        with open(src, "w", encoding="utf-8") as handle:
            handle.write(source)
        out = os.path.join(tmp, "probe.so")
        return run([compiler, *flags, "-shared", "-fPIC", src, "-o", out], cwd=tmp)


def _first_error(output: str) -> str:
    for line in output.splitlines():
        if "error" in line.lower():
            return line.strip()
    return output.strip().splitlines()[0] if output.strip() else ""


def _working_alternative(exclude: str | None) -> str | None:
    for name in ("g++", "c++", "clang++"):
        path = where(name)
        if path and path != exclude and run([path, "--version"]).ok:
            return path
    return None


def probe_cxx(report: DoctorReport, env: Mapping[str, str], interp: dict[str, Any], inductor_cache: str) -> None:
    """`interp["inductor_cxx"]` is cpp.cxx evaluated from the installed torch's config.py in the job's env."""
    installed = interp.get("inductor_cxx") or {}
    from_torch = isinstance(installed.get("value"), list)
    search = installed["value"] if from_torch else default_cxx_search(env)
    result = resolve_cxx(search, env, inductor_cache)
    facts: dict[str, Any] = {"search": search, "CXX": env.get("CXX"), **result,
                             "search_from": installed.get("where", "torch's default (torch not found)")
                             if from_torch else f"torch's default ({installed.get('error', 'torch not found')})"}
    cxx_env = env.get("CXX")
    if result.get("fatal"):
        row = result["fatal"]
        report.add(Check(SECTION, "C++ compiler (Inductor)", "error", f"{row['candidate']}: {row['error']}", facts))
        report.problem(Problem(
            "cxx-compiler-missing", "error", "Inductor's C++ compiler cannot be run",
            f"torch runs `{row['candidate']} --version` and gets PermissionError, which it does not catch.",
            f"Make {row['candidate']} executable or point CXX at a working compiler.",
            evidence=f"{row['candidate']}: {row['error']}", path=row["candidate"]))
        return
    chosen = result.get("chosen")
    if chosen is None:
        reasons = "; ".join(r.get("why") or r.get("skipped") or r.get("error", "") for r in result["tried"])
        alt = _working_alternative(None)
        if cxx_env is not None:
            evidence = describe_missing(cxx_env, f"CXX={cxx_env}")
            detail = (f"CXX={cxx_env} is what torch._inductor.config.cpp.cxx holds ({search!r}); torch does not fall "
                      f"back to g++ when CXX is set, so every CPU compile raises InvalidCxxCompiler. {reasons}.")
            fix = (f"unset CXX (torch then uses g++{' = ' + alt if alt else ''}) or `export CXX={alt}`" if alt
                   else "install g++ (`apt-get install g++`) and point CXX at it")
        else:
            evidence = f"no C++ compiler runs: {reasons}"
            detail = f"torch._inductor.config.cpp.cxx = {search!r}; none of them runs."
            fix = "install g++ (`apt-get install g++`) or set CXX to a working compiler"
        if from_torch and search != default_cxx_search(env):
            detail += f" The installed torch computes it as {installed.get('expr')} ({installed.get('where')})."
        report.add(Check(SECTION, "C++ compiler (Inductor)", "error", evidence, facts))
        report.problem(Problem("cxx-compiler-missing", "error", "No working C++ compiler for Inductor", detail, fix,
                               evidence=evidence, path=cxx_env))
        return
    report.add(Check(SECTION, "C++ compiler (Inductor)", "ok", f"{chosen} ({result.get('version', '')})", facts))
    _extension_build(report, chosen, interp)


def _extension_build(report: DoctorReport, cxx: str, interp: dict[str, Any]) -> None:
    include = (interp.get("include") or {}).get("torch")
    if not include:
        report.add(Check(SECTION, "C++ extension build", "skipped", "the interpreter's include dir is unknown"))
        return
    ran = _compile(cxx, _CXX_SOURCE, "c++", ["-std=c++17", "-I", include])
    facts = {"compiler": cxx, "include": include, "python_h": (interp.get("python_h") or {}).get("torch"),
             "output": ran.output[-2000:]}
    if ran.ok:
        report.add(Check(SECTION, "C++ extension build", "ok",
                         f"{cxx} builds a shared library that includes {include}/Python.h", facts))
    else:
        missing = _MISSING_HEADER.search(ran.output)
        line = _first_error(ran.output) or ran.error
        if missing and missing.group("header") == "Python.h":
            report.add(Check(SECTION, "C++ extension build", "error", f"Python.h missing in {include}", facts))
            report.problem(Problem(
                "python-h-missing", "error", "Python development headers (Python.h) are missing",
                f"Inductor compiles its C++ kernels against {include}/Python.h, which does not exist.",
                f"install the headers of Python {interp.get('python', '')} (Debian/Ubuntu: "
                f"`apt-get install python{'.'.join(str(interp.get('python', '3')).split('.')[:2])}-dev`)",
                evidence=line, path=os.path.join(include, "Python.h")))
        else:
            report.add(Check(SECTION, "C++ extension build", "error", line, facts))
            report.problem(Problem(
                "cpp-compile-error", "error", "The C++ compiler cannot build a trivial Python extension",
                f"`{cxx} -shared -fPIC` on a 3-line file that includes Python.h and <algorithm> failed, so every "
                "Inductor CPU kernel will fail the same way.",
                "repair the compiler installation (Debian/Ubuntu: `apt-get install --reinstall g++ libstdc++-dev`)"
                " or point CXX at another compiler",
                evidence=line))
        return
    if sys.platform.startswith("linux"):
        omp = _compile(cxx, _OMP_SOURCE, "c++", ["-fopenmp"])
        if omp.ok:
            report.add(Check(SECTION, "OpenMP", "ok", f"{cxx} -fopenmp works (Inductor's CPU kernels use it)"))
        else:
            line = _first_error(omp.output) or omp.error
            report.add(Check(SECTION, "OpenMP", "warning", line, {"output": omp.output[-2000:]}))
            report.problem(Problem(
                "cpp-compile-error", "warning", "The C++ compiler cannot build with -fopenmp",
                "Inductor builds CPU kernels with -fopenmp; this compiler lacks OpenMP (libgomp/libomp).",
                "install the compiler's OpenMP runtime (gcc: libgomp1; clang: libomp-dev)", evidence=line))


def probe_cc(report: DoctorReport, env: Mapping[str, str], interp: dict[str, Any]) -> None:
    """Triton's C compiler: $CC, else gcc, else clang. It matters only where Triton builds its launcher."""
    cc_env = env.get("CC")
    cc = cc_env or where("gcc") or where("clang")
    triton_installed = any(name in (interp.get("dists") or {}) for name in
                           ("triton", "pytorch-triton", "pytorch-triton-rocm", "pytorch-triton-xpu", "triton-xpu"))
    facts: dict[str, Any] = {"CC": cc_env, "chosen": cc, "triton_installed": triton_installed}
    if cc is None:
        status = "error" if triton_installed else "info"
        report.add(Check(SECTION, "C compiler (Triton)", status, "no $CC, gcc or clang", facts))
        if triton_installed:
            report.problem(Problem(
                "cxx-compiler-missing", "error", "No C compiler for Triton's launcher",
                "Triton compiles a small C launcher per kernel with $CC, else gcc, else clang; none exists "
                "(Triton raises 'Failed to find C compiler').", "install gcc or set CC",
                evidence="no $CC, gcc or clang"))
        return
    ran = run([cc, "--version"])
    facts["version"] = ran.first_line
    if not ran.ok:
        why = describe_missing(cc) if ran.not_found else (ran.error or f"exited {ran.rc}")
        status = "error" if triton_installed else "warning"
        report.add(Check(SECTION, "C compiler (Triton)", status, f"CC={cc}: {why}", facts))
        if triton_installed:
            report.problem(Problem(
                "cxx-compiler-missing", "error", "Triton's C compiler (CC) does not run",
                f"Triton builds its kernel launcher with CC={cc}, which does not run: {why}.",
                "unset CC or point it at gcc/clang", evidence=f"CC={cc}: {why}", path=cc))
        return
    if not triton_installed:
        report.add(Check(SECTION, "C compiler (Triton)", "info", f"{cc} ({ran.first_line}); Triton not installed",
                         facts))
        return
    include = (interp.get("include") or {}).get("triton")
    built = _compile(cc, _C_SOURCE, "c", ["-I", include]) if include else None
    if built is not None and not built.ok:
        line = _first_error(built.output) or built.error
        report.add(Check(SECTION, "C compiler (Triton)", "error", line, {**facts, "output": built.output[-2000:]}))
        entry = "python-h-missing" if "Python.h" in line else "cpp-compile-error"
        report.problem(Problem(entry, "error", "Triton's C compiler cannot build its launcher",
                               f"`{cc}` cannot build a C file that includes {include}/Python.h.",
                               "install the Python headers (python3-dev) or fix CC", evidence=line))
        return
    report.add(Check(SECTION, "C compiler (Triton)", "ok", f"{cc} ({ran.first_line}) builds a launcher-like library",
                     facts))


def probe_ninja(report: DoctorReport) -> None:
    path = where("ninja")
    if path is None:
        report.add(Check(SECTION, "ninja", "info",
                         "not installed (only torch.utils.cpp_extension builds need it; Inductor does not)"))
        return
    ran = run([path, "--version"])
    report.add(Check(SECTION, "ninja", "ok" if ran.ok else "warning",
                     f"{path} {ran.first_line}" if ran.ok else f"{path}: {ran.error or 'exited ' + str(ran.rc)}"))
