"""Whether a process has exited, for `denpex watch --until-exit PID` (a process need not be our child)."""

from __future__ import annotations

import os
from pathlib import Path


def exited(pid: int) -> bool:
    """True once `pid` is gone or a zombie (exited, its parent has not reaped it yet: it writes nothing more)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        pass  # another user's process: it exists
    except OSError:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False  # no /proc (macOS): kill(0) succeeding is all there is to go on
    state = stat.rsplit(")", 1)[-1].split()[:1]
    return state in (["Z"], ["X"])
