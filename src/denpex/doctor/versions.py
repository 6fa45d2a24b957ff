"""torch, Triton and CUDA versions: which Triton this torch pins, and whether the one installed is it."""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

from denpex.doctor.model import Check, DoctorReport, Problem

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

SECTION = "torch"
TRITON_DISTS = ("triton", "pytorch-triton", "pytorch-triton-rocm", "pytorch-triton-xpu", "triton-xpu")
_PIN = re.compile(r"^(?P<name>[A-Za-z0-9_.\-]+)\s*\(?\s*==\s*(?P<version>[^\s;,)]+)")


@dataclass(frozen=True, slots=True)
class Pair:
    torch: str
    triton: str
    verified: str
    source: str


@lru_cache(maxsize=1)
def table() -> tuple[Pair, ...]:
    text = (resources.files("denpex.doctor") / "triton_pairs.toml").read_text(encoding="utf-8")
    return tuple(Pair(**row) for row in tomllib.loads(text)["release"])


def base_version(version: str) -> tuple[int, ...]:
    """'2.13.0+cpu' -> (2, 13, 0); '3.4.0+git1234' -> (3, 4, 0); '2.14.0a0' -> (2, 14, 0)."""
    nums = re.match(r"^(\d+(?:\.\d+)*)", version.strip())
    return tuple(int(x) for x in nums.group(1).split(".")) if nums else ()


def is_prerelease(version: str) -> bool:
    return bool(re.search(r"(a|b|rc|dev)\d*", version.split("+")[0]))


def pinned_by_table(torch_version: str) -> Pair | None:
    """The most specific row: '2.7.1' beats '2.7' for torch 2.7.1."""
    have = base_version(torch_version)
    best: Pair | None = None
    for pair in table():
        want = base_version(pair.torch)
        if have[: len(want)] == want and (best is None or len(want) > len(base_version(best.torch))):
            best = pair
    return best


def pinned_by_metadata(requires: list[str]) -> tuple[str, str] | None:
    """('triton', '3.7.1') from the torch wheel's Requires-Dist lines."""
    for req in requires:
        found = _PIN.match(req.split(";")[0].strip())
        if found and found.group("name").lower() in TRITON_DISTS:
            return found.group("name").lower(), found.group("version")
    return None


def probe(report: DoctorReport, interp: dict[str, Any], torch: dict[str, Any] | None) -> None:
    dists = interp.get("dists") or {}
    tv = interp.get("torch_version") or {}
    if "torch" not in dists and not tv:
        report.torch_installed = False
        report.add(Check(SECTION, "torch", "info",
                         f"torch is not installed for {interp.get('executable', 'this Python')}: torch checks "
                         "skipped; compilers and caches were checked with torch's defaults"))
        return
    report.torch_installed = True
    version = (dists.get("torch") or {}).get("version") or tv.get("__version__") or "?"
    cuda = tv.get("cuda") if tv else (torch or {}).get("cuda")
    hip = tv.get("hip") if tv else (torch or {}).get("hip")
    build = f"CUDA {cuda}" if cuda else (f"ROCm {hip}" if hip else "CPU-only")
    facts = {"version": version, "cuda": cuda, "hip": hip, "git_version": tv.get("git_version"),
             "dir": tv.get("dir"), "requires": (dists.get("torch") or {}).get("triton_requires", [])}
    if torch and torch.get("error"):
        report.add(Check(SECTION, "torch", "error", f"torch {version} ({build}) fails to import: {torch['error']}",
                         facts))
    else:
        took = f"; import took {torch['import_s']:.1f}s" if torch and torch.get("import_s") is not None else ""
        report.add(Check(SECTION, "torch", "ok", f"torch {version} ({build}){took}", facts))
    _triton(report, dists, version, cuda, hip)


def _triton(report: DoctorReport, dists: dict[str, Any], torch_version: str, cuda: str | None,
            hip: str | None) -> None:
    installed = {name: dists[name]["version"] for name in TRITON_DISTS if name in dists}
    requires = (dists.get("torch") or {}).get("triton_requires", [])
    meta = pinned_by_metadata(requires)
    facts: dict[str, Any] = {"installed": installed, "requires": requires}
    if meta is not None:
        pin_name, pin_version, where = meta[0], meta[1], "the torch wheel's metadata (Requires-Dist)"
        row = pinned_by_table(torch_version)
        if row is not None and not hip and base_version(row.triton) != base_version(pin_version):
            facts["table_disagrees"] = {"table": row.triton, "verified": row.verified}
    elif not cuda and not hip:
        shown = ", ".join(f"{k} {v}" for k, v in installed.items()) or "not installed"
        report.add(Check(SECTION, "triton", "info",
                         f"{shown}; a CPU-only torch pins no Triton and compiles CPU kernels with C++", facts))
        return
    elif is_prerelease(torch_version):
        report.add(Check(SECTION, "triton", "info",
                         f"torch {torch_version} is a pre-release: it pins a pytorch-triton commit, not a release "
                         f"(installed: {installed or 'none'})", facts))
        return
    else:
        row = pinned_by_table(torch_version) if not hip else None
        if row is None:
            report.add(Check(SECTION, "triton", "info",
                             f"no known pin for torch {torch_version}{' (ROCm)' if hip else ''}; installed: "
                             f"{installed or 'none'}", facts))
            return
        pin_name, pin_version = "triton", row.triton
        where = f"denpex's pairing table ({row.verified}: {row.source})"
    facts.update({"pinned": f"{pin_name}=={pin_version}", "pinned_by": where})
    have = installed.get(pin_name)
    if have is None and installed:  # a differently named package provides the `triton` module
        pin_base = base_version(pin_version)
        have = next((v for v in installed.values() if base_version(v)[:3] == pin_base[:3]), None)
        if have is None:
            have = next(iter(installed.values()))
    if have is None:
        report.add(Check(SECTION, "triton", "error", f"not installed; torch {torch_version} pins "
                                                    f"{pin_name}=={pin_version}", facts))
        report.problem(Problem(
            "triton-version-mismatch", "error", "Triton is not installed",
            f"torch {torch_version} ({'CUDA ' + cuda if cuda else 'GPU'}) compiles GPU kernels with Triton and pins "
            f"{pin_name}=={pin_version} ({where}); no Triton package is installed.",
            f"`pip install {pin_name}=={pin_version}`", evidence=f"pinned {pin_name}=={pin_version}, installed: none"))
        return
    if base_version(have)[:3] == base_version(pin_version)[:3]:
        report.add(Check(SECTION, "triton", "ok", f"{pin_name} {have} is the version torch {torch_version} pins "
                                                 f"({where.split(' (')[0]})", facts))
        return
    report.add(Check(SECTION, "triton", "error", f"{have} installed, torch {torch_version} pins {pin_version}",
                     facts))
    report.problem(Problem(
        "triton-version-mismatch", "error", "Triton is not the version this torch pins",
        f"torch {torch_version} pins {pin_name}=={pin_version} ({where}) but {have} is installed: Inductor's "
        "generated code and Triton's API drift between releases (ImportError, 'cannot import name', "
        "missing attributes).",
        f"`pip install {pin_name}=={pin_version}` (or the torch release that pins {have})",
        evidence=f"installed {have}, pinned {pin_version}"))
