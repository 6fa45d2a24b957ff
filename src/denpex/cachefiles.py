"""Denpex's own cache: compiled scanner databases and the validated catalog, each named by a hash of a
description of what it was built from (the patterns; the entry files' names, sizes and times).

Nothing read from it is ever executed: the catalog is plain JSON data, and a file (or its folder) that is
not owned by this user, or that group or others may write, is ignored and rebuilt.

Everything here is derived data: a missing, stale or damaged file only costs rebuilding it, and a cache
dir that cannot be written (read-only home, full disk) is silently skipped. `DENPEX_CACHE_DIR` moves it,
`DENPEX_NO_CACHE=1` turns it off.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path


def cache_dir() -> Path | None:
    """$DENPEX_CACHE_DIR, else $XDG_CACHE_HOME/denpex or ~/.cache/denpex; None when caching is off."""
    if os.environ.get("DENPEX_NO_CACHE"):
        return None
    root = os.environ.get("DENPEX_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "denpex"
    )
    return Path(root)


def cache_path(kind: str, key: object, suffix: str) -> Path | None:
    """Where the artefact of this kind built from `key` (a repr-able description of its inputs) lives."""
    folder = cache_dir()
    if folder is None:
        return None
    digest = hashlib.sha256(repr(key).encode()).hexdigest()[:32]
    return folder / f"{kind}-{digest}{suffix}"


def read_cached(path: Path | None) -> bytes | None:
    """The file's bytes, unless someone else could have written it (not ours, or writable by group/others)."""
    if path is None:
        return None
    try:
        with open(path, "rb") as handle:
            if not _trusted(os.fstat(handle.fileno())) or not _trusted(os.stat(path.parent)):
                return None
            return handle.read()
    except OSError:
        return None


def _trusted(st: os.stat_result) -> bool:
    return (not hasattr(os, "getuid") or st.st_uid == os.getuid()) and not st.st_mode & 0o022


def write_cached(path: Path | None, data: bytes) -> None:
    """Atomically (a reader never sees half a file); failures are ignored: the cache is optional."""
    if path is None:
        return
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp, path)
    except OSError:
        pass
