"""Masks for what varies between runs and machines in a log line: addresses, hosts, paths, numbers.

Shared by the layers that compare or hide such values: `--redact` (report.redact) masks hosts, IPs and
e-mail addresses with the same patterns that fleet fingerprints (fleet.fingerprint) and the comparison with a
healthy run (analyze.baseline) mask them with, so all three agree on what a host is. Plain text functions,
beside model.py, so that no layer imports a higher one for them.
"""

from __future__ import annotations

import re

EMAIL = re.compile(r"\b[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b")
IPV4 = re.compile(r"(?<![\w.])(?:\d{1,3}\.){3}\d{1,3}(?![\w.]*\d)")
IPV6 = re.compile(r"(?<![\w:])(?=[0-9A-Fa-f:]*[A-Fa-f])(?:[0-9A-Fa-f]{1,4}:){3,7}[0-9A-Fa-f]{1,4}(?![\w:])"
                   r"|(?<![\w:])(?:[0-9A-Fa-f]{1,4}:){1,6}:(?:[0-9A-Fa-f]{1,4}(?::[0-9A-Fa-f]{1,4})*)?(?![\w:])")

# Where a log names a machine: NCCL's `host:pid:tid [dev]`, torchrun's summary `host : x`, `hostname=x`,
# `on host x`, `[x]:port` style peers are IPs mostly (masked above).
HOST_SITES = (
    re.compile(r"(?<![\w.-])([A-Za-z][\w.-]{1,62}):\d+:\d+ \["),
    re.compile(r"(?i)\bhost(?:name)?\s*[=:]\s*([A-Za-z][\w.-]{1,62})"),
    re.compile(r"(?i)\bon (?:host|node) ([A-Za-z][\w.-]{1,62})"),
)
INTERNAL_DOMAIN = re.compile(
    r"\b[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.(?:internal|local|lan|corp|cluster|svc|intranet|localdomain)\b")

# Every digit as 0, lengths kept (`exit code 1` is not `exit code 137`): the repeat key of a log line
# (scan.repeats), and the scanners' anchors, so that whether a line is a candidate never depends on its digits
MASK_DIGITS = bytes.maketrans(b"123456789", b"000000000")

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
    line = EMAIL.sub("<email>", line)
    line = IPV4.sub("<ip>", line)
    line = IPV6.sub("<ip>", line)
    line = _PATH.sub("<path>", line)
    for site in HOST_SITES:
        line = site.sub(_host_masked, line)
    line = INTERNAL_DOMAIN.sub("<host>", line)
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
