"""The human report: what failed first, where, why, how to fix it and how to prove the fix.

Laid out for any width from 80 columns up: labels and bullets hang (wrapped text keeps its indent), log lines
keep their gutter when they wrap, tables cut long values with "…" and paths are cut from the left.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.padding import Padding
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from denpex.report.display import made_visible
from denpex.report.json_schema import DiagnosisOut, EvidenceOut, FindingOut
from denpex.report.ranks import cell_text, interesting_ranks
from denpex.report.shorten import common_root, cut, shortened

_VERDICT_STYLE = {"failure": "bold red", "warning": "bold yellow", "clean": "bold green"}
_SHOWN_BEFORE = 12  # lines of context shown by default in the terminal; JSON and --context carry more
_SHOWN_AFTER = 5
_LINE_CHARS = 500  # of one context line; the decisive line is shown whole up to report.json_schema.shown()
_PATH_CHARS = 40
_MAX_RANK_ROWS = 16
_PATH_IN_TEXT = re.compile(r"(?<![^\s(])(?:/|\.{0,2}/|\w:\\)[^\s:;,()]+")  # a file named in a note


class Gutter:
    """Numbered log lines: a line that wraps repeats the gutter (`│`) on each continuation, at any width."""

    def __init__(self) -> None:
        self.rows: list[tuple[str, str, Text]] = []  # (number, mark, text)

    def add(self, number: int | str, mark: str, text: Text) -> None:
        self.rows.append((str(number), mark, text))

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        digits = max((len(n) for n, _, _ in self.rows), default=1)
        width = max(options.max_width - digits - 3, 8)
        for number, mark, text in self.rows:
            style = "bold red" if mark == "▶" else "dim"
            pieces = text.wrap(console, width, overflow="fold") if text.plain else [Text()]
            for i, piece in enumerate(pieces):
                head = f"{number:>{digits}} {mark} " if i == 0 else f"{'':>{digits}} │ "
                yield Text.assemble((head, style), piece, no_wrap=True, overflow="crop")


def _hanging(rows: Iterable[tuple[str | Text, str | Text]], label_style: str = "dim") -> Table:
    """Two columns: a label or bullet, and text that wraps under itself rather than under the label."""
    grid = Table.grid(padding=(0, 1))
    grid.add_column(no_wrap=True, style=label_style)
    grid.add_column(overflow="fold")
    for label, value in rows:
        grid.add_row(label, value)
    return grid


def _bullets(items: Iterable[str | Text]) -> Table:
    return _hanging((("  •", item) for item in items), label_style="")


def _where(ev: EvidenceOut, root: str, rank: int | None = None) -> str:
    where = f"{shortened(ev.file, root, _PATH_CHARS)}:{ev.line}"
    return where + (f" (rank {rank})" if rank is not None else "")


def _context_block(report: DiagnosisOut, shown_before: int) -> RenderableType:
    root = report.root_cause
    assert root is not None
    before = root.context_before[-shown_before:] if shown_before else []
    gutter = Gutter()
    for ln in before:
        gutter.add(ln.line, "│", Text(cut(ln.text, _LINE_CHARS)))
    gutter.add(root.evidence.line, "▶", Text(root.evidence.text, "bold red on grey15"))
    for ln in root.context_after[:_SHOWN_AFTER]:
        gutter.add(ln.line, "│", Text(cut(ln.text, _LINE_CHARS)))
    hidden = len(root.context_before) - len(before)
    if not hidden:
        return gutter
    return Group(Text(f"… {hidden} earlier lines (--shown N shows more)", "dim"), gutter)


def _shell_lines(command: str, width: int) -> list[str]:
    """A shell command in lines of at most `width` (where its words allow), joined by ` \\` so it still pastes."""
    words = re.findall(r"""(?:<[^<>]*>|[^\s'"]+|'[^']*'|"(?:\\.|[^"\\])*")+""", command) or [command]
    units: list[str] = []  # an option stays with its value: `--log FILE`
    for word in words:
        if (
            units
            and units[-1].startswith("-")
            and units[-1] != "--"
            and " " not in units[-1]
            and not word.startswith("-")
        ):
            units[-1] += f" {word}"
        else:
            units.append(word)
    lines = [units[0]]
    for word in units[1:]:
        if len(lines[-1]) + 1 + len(word) + 2 <= width:
            lines[-1] += f" {word}"
        else:
            lines[-1] += " \\"
            lines.append(f"    {word}")
    return lines


