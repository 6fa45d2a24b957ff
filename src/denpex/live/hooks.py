"""`--on-finding CMD`: run the user's command with a finding as JSON on its stdin, without stopping the watch.

The command line is split with shlex and run without a shell (a log's text never reaches a shell). Each run
has its own thread, so a slow or hung command delays neither the watch nor the next finding; a failure (it
cannot start, exits non-zero, outlives HOOK_TIMEOUT_S) is reported through `report`, never raised.
"""

from __future__ import annotations

import shlex
import subprocess
import sys
import threading
import time
from collections.abc import Callable

from denpex.errors import DenpexInputError

HOOK_TIMEOUT_S = 60.0
END_WAIT_S = 10.0  # at the end, how long the last runs may take before the watch exits without them


class FindingHook:
    def __init__(self, command_line: str, report: Callable[[str], None]) -> None:
        try:
            self.argv = shlex.split(command_line)
        except ValueError as exc:
            raise DenpexInputError(f"--on-finding: cannot split the command: {exc}") from None
        if not self.argv:
            raise DenpexInputError("--on-finding: the command is empty")
        self.report = report
        self._threads: list[threading.Thread] = []

    def fire(self, payload: str) -> None:
        thread = threading.Thread(target=self._run, args=(payload,), daemon=True, name="denpex-on-finding")
        thread.start()
        self._threads.append(thread)

    def _run(self, payload: str) -> None:
        name = self.argv[0]
        try:
            done = subprocess.run(self.argv, input=payload.encode(), stdout=_stderr_fd(), stderr=None,
                                  timeout=HOOK_TIMEOUT_S, check=False)
        except FileNotFoundError:
            self.report(f"--on-finding: {name}: command not found")
        except subprocess.TimeoutExpired:
            self.report(f"--on-finding: {name} ran past {HOOK_TIMEOUT_S:g} s and was killed")
        except OSError as exc:
            self.report(f"--on-finding: {name}: cannot run ({exc.strerror or exc})")
        else:
            if done.returncode != 0:
                self.report(f"--on-finding: {name} exited with status {done.returncode}")

    def wait(self) -> None:
        """Let the runs in flight finish (at most END_WAIT_S in all) so their output comes before the report."""
        deadline = time.monotonic() + END_WAIT_S
        for thread in self._threads:
            thread.join(max(0.0, deadline - time.monotonic()))


def _stderr_fd() -> int:
    """The command's stdout goes to our stderr: our stdout carries the report (`--format json` stays one
    document)."""
    try:
        return sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):  # not a real file (an embedding program's buffer)
        return subprocess.DEVNULL
