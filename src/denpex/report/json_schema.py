"""The versioned JSON output of `denpex diagnose --format json`, defined once as dataclasses.

`denpex diagnose --print-schema` prints the JSON Schema generated from these models. Bump SCHEMA_VERSION's
major number when a field is removed or changes meaning; add fields freely in a minor version.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass
from typing import Any

from denpex import __version__
from denpex.catalog import Catalog
from denpex.catalog.schema import SAVED_LOG, YOUR_COMMAND, Entry
from denpex.model import Comparison, Diagnosis, Evidence, Finding, FlightRecorderSummary, Line, Phase
from denpex.trace_model import TorchTraceOut

SCHEMA_VERSION = "1.2"


# Plain dataclasses: building and printing a report needs no pydantic (~70 ms of import); pydantic reads
# these same classes, field docstrings included, only to print the JSON Schema (--print-schema).
_CONFIG: dict[str, Any] = {"use_attribute_docstrings": True}


@dataclass
class EvidenceOut:
    __pydantic_config__ = _CONFIG
    file: str
    line: int
    """1-based line number in file"""
    text: str
    """the full text of the line as it stands in the file"""
    rank: int | None = None
    timestamp: float | None = None


@dataclass
class ContextLine:
    __pydantic_config__ = _CONFIG
    file: str
    line: int
    text: str


@dataclass
class SiblingOut:
    __pydantic_config__ = _CONFIG
    id: str
    control: str
    """the experiment that separates this hypothesis from the root cause"""


@dataclass
class FindingOut:
    __pydantic_config__ = _CONFIG
    id: str
    """catalog entry id"""
    category: str
    title: str
    role: str
    """cause | symptom | collateral | wrapper | warning | context"""
    fatal: bool
    rank: int | None
    ranks: list[int]
    """every rank that logged this finding"""
    count: int
    """how many lines repeated this finding for this rank"""
    fields: dict[str, object]
    """values captured from the log"""
    evidence: EvidenceOut
    confidence: str
    """high: the signature's regex confirmed the line; low: only its anchor matched (an unknown wording)"""


@dataclass
class RootCauseOut(FindingOut):
    reason: str
    """why this finding was judged the initiating cause"""
    rank_reason: str
    """which evidence decided the initiating rank"""
    rank_evidence: str
    """the kind of evidence that named the rank: own_output, named_in_message, silent, desynchronised,
    flight_recorder (since 1.2), absent_from_timeouts, waited_on, behind_in_steps,
    stopped_elsewhere (since 1.2), lowest_sequence, first_in_time,
    neighbours, launcher_hint, unknown"""
    host: str | None
    """the initiating rank's node, where the log names it (NCCL's host:pid:tid, [host:rank], torchrun's summary)"""
    explanation: str
    checklist: list[str]
    fix: str
    verify: str
    """command that proves the fix"""
    siblings: list[SiblingOut]
    context_before: list[ContextLine]
    context_after: list[ContextLine]
    verify_setup: str | None = None
    """what to do before `verify` can run as shown (a log read from stdin or a pipe must be saved to a file
    first); null when it runs as it stands (since 1.1)"""


@dataclass
class RankOut:
    __pydantic_config__ = _CONFIG
    rank: int
    host: str | None
    lines: int
    exit_code: int | None
    """from torchrun's agent lines or ChildFailedError summary"""
    first_line: EvidenceOut | None
    last_healthy: EvidenceOut | None
    """the last line before this rank's first error"""
    first_warning: EvidenceOut | None
    first_error: EvidenceOut | None
    last_line: EvidenceOut | None


@dataclass
class CollateralOut:
    __pydantic_config__ = _CONFIG
    id: str
    title: str
    ranks: list[int]
    count: int
    summary: str
    """e.g. '3 rank(s) [1-3], 3 line(s): NCCL watchdog: a collective timed out'"""
    first: EvidenceOut


@dataclass
class FingerprintOut:
    """What identifies this failure: where the initiating rank started, its early warning, its error."""

    __pydantic_config__ = _CONFIG
    start: EvidenceOut | None
    early_warning: EvidenceOut | None
    error: EvidenceOut


@dataclass
class EnvironmentCheckOut:
    __pydantic_config__ = _CONFIG
    section: str
    """toolchain | python | torch | gpu | cache | env"""
    name: str
    status: str
    """ok | info | warning | error | skipped"""
    summary: str


