"""Shortening for reports: file names relative to the inputs' common root, cut from the left; text cut with "…".

Why: a report's paths are mostly the same long prefix (`/scratch/jobs/1234/logs/...`); the part that tells two
files apart is at the end (`rank3/stderr.log`), so that is the part kept when space is short.
"""

from __future__ import annotations

import os

ELLIPSIS = "…"


def common_root(inputs: list[str]) -> str:
    """The folder every input lies in ("" when they share none, or none is a path, like `<stdin>`)."""
    folders = [os.path.dirname(name) for name in inputs if name and not name.startswith("<")]
    if not folders or len(folders) < len(inputs):
        return ""
    try:
        return os.path.commonpath(folders)
    except ValueError:  # absolute and relative paths mixed: nothing in common worth naming
        return ""


def relative(path: str, root: str) -> str:
    """`path` without the `root/` it starts with (unchanged when it lies elsewhere)."""
    if root and path.startswith(root.rstrip(os.sep) + os.sep):
        return path[len(root.rstrip(os.sep)) + 1 :]
    return path


def shortened(path: str, root: str = "", limit: int = 40) -> str:
    """`path` relative to `root`, cut from the left to at most `limit` characters: `…/rank3/stderr.log`."""
    rel = relative(path, root)
    if len(rel) <= limit:
        return rel
    parts = rel.split(os.sep)
    kept = parts[-1]
    for part in reversed(parts[:-1]):
        if len(part) + 1 + len(kept) + 2 > limit:
            break
        kept = f"{part}{os.sep}{kept}"
    if len(kept) + 2 <= limit:
        return f"{ELLIPSIS}{os.sep}{kept}"
    return ELLIPSIS + kept[-(limit - 1) :]


def cut(text: str, limit: int) -> str:
    """`text` cut to at most `limit` characters, the cut marked with an ellipsis."""
    return text if len(text) <= limit else text[: max(limit - 1, 0)] + ELLIPSIS
