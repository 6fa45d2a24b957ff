"""Make log text safe to show: no control character or escape from a log reaches a terminal or a document.

Why: a log line (or a file name) can hold `\\x1b]2;...\\x07` (retitle the terminal), `\\x1b[2J` (clear it),
`\\x1b#8` (fill it with E), DCS strings or C1 controls (U+009B is a one-byte CSI). Every C0 control but tab,
DEL and every C1 control is shown as a visible `\\xNN` escape instead, in every string of the report.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from typing import Any, TypeVar

_CONTROLS = re.compile(r"[\x00-\x08\x0a-\x1f\x7f-\x9f]")
T = TypeVar("T")


def visible(text: str) -> str:
    """Control characters shown as `\\xNN`; everything else as it was."""
    if not _CONTROLS.search(text):
        return text
    return _CONTROLS.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def made_visible(value: T) -> T:
    """A copy of a report (dataclasses, lists, dicts, strings) with every string passed through visible()."""
    return map_strings(value, visible)


def map_strings(value: T, change: Callable[[str], str]) -> T:
    """A copy of a report (dataclasses, lists, dicts, strings) with `change` applied to every string."""
    return _walk(value, change)  # type: ignore[no-any-return]


def _walk(value: Any, change: Callable[[str], str]) -> Any:
    if isinstance(value, str):
        return change(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        changes = {f.name: _walk(getattr(value, f.name), change) for f in dataclasses.fields(value)}
        return dataclasses.replace(value, **changes)
    if isinstance(value, list):
        return [_walk(v, change) for v in value]
    if isinstance(value, tuple):
        return tuple(_walk(v, change) for v in value)
    if isinstance(value, dict):
        return {_walk(k, change) if isinstance(k, str) else k: _walk(v, change) for k, v in value.items()}
    return value
