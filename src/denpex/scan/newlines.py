"""Counting newlines, the one pass over every byte the fast path makes besides the candidate scan.

Line numbers need the newline count of everything before a region. CPython's `bytes.count` runs a plain
byte loop (about 2.4 GB/s here); NumPy's vectorised compare-and-count does the same work at about 9 GB/s,
which moves a 1 GiB scan from about 0.45 s of counting to about 0.12 s. NumPy is optional: without it
the count is the same, only slower.
"""

from __future__ import annotations

_SLICE = 1 << 20  # the compare's temporary array stays in the CPU cache

try:
    import numpy as _np
except ImportError:  # pragma: no cover - exercised where NumPy is missing
    _np = None


def count_newlines(data: bytes, start: int = 0, end: int | None = None) -> int:
    """Newlines in data[start:end]: the same answer as data.count(b"\\n", start, end)."""
    end = len(data) if end is None else min(end, len(data))
    if _np is None or end - start < _SLICE // 4:  # small counts: NumPy's call overhead would dominate
        return data.count(b"\n", start, end)
    view = _np.frombuffer(data, dtype=_np.uint8)
    total = 0
    for lo in range(start, end, _SLICE):
        total += int(_np.count_nonzero(view[lo : min(lo + _SLICE, end)] == 10))
    return total
