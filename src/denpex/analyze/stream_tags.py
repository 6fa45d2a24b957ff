"""The rank of a line whose only mark is the tag its launcher put before every line of one process.

A shell loop that pipes each worker through `sed "s/^/[worker 3] /"`, `kubectl logs --prefix` (`[pod/job-w-3/c]`),
Python's `%(processName)s` (`[SpawnProcess-3]`) or a job script's own wrapper tag every line of one process the
same way, its rankless lines included (`[worker 3] Fatal Python error: Segmentation fault`). No such tag is a rank
by itself (worker 0 may be rank 2), but the process's ranked lines say which rank it is: when every ranked line
with that tag just before is one rank's, and that rank shows under no other tag there, the tagged line is that
rank's too. Only the TAG_REACH lines right before are read, which both scanning paths frame
(scan.regions frames at least that many), so the answer does not depend on the engine.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from denpex.model import Line
from denpex.scan.regions import MIN_BEFORE

TAG_REACH = MIN_BEFORE  # lines before a finding searched for ranked lines of its tag (the fast path frames them)
# a bracketed tag at the very start: begins with a word (not glog's one-letter level), holds a digit (a process
# index), no colon (a source line, `[E ProcessGroupNCCL.cpp:1316]`) and no clock
_TAG = re.compile(r"\[([A-Za-z](?! )[\w./@ -]{0,62})\][ :]")
_CLOCK = re.compile(r"\d\d:\d\d")


@dataclass(frozen=True, slots=True)
class TagRank:
    rank: int
    tag: str
    lines: int  # ranked lines with that tag that said so


def leading_tag(text: str) -> str | None:
    """The tag that starts `text`, if it looks like a per-process one."""
    if not text.startswith("["):
        return None
    found = _TAG.match(text)
    if found is None:
        return None
    tag = found.group(1)
    if not any(ch.isdigit() for ch in tag) or _CLOCK.search(tag):
        return None
    return tag


def tag_rank(line: Line, recent: Iterable[Line]) -> TagRank | None:
    """The rank of a rankless `line` from the ranked lines of its tag among the TAG_REACH lines before it."""
    if line.rank is not None:
        return None
    tag = leading_tag(line.text)
    if tag is None:
        return None
    own: set[int] = set()
    count = 0
    other_tags: dict[int, str] = {}
    for before in recent:
        in_reach = line.number - TAG_REACH <= before.number < line.number
        if before.file != line.file or before.rank is None or not in_reach:
            continue
        their = leading_tag(before.text)
        if their is None:
            continue
        if their == tag:
            own.add(before.rank)
            count += 1
        else:
            other_tags[before.rank] = their
    if len(own) != 1 or count < 2 or not other_tags:
        return None
    rank = own.pop()
    if rank in other_tags:  # the rank also shows under another tag: the tag does not mark one process
        return None
    return TagRank(rank, tag, count)
