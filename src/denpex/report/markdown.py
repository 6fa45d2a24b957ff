"""A Markdown report, for pasting into an issue or a chat thread.

Every value from a log (a line, a file name, a captured field) is data: it goes into a code span or a fence
whose backtick run is longer than any in the value, and text outside code is escaped, so no log can close a
span, open a fence, or inject HTML (`<img onerror=...>`) into the rendered page. Newlines in values are shown
as `\\x0a` (display.visible) and cannot end a span or a fence.
"""

from __future__ import annotations

import re

from denpex.report.display import made_visible
from denpex.report.json_schema import DiagnosisOut
from denpex.report.ranks import cell_text, interesting_ranks
from denpex.report.shorten import common_root, relative, shortened

# what can change the meaning of inline text (values never start a line here: no list or heading markers)
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]|<>~&])")


def code(value: object) -> str:
    """An inline code span that holds the value whatever backticks it contains."""
    text = str(value)
    run = max((len(m) for m in re.findall(r"`+", text)), default=0)
    ticks = "`" * (run + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or not text.strip() else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def fence(lines: list[str], info: str = "text") -> list[str]:
    """A fenced block longer than any backtick run inside it."""
    run = max((len(m) for line in lines for m in re.findall(r"`+", line)), default=0)
    marker = "`" * max(4, run + 1)
    return [marker + info, *lines, marker]


def plain(value: object) -> str:
    """Text outside code: Markdown and HTML characters escaped."""
    return _MARKDOWN_SPECIAL.sub(r"\\\1", str(value))


def cell(value: object) -> str:
    """A table cell holding the value as code: its `|` escaped too, since GFM splits cells before spans."""
    return code(value).replace("|", "\\|")


_NAMED_INPUTS = 3  # inputs named in the summary line; the JSON report lists them all
_PATH_CHARS = 60
_MAX_RANK_ROWS = 64


def _inputs(report: DiagnosisOut, root: str) -> str:
    count = len(report.inputs)
    if count == 1:
        return f"{report.lines_read:,} lines from {code(report.inputs[0])}"
    names = ", ".join(code(relative(name, root)) for name in report.inputs[:_NAMED_INPUTS])
    more = f" and {count - _NAMED_INPUTS} more" if count > _NAMED_INPUTS else ""
    under = f" under {code(root + '/')}" if root else ""
    return f"{report.lines_read:,} lines from {count} files{under}: {names}{more}"


def _where(file: str, line: int, root: str) -> str:
    return f"{shortened(file, root, _PATH_CHARS)}:{line}"


def _rank_table(report: DiagnosisOut) -> list[str]:
    if len(report.ranks) < 2:
        return []
    root_rank = report.root_cause.rank if report.root_cause else None
    rows = interesting_ranks(report, _MAX_RANK_ROWS)
    out = ["", "### Ranks", "", "| rank | exit | lines | first error | last healthy line |", "|--:|--:|--:|---|---|"]
    for r in rows:
        rank = f"**{r.rank}** (initiating)" if r.rank == root_rank else str(r.rank)
        exit_code = "-" if r.exit_code is None else str(r.exit_code)
        error = cell(cell_text(r.first_error)) if r.first_error else "-"
        healthy = cell(cell_text(r.last_healthy)) if r.last_healthy else "-"
        out.append(f"| {rank} | {exit_code} | {r.lines} | {error} | {healthy} |")
    if len(rows) < len(report.ranks):
        rest = len(report.ranks) - len(rows)
        out += ["", f"{rest} more ranks not shown (see `--format json`)."]
    return out


def _collateral(report: DiagnosisOut, root: str) -> list[str]:
    if not report.collateral:
        return []
    out = ["", "### Collateral (echoes of the root cause)", ""]
    out += ["| entry | ranks | lines | first at |", "|---|--:|--:|---|"]
    for group in report.collateral:
        ranks = f"{len(group.ranks)} ({_span(group.ranks)})" if group.ranks else "-"
        where = cell(_where(group.first.file, group.first.line, root))
        out.append(f"| {plain(group.title)} ({cell(group.id)}) | {ranks} | {group.count} | {where} |")
    return out


def _divergence(report: DiagnosisOut, root: str) -> list[str]:
    div = report.divergence
    named = report.root_cause is not None and report.root_cause.rank is not None
    if div is None or not div.ranks or (div.against == "ranks" and named):
        return []
    title = "First divergence from the healthy run" if div.against == "baseline" else "Candidate culprit rank"
    out = ["", f"### {title}", ""]
    for d in div.ranks[:4]:
        who = "no rank" if d.rank is None else f"rank {d.rank}"
        how = "stopped after" if d.kind == "missing" else "first new line"
        out.append(f"- {who}, {how} {code(_where(d.line.file, d.line.line, root))}: {code(d.line.text)}")
        if d.expected is not None:
            out.append(f"  - healthy run went on with: {code(d.expected.text)}")
    return out


def _span(ranks: list[int]) -> str:
    """`0-3,7`: runs of consecutive ranks joined."""
    runs: list[list[int]] = []
    for rank in sorted(ranks):
        if runs and rank == runs[-1][-1] + 1:
            runs[-1].append(rank)
        else:
            runs.append([rank])
    return ",".join(f"{run[0]}-{run[-1]}" if len(run) > 2 else ",".join(map(str, run)) for run in runs)


def _dumps_say(report: DiagnosisOut) -> bool:
    """The Flight Recorder dumps found a rank that never joined or differs, though no log line failed."""
    return report.flight_recorder is not None and report.flight_recorder.kind is not None


def render(report: DiagnosisOut, shown_before: int = 20) -> str:
    report = made_visible(report)
    root_dir = common_root(report.inputs)
    out = [f"# denpex: {plain(report.verdict)}", ""]
    out.append(_inputs(report, root_dir))
    if report.torch_trace is not None:
        from denpex.report.trace_section import summary_lines

        out += ["", "## TORCH_TRACE", "", *[f"- {plain(ln)}" for ln in summary_lines(report.torch_trace)]]
    if report.flight_recorder is not None:
        partial = " (partial: a dump was cut off)" if report.flight_recorder.partial else ""
        said = report.flight_recorder.summary.removeprefix("Flight Recorder ")
        out += ["", f"**Flight Recorder:** {plain(said)}{partial}"]
    if report.notes:
        out += ["", *[f"> note: {plain(note)}" for note in report.notes]]
    root = report.root_cause
    if root is None:
        out += ["", "No failure or warning found" + (" in the logs; see the Flight Recorder line above." if _dumps_say(
            report) else ".")]
        return "\n".join(out) + "\n"
    rank = f" (rank {root.rank})" if root.rank is not None else ""
    out += [
        "",
        f"## Root cause: {plain(root.title)} ({code(root.id)})",
        "",
        f"- category: {code(root.category)}",
        f"- where: {code(_where(root.evidence.file, root.evidence.line, root_dir))}{rank}",
        f"- why this one: {plain(root.reason)}",
    ]
    if report.phase is not None:
        out.append(f"- phase: {plain(report.phase.shown())}")
    for key, value in root.fields.items():
        out.append(f"- {plain(key)}: {code(value)}")
    shown = [f"{ln.line:>7} | {ln.text}" for ln in root.context_before[-shown_before:]]
    shown.append(f"{root.evidence.line:>7} > {root.evidence.text}")
    shown += [f"{ln.line:>7} | {ln.text}" for ln in root.context_after[:5]]
    out += ["", *fence(shown), "", "### Explanation", "", plain(root.explanation), "", "### Confirm", ""]
    out += [f"- [ ] {plain(item)}" for item in root.checklist]
    out += ["", "### Fix", "", plain(root.fix), "", "### Verify", ""]
    if root.verify_setup:
        out += [f"{plain(root.verify_setup[:1].upper() + root.verify_setup[1:])}, then run:", ""]
    out += fence([root.verify], "sh")
    if root.siblings:
        out += ["", "### Other hypotheses", ""]
        out += [f"- {code(s.id)}: {plain(s.control)}" for s in root.siblings]
    out += _collateral(report, root_dir)
    out += _divergence(report, root_dir)
    out += _rank_table(report)
    rest = [f for f in report.findings if f.role != "context" and f.evidence != root.evidence]
    if rest:
        out += ["", "### Other findings", "", "| role | entry | rank | count | first at |", "|---|---|---|---|---|"]
        for f in rest:
            r = "-" if f.rank is None else str(f.rank)
            where = cell(_where(f.evidence.file, f.evidence.line, root_dir))
            out.append(f"| {plain(f.role)} | {cell(f.id)} | {r} | {f.count} | {where} |")
    return "\n".join(out) + "\n"
