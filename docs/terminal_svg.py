"""Regenerate docs/terminal-80.svg and docs/terminal-200.svg: the terminal report of a real multi-rank corpus log.

    PYTHONPATH=src python docs/terminal_svg.py

Why: they show how the report lays out at 80 and 200 columns (hanging labels, the gutter of wrapped log lines,
the rank table's error text) without running denpex.
"""

from __future__ import annotations

import io
import os
from pathlib import Path

from rich.console import Console

from denpex.api import diagnose_sources
from denpex.catalog import load
from denpex.ingest import resolve
from denpex.report.json_schema import build
from denpex.report.terminal import render

ROOT = Path(__file__).resolve().parent.parent
CASE = "tests/corpus/generated/gen-dist-rank2-keyerror-logdir/ranks"


def main() -> None:
    os.chdir(ROOT)  # the report names files as given: relative to the repository, as a user would type them
    catalog = load()
    report = build(diagnose_sources(resolve([CASE]), catalog=catalog), catalog)
    for width in (80, 200):
        console = Console(width=width, record=True, file=io.StringIO(), color_system="truecolor")
        render(report, console)
        console.save_svg(f"docs/terminal-{width}.svg", title=f"denpex diagnose {CASE}  ({width} columns)")


if __name__ == "__main__":
    main()
