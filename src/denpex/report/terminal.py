"""The human report: what failed first, where, why, how to fix it and how to prove the fix."""

from __future__ import annotations

from collections import Counter

from rich.console import Console, Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from denpex.report.display import made_visible
from denpex.report.json_schema import ContextLine, DiagnosisOut, FindingOut

_VERDICT_STYLE = {"failure": "bold red", "warning": "bold yellow", "clean": "bold green"}
_SHOWN_BEFORE = 12  # lines of context shown by default in the terminal; JSON and --context carry more


def _where(f: FindingOut) -> str:
    rank = f" (rank {f.rank})" if f.rank is not None else ""
    return f"{f.evidence.file}:{f.evidence.line}{rank}"


def _context_block(report: DiagnosisOut, shown_before: int) -> Text:
    root = report.root_cause
    assert root is not None
    text = Text()
    before: list[ContextLine] = root.context_before[-shown_before:] if shown_before else []
    if len(root.context_before) > len(before):
        text.append(f"   … {len(root.context_before) - len(before)} earlier lines (--shown N shows more)\n", "dim")
    for ln in before:
        text.append(f"{ln.line:>7} │ ", "dim")
        text.append(ln.text[:300] + "\n")
    text.append(f"{root.evidence.line:>7} ▶ ", "bold red")
    text.append(root.evidence.text[:500] + "\n", "bold red on grey15")
    for ln in root.context_after[:5]:
        text.append(f"{ln.line:>7} │ ", "dim")
        text.append(ln.text[:300] + "\n")
    return text


def render(report: DiagnosisOut, console: Console, shown_before: int = _SHOWN_BEFORE) -> None:
    report = made_visible(report)  # no control character of a log or a file name reaches the terminal
    verdict = report.verdict
    console.print(
        Text.assemble(
            ("denpex ", "bold"),
            (verdict.upper(), _VERDICT_STYLE[verdict]),
            f"  {report.lines_read:,} lines from {len(report.inputs)} input(s)",
        )
    )
    root = report.root_cause
    if root is None:
        console.print("No failure or warning found.")
        return
    head = Text.assemble(
        ("Root cause  ", "bold"),
        (f"{root.title}", "bold"),
        (f"  [{root.id}]", "cyan"),
        f"\n            category {root.category} · {_where(root)}",
    )
    if root.fields:
        shown = ", ".join(f"{k}={_short(v)}" for k, v in root.fields.items())
        head.append(f"\n            {shown}", "magenta")
    head.append(f"\n            why: {root.reason}", "dim")
    if root.rank is not None and root.rank_reason:
        where = f"rank {root.rank}" + (f" on {root.host}" if root.host else "")
        head.append(f"\n            {where}: {root.rank_reason}", "dim")
    console.print(Panel(Group(head, Text(), _context_block(report, shown_before)), border_style="red"))
    console.print(Text("Explanation", style="bold"))
    console.print(Text(root.explanation))
    console.print(Text("\nConfirm", style="bold"))
    for item in root.checklist:
        console.print(Text(f"  • {item}"))
    console.print(Text("\nFix", style="bold green"))
    console.print(Text(root.fix))
    console.print(Text("\nVerify", style="bold green"))
    console.print(Text(f"  {root.verify}"), soft_wrap=True)
    if root.siblings:
        console.print(Text("\nOther hypotheses and the control that separates them", style="bold"))
        for sib in root.siblings:
            console.print(Text.assemble("  • ", (sib.id, "cyan"), f": {sib.control}"))
    _collateral(report, console)
    _ranks(report, console)
    _others(report, console)
    for note in report.notes:
        console.print(Text(f"note: {note}", style="yellow"))


_MAX_RANK_ROWS = 16


def _collateral(report: DiagnosisOut, console: Console) -> None:
    if not report.collateral:
        return
    console.print(Text("\nCollateral (echoes of the root cause)", style="bold"))
    for group in report.collateral:
        where = f"first at {group.first.file}:{group.first.line}"
        console.print(Text.assemble(f"  • {group.summary}  ", (where, "dim")))


def _ranks(report: DiagnosisOut, console: Console) -> None:
    if len(report.ranks) < 2:
        return
    root_rank = report.root_cause.rank if report.root_cause else None
    table = Table(title="Ranks", title_justify="left")
    for column in ("rank", "exit", "lines", "first error", "last healthy line"):
        table.add_column(column)
    rows = report.ranks
    if len(rows) > _MAX_RANK_ROWS:  # the initiating rank, the failing ones, then a count of the rest
        failing = [r for r in rows if r.first_error or r.rank == root_rank]
        rows = (failing or rows)[:_MAX_RANK_ROWS]
    for r in rows:
        style = "bold red" if r.rank == root_rank else None
        error = f"{r.first_error.file}:{r.first_error.line}" if r.first_error else "-"
        healthy = r.last_healthy.text[:70] if r.last_healthy else "-"
        exit_code = "-" if r.exit_code is None else str(r.exit_code)
        table.add_row(str(r.rank), exit_code, str(r.lines), Text(error), Text(healthy), style=style)
    if len(rows) < len(report.ranks):
        table.caption = f"{len(report.ranks) - len(rows)} more ranks without errors (see --format json)"
    console.print()
    console.print(table)


def _others(report: DiagnosisOut, console: Console) -> None:
    root = report.root_cause
    rest = [f for f in report.findings if f.role not in ("context", "collateral") and not _same(f, root)]
    if not rest:
        return
    table = Table(title="Other findings", title_justify="left", show_lines=False, expand=False)
    table.add_column("role")
    table.add_column("entry")
    table.add_column("ranks")
    table.add_column("count", justify="right")
    table.add_column("first at")
    grouped: Counter[tuple[str, str]] = Counter()
    firsts: dict[tuple[str, str], FindingOut] = {}
    ranks: dict[tuple[str, str], set[int]] = {}
    for f in rest:
        key = (f.role, f.id)
        grouped[key] += f.count
        firsts.setdefault(key, f)
        ranks.setdefault(key, set()).update(f.ranks)
    for key, count in grouped.items():
        first = firsts[key]
        rank_text = ",".join(str(r) for r in sorted(ranks[key])) or "-"
        table.add_row(key[0], key[1], rank_text, str(count), Text(f"{first.evidence.file}:{first.evidence.line}"))
    console.print()
    console.print(table)


def _same(f: FindingOut, root: FindingOut | None) -> bool:
    return root is not None and f.id == root.id and f.evidence == root.evidence


def _short(value: object) -> str:
    text = ", ".join(map(str, value)) if isinstance(value, list) else str(value)
    return text if len(text) <= 120 else text[:117] + "…"
