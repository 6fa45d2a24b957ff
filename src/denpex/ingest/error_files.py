"""Read torchelastic error files (`error.json` under `torchrun --log-dir`, or `$TORCHELASTIC_ERROR_FILE`).

Why: a rank whose main is decorated with `@record` writes its exception there, with the full traceback and
the time it was raised; torchrun picks its "first observed failure" from these timestamps. The traceback is
handed on as that rank's log lines (so the catalog explains it like any traceback), stamped with that time.

Layouts torch writes (torch/distributed/elastic/multiprocessing/errors/): the child's
`{"message": {"message": "KeyError: ...", "extraInfo": {"py_callstack": "...", "timestamp": "1795964143"}}}`,
the agent's copy of it with `"errorCode": N` added, and the older `{"message": "...", "timestamp": N}`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from denpex.errors import DenpexInputError

MAX_ERROR_FILE_BYTES = 64 << 20
_ERROR_NAME = re.compile(r"(?:^|[_.\-])error\.json$", re.IGNORECASE)


class ErrorFileError(DenpexInputError):
    """A file named or shaped like an error file that is not one (one line, no traceback)."""


@dataclass(frozen=True, slots=True)
class ErrorFile:
    name: str
    message: str  # `KeyError: 'x'`
    traceback: str  # py_callstack, or the message when there is none
    timestamp: float | None  # seconds since the epoch, when the rank raised it
    error_code: int | None = None


def named_like_error_file(path: Path) -> bool:
    return _ERROR_NAME.search(path.name) is not None


def looks_like_error_file(head: bytes) -> bool:
    """A JSON object whose first key is `message`, as every layout above starts."""
    return re.match(rb'\s*\{\s*"message"\s*:', head) is not None


def read_error_file(path: Path, display: str) -> ErrorFile:
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_ERROR_FILE_BYTES + 1)
    except OSError as exc:
        raise ErrorFileError(f"cannot read {display}: {exc.strerror or exc}") from None
    if len(data) > MAX_ERROR_FILE_BYTES:
        raise ErrorFileError(f"not read as a torchelastic error file: {display} is over 64 MiB")
    return parse_error_file(data, display)


def parse_error_file(data: bytes, display: str) -> ErrorFile:
    try:
        raw = json.loads(data.decode("utf-8", "replace"))
    except (ValueError, RecursionError) as exc:
        raise ErrorFileError(f"cannot read torchelastic error file {display}: not valid JSON ({exc})") from None
    if not isinstance(raw, dict) or "message" not in raw:
        raise ErrorFileError(f"not a torchelastic error file: {display} (no `message`)")
    message = raw["message"]
    if isinstance(message, dict):
        extra = message.get("extraInfo") if isinstance(message.get("extraInfo"), dict) else {}
        text = _text(message.get("message"))
        stack = _text(extra.get("py_callstack"))
        return ErrorFile(display, text, stack or text, _seconds(extra.get("timestamp")),
                         _code(message.get("errorCode")))
    text = _text(message)
    return ErrorFile(display, text, text, _seconds(raw.get("timestamp")), _code(raw.get("errorCode")))


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _seconds(value: Any) -> float | None:
    try:
        seconds = float(value)
    except (TypeError, ValueError, OverflowError):
        return None
    return seconds if 0 < seconds < 1e11 else None  # `0` is torch's "unknown"


def _code(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None