def render(report: DiagnosisOut, console: Console, shown_before: int = _SHOWN_BEFORE) -> None:
    report = made_visible(report)  # no control character of a log or a file name reaches the terminal
    verdict = report.verdict
    root_dir = common_root(report.inputs)
    count = len(report.inputs)
    under = f" in {shortened(root_dir, limit=60)}/" if root_dir and count > 1 else ""
    console.print(
        Text.assemble(
            ("denpex ", "bold"),
            (verdict.upper(), _VERDICT_STYLE[verdict]),
            f"  {report.lines_read:,} lines from {count} input{'s' if count != 1 else ''}{under}",
        )
    )
    if report.flight_recorder is not None:
        fr = report.flight_recorder
        said = fr.summary.removeprefix("Flight Recorder ")
        line = _PATH_IN_TEXT.sub(lambda m: shortened(m[0], root_dir, _PATH_CHARS), said)
        console.print(_hanging([("Flight Recorder", line + (" (partial: a dump was cut off)" if fr.partial else ""))],
                               label_style="cyan"))
    root = report.root_cause
    if root is None:
        seen = report.flight_recorder is not None and report.flight_recorder.kind is not None
        console.print("No failure or warning found" + (" in the logs; see the Flight Recorder line above." if seen
                                                         else "."))
        return
    rows: list[tuple[str | Text, str | Text]] = [
        (Text("Root cause", "bold"), Text.assemble((root.title, "bold"), (f"  [{root.id}]", "cyan"))),
        ("category", root.category),
        ("where", _where(root.evidence, root_dir, root.rank)),
    ]
    if report.phase is not None:
        rows.append(("phase", report.phase.shown()))
    if root.fields:
        rows.append(("fields", Text(", ".join(f"{k}={_short(v)}" for k, v in root.fields.items()), "magenta")))
    rows.append(("why", root.reason))
    if root.rank is not None and root.rank_reason:
        rows.append((f"rank {root.rank}", root.rank_reason + (f" (on {root.host})" if root.host else "")))
    console.print(Panel(Group(_hanging(rows), Text(), _context_block(report, shown_before)), border_style="red"))
    console.print(Text("Explanation", style="bold"))
    console.print(Text(root.explanation))
    console.print(Text("\nConfirm", style="bold"))
    console.print(_bullets(root.checklist))
    console.print(Text("\nFix", style="bold green"))
    console.print(Text(root.fix))
    console.print(Text("\nVerify", style="bold green"))
    if root.verify_setup:
        console.print(Padding(Text(f"{root.verify_setup[:1].upper()}{root.verify_setup[1:]}, then run:"), (0, 2)))
    console.print(Text("\n".join(f"  {ln}" for ln in _shell_lines(root.verify, console.width - 2))))
    if root.siblings:
        console.print(Text("\nOther hypotheses and the control that separates them", style="bold"))
        console.print(_bullets(Text.assemble((s.id, "cyan"), f": {s.control}") for s in root.siblings))
    _collateral(report, console, root_dir)
    _divergence(report, console, root_dir)
    _ranks(report, console)
    _others(report, console, root_dir)
    if report.torch_trace is not None:
        from denpex.report.trace_section import summary_lines

        console.print(Text("\nTORCH_TRACE", style="bold"))
        console.print(_bullets(summary_lines(report.torch_trace)))
    if report.notes:
        console.print()
        notes = (_PATH_IN_TEXT.sub(lambda m: shortened(m[0], root_dir, _PATH_CHARS), n) for n in report.notes)
        console.print(_hanging((("note:", note) for note in notes), label_style="yellow"))


def _divergence(report: DiagnosisOut, console: Console, root_dir: str) -> None:
    """Where the run first departs from its healthy run; between ranks, only when no entry named a rank."""
    div = report.divergence
    root = report.root_cause
    if div is None or not div.ranks or (div.against == "ranks" and root is not None and root.rank is not None):
        return
    title = "First divergence from the healthy run" if div.against == "baseline" else (
        "Candidate culprit: the rank that departs from the others first")
    console.print(Text(f"\n{title}", style="bold"))
    items = []
    for d in div.ranks[:4]:
        who = "lines without a rank" if d.rank is None else f"rank {d.rank}"
        how = "stopped after" if d.kind == "missing" else "first new line"
        where = _where(d.line, root_dir)
        text = Text.assemble((f"{who}: ", "bold"), f"{how} ", (where, "dim"), ": ", cut(d.line.text, _LINE_CHARS))
        if d.expected is not None:
            text.append(f"  (healthy run went on with: {cut(d.expected.text, _LINE_CHARS)})", "dim")
        items.append(text)
    console.print(_bullets(items))


