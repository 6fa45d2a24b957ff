"""What the diagnosis adds from the job's own lines after the catalog decided: its phase, and its comparison
with healthy runs (--baseline) or between its ranks.

Why here and not in the collector: both need every line in order, per rank, which the fast path never
frames; so they read small inputs (analyze.baseline.MAX_BYTES) once more and say nothing about bigger ones.
"""

from __future__ import annotations

from dataclasses import replace

from denpex.analyze import baseline
from denpex.analyze.phases import phase_at
from denpex.catalog import Catalog
from denpex.ingest import Source
from denpex.model import Comparison, Diagnosis, Evidence, Finding, Line, Role, Verdict

DIVERGENCE_ENTRY = "baseline-divergence"  # files a first divergence no catalog entry explains
# entries that file what no signature matched: a first divergence from a healthy run says more than they do
_GENERIC = frozenset({"uncaught_exception", "process_exit", "rank_silence", "rank_finished"})
DECISIVE_REASON = "first line that differs from the healthy run"
CONTEXT_BEFORE, CONTEXT_AFTER = 20, 5  # lines shown around a divergent line made the decisive one


def annotate(diagnosis: Diagnosis, sources: list[Source], catalog: Catalog,
             baselines: list[list[Source]] | None = None) -> None:
    """Set diagnosis.phase and diagnosis.comparison; with baselines, make the first divergence the root cause
    when no specific entry matched. Inputs too big to read again get their phase from the root cause's context."""
    if baselines:  # a healthy run's Flight Recorder dumps and error files are no lines to compare
        baselines = [[s for s in run if s.kind == "log"] for run in baselines]
    limit = baseline.MAX_BYTES if baselines else baseline.SPATIAL_BYTES
    small = baseline.small_enough(sources, limit) and all(baseline.small_enough(run) for run in baselines or [])
    if baselines and not small:
        diagnosis.notes.append(f"--baseline: inputs over {baseline.MAX_BYTES >> 20} MiB, and pipes too long to "
                               "hold, are not compared")
    lines = baseline.read_lines(sources) if small else None
    if lines is not None:
        echoes = {(f.evidence.file, f.evidence.line) for f in diagnosis.findings if f.role is Role.COLLATERAL}
        if baselines:
            healthy = [baseline.read_lines(run) for run in baselines]
            names = [", ".join(s.name for s in run) for run in baselines]
            diagnosis.comparison = baseline.against_baseline(lines, healthy, names, echoes)
            if not diagnosis.comparison.ranks:
                diagnosis.notes.append("--baseline: every line of the failed run also occurs in the healthy run")
            _maybe_decisive(diagnosis, diagnosis.comparison, catalog, lines)
        else:
            diagnosis.comparison = baseline.between_ranks(lines, echoes)
    root = diagnosis.root_cause
    if root is not None:
        seen = lines if lines is not None else [*root.context_before, _as_line(root.evidence), *root.context_after]
        diagnosis.phase = phase_at(seen, root.evidence.seq, root.rank)


def _as_line(ev: Evidence) -> Line:
    return Line(file=ev.file, number=ev.line, text=ev.text, body=ev.text, rank=ev.rank, timestamp=ev.timestamp,
                seq=ev.seq)


def _generic(finding: Finding | None, catalog: Catalog) -> bool:
    if finding is None:
        return True
    entry = catalog.get(finding.entry_id)
    return finding.generic or (entry is not None and entry.matched_by in _GENERIC)


def _around(lines: list[Line], ev: Evidence) -> tuple[list[Line], list[Line]]:
    """The context shown with a divergent line: the lines before and after it in its file."""
    same = [ln for ln in lines if ln.file == ev.file]
    before = [ln for ln in same if ev.line - CONTEXT_BEFORE <= ln.number < ev.line]
    after = [ln for ln in same if ev.line < ln.number <= ev.line + CONTEXT_AFTER]
    return before, after


def _maybe_decisive(diagnosis: Diagnosis, comparison: Comparison, catalog: Catalog, lines: list[Line]) -> None:
    first = comparison.first
    root = diagnosis.root_cause
    if first is None or not _generic(root, catalog):
        return
    what = "the last line before it stopped short of the healthy run" if first.kind == "missing" else (
        "the first line no healthy run printed")
    reason = f"{DECISIVE_REASON} ({what}{'' if first.rank is None else f', rank {first.rank}'})"
    before, after = _around(lines, first.evidence)
    if root is not None:
        reason += f"; the catalog's only match was generic ({root.entry_id})"
        found = replace(root, evidence=first.evidence, initiating_rank=first.rank, rank_unknown=False,
                        reason=reason, rank_reason=DECISIVE_REASON, rank_evidence="first_divergence",
                        ranks={first.rank} if first.rank is not None else set(), count=1, generic=False,
                        context_before=before, context_after=after, fields={})
    else:
        entry = catalog.get(DIVERGENCE_ENTRY)
        assert entry is not None, f"the catalog has no {DIVERGENCE_ENTRY} entry"
        found = Finding(entry_id=entry.id, category=entry.category, title=entry.title, role=Role.CAUSE,
                        fatal=True, evidence=first.evidence, initiating_rank=first.rank, reason=reason,
                        rank_reason=DECISIVE_REASON, rank_evidence="first_divergence",
                        ranks={first.rank} if first.rank is not None else set(),
                        context_before=before, context_after=after)
        diagnosis.verdict = Verdict.FAILURE
    diagnosis.findings.append(found)
    diagnosis.root_cause = found
    comparison.decisive = True
