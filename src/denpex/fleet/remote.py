"""Job logs in object storage (`s3://`, `gs://`, `memory://`, any fsspec URL): copied to a temporary folder,
then diagnosed as local files.

Why copy rather than stream: the diagnosis reads files by path (mmap, the fast path's scanners, zstd), and a
job's logs are small next to a worker's disk; a temporary folder per job keeps one job's files away from the
next and is gone when the job is done. Each file's modification time is set from the store's, when it says,
so a job's "seen" time is the store's, not the copy's. fsspec (and the
store's own package, e.g. s3fs) is imported only when a URL is given: the core install does not need it.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import PurePosixPath
from typing import Any

from denpex.errors import DenpexInputError

_URL = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]+://")  # two letters at least: `C:\logs` is a Windows path, not a URL
MAX_FILES = 10_000  # one job's files; a URL that names a whole bucket is a mistake, not a job


def is_url(path: str) -> bool:
    return bool(_URL.match(path))


def filesystem(url: str) -> tuple[Any, str]:
    """fsspec's filesystem for a URL and the path within it; a one-line error without fsspec or its backend."""
    try:
        from fsspec.core import url_to_fs
    except ImportError:
        raise DenpexInputError(f"{url}: reading logs from a URL needs fsspec: pip install 'denpex[ray]'") from None
    try:
        return url_to_fs(url)
    except (ImportError, ValueError) as exc:  # an unknown protocol, or its package (s3fs, gcsfs) not installed
        raise DenpexInputError(f"{url}: {' '.join(str(exc).split())}") from None


def expand_glob(url: str) -> list[str]:
    """`s3://bucket/runs/*` as the URLs it matches, sorted (the local glob's order)."""
    fs, path = filesystem(url)
    return sorted(fs.unstrip_protocol(match) for match in fs.glob(path))


@contextmanager
def staged(paths: list[str]) -> Iterator[list[str]]:
    """The job's paths with every URL replaced by a local copy (a folder for a prefix, a file for an object);
    local paths pass through. The copies are removed on exit."""
    if not any(is_url(p) for p in paths):
        yield paths
        return
    with tempfile.TemporaryDirectory(prefix="denpex-job-") as root:
        local = [_fetch(p, os.path.join(root, str(i))) if is_url(p) else p for i, p in enumerate(paths)]
        yield local


def as_given(text: str, paths: list[str], local: list[str]) -> str:
    """`text` (a verify command naming a log) with each temporary copy's path put back as its URL: the
    copy is gone when the report is read."""
    for url, copy in zip(paths, local, strict=True):
        if url != copy:
            text = text.replace(copy + os.sep, url.rstrip("/") + "/").replace(copy, url)
    return text


def _fetch(url: str, target: str) -> str:
    """Copy one URL (an object, or every object under a prefix) to `target`; the local path to diagnose."""
    fs, path = filesystem(url)
    try:
        if not fs.exists(path):
            raise DenpexInputError(f"cannot read {url}: no such object or prefix")
        if not fs.isdir(path):
            name = PurePosixPath(path).name or "log"
            os.makedirs(target)
            local = os.path.join(target, name)
            _copy(fs, path, local)
            return local
        files = sorted(fs.find(path))
        if len(files) > MAX_FILES:
            raise DenpexInputError(f"{url}: {len(files)} objects, more than one job's {MAX_FILES}")
        base = PurePosixPath(path.rstrip("/"))
        newest: float | None = None
        for name in files:
            relative = PurePosixPath(name).relative_to(base)
            if ".." in relative.parts:
                continue
            local = os.path.join(target, *relative.parts)
            os.makedirs(os.path.dirname(local), exist_ok=True)
            moment = _copy(fs, name, local)
            newest = max(newest or 0.0, moment) if moment is not None else newest
        os.makedirs(target, exist_ok=True)  # an empty prefix is an empty folder: "no log files", as locally
        # the folder's own time counts in triage's seen time: the store's folder time (a file:// folder has
        # one), else its newest object's, never the copy's
        moment = _modified(fs, path) or newest
        if moment is not None:
            os.utime(target, (moment, moment))
        return target
    except DenpexInputError:
        raise
    except (OSError, ValueError) as exc:  # permission denied, a network error: this job's error, not the run's
        raise DenpexInputError(f"cannot read {url}: {' '.join(str(exc).split())[:300]}") from None


def _copy(fs: Any, remote: str, local: str) -> float | None:
    """One object to a local file with the store's modification time; that time (None when not known)."""
    fs.get_file(remote, local)
    moment = _modified(fs, remote)
    if moment is not None:
        os.utime(local, (moment, moment))
    return moment


def _modified(fs: Any, remote: str) -> float | None:
    """The object's modification time in seconds, where the store says (some do not)."""
    try:
        value = fs.modified(remote)
    except (NotImplementedError, OSError, ValueError, AttributeError):
        return None
    return value.timestamp() if isinstance(value, datetime) else None