@dataclass
class PhaseOut:
    __pydantic_config__ = _CONFIG
    name: str
    """launch | rendezvous | model load | compile | step | checkpoint | shutdown"""
    step: int | None
    """the training step it was in, where the log counts steps"""

    def shown(self) -> str:
        """`step 6`, `compile, step 3`, `rendezvous`: as the reports print it."""
        if self.step is None:
            return self.name
        return f"step {self.step}" if self.name == "step" else f"{self.name}, step {self.step}"


@dataclass
class RankDivergenceOut:
    __pydantic_config__ = _CONFIG
    rank: int | None
    """null: lines that name no rank (the launcher, or a single-process job)"""
    kind: str
    """extra: a line the reference never printed; missing: the rank stopped short of the reference"""
    line: EvidenceOut
    """the differing line; for missing, the rank's last line"""
    expected: EvidenceOut | None
    """for missing: the reference's next line (in the healthy run's file)"""
    phase: PhaseOut | None


@dataclass
class DivergenceOut:
    __pydantic_config__ = _CONFIG
    against: str
    """baseline: healthy runs given with --baseline; ranks: the other ranks of this job (the majority)"""
    baselines: list[str]
    first_rank: int | None
    """the rank that diverged first (null when that is the launcher's or a single process's lines)"""
    decisive: bool
    """true when the first divergence was made the root cause (no specific catalog entry matched)"""
    ranks: list[RankDivergenceOut]
    """one per rank stream, in the order they diverged"""


@dataclass
class FlightRecorderOut:
    """What the Flight Recorder dumps read with the logs say (since 1.2)."""

    __pydantic_config__ = _CONFIG
    dumps: list[str]
    ranks: list[int]
    """the ranks a dump was read for"""
    culprit: int | None
    """the rank the dumps name: it never joined a collective, lags, or ran a different one"""
    kind: str | None
    """never_joined | mismatch | lagging; null when every rank joined every collective recorded"""
    seq: int | None
    """the collective sequence number it happened at"""
    op: str | None
    process_group: str | None
    missing: list[int]
    """ranks that never joined collective `seq`"""
    last_completed: dict[str, int | None]
    """rank -> the last collective it completed"""
    mismatches: list[str]
    summary: str
    partial: bool
    """a dump was truncated or corrupt: the answer covers what could be read"""


@dataclass
class DiagnosisOut:
    __pydantic_config__ = _CONFIG
    verdict: str
    """failure | warning | clean"""
    root_cause: RootCauseOut | None
    findings: list[FindingOut]
    """every finding, root cause included, in log order"""
    ranks: list[RankOut]
    collateral: list[CollateralOut]
    """echoes grouped by kind"""
    fingerprint: FingerprintOut | None
    inputs: list[str]
    lines_read: int
    notes: list[str]
    flight_recorder: FlightRecorderOut | None = None
    """present only when Flight Recorder dumps were among the inputs (since 1.2)"""
    schema_version: str = SCHEMA_VERSION
    denpex_version: str = __version__
    environment: list[EnvironmentCheckOut] | None = None
    """what `--doctor` checked on this machine (null without it; since 1.2); its problems are also in notes"""
    phase: PhaseOut | None = None
    """the job's phase and step at the decisive line, told by its own lines (null when clean; since 1.2)"""
    divergence: DivergenceOut | None = None
    """where the run first departs from its healthy runs (--baseline) or its ranks from each other (since 1.2)"""
    torch_trace: TorchTraceOut | None = None
    """what the job's TORCH_TRACE files say (null when none was given): compiles, graph breaks with their GB
    ids, recompiles, failures and caches per rank, and how the ranks differ"""

    def to_json(self) -> str:
        """The report as --format json prints it (field order as declared, versions first)."""
        data = asdict(self)
        ordered = {"schema_version": data.pop("schema_version"), "denpex_version": data.pop("denpex_version")}
        return json.dumps({**ordered, **data}, indent=2, ensure_ascii=False)


def _prose(text: str) -> str:
    """Entry files wrap prose at ~110 columns; re-flow it so terminals and JSON readers wrap it themselves."""
    return "\n\n".join(" ".join(par.split()) for par in text.strip().split("\n\n"))


# a log line shown in a report is cut here (one 50 MB error line must not make a 157 MB report)
MAX_SHOWN_LINE = 16 << 10


_READ_CUT = re.compile(r"… \[([\d,]+) bytes cut\]$")  # ingest.lines.cut_line's marker on a line over 4 MiB


