"""Parse the prefixes that launchers and loggers put in front of a message.

Handled, possibly stacked, in this order:
  launcher prefixes   `[default3]:`, `[rank3]:`, `(RayWorkerWrapper pid=4009)`, srun `--label` `3: `
  glog headers        `W1029 18:26:40.182000 156731 torch/_dynamo/exc.py:593]`,
                      `[E1206 18:44:12.715298746 ProcessGroupNCCL.cpp:607]`, old `[E ProcessGroupNCCL.cpp:821]`
  Python logging      `2026-11-29 14:54:36,742 [rank2] INFO name:` / `ERROR:torch.distributed...:`
  NCCL debug          `host:pid:tid [localrank] NCCL INFO`
  Dynamo compile id   `[24/0_1]`
and a rank named inside the message (`[Rank 5] Watchdog ...`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07")

_LAUNCHER = re.compile(
    r"""^(?:
        \[(?:default|rank)(?P<rank>\d+)\]:\s?            # torchrun --tee / rank-prefixed stdio
      | \((?P<actor>[\w.]+)\s+pid=(?P<rpid>\d+)(?:,\s*ip=(?P<rip>[\d.:a-f]+))?\)\s+   # Ray actor prefix
    )""",
    re.VERBOSE,
)
_SRUN_LABEL = re.compile(r"^(?P<rank>\d{1,5}): ")
_GLOG = re.compile(
    r"""^\[?(?P<level>[DIWEF])
        (?:(?P<md>\d{4})\s+(?P<time>\d\d:\d\d:\d\d(?:\.\d+)?)\s+(?:(?P<pid>\d+)\s+)?)?\s*
        (?P<where>[\w./\-]+:\d+)\]\s?""",
    re.VERBOSE,
)
_PYLOG = re.compile(
    r"""^(?P<iso>\d{4}-\d\d-\d\d[ T_]\d\d:\d\d:\d\d(?:[,.]\d+)?(?:Z|[+-]\d\d:?\d\d)?)\s*
        (?:\[rank(?P<rank>\d+)\]\s*)?
        (?:[-|:]\s*)?(?P<level>DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL)?\b[\s:|-]*""",
    re.VERBOSE,
)
_PYLOG_BARE = re.compile(r"^(?P<level>DEBUG|INFO|WARNING|ERROR|CRITICAL):(?P<logger>[\w.]+):")
_NCCL = re.compile(r"^(?P<host>[\w.\-]+):(?P<pid>\d+):(?P<tid>\d+) \[(?P<lrank>\d+)\] NCCL ")
_COMPILE_ID = re.compile(r"^\[(?P<cid>\d+/\d+(?:_\d+)?)\]\s?")
_RANK_IN_BODY = re.compile(r"\[(?:Rank|rank)\s?(?P<rank>\d+)\]|\bglobal rank (?P<grank>\d+)\b|\brank(?P<r2>\d+)\]")

_LEVEL_NAMES = {"DEBUG": "D", "INFO": "I", "WARNING": "W", "WARN": "W", "ERROR": "E", "CRITICAL": "F"}
_YEAR = datetime.now().year


@dataclass(slots=True)
class Header:
    body: str
    rank: int | None = None
    local_rank: int | None = None
    host: str | None = None
    pid: int | None = None
    level: str | None = None
    timestamp: float | None = None
    compile_id: str | None = None


def _glog_time(md: str, clock: str) -> float | None:
    """glog has no year: assume this year; the value only orders lines within one run."""
    try:
        month, day = int(md[:2]), int(md[2:])
        hms, _, frac = clock.partition(".")
        hour, minute, second = (int(x) for x in hms.split(":"))
        base = datetime(_YEAR, month, day, hour, minute, second).timestamp()
    except ValueError:
        return None
    return base + (float("0." + frac) if frac else 0.0)


def _iso_time(text: str) -> float | None:
    cleaned = text.replace(",", ".").replace("_", " ").replace("T", " ").rstrip("Z")
    cleaned = re.sub(r"[+-]\d\d:?\d\d$", "", cleaned)
    try:
        return datetime.fromisoformat(cleaned).timestamp()
    except ValueError:
        return None


def parse(text: str) -> Header:
    """Strip and record every header we recognise; the body is what the program itself said."""
    head = Header(body=text)
    rest = text
    # launcher prefixes may stack: [default3]:[rank3]:, (Actor pid=1) [rank1]:
    for _ in range(4):
        found = _LAUNCHER.match(rest)
        if not found:
            break
        if found.group("rank") is not None:
            head.rank = int(found.group("rank"))
        elif found.group("rpid"):
            head.pid = int(found.group("rpid"))
            head.host = found.group("rip") or head.host
        rest = rest[found.end() :]
    if head.rank is None:
        found = _SRUN_LABEL.match(rest)
        if found:
            head.rank = int(found.group("rank"))
            rest = rest[found.end() :]
    found = _GLOG.match(rest)
    if found:
        head.level = found.group("level")
        if found.group("md"):
            head.timestamp = _glog_time(found.group("md"), found.group("time"))
        if found.group("pid"):
            head.pid = int(found.group("pid"))
        rest = rest[found.end() :]
    else:
        found = _PYLOG.match(rest)
        if found:
            head.timestamp = _iso_time(found.group("iso"))
            if found.group("rank") is not None and head.rank is None:
                head.rank = int(found.group("rank"))
            if found.group("level"):
                head.level = _LEVEL_NAMES[found.group("level")]
            rest = rest[found.end() :]
        else:
            found = _PYLOG_BARE.match(rest)
            if found:
                head.level = _LEVEL_NAMES[found.group("level")]
                rest = rest[found.end() :]
            else:
                found = _NCCL.match(rest)
                if found:
                    head.host = found.group("host")
                    head.pid = int(found.group("pid"))
                    head.local_rank = int(found.group("lrank"))
    found = _COMPILE_ID.match(rest)
    if found:
        head.compile_id = found.group("cid")
        rest = rest[found.end() :]
    if head.rank is None and "ank" in rest:
        found = _RANK_IN_BODY.search(rest[:200])
        if found:
            head.rank = int(next(g for g in found.groups() if g is not None))
    head.body = rest
    return head
