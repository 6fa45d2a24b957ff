"""Which phase of the job (launch, rendezvous, model load, compile, step N, checkpoint, shutdown) a line falls in.

Why: "it failed in step 3" or "it failed while compiling" narrows the search before any entry is read, and it
tells a failure at start-up from one after hours of training. The phases are told by the job's own lines; the
patterns are data (phases.toml) so a new launcher's wording is one line there, not a code branch.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from importlib import resources

from denpex.model import Line, Phase

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

MAX_SCANNED = 64 << 10  # a line is searched in its first this many characters (a 4 MB line must stay cheap)
TRAILING = 60  # lines after the decisive one whose frames may show it failed while compiling
COMPILE = "compile"


@dataclass(frozen=True, slots=True)
class _StepRule:
    pattern: re.Pattern[str]
    offset: int


@dataclass(frozen=True, slots=True)
class PhaseTable:
    phases: tuple[tuple[str, re.Pattern[str]], ...]  # (name, all of its patterns as one alternation)
    steps: tuple[_StepRule, ...]

    @property
    def compile(self) -> re.Pattern[str]:
        return next(pattern for name, pattern in self.phases if name == COMPILE)


@cache
def table() -> PhaseTable:
    """phases.toml, compiled once."""
    data = tomllib.loads((resources.files("denpex.analyze") / "phases.toml").read_text(encoding="utf-8"))
    phases = tuple(
        (row["name"], re.compile("|".join(f"(?:{p})" for p in row["patterns"]))) for row in data["phase"]
    )
    steps = tuple(_StepRule(re.compile(row["pattern"]), int(row["offset"])) for row in data["step"])
    return PhaseTable(phases, steps)


class PhaseTracker:
    """Fed a stream's lines in order; `phase` is where the job stood after the last one."""

    def __init__(self) -> None:
        self.name: str | None = None
        self.step: int | None = None
        self._table = table()

    def feed(self, line: Line) -> None:
        text = line.text[:MAX_SCANNED]
        for rule in self._table.steps:
            found = rule.pattern.search(text)
            if found:
                self.step = int(found[1]) + rule.offset
                self.name = "step"
                break
        for name, pattern in reversed(self._table.phases):  # the later phase wins on one line
            if pattern.search(text):
                self.name = name
                break

    @property
    def phase(self) -> Phase | None:
        return Phase(self.name, self.step) if self.name is not None else None


def phase_at(lines: Iterable[Line], seq: int, rank: int | None) -> Phase | None:
    """The phase of `rank`'s stream (and the lines that name no rank) up to and including line `seq`; the
    TRAILING lines after it may still say "compile": a decisive line printed before its traceback (a C
    compiler's error, `backend='inductor' raised:`) is followed by the frames of the compiler it failed in."""
    tracker = PhaseTracker()
    after = 0
    for line in lines:
        if rank is not None and line.rank is not None and line.rank != rank:
            continue
        if line.seq <= seq:
            tracker.feed(line)
            continue
        after += 1
        if after > TRAILING or tracker.name == COMPILE:
            break
        if table().compile.search(line.text[:MAX_SCANNED]):
            tracker.name = COMPILE
    return tracker.phase
