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


def render(report: DiagnosisOut, shown_before: int = 20) -> str:
    report = made_visible(report)
    out = [f"# denpex: {plain(report.verdict)}", ""]
    out.append(f"{report.lines_read:,} lines from {', '.join(code(i) for i in report.inputs)}")
    if report.notes:
        out += ["", *[f"> note: {plain(note)}" for note in report.notes]]
    root = report.root_cause
    if root is None:
        out += ["", "No failure or warning found."]
        return "\n".join(out) + "\n"
    rank = f" (rank {root.rank})" if root.rank is not None else ""
    out += [
        "",
        f"## Root cause: {plain(root.title)} ({code(root.id)})",
        "",
        f"- category: {code(root.category)}",
        f"- where: {code(f'{root.evidence.file}:{root.evidence.line}')}{rank}",
        f"- why this one: {plain(root.reason)}",
    ]
    for key, value in root.fields.items():
        out.append(f"- {plain(key)}: {code(value)}")
    shown = [f"{ln.line:>7} | {ln.text}" for ln in root.context_before[-shown_before:]]
    shown.append(f"{root.evidence.line:>7} > {root.evidence.text}")
    shown += [f"{ln.line:>7} | {ln.text}" for ln in root.context_after[:5]]
    out += ["", *fence(shown), "", "### Explanation", "", plain(root.explanation), "", "### Confirm", ""]
    out += [f"- [ ] {plain(item)}" for item in root.checklist]
    out += ["", "### Fix", "", plain(root.fix), "", "### Verify", "", *fence([root.verify], "sh")]
    if root.siblings:
        out += ["", "### Other hypotheses", ""]
        out += [f"- {code(s.id)}: {plain(s.control)}" for s in root.siblings]
    rest = [f for f in report.findings if f.role != "context" and f.evidence != root.evidence]
    if rest:
        out += ["", "### Other findings", "", "| role | entry | rank | count | first at |", "|---|---|---|---|---|"]
        for f in rest:
            r = "-" if f.rank is None else str(f.rank)
            where = code(f"{f.evidence.file}:{f.evidence.line}").replace("|", "\\|")
            out.append(f"| {plain(f.role)} | {code(f.id)} | {r} | {f.count} | {where} |")
    return "\n".join(out) + "\n"
