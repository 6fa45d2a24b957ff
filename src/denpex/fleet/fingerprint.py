"""A failure's fingerprint: its catalog entry plus its decisive line with what varies between jobs masked.

Why: the same bug hit by 40 jobs prints 40 different decisive lines (other ranks, hosts, pids, paths,
addresses, sizes, timestamps); masking those makes them one group, while a different message (another
exception text, another operator) stays a different group. Host and IP patterns are the ones `--redact`
uses (report.redact), so the two agree on what a host is. Unlike scan.repeats.repeat_key, which keeps
lengths (`exit code 1` vs `137`) and rank prefixes to decide what to analyse within one log, a fingerprint
masks every number: across jobs, rank 3 and rank 5 failing alike are the same failure.
"""

from __future__ import annotations

import hashlib
import re

from denpex.report.redact import _EMAIL, _HOST_SITES, _INTERNAL_DOMAIN, _IPV4, _IPV6

MAX_LINE = 400  # a normalised line is cut here: a 50 kB error line must not make a 50 kB key

_URL = re.compile(r"\b[a-z][a-z0-9+.-]*://[^\s'\"<>)\]]+", re.IGNORECASE)
_UUID = re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b", re.IGNORECASE)
_HEX = re.compile(r"\b0x[0-9a-f]+\b|\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{8,}\b", re.IGNORECASE)
# /abs/path, ~/path, ./rel, ../rel, C:\win\path, and relative paths of two or more parts (torch/_dynamo/x.py)
_PATH = re.compile(
    r"(?:(?<![\w.])(?:~|\.{1,2})?/|\b[A-Za-z]:\\|(?<![\w./-])(?=[\w.-]+/[\w.-]))[\w.@+\-\\/]*[\w@+\-/]"
)
_SIZE = re.compile(r"\b\d+(?:\.\d+)?\s?(?:[KMGTP]i?B|bytes|B)\b")  # 2.00 GiB, 512 MiB, 20 KiB: any size
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
# keep_shape only (fleet fingerprints stay as they were): a port after an address, a process id
_PORT = re.compile(r"(<ip>|<host>)(\]?):\d{1,5}\b")
_PID = re.compile(r"\b(pid|PID|process|Process)(\s*[=:]?\s*)\d+\b")
_SPACE = re.compile(r"\s+")


def normalise_line(text: str, *, keep_shape: bool = False) -> str:
    """The decisive line as a grouping key: URLs, paths, IPs, hosts, e-mails, UUIDs, hex and every number
    (ranks, pids, times) masked, sizes with their unit (`<size>`), blanks collapsed, cut at MAX_LINE characters.

    Order matters: URLs and paths before hosts and numbers, so `/home/u/run-3/log` is one `<path>`.
    keep_shape: numbers keep their shape (digits become 0: `lr=0.05` -> `lr=0.00`, `after 6 steps` is not
    `after 12 steps`), but ports and pids are masked whatever their length, for comparing a run with a healthy
    run of the same job (analyze.baseline).
    """
    line = _SPACE.sub(" ", text).strip()
    line = _URL.sub("<url>", line)
    line = _EMAIL.sub("<email>", line)
    line = _IPV4.sub("<ip>", line)
    line = _IPV6.sub("<ip>", line)
    line = _PATH.sub("<path>", line)
    for site in _HOST_SITES:
        line = site.sub(_host_masked, line)
    line = _INTERNAL_DOMAIN.sub("<host>", line)
    line = _UUID.sub("<hex>", line)
    line = _HEX.sub("<hex>", line)
    line = _SIZE.sub("<size>", line)
    if keep_shape:
        line = _PID.sub(r"\1\2<pid>", _PORT.sub(r"\1\2:<port>", line))
    line = _NUMBER.sub(_shape, line) if keep_shape else _NUMBER.sub("<n>", line)
    return line[:MAX_LINE]


def _shape(match: re.Match[str]) -> str:
    return match[0].translate(_ZEROS)


_ZEROS = str.maketrans("123456789", "000000000")


def _host_masked(match: re.Match[str]) -> str:
    start, end = match.span(1)
    return f"{match[0][: start - match.start()]}<host>{match[0][end - match.start():]}"


def fingerprint(entry_id: str, normalised: str) -> str:
    """A stable, short id for a group: `entry-id:` and 12 hex digits of the normalised line's SHA-256
    (stable across processes and versions of Python, unlike hash())."""
    digest = hashlib.sha256(f"{entry_id}\n{normalised}".encode()).hexdigest()[:12]
    return f"{entry_id}:{digest}"
