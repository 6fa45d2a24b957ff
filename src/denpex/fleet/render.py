"""Triage and history reports for people: a terminal (Rich tables) and Markdown.

All text from logs (decisive lines, job ids, paths, messages) is untrusted: every string passes through
report.display.visible (no control character reaches a terminal), Rich markup is never interpreted in
it (Text objects, not markup strings), and Markdown gets report.markdown's code spans and escaping.
"""

from __future__ import annotations

from rich.console import Console
from rich.table import Table
from rich.text import Text

from denpex.fleet.history import FingerprintStats
from denpex.fleet.schema import TriageOut
from denpex.report.display import map_strings, visible
from denpex.report.markdown import code, fence, plain

SHOWN_LINE = 240  # the terminal shows this much of a normalised line; JSON and Markdown show all of it


def _hours(value: float | None) -> str:
    return "-" if value is None else f"{value:,.1f}"


def _day(stamp: str) -> str:
    return stamp[:16].replace("T", " ")


def made_visible(report: TriageOut) -> TriageOut:
    """A copy with every string through display.visible (which walks dataclasses, not pydantic models)."""
    return TriageOut.model_validate(map_strings(report.model_dump(), visible))


def terminal(report: TriageOut, console: Console) -> None:
    report = made_visible(report)
    failing = sum(g.count for g in report.groups)
    console.print(Text(f"{report.jobs} jobs: {failing} failed or warned in {len(report.groups)} groups, "
                       f"{len(report.clean_jobs)} clean, {len(report.errors)} could not be diagnosed "
                       f"(ranked by {report.sort})", style="bold"))
    if report.groups:
        table = Table()
        for column in ("#", "jobs", "GPU-h", "entry", "category", "first seen", "last seen", "history"):
            table.add_column(column, overflow="fold", no_wrap=column in ("#", "jobs", "first seen", "last seen"))
        for rank, g in enumerate(report.groups, start=1):
            history = g.history.summary if g.history else "-"
            if g.history and g.history.earlier_runs:
                history = f"RECURRING: {history}"
            table.add_row(str(rank), str(g.count), _hours(g.gpu_hours), Text(g.entry_id), Text(g.category),
                          _day(g.first_seen), _day(g.last_seen), Text(history))
        console.print(table)
        for rank, g in enumerate(report.groups, start=1):
            console.print(Text(f"#{rank} {g.title} ({g.entry_id}), {g.count} jobs", style="bold"))
            line = g.decisive_line if len(g.decisive_line) <= SHOWN_LINE else g.decisive_line[:SHOWN_LINE] + "…"
            console.print(Text(f"  line: {line}"))
            console.print(Text(f"  jobs: {', '.join(g.example_jobs)}{' …' if g.count > len(g.example_jobs) else ''}"))
            if g.history:
                recurring = "RECURRING: " if g.history.earlier_runs else ""
                console.print(Text(f"  history: {recurring}{g.history.summary}", style="bold" if recurring else ""))
            console.print(Text(f"  fix: {' '.join(g.fix.split())}"))
            console.print(Text(f"  verify: {g.verify}"))
    if report.errors:
        table = Table(title="could not be diagnosed", title_justify="left")
        table.add_column("job")
        table.add_column("error", overflow="fold")
        for e in report.errors:
            table.add_row(Text(e.job_id), Text(e.message))
        console.print(table)


def markdown(report: TriageOut) -> str:
    report = made_visible(report)
    failing = sum(g.count for g in report.groups)
    out = ["# denpex triage", "",
           f"{report.jobs} jobs: {failing} failed or warned in {len(report.groups)} groups, "
           f"{len(report.clean_jobs)} clean, {len(report.errors)} could not be diagnosed (ranked by "
           f"{plain(report.sort)})"]
    if report.groups:
        out += ["", "| # | jobs | GPU-h | entry | first seen | last seen | examples | history |",
                "|---|---|---|---|---|---|---|---|"]
        for rank, g in enumerate(report.groups, start=1):
            history = plain(g.history.summary) if g.history else "-"
            examples = ", ".join(code(j).replace("|", "\\|") for j in g.example_jobs)
            out.append(f"| {rank} | {g.count} | {_hours(g.gpu_hours)} | {code(g.entry_id)} | "
                       f"{plain(_day(g.first_seen))} | {plain(_day(g.last_seen))} | {examples} | {history} |")
        for rank, g in enumerate(report.groups, start=1):
            out += ["", f"## {rank}. {plain(g.title)} ({code(g.entry_id)}), {g.count} jobs", "",
                    f"- category: {code(g.category)}", f"- fingerprint: {code(g.fingerprint)}"]
            if g.owners:
                out.append(f"- owners: {', '.join(code(o) for o in g.owners)}")
            if g.history:
                out.append(f"- history: {plain(g.history.summary)}")
            out += ["", *fence([g.decisive_line]), "", "Fix: " + plain(" ".join(g.fix.split())), "",
                    *fence([g.verify], "sh")]
    if report.errors:
        out += ["", "## Could not be diagnosed", ""]
        out += [f"- {code(e.job_id)}: {plain(e.message)}" for e in report.errors]
    return "\n".join(out) + "\n"


def history_terminal(stats: list[FingerprintStats], path: str, console: Console) -> None:
    table = Table(title=visible(f"{len(stats)} fingerprints in {path}"), title_justify="left")
    for column in ("jobs", "GPU-h", "entry", "first seen", "last seen", "decisive line (normalised)"):
        table.add_column(column, overflow="fold")
    for s in stats:
        table.add_row(str(s.jobs), _hours(s.gpu_hours), Text(visible(s.entry_id)),
                      s.first_seen.strftime("%Y-%m-%d %H:%M"), s.last_seen.strftime("%Y-%m-%d %H:%M"),
                      Text(visible(s.line)))
    console.print(table)
