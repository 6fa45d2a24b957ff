"""Does every line of a log start with a launcher column of the job's own design that holds the rank?

MPICH's `mpiexec -prepend-pattern '%h:%r| '` writes `vm:2| ` before each line, `-prepend-pattern 'rank %r@%h: '`
writes `rank 2@vm: `: a launcher lets users choose the column, so no list of known prefixes can hold them all. Read
line by line, `vm:2| ` cannot be told from a message's own words; read across an input's first lines it can: nearly
every line starts with the same text around one small number, and the numbers are 0..N-1 like ranks. That column is
learned once per input (as ingest.host_column learns a cluster shell's host column) and each line's number is read
as the launcher's number for its process (a slot, like srun's `N: `).

A column may lead with the host (MPICH's `%h:%r| ` on two nodes: `node01:0| `, `node02:3| `): a host name that
varies over a few values, then the same separator and text around the number; each line's host is read too.

Only a column the known launcher prefixes do not already read is learned, and only when it has punctuation of its
own, so a log of `Epoch 3: ...` or `worker 12 ...` lines teaches nothing. A bracketed tag (`[worker 3] `) is left to
the analysis (analyze.stream_tags): a shell loop's worker index need not be the rank; its ranked lines tell.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from denpex.ingest import headers
from denpex.ingest.host_column import tagged_head
from denpex.ingest.sources import Source, sniffed_head

SNIFF_BYTES = 1 << 16
_SNIFF_LINES = 200
_SHARE = 0.6  # of the first lines that carry the column (a short log's launcher banner has none)
_MIN_LINES = 6
_MOST_RANKS = 4096
_RECUR = 3  # lines per distinct number at least: each rank's column recurs, a counter's number does not
# the column: up to 40 characters before the first `: `, `| `, `] `, `> ` or `) `, holding exactly one number
_COLUMN = re.compile(r"(?P<pre>[^\d\n]{0,24}?)(?P<number>\d{1,4})(?P<post>[^\d\n]{0,16}?[:|\]>)]) ")
_PUNCTUATION = re.compile(r"[^\w\s]")
# the same with a host first, whose name may hold digits (`node01:0| `, `gpu-3.cluster@2> `)
_HOST_NUMBER = re.compile(
    r"(?P<host>[A-Za-z][\w\-]{0,30}(?:\.[\w\-]{1,30}){0,4})(?P<sep>[:@/])(?P<number>\d{1,4})"
    r"(?P<post>[^\d\n]{0,16}?[:|\]>)]) ")
_MOST_HOSTS = 64
_HOST = r"(?P<host>[A-Za-z][\w\-]{0,30}(?:\.[\w\-]{1,30}){0,4})"


@dataclass(frozen=True)
class RankColumn:
    """The learned column: the text before and after the number, and the separator's space."""

    pre: str
    post: str
    hosted: bool = False  # a host name leads the column, `pre` is the separator after it

    def __post_init__(self) -> None:
        pattern = re.compile((_HOST if self.hosted else "") + re.escape(self.pre) + r"(?P<number>\d{1,4})"
                             + re.escape(self.post) + " ")
        object.__setattr__(self, "_pattern", pattern)

    def match(self, text: str) -> tuple[int, int, str | None] | None:
        """(the line's number, where its body starts, its host where the column names one), or None when the line
        does not carry the column."""
        found = self._pattern.match(text)  # type: ignore[attr-defined]
        if found is None:
            return None
        return int(found.group("number")), found.end(), found.group("host") if self.hosted else None

    def shown(self) -> str:
        return f"{'<host>' if self.hosted else ''}{self.pre}<rank>{self.post} "


def learn(head: bytes) -> RankColumn | None:
    """The column nearly all of the first lines share, when its numbers look like ranks and nothing else reads them."""
    text = head[:SNIFF_BYTES].decode("utf-8", "replace")
    lines = [line for line in text.split("\n")[:-1][:_SNIFF_LINES] if line.strip()]
    if len(lines) < _MIN_LINES:
        return None
    columns, numbers, _ = _tally(lines, _COLUMN, "pre")
    plain = _plain_column(columns, numbers, len(lines))
    return plain if plain is not None else _hosted_column(lines)