def shown(text: str) -> str:
    """The line as it stands, or its first MAX_SHOWN_LINE characters and a marker of how much was cut (with
    what reading a line over 4 MiB had already cut)."""
    if len(text) <= MAX_SHOWN_LINE:
        return text
    read_cut = _READ_CUT.search(text[-40:])
    more = len(text) - MAX_SHOWN_LINE - (len(read_cut.group(0)) if read_cut else 0)
    also = f" and {read_cut.group(1)} bytes at reading" if read_cut else ""
    return f"{text[:MAX_SHOWN_LINE]}… [{more:,} more characters{also} cut]"


def _evidence(ev: Evidence) -> EvidenceOut:
    return EvidenceOut(file=ev.file, line=ev.line, text=shown(ev.text), rank=ev.rank, timestamp=ev.timestamp)


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


def _phase(phase: Phase | None) -> PhaseOut | None:
    return PhaseOut(phase.name, phase.step) if phase is not None else None


def _divergence(comparison: Comparison | None) -> DivergenceOut | None:
    if comparison is None:
        return None
    first = comparison.first
    return DivergenceOut(
        against=comparison.against,
        baselines=comparison.baselines,
        first_rank=first.rank if first is not None else None,
        decisive=comparison.decisive,
        ranks=[RankDivergenceOut(d.rank, d.kind, _evidence(d.evidence), _opt(d.expected), _phase(d.phase))
               for d in comparison.ranks],
    )


def _context(lines: list[Line]) -> list[ContextLine]:
    return [ContextLine(file=ln.file, line=ln.number, text=shown(ln.text)) for ln in lines]


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
        "confidence": f.confidence,
    }


def _rereadable(name: str) -> bool:
    """Whether `denpex verify --log NAME` can read this input again (stdin and pipes are read only once)."""
    from pathlib import Path

    return not name.startswith("<") and Path(name).is_file()


def _verify(entry: Entry, command_hint: str, log: str) -> tuple[str, str | None]:
    """The verify command, and the step it needs first when the failed log cannot be read again as named."""
    if "{log}" not in entry.verify or _rereadable(log):
        return entry.verify_shown(command_hint, _quote(log)), None
    return entry.verify_shown(command_hint), f"the log was read from {log}: save it to {SAVED_LOG} first"


def build(diagnosis: Diagnosis, catalog: Catalog, command_hint: str = YOUR_COMMAND) -> DiagnosisOut:
    root_out = None
    root = diagnosis.root_cause
    if root is not None:
        entry = catalog.get(root.entry_id)
        assert entry is not None, f"root cause {root.entry_id} has no catalog entry"
        verify, verify_setup = _verify(entry, command_hint, root.evidence.file)
        root_out = RootCauseOut(
            **_finding(root),
            reason=root.reason,
            rank_reason=root.rank_reason,
            rank_evidence=root.rank_evidence,
            host=diagnosis.ranks[root.rank].host if root.rank in diagnosis.ranks else None,
            explanation=_prose(entry.explanation),
            checklist=list(entry.checklist),
            fix=_prose(entry.fix),
            verify=verify,
            siblings=[SiblingOut(id=s.id, control=s.control) for s in entry.siblings],
            context_before=_context(root.context_before),
            context_after=_context(root.context_after),
            verify_setup=verify_setup,
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
        phase=_phase(diagnosis.phase),
        divergence=_divergence(diagnosis.comparison),
        flight_recorder=_flight_recorder(diagnosis.flight_recorder),
        torch_trace=diagnosis.torch_trace if isinstance(diagnosis.torch_trace, TorchTraceOut) else None,
    )


def _flight_recorder(fr: FlightRecorderSummary | None) -> FlightRecorderOut | None:
    if fr is None:
        return None
    return FlightRecorderOut(
        dumps=fr.dumps, ranks=fr.ranks, culprit=fr.culprit, kind=fr.kind, seq=fr.seq, op=fr.op,
        process_group=fr.process_group, missing=fr.missing,
        last_completed={str(r): s for r, s in fr.last_completed.items()}, mismatches=fr.mismatches,
        summary=fr.summary, partial=fr.partial,
    )


def json_schema() -> dict[str, object]:
    from pydantic import TypeAdapter

    schema: dict[str, Any] = TypeAdapter(DiagnosisOut).json_schema()
    props = schema["properties"]  # the versions first, as in the output
    schema["properties"] = {k: props[k] for k in ("schema_version", "denpex_version")} | props
    return schema
