"""Install denpex's startup hook for a child command: a temp dir holding `sitecustomize.py` first on PYTHONPATH.

See `_sitehook.py` for what the hook does inside the child. This side writes it, builds the child's
environment and reads back what the hook saw.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

BACKENDS = ("eager", "aot_eager", "aot_eager_decomp_partition", "inductor")


class Hook:
    """A hook dir for the lifetime of a `with` block."""

    def __init__(self) -> None:
        self.dir: Path | None = None

    def __enter__(self) -> Hook:
        self.dir = Path(tempfile.mkdtemp(prefix="denpex-hook-"))
        source = (resources.files("denpex.control") / "_sitehook.py").read_text(encoding="utf-8")
        (self.dir / "sitecustomize.py").write_text(source, encoding="utf-8")
        return self

    def __exit__(self, *exc: object) -> None:
        if self.dir is not None:
            shutil.rmtree(self.dir, ignore_errors=True)

    def env(self, base: Mapping[str, str], *, backend: str | None, report: Path) -> dict[str, str]:
        assert self.dir is not None, "use Hook as a context manager"
        env = dict(base)
        old = env.get("PYTHONPATH", "")
        env["PYTHONPATH"] = str(self.dir) + (os.pathsep + old if old else "")
        env["DENPEX_HOOK_REPORT"] = str(report)
        if backend:
            env["DENPEX_HOOK_BACKEND"] = backend
        else:
            env.pop("DENPEX_HOOK_BACKEND", None)
        return env


@dataclass
class HookReport:
    loaded: int = 0  # Python processes that ran the hook
    patched: int = 0  # processes in which torch was imported and torch.compile wrapped
    compiles: list[dict[str, Any]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    @property
    def requested(self) -> list[str]:
        return sorted({str(c.get("requested")) for c in self.compiles})

    @property
    def dropped(self) -> list[str]:
        return sorted({k for c in self.compiles for k in c.get("dropped") or []})


def read_report(path: Path) -> HookReport:
    out = HookReport()
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return out
    for line in lines:
        try:
            record = json.loads(line)
        except ValueError:
            continue
        event = record.get("event")
        if event == "loaded":
            out.loaded += 1
        elif event == "patched":
            out.patched += 1
        elif event == "compile":
            out.compiles.append(record)
        elif event == "error":
            out.errors.append(f"{record.get('where')}: {record.get('error')}")
    return out
