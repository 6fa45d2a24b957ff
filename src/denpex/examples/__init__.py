"""Real failure logs shipped with the package, for a first run of `denpex diagnose --example`."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

DEFAULT = "torchrun-4-ranks-keyerror"


def names() -> list[str]:
    return sorted(p.name.removesuffix(".log") for p in _root().iterdir() if p.name.endswith(".log"))


def path(name: str = DEFAULT) -> Path:
    candidate = _root() / f"{name}.log"
    if not candidate.is_file():
        raise KeyError(name)
    return candidate


def _root() -> Path:
    return Path(str(resources.files("denpex.examples")))
