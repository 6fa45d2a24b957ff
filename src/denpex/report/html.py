"""A self-contained HTML report: one file, readable offline, safe to open whatever the log held.

Why this shape: the page is shared as an attachment and opened from disk, so styles and the one script are
inline, nothing is fetched (a Content-Security-Policy forbids every load, and scripts run only with this
page's nonce), and every value from a log goes through Jinja2's autoescaping after made_visible() has shown
its control characters as escapes. The per-rank timeline is laid out here, in Python, as plain SVG
coordinates: the browser does no per-rank work, so 1,024 ranks draw as fast as 4.
"""

from __future__ import annotations

import secrets
from collections import Counter
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import jinja2

from denpex.report.display import made_visible
from denpex.report.json_schema import DiagnosisOut, EvidenceOut, FindingOut, RankOut

_TEMPLATES = Path(__file__).parent / "templates"
_SHOWN_BEFORE = 12  # context lines shown above the decisive line; the rest fold away (keeps it above the fold)
_SHOWN_AFTER = 5
_TITLE_CHARS = 200  # a log line in a tooltip is cut here

# timeline geometry, in SVG user units (= CSS px at 100 %)
_LABEL_W = 92
_PLOT_W = 760
_PAD_R = 16
_WIDE_ROW, _COMPACT_ROW = 16, 7
_COMPACT_FROM = 129  # ranks; from here rows are compact and only some are labelled
_COMPACT_LABEL_EVERY = 64


@dataclass
class Mark:
    """One mark on a rank's row: first warning, first error or its last line/exit."""

    kind: str
    """warning | error | exit"""
    x: float
    title: str
    href: str | None = None
    """the collateral group this echo belongs to"""


@dataclass
class Row:
    rank: int
    y: float
    bar_x: float
    bar_w: float
    initiating: bool
    label: bool
    title: str
    marks: list[Mark] = field(default_factory=list)


@dataclass
class Timeline:
    mode: str
    """time | line"""
    scale: str
    """what the x axis spans, in words"""
    start: str
    end: str
    """the axis' end labels"""
    width: int
    height: int
    row_h: int
    plot_x: int
    plot_w: int
    rows: list[Row]
    compact: bool
    label_every: int = _COMPACT_LABEL_EVERY


@dataclass
class OtherFinding:
    role: str
    id: str
    title: str
    ranks: str
    count: int
    where: str
    text: str


def render(report: DiagnosisOut, shown_before: int = _SHOWN_BEFORE) -> str:
    """The report as one HTML document (a str ending in a newline)."""
    from denpex.report.trace_section import summary_lines

    report = made_visible(report)  # no control character of a log reaches the page
    root = report.root_cause
    before = root.context_before if root else []
    shown = before[-shown_before:] if shown_before else []
    doctor = [n for n in report.notes if n.startswith("doctor")]
    html = _template().render(
        report=report,
        root=root,
        hidden_before=before[: len(before) - len(shown)],
        shown_before=shown,
        shown_after=root.context_after[:_SHOWN_AFTER] if root else [],
        more_after=max(0, len(root.context_after) - _SHOWN_AFTER) if root else 0,
        timeline=timeline(report),
        others=_others(report),
        doctor_notes=doctor,
        notes=[n for n in report.notes if n not in doctor],
        trace_lines=summary_lines(report.torch_trace) if report.torch_trace is not None else [],
        nonce=secrets.token_urlsafe(16),
    )
    return html if html.endswith("\n") else html + "\n"


@cache
def _template() -> jinja2.Template:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(_TEMPLATES),
        autoescape=True,  # explicit: select_autoescape() would not match a name ending in .j2
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    return env.get_template("report.html.j2")