def _collateral(report: DiagnosisOut, console: Console, root_dir: str) -> None:
    if not report.collateral:
        return
    console.print(Text("\nCollateral (echoes of the root cause)", style="bold"))
    console.print(
        _bullets(
            Text.assemble(f"{group.summary}  ", (f"first at {_where(group.first, root_dir)}", "dim"))
            for group in report.collateral
        )
    )


def _ranks(report: DiagnosisOut, console: Console) -> None:
    if len(report.ranks) < 2:
        return
    root_rank = report.root_cause.rank if report.root_cause else None
    table = Table(title="Ranks", title_justify="left")
    table.add_column("rank", justify="right", no_wrap=True)
    table.add_column("exit", justify="right", no_wrap=True)
    table.add_column("lines", justify="right", no_wrap=True)
    rows = interesting_ranks(report, _MAX_RANK_ROWS)
    numbers = sum(
        max(len(h), *(len(str(v)) for v in vs))
        for h, vs in (
            ("rank", [r.rank for r in rows]),
            ("exit", [r.exit_code for r in rows]),
            ("lines", [r.lines for r in rows]),
        )
    )
    text_width = max(console.width - numbers - 16, 12)  # 16: a table's six borders and ten padding cells
    errors = [Text(cell_text(r.first_error)) for r in rows]
    healthy = [Text(cell_text(r.last_healthy)) for r in rows]
    error_width = _share(max(t.cell_len for t in errors), max(t.cell_len for t in healthy), text_width)
    table.add_column("first error", no_wrap=True, overflow="ellipsis", max_width=error_width)
    table.add_column("last healthy line", no_wrap=True, overflow="ellipsis", max_width=text_width - error_width)
    for r, error, last in zip(rows, errors, healthy, strict=True):
        style = "bold red" if r.rank == root_rank else None
        exit_code = "-" if r.exit_code is None else str(r.exit_code)
        table.add_row(str(r.rank), exit_code, str(r.lines), error, last, style=style)
    if len(rows) < len(report.ranks):
        table.caption = f"{len(report.ranks) - len(rows)} more ranks not shown (see --format json)"
    console.print()
    console.print(table)


def _share(first: int, second: int, width: int) -> int:
    """The first of two columns' width: what it needs if both fit, else at least three fifths of `width`."""
    if first + second <= width:
        return max(first, 1)
    return min(first, max(width * 3 // 5, width - second))


def _others(report: DiagnosisOut, console: Console, root_dir: str) -> None:
    root = report.root_cause
    rest = [f for f in report.findings if f.role not in ("context", "collateral") and not _same(f, root)]
    if not rest:
        return
    table = Table(title="Other findings", title_justify="left", show_lines=False, expand=False)
    table.add_column("role", no_wrap=True)
    table.add_column("entry", overflow="fold")
    table.add_column("ranks", overflow="fold")
    table.add_column("count", justify="right", no_wrap=True)
    table.add_column("first at", overflow="fold")
    grouped: Counter[tuple[str, str]] = Counter()
    firsts: dict[tuple[str, str], FindingOut] = {}
    ranks: dict[tuple[str, str], set[int]] = {}
    for f in rest:
        key = (f.role, f.id)
        grouped[key] += f.count
        firsts.setdefault(key, f)
        ranks.setdefault(key, set()).update(f.ranks)
    for key, count in grouped.items():
        rank_text = ",".join(str(r) for r in sorted(ranks[key])) or "-"
        table.add_row(key[0], key[1], rank_text, str(count), Text(_where(firsts[key].evidence, root_dir)))
    console.print()
    console.print(table)


def _same(f: FindingOut, root: FindingOut | None) -> bool:
    return root is not None and f.id == root.id and f.evidence == root.evidence


def _short(value: object) -> str:
    text = ", ".join(map(str, value)) if isinstance(value, list) else str(value)
    return cut(text, 120)
