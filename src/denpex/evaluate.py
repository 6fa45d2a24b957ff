"""`denpex eval`: score Denpex against labelled cases in the corpus format (see tests/corpus/README.md).

Users can keep their own incidents as cases and guard catalog changes with it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from denpex.api import diagnose
from denpex.catalog import Catalog, load
from denpex.errors import DenpexInputError
from denpex.ingest.lines import shown_text
from denpex.model import Diagnosis, Verdict


@dataclass
class CaseResult:
    case: str
    label: dict[str, object]
    verdict: str
    category: str | None
    rank: int | None
    evidence: str | None
    checks: dict[str, bool] = field(default_factory=dict)
    error: str | None = None


@dataclass
class Score:
    results: list[CaseResult]

    def rate(self, check: str) -> tuple[int, int]:
        scored = [r for r in self.results if check in r.checks]
        return sum(r.checks[check] for r in scored), len(scored)

    def fraction(self, check: str) -> float:
        good, total = self.rate(check)
        return good / total if total else 1.0

    def misses(self) -> list[CaseResult]:
        return [r for r in self.results if r.error or not all(r.checks.values())]


CHECKS = ("category", "decisive_line", "rank", "verdict", "healthy_clean")


def find_cases(roots: list[str]) -> list[Path]:
    cases: list[Path] = []
    for root in roots:
        path = Path(root)
        if not path.exists():
            raise DenpexInputError(f"no such file or directory: {root}")
        if (path / "label.json").is_file():
            cases.append(path)
            continue
        cases.extend(sorted(p.parent for p in path.rglob("label.json")))
    if not cases:
        raise DenpexInputError(f"no labelled cases (folders with label.json) under: {' '.join(roots)}")
    return cases


def case_input(case: Path, label: dict[str, object]) -> Path:
    """The corpus contract: ranks/ when the label names a decisive_file (or there is no log.txt). A pair of runs
    (healthy/ and failed/, the label describing the failed one) is scored on its failed run."""
    if (case / "failed").is_dir() and not (case / "log.txt").exists():
        case = case / "failed"
    ranks = case / "ranks"
    if ranks.is_dir() and (label.get("decisive_file") or not (case / "log.txt").exists()):
        return ranks
    return case / "log.txt"


def expected_verdict(label: dict[str, object]) -> str:
    if label.get("category") == "none":
        return Verdict.CLEAN.value
    return Verdict.WARNING.value if label.get("fatal") is False else Verdict.FAILURE.value


def score_case(case: Path, catalog: Catalog) -> CaseResult:
    label = json.loads((case / "label.json").read_text(encoding="utf-8"))
    try:
        result: Diagnosis = diagnose(case_input(case, label), catalog=catalog)
    except DenpexInputError as exc:
        return CaseResult(str(case), label, "error", None, None, None, {}, error=str(exc))
    root = result.root_cause
    out = CaseResult(
        case=str(case),
        label=label,
        verdict=result.verdict.value,
        category=root.category if root else None,
        rank=root.rank if root else None,
        evidence=root.evidence.text if root else None,
    )
    if label.get("category") == "none":
        out.checks["healthy_clean"] = result.verdict is Verdict.CLEAN
        return out
    out.checks["category"] = out.category == label.get("category")
    wanted = [label.get("decisive_line")] + list(label.get("also_acceptable") or [])  # type: ignore[arg-type]
    # the evidence is the line as a terminal shows it; a label may quote the raw line, colour codes and all
    out.checks["decisive_line"] = bool(out.evidence) and any(
        isinstance(w, str) and w and (w in (out.evidence or "") or shown_text(w) in (out.evidence or ""))
        for w in wanted
    )
    if label.get("initiating_rank") is not None:
        out.checks["rank"] = out.rank == label["initiating_rank"]
    if "fatal" in label and label["fatal"] is not None:
        out.checks["verdict"] = out.verdict == expected_verdict(label)
    else:  # labels from public threads without `fatal`: the job died unless the log says otherwise
        out.checks["verdict"] = out.verdict != Verdict.CLEAN.value
    return out


def evaluate(roots: list[str], catalog: Catalog | None = None) -> Score:
    catalog = catalog or load()
    return Score([score_case(case, catalog) for case in find_cases(roots)])


def summary_line(score: Score) -> str:
    parts = []
    for check in CHECKS:
        good, total = score.rate(check)
        if total:
            parts.append(f"{check} {good}/{total} ({100 * good / total:.1f}%)")
    return f"{len(score.results)} cases: " + ", ".join(parts)
