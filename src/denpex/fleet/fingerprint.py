"""A failure's fingerprint: its catalog entry plus its decisive line with what varies between jobs masked.

Why: the same bug hit by 40 jobs prints 40 different decisive lines (other ranks, hosts, pids, paths,
addresses, sizes, timestamps); masking those makes them one group, while a different message (another
exception text, another operator) stays a different group. The masks (denpex.masking) are the ones `--redact`
uses, so the two agree on what a host is. Unlike scan.repeats.repeat_key, which keeps lengths
(`exit code 1` vs `137`) and rank prefixes to decide what to analyse within one log, a fingerprint
masks every number: across jobs, rank 3 and rank 5 failing alike are the same failure.
"""

from __future__ import annotations

import hashlib

from denpex.masking import MAX_LINE, normalise_line

__all__ = ["MAX_LINE", "fingerprint", "normalise_line"]


def fingerprint(entry_id: str, normalised: str) -> str:
    """A stable, short id for a group: `entry-id:` and 12 hex digits of the normalised line's SHA-256
    (stable across processes and versions of Python, unlike hash())."""
    digest = hashlib.sha256(f"{entry_id}\n{normalised}".encode()).hexdigest()[:12]
    return f"{entry_id}:{digest}"
