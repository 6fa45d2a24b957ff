"""A progress bar on stderr for inputs that take a while: bytes, rate, time left.

Shown only when stderr is a terminal and the scan has run for SHOW_AFTER seconds (a pasted traceback or a
small log never flashes a bar); it disappears when the scan ends, so the report is all that remains.
"""

from __future__ import annotations

import sys
import time
from types import TracebackType

SHOW_AFTER = 2.0


class ScanProgress:
    """Callable with the bytes just scanned; a context manager that removes the bar at the end."""

    def __init__(self, total: int, label: str = "scanning") -> None:
        self.total = max(total, 1)
        self.label = label
        self.done = 0
        self.started = time.monotonic()
        self._bar = None
        self._task = None
        self._enabled = sys.stderr.isatty()

    def __call__(self, scanned: int) -> None:
        self.done += scanned
        if not self._enabled:
            return
        if self._bar is None:
            if time.monotonic() - self.started < SHOW_AFTER:
                return
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                DownloadColumn,
                Progress,
                TextColumn,
                TimeRemainingColumn,
                TransferSpeedColumn,
            )

            self._bar = Progress(TextColumn(self.label), BarColumn(), DownloadColumn(), TransferSpeedColumn(),
                                 TimeRemainingColumn(), console=Console(stderr=True), transient=True)
            self._bar.start()
            self._task = self._bar.add_task(self.label, total=self.total)
        self._bar.update(self._task, completed=min(self.done, self.total))

    def __enter__(self) -> ScanProgress:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        if self._bar is not None:
            self._bar.stop()
