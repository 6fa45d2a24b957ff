"""Triage's progress bar on stderr: jobs done, jobs per second, time left; only when stderr is a terminal
(a pipe or a CI log gets no bar), and gone when the run ends so the report is all that remains."""

from __future__ import annotations

import sys
from types import TracebackType
from typing import Any


class JobProgress:
    """Called with each finished job; a context manager that removes the bar at the end."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.done = 0
        self._bar: Any = None
        self._task: Any = None
        if sys.stderr.isatty():
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

            self._bar = Progress(TextColumn("triage"), BarColumn(), MofNCompleteColumn(),
                                 TextColumn("{task.fields[rate]}"), TimeRemainingColumn(),
                                 console=Console(stderr=True), transient=True)
            self._task = self._bar.add_task("triage", total=total, rate="")

    def __call__(self, _result: object) -> None:
        self.done += 1
        if self._bar is not None:
            self._bar.update(self._task, advance=1)
            speed = self._bar.tasks[0].speed
            self._bar.update(self._task, rate=f"{speed:.1f} jobs/s" if speed else "")

    def __enter__(self) -> JobProgress:
        if self._bar is not None:
            self._bar.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        if self._bar is not None:
            self._bar.stop()
