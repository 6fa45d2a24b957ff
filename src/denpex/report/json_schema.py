"""The versioned JSON output of `denpex diagnose --format json`, defined once as pydantic models.

`denpex diagnose --print-schema` prints the JSON Schema generated from these models. Bump SCHEMA_VERSION's
major number when a field is removed or changes meaning; add fields freely in a minor version.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from denpex import __version__
from denpex.catalog import Catalog
from denpex.model import Diagnosis, Evidence, Finding, Line

SCHEMA_VERSION = "1.0"


class EvidenceOut(BaseModel):
    file: str
    line: int = Field(description="1-based line number in file")
    text: str = Field(description="the full text of the line as it stands in the file")
    rank: int | None = None
    timestamp: float | None = None


class ContextLine(BaseModel):
    file: str
    line: int
    text: str


class SiblingOut(BaseModel):
    id: str
    control: str = Field(description="the experiment that separates this hypothesis from the root cause")


class FindingOut(BaseModel):
    id: str = Field(description="catalog entry id")
    category: str
    title: str
    role: str = Field(description="cause | symptom | collateral | wrapper | warning | context")
    fatal: bool
    rank: int | None
    ranks: list[int] = Field(default_factory=list, description="every rank that logged this finding")
    count: int = Field(description="how many lines repeated this finding for this rank")
    fields: dict[str, object] = Field(default_factory=dict, description="values captured from the log")
    evidence: EvidenceOut


class RootCauseOut(FindingOut):
    reason: str = Field(description="why this finding was judged the initiating cause")
    rank_reason: str = Field(default="", description="which evidence decided the initiating rank")
    explanation: str
    checklist: list[str]
    fix: str
    verify: str = Field(description="command that proves the fix")
    siblings: list[SiblingOut]
    context_before: list[ContextLine]
    context_after: list[ContextLine]


class RankOut(BaseModel):
    rank: int
    host: str | None
    lines: int
    exit_code: int | None = Field(description="from torchrun's agent lines or ChildFailedError summary")
    first_line: EvidenceOut | None
    last_healthy: EvidenceOut | None = Field(description="the last line before this rank's first error")
    first_warning: EvidenceOut | None
    first_error: EvidenceOut | None
    last_line: EvidenceOut | None


class CollateralOut(BaseModel):
    id: str
    title: str
    ranks: list[int]
    count: int
    summary: str = Field(description='e.g. "3 rank(s) [1-3], 3 line(s): NCCL watchdog: a collective timed out"')
    first: EvidenceOut


class FingerprintOut(BaseModel):
    """What identifies this failure: where the initiating rank started, its early warning, its error."""

    start: EvidenceOut | None
    early_warning: EvidenceOut | None
    error: EvidenceOut


class DiagnosisOut(BaseModel):
    schema_version: str = SCHEMA_VERSION
    denpex_version: str = __version__
    verdict: str = Field(description="failure | warning | clean")
    root_cause: RootCauseOut | None
    findings: list[FindingOut] = Field(description="every finding, root cause included, in log order")
    ranks: list[RankOut]
    collateral: list[CollateralOut] = Field(default_factory=list, description="echoes grouped by kind")
    fingerprint: FingerprintOut | None = None
    inputs: list[str]
    lines_read: int
    notes: list[str] = Field(default_factory=list)


def _prose(text: str) -> str:
    """Entry files wrap prose at ~110 columns; re-flow it so terminals and JSON readers wrap it themselves."""
    return "\n\n".join(" ".join(par.split()) for par in text.strip().split("\n\n"))


def _evidence(ev: Evidence) -> EvidenceOut:
    return EvidenceOut(file=ev.file, line=ev.line, text=ev.text, rank=ev.rank, timestamp=ev.timestamp)


def _quote(path: str) -> str:
    import shlex

    return shlex.quote(path)


def _opt(ev: Evidence | None) -> EvidenceOut | None:
    return _evidence(ev) if ev is not None else None


def _fingerprint(diagnosis: Diagnosis) -> FingerprintOut | None:
    root = diagnosis.root_cause
    if root is None:
        return None
    state = diagnosis.ranks.get(root.rank) if root.rank is not None else None
    warning = state.first_warning if state else None
    if warning is not None and warning.seq >= root.evidence.seq:
        warning = None
    return FingerprintOut(
        start=_opt(state.first_line) if state else None,
        early_warning=_opt(warning),
        error=_evidence(root.evidence),
    )


def _context(lines: list[Line]) -> list[ContextLine]:
    return [ContextLine(file=ln.file, line=ln.number, text=ln.text) for ln in lines]


def _finding(f: Finding) -> dict[str, object]:
    return {
        "id": f.entry_id,
        "category": f.category,
        "title": f.title,
        "role": f.role.value,
        "fatal": f.fatal,
        "rank": f.rank,
        "ranks": sorted(f.ranks),
        "count": f.count,
        "fields": f.fields,
        "evidence": _evidence(f.evidence),
    }


def build(diagnosis: Diagnosis, catalog: Catalog, command_hint: str = "<your command>") -> DiagnosisOut:
    root_out = None
    root = diagnosis.root_cause
    if root is not None:
        entry = catalog.get(root.entry_id)
        assert entry is not None, f"root cause {root.entry_id} has no catalog entry"
        root_out = RootCauseOut(
            **_finding(root),
            reason=root.reason,
            rank_reason=root.rank_reason,
            explanation=_prose(entry.explanation),
            checklist=list(entry.checklist),
            fix=_prose(entry.fix),
            verify=entry.verify.replace("{command}", command_hint).replace("{log}", _quote(root.evidence.file)),
            siblings=[SiblingOut(id=s.id, control=s.control) for s in entry.siblings],
            context_before=_context(root.context_before),
            context_after=_context(root.context_after),
        )
    findings = sorted(diagnosis.findings, key=lambda f: f.evidence.seq)
    return DiagnosisOut(
        verdict=diagnosis.verdict.value,
        root_cause=root_out,
        findings=[FindingOut(**_finding(f)) for f in findings],
        ranks=[
            RankOut(
                rank=r.rank,
                host=r.host,
                lines=r.lines,
                exit_code=r.exit_code,
                first_line=_opt(r.first_line),
                last_healthy=_opt(r.last_healthy),
                first_warning=_opt(r.first_warning),
                first_error=_opt(r.first_error),
                last_line=_opt(r.last_line),
            )
            for r in sorted(diagnosis.ranks.values(), key=lambda r: r.rank)
        ],
        collateral=[
            CollateralOut(id=g.entry_id, title=g.title, ranks=g.ranks, count=g.count, summary=g.summary,
                          first=_evidence(g.first))
            for g in diagnosis.collateral
        ],
        fingerprint=_fingerprint(diagnosis),
        inputs=diagnosis.inputs,
        lines_read=diagnosis.lines_read,
        notes=diagnosis.notes,
    )


def json_schema() -> dict[str, object]:
    return DiagnosisOut.model_json_schema()