def _tally(lines: list[str], pattern: re.Pattern[str], before: str) -> tuple[
        Counter[tuple[str, str]], dict[tuple[str, str], set[int]], dict[tuple[str, str], set[str]]]:
    """Per column shape (the text `before` the number, the text after it): how many lines carry it, the numbers it
    holds, and the hosts named before it (where the pattern names one)."""
    columns: Counter[tuple[str, str]] = Counter()
    numbers: dict[tuple[str, str], set[int]] = {}
    hosts: dict[tuple[str, str], set[str]] = {}
    for line in lines:
        found = pattern.match(line)
        if found is None:
            continue
        key = (found.group(before), found.group("post"))
        columns[key] += 1
        numbers.setdefault(key, set()).add(int(found.group("number")))
        if "host" in pattern.groupindex:
            hosts.setdefault(key, set()).add(found.group("host"))
    return columns, numbers, hosts


def _ranks_like(seen: set[int], count: int, total: int) -> bool:
    """Numbers a column of ranks would show: 0..N-1 (0 among them, not spread wider), each on several lines, on
    most of the input's first lines."""
    if count < max(_MIN_LINES, _SHARE * total) or len(seen) < 2 or 0 not in seen:
        return False
    if max(seen) >= min(_MOST_RANKS, 4 * len(seen)):
        return False  # ranks are 0..N-1: numbers spread wider are pids, ports or steps
    # each rank prints many lines; a counter (`step=3 loss: `, `iter[3]: `, a module's `(3): `) few
    return count >= _RECUR * len(seen)


def _hosted_column(lines: list[str]) -> RankColumn | None:
    """A column that names the host before the rank (`node01:0| `), the hosts few and the separator shared."""
    columns, numbers, hosts = _tally(lines, _HOST_NUMBER, "sep")
    if not columns:
        return None
    (sep, post), count = columns.most_common(1)[0]
    seen, names = numbers[(sep, post)], hosts[(sep, post)]
    if not _ranks_like(seen, count, len(lines)) or len(names) > min(_MOST_HOSTS, len(seen)):
        return None
    if not _PUNCTUATION.search(post.rstrip(":|]>)")) and sep == ":" and post.strip() == ":":
        return None  # `host:3: `: a file's `path:line: ` or a count after a word, not a column of its own
    if headers.parse(f"{next(iter(names))}{sep}1{post} step 1").rank is not None:
        return None  # a known prefix (`[gpu187:1]:`): read already
    return RankColumn(sep, post, hosted=True)


def _plain_column(columns: Counter[tuple[str, str]], numbers: dict[tuple[str, str], set[int]],
                  total: int) -> RankColumn | None:
    if not columns:
        return None
    (pre, post), count = columns.most_common(1)[0]
    seen = numbers[(pre, post)]
    if not _ranks_like(seen, count, total):
        return None
    if pre.startswith(("[", "{", "(", '"', "'")):
        return None  # `[worker 3] ` (a process tag, whose rank its ranked lines tell: stream_tags), a JSON record
    if headers.parse(f"{pre}1{post} step 1", host_column=True).host is not None:
        return None  # a cluster shell's host column (`worker-1: `, `node-0: `): a node, not a rank
    if not _PUNCTUATION.search(pre + post.rstrip(":|]>)")):
        return None  # `Epoch 3: `, `worker 2| `: a word and a number, not a column of its own
    if headers.parse(f"{pre}1{post} step 1").rank is not None:
        return None  # a known prefix (`[1] `, `1: `, `[rank1]: `): read already
    return RankColumn(pre, post)


def columns_of(source: Source) -> tuple[bool, RankColumn | None]:
    """(does a cluster shell's host column lead its lines, the rank column learned from it): both from one sniff of
    the input's first bytes; a host column's input learns no rank column (its host names are no ranks)."""
    head = sniffed_head(source, SNIFF_BYTES)
    return (False, None) if head is None else columns_of_head(head)


def columns_of_head(head: bytes) -> tuple[bool, RankColumn | None]:
    """columns_of for an input's first bytes already at hand (a live stream's first lines)."""
    if tagged_head(head):
        return True, None
    return False, learn(head)
