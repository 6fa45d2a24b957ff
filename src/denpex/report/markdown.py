"""A Markdown report, for pasting into an issue or a chat thread."""

from __future__ import annotations

from denpex.report.display import made_visible
from denpex.report.json_schema import DiagnosisOut


def render(report: DiagnosisOut, shown_before: int = 20) -> str:
    report = made_visible(report)
    out = [f"# denpex: {report.verdict}", ""]
    out.append(f"{report.lines_read:,} lines from {', '.join(report.inputs)}")
    root = report.root_cause
    if root is None:
        out += ["", "No failure or warning found."]
        return "\n".join(out) + "\n"
    rank = f" (rank {root.rank})" if root.rank is not None else ""
    out += [
        "",
        f"## Root cause: {root.title} (`{root.id}`)",
        "",
        f"- category: `{root.category}`",
        f"- where: `{root.evidence.file}:{root.evidence.line}`{rank}",
        f"- why this one: {root.reason}",
    ]
    for key, value in root.fields.items():
        out.append(f"- {key}: `{value}`")
    fence = "````"
    out += ["", fence + "text"]
    for ln in root.context_before[-shown_before:]:
        out.append(f"{ln.line:>7} | {ln.text}")
    out.append(f"{root.evidence.line:>7} > {root.evidence.text}")
    for ln in root.context_after[:5]:
        out.append(f"{ln.line:>7} | {ln.text}")
    out += [fence, "", "### Explanation", "", root.explanation, "", "### Confirm", ""]
    out += [f"- [ ] {item}" for item in root.checklist]
    out += ["", "### Fix", "", root.fix, "", "### Verify", "", "```sh", root.verify, "```"]
    if root.siblings:
        out += ["", "### Other hypotheses", ""]
        out += [f"- `{s.id}`: {s.control}" for s in root.siblings]
    rest = [f for f in report.findings if f.role != "context" and f.evidence != root.evidence]
    if rest:
        out += ["", "### Other findings", "", "| role | entry | rank | count | first at |", "|---|---|---|---|---|"]
        for f in rest:
            r = "-" if f.rank is None else str(f.rank)
            out.append(f"| {f.role} | `{f.id}` | {r} | {f.count} | `{f.evidence.file}:{f.evidence.line}` |")
    return "\n".join(out) + "\n"
