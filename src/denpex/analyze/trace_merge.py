"""One diagnosis from a job's plain logs and its TORCH_TRACE files (`denpex diagnose LOG TRACE_DIR`).

The trace's failures (dynamo_error's exception, compilation_metrics' fail_type/fail_reason) and graph-break
reasons are put through the same catalog as log lines, as a small text of their own whose findings point
back at the trace file's lines. The plain logs decide when they name a failure; the trace then confirms it
(same category), or is reported as disagreeing. When the logs name none (cut off, or only the trace was
given), the trace's own diagnosis stands.
"""

from __future__ import annotations

from collections.abc import Callable

from denpex.analyze.trace_summary import RankTrace, digest, divergences
from denpex.ingest.sources import Source
from denpex.ingest.torch_trace import read_trace
from denpex.model import Diagnosis, Finding, Verdict
from denpex.trace_model import TorchTraceOut, TraceEvidenceOut

Run = Callable[[list[Source]], Diagnosis]


def _evidence_sources(ranks: list[RankTrace]) -> tuple[list[Source], dict[tuple[str, int], int]]:
    """One in-memory source a trace file (same name, same rank), and where each of its lines came from."""
    sources: list[Source] = []
    where: dict[tuple[str, int], int] = {}
    for rank in ranks:
        lines = [(f.line, f.text) for f in rank.failures] + rank.graph_break_lines
        if not lines:
            continue
        name = rank.file.name
        for number, (trace_line, _) in enumerate(lines, start=1):
            where[(name, number)] = trace_line
        text = "\n".join(text.replace("\r", " ") for _, text in lines) + "\n"
        sources.append(Source(name=name, data=text.encode("utf-8", "replace"), rank_hint=rank.out.rank))
    return sources, where


def _point_back(diagnosis: Diagnosis, where: dict[tuple[str, int], int]) -> None:
    """Findings of the evidence text name the trace file's own line numbers."""
    for finding in diagnosis.findings:
        line = where.get((finding.evidence.file, finding.evidence.line))
        if line is not None:
            finding.evidence.line = line
        for ctx in (*finding.context_before, *finding.context_after):
            ctx.number = where.get((ctx.file, ctx.number), ctx.number)
    for state in diagnosis.ranks.values():
        for ev in (state.first_line, state.last_line, state.last_healthy, state.first_warning, state.first_error):
            if ev is not None:
                ev.line = where.get((ev.file, ev.line), ev.line)


def _shown(finding: Finding) -> TraceEvidenceOut:
    ev = finding.evidence
    return TraceEvidenceOut(file=ev.file, line=ev.line, rank=ev.rank, text=ev.text[:500])


def _agreement(plain: Diagnosis | None, traced: Diagnosis | None) -> str:
    if traced is None or traced.root_cause is None:
        return "silent"
    if plain is None:
        return "trace_only"
    if plain.root_cause is None:
        return "supplies"
    if plain.root_cause.category == traced.root_cause.category:
        return "confirms"
    if traced.verdict is not Verdict.FAILURE and plain.verdict is Verdict.FAILURE:
        return "silent"  # the trace records warnings (graph breaks) only, no failure
    return "differs"


def diagnose_with_traces(plain_sources: list[Source], trace_sources: list[Source], run: Run) -> Diagnosis:
    """The merged diagnosis; `run` diagnoses plain sources (the normal pipeline)."""
    files = [read_trace(source) for source in trace_sources]
    ranks = [digest(trace) for trace in files]
    evidence, where = _evidence_sources(ranks)
    traced = run(evidence) if evidence else None
    if traced is not None:
        _point_back(traced, where)
    plain = run(plain_sources) if plain_sources else None
    agreement = _agreement(plain, traced)
    if plain is not None and agreement != "supplies":
        result = plain
    elif traced is not None:
        result = traced
        if plain is not None:  # the logs' own findings (warnings) and ranks (exit codes) stay in the answer
            result.notes.extend(plain.notes)
            result.lines_read += plain.lines_read
            result.findings.extend(plain.findings)
            for rank, state in plain.ranks.items():
                result.ranks.setdefault(rank, state)
    else:
        result = Diagnosis(verdict=Verdict.CLEAN, root_cause=None, findings=[],
                           inputs=[s.name for s in trace_sources], lines_read=0)
    if agreement != "silent" and traced is not None and traced.root_cause is not None and result.root_cause:
        trace_root = traced.root_cause
        ev = trace_root.evidence
        said = {"confirms": "confirms it", "differs": f"names another failure ({trace_root.category})",
                "supplies": "supplies it (the plain logs name no failure)",
                "trace_only": "is the only input"}[agreement]
        if result is plain:
            result.root_cause.reason = (result.root_cause.reason + "; " if result.root_cause.reason else "") + (
                f"TORCH_TRACE {said}: {ev.text[:300]} ({ev.file}:{ev.line})")
        else:
            result.root_cause.reason = (result.root_cause.reason + "; " if result.root_cause.reason else "") + (
                f"from TORCH_TRACE, which {said}")
    shown = []
    if traced is not None:
        root = traced.root_cause
        ordered = sorted(traced.findings, key=lambda f: (f is not root, f.evidence.seq))
        shown = list({(f.evidence.file, f.evidence.line): _shown(f) for f in ordered}.values())
    result.inputs = [s.name for s in plain_sources] + [s.name for s in trace_sources]
    for trace in files:
        result.notes.extend(trace.summary_notes())
    result.torch_trace = TorchTraceOut(
        files=[t.name for t in files], ranks=[r.out for r in ranks], divergences=divergences(ranks),
        agreement=agreement, evidence=shown[:10],
    )
    return result
