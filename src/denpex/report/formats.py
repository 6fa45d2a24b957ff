"""A built report in one of the formats `--format` offers, written to stdout (diagnose's and watch's)."""

from __future__ import annotations

import click

from denpex.report.json_schema import DiagnosisOut

FORMATS = ("terminal", "json", "markdown", "html")


def emit(report: DiagnosisOut, fmt: str, shown: int = 12) -> None:
    """Print the report; every renderer escapes the log's text for its medium."""
    if fmt == "json":
        click.echo(report.to_json())
    elif fmt == "markdown":
        from denpex.report.markdown import render as render_md

        click.echo(render_md(report, shown_before=shown), nl=False)
    elif fmt == "html":
        from denpex.report.html import render as render_html

        click.echo(render_html(report, shown_before=shown), nl=False)
    else:
        from rich.console import Console

        from denpex.report.terminal import render

        render(report, Console(highlight=False), shown_before=shown)