def _cut(text: str, limit: int = _TITLE_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _rank_marks(rank: RankOut) -> list[tuple[str, EvidenceOut]]:
    marks: list[tuple[str, EvidenceOut]] = []
    if rank.first_warning is not None:
        marks.append(("warning", rank.first_warning))
    if rank.first_error is not None:
        marks.append(("error", rank.first_error))
    if rank.last_line is not None and not _same_line(rank.last_line, rank.first_error):  # else the error says it
        marks.append(("exit", rank.last_line))
    return marks


def _same_line(a: EvidenceOut | None, b: EvidenceOut | None) -> bool:
    """One line of the log (a rank's last line carries no timestamp where its first error does)."""
    return a is not None and b is not None and (a.file, a.line) == (b.file, b.line)


def _stamped(rank: RankOut) -> dict[tuple[str, int], float]:
    """Each of a rank's evidence lines with a time: its own, else that of the latest stamped line before it
    in the same file (a traceback line has no timestamp but comes at or after the line above it)."""
    lines = [
        e
        for e in (rank.first_line, rank.last_healthy, rank.first_warning, rank.first_error, rank.last_line)
        if e is not None
    ]
    times: dict[tuple[str, int], float] = {}
    last: dict[str, float] = {}
    for ev in sorted(lines, key=lambda e: (e.file, e.line)):
        if ev.timestamp is not None:
            last[ev.file] = ev.timestamp
        if ev.file in last:
            times[(ev.file, ev.line)] = last[ev.file]
    return times


def timeline(report: DiagnosisOut) -> Timeline | None:
    """Rows and marks of the per-rank timeline, or None when the log names no rank.

    By time when every rank's marks can be placed in time, else by line number within each rank's file."""
    ranks = report.ranks
    if not ranks:
        return None
    stamped = [_stamped(r) for r in ranks]
    by_time = all(
        all((e.file, e.line) in times for _, e in _rank_marks(r)) and times
        for r, times in zip(ranks, stamped, strict=True)
    )
    if by_time:
        values = [t for times in stamped for t in times.values()]
        low, high = min(values), max(values)
        scale = f"time: {high - low:.3f} s from the first to the last timestamped line of any rank"
        axis_start, axis_end = "+0.000 s", f"+{high - low:.3f} s"
    else:
        file_end: Counter[str] = Counter()
        for r in ranks:
            for ev in (r.first_line, r.last_line, r.first_error, r.first_warning):
                if ev is not None:
                    file_end[ev.file] = max(file_end[ev.file], ev.line)
        scale = "line number within each rank's file (the log has no timestamps to place every rank in time)"
        axis_start, axis_end = "line 1", "last line"
    compact = len(ranks) >= _COMPACT_FROM
    row_h = _COMPACT_ROW if compact else _WIDE_ROW
    root = report.root_cause
    initiating = root.rank if root else None
    echo_of = {rank: f"collateral-{group.id}" for group in reversed(report.collateral) for rank in group.ranks}

    def x_of(index: int, ev: EvidenceOut) -> float:
        if by_time:
            t = stamped[index][(ev.file, ev.line)]
            frac = (t - low) / (high - low) if high > low else 1.0
        else:
            frac = ev.line / max(file_end[ev.file], 1)
        return round(_LABEL_W + frac * _PLOT_W, 1)

    rows = []
    for i, r in enumerate(ranks):
        y = 22 + i * row_h  # below the axis labels
        start = x_of(i, r.first_line) if r.first_line is not None else _LABEL_W
        marks = [
            Mark(
                kind=kind,
                x=x_of(i, ev),
                title=_mark_title(kind, r, ev),
                href=echo_of.get(r.rank) if kind == "error" and r.rank != initiating else None,
            )
            for kind, ev in _rank_marks(r)
        ]
        end = max([start, *(m.x for m in marks)])
        where = f" on {r.host}" if r.host else ""
        exit_text = "" if r.exit_code is None else f", exit code {r.exit_code}"
        rows.append(
            Row(
                rank=r.rank,
                y=y,
                bar_x=start,
                bar_w=max(round(end - start, 1), 2.0),
                initiating=r.rank == initiating,
                label=not compact or r.rank == initiating or r.rank % _COMPACT_LABEL_EVERY == 0,
                title=f"rank {r.rank}{where}: {r.lines:,} lines{exit_text}"
                + (" (initiating rank)" if r.rank == initiating else ""),
                marks=marks,
            )
        )
    return Timeline(
        mode="time" if by_time else "line",
        scale=scale,
        start=axis_start,
        end=axis_end,
        width=_LABEL_W + _PLOT_W + _PAD_R,
        height=22 + len(ranks) * row_h + 6,
        row_h=row_h,
        plot_x=_LABEL_W,
        plot_w=_PLOT_W,
        rows=rows,
        compact=compact,
    )


def _mark_title(kind: str, rank: RankOut, ev: EvidenceOut) -> str:
    what = {"warning": "first warning", "error": "first error", "exit": "last line"}[kind]
    if kind == "error" and _same_line(ev, rank.last_line):
        what += " and last line"
    if kind != "warning" and _same_line(ev, rank.last_line) and rank.exit_code is not None:
        what += f" (exit code {rank.exit_code})"
    return f"rank {rank.rank} {what}, {ev.file}:{ev.line}: {_cut(ev.text)}"


def _others(report: DiagnosisOut) -> list[OtherFinding]:
    """Findings other than the root cause, its context and collateral, one row per role and entry."""
    root = report.root_cause
    rows: dict[tuple[str, str], OtherFinding] = {}
    ranks: dict[tuple[str, str], set[int]] = {}
    for f in report.findings:
        if f.role in ("context", "collateral") or _same(f, root):
            continue
        key = (f.role, f.id)
        if key not in rows:
            rows[key] = OtherFinding(
                role=f.role,
                id=f.id,
                title=f.title,
                ranks="",
                count=0,
                where=f"{f.evidence.file}:{f.evidence.line}",
                text=_cut(f.evidence.text, 400),
            )
        rows[key].count += f.count
        ranks.setdefault(key, set()).update(f.ranks)
    for key, row in rows.items():
        row.ranks = ",".join(str(r) for r in sorted(ranks[key])) or "-"
    return list(rows.values())


def _same(f: FindingOut, root: FindingOut | None) -> bool:
    return root is not None and f.id == root.id and f.evidence == root.evidence
