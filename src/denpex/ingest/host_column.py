"""Does a log carry a cluster shell's host column on every line? (`pdsh -w node-[1-2] torchrun ...`)

pdsh and ClusterShell put `node-b: ` before each line a node printed. Read line by line, that column cannot be told
from a message's own `name: ` (`error: `, `python3: can't open file`), so it is decided once per input, from its
first lines: nearly all of them start with one of a few host names. Both paths (line and fast) ask the same
question of the same bytes, so they read the input alike.
"""

from __future__ import annotations

import re
from collections import Counter

from denpex.ingest.headers import HOST_COLUMN
from denpex.ingest.sources import Source, sniffed_head

SNIFF_BYTES = 1 << 16
_SNIFF_LINES = 200
_TAGGED_SHARE = 0.8  # pdsh and clush tag every line; a few of a paste's lines may have lost it
_MOST_HOSTS = 64
_HOST = re.compile(HOST_COLUMN.encode())  # the column headers.parse reads off, sought in the raw bytes
# a message's own lower-case words that can start many lines (compiler and tool diagnostics)
_NOT_HOSTS = frozenset({b"error", b"warning", b"warn", b"info", b"debug", b"note", b"fatal", b"critical", b"hint",
                        b"trace", b"traceback", b"notice", b"in", b"at", b"from"})


def tagged_head(head: bytes) -> bool:
    """True when nearly every one of the first lines starts with `host: ` from a small set of hosts."""
    lines = [line for line in head[:SNIFF_BYTES].split(b"\n")[:-1][:_SNIFF_LINES] if line.strip()]
    if len(lines) < 3:
        return False
    hosts = Counter(found.group("host") for line in lines if (found := _HOST.match(line)))
    if not hosts or hosts.keys() & _NOT_HOSTS or len(hosts) > _MOST_HOSTS:
        return False
    return sum(hosts.values()) >= _TAGGED_SHARE * len(lines) and hosts.most_common(1)[0][1] >= 2


def host_tagged(source: Source) -> bool:
    """tagged_head of the source's first bytes."""
    head = sniffed_head(source, SNIFF_BYTES)
    return head is not None and tagged_head(head)
