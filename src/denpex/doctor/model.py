"""What `denpex doctor` found, as plain data: checks grouped by section, and problems tied to catalog entries."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

Status = Literal["ok", "info", "warning", "error", "skipped"]
Severity = Literal["error", "warning"]

SCHEMA_VERSION = "1.0"


@dataclass(slots=True)
class Check:
    """One thing the probe looked at: what it is, what it found, and the raw facts behind it."""

    section: str  # toolchain | python | torch | gpu | cache | env
    name: str
    status: Status
    summary: str
    facts: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class Problem:
    """A finding that explains a catalog entry: what is wrong here, the evidence, and the fix for this machine."""

    entry_id: str
    severity: Severity
    title: str
    detail: str
    fix: str
    evidence: str = ""  # the fact that proves it ("CXX=/nonexistent/g++: no such file")
    path: str | None = None  # the file or dir concerned, when there is one


@dataclass(slots=True)
class DoctorReport:
    checks: list[Check] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    elapsed_s: float = 0.0
    python: str = ""
    torch_installed: bool | None = None

    def add(self, check: Check) -> Check:
        self.checks.append(check)
        return check

    def problem(self, problem: Problem) -> Problem:
        self.problems.append(problem)
        return problem

    def section(self, name: str) -> list[Check]:
        return [c for c in self.checks if c.section == name]

    def problems_for(self, entry_id: str) -> list[Problem]:
        return [p for p in self.problems if p.entry_id == entry_id]

    @property
    def worst(self) -> Literal["error", "warning", "ok"]:
        if any(p.severity == "error" for p in self.problems):
            return "error"
        if self.problems:
            return "warning"
        return "ok"

    def to_dict(self) -> dict[str, Any]:
        from denpex import __version__

        return {
            "schema_version": SCHEMA_VERSION,
            "denpex_version": __version__,
            "status": self.worst,
            "elapsed_s": round(self.elapsed_s, 3),
            "python": self.python,
            "torch_installed": self.torch_installed,
            "problems": [asdict(p) for p in self.problems],
            "checks": [asdict(c) for c in self.checks],
            "notes": list(self.notes),
        }
