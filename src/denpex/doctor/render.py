"""The human doctor report: one line per check by section, then each problem with its evidence and fix."""

from __future__ import annotations

from rich.console import Console
from rich.text import Text

from denpex.doctor.model import DoctorReport

_MARK = {"ok": ("✓", "green"), "info": ("·", "dim"), "warning": ("!", "yellow"), "error": ("✗", "bold red"),
         "skipped": ("-", "dim")}
_TITLES = {"python": "Python", "torch": "torch / Triton", "toolchain": "Compilers", "gpu": "GPU / CUDA",
           "cache": "Caches", "env": "Environment"}


def render(report: DoctorReport, console: Console, *, verbose: bool = False) -> None:
    status = {"ok": ("OK", "bold green"), "warning": ("WARNINGS", "bold yellow"),
              "error": ("PROBLEMS", "bold red")}[report.worst]
    console.print(Text.assemble(("denpex doctor ", "bold"), status,
                                f"  {len(report.problems)} problem(s), {report.elapsed_s:.1f}s"))
    for section, title in _TITLES.items():
        checks = report.section(section)
        if not checks:
            continue
        console.print(Text(f"\n{title}", style="bold"))
        for check in checks:
            glyph, style = _MARK[check.status]
            line = Text.assemble((f"  {glyph} ", style), (f"{check.name}: ", "bold"), check.summary)
            if verbose and check.facts:
                line.append(f"\n      {check.facts}", style="dim")
            console.print(line, soft_wrap=True)
    if report.problems:
        console.print(Text("\nProblems", style="bold red"))
        for p in report.problems:
            style = "bold red" if p.severity == "error" else "bold yellow"
            console.print(Text.assemble((f"  {p.severity.upper()} ", style), (p.title, "bold"),
                                        (f"  [{p.entry_id}]", "cyan")), soft_wrap=True)
            console.print(Text(f"    {p.detail}"), soft_wrap=True)
            if p.evidence:
                console.print(Text.assemble(("    evidence: ", "dim"), p.evidence), soft_wrap=True)
            console.print(Text.assemble(("    fix: ", "green"), p.fix), soft_wrap=True)
            console.print(Text(f"    explain: denpex explain {p.entry_id}", style="dim"), soft_wrap=True)
    for note in report.notes:
        console.print(Text(f"note: {note}", style="yellow"), soft_wrap=True)
