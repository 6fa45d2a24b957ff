"""torchrun `--log-dir` trees from several nodes: the number in `attempt_N/<n>/stderr.log` is a LOCAL rank.

Each node's agent writes `<log_dir>/<run_id>/attempt_N/<local_rank>/{stdout,stderr}.log`. One tree alone is one
node, and on a single-node job the local rank is the rank. A folder holding several such trees (each node's
collected into `node0/`, `node1/`, or passed as several inputs) has the same numbers on every node: `0/stderr.log`
is local rank 0 of each, so the path cannot say which global rank wrote it. The files themselves usually can: a
Python traceback's `[rank3]:` prefix, a logging format's rank field. So a local-rank folder of such a tree takes
the rank its own lines print (the most common one, from the head of its files); where none does, its files have
no rank rather than a wrong one, and the report says so.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from pathlib import Path

from denpex.errors import DenpexInputError
from denpex.ingest.headers import parse
from denpex.ingest.sources import ATTEMPT_FOLDER, Source, read_head

_HEAD_BYTES = 1 << 16  # the head of each file: ranks are printed from the first lines on
_ENOUGH = 20  # ranked lines that settle a folder's rank
_RANK_WORDS = ("rank", "Rank", "RANK")  # only lines holding one can carry a rank


def _place(path: Path) -> tuple[str, str, int] | None:
    """(the tree: its path up to the run id, the attempt folder, the local rank) of a file in a log-dir layout."""
    parts = path.parts
    if len(parts) < 4 or not parts[-2].isdigit() or not ATTEMPT_FOLDER.fullmatch(parts[-3]):
        return None
    return str(Path(*parts[:-3])), parts[-3], int(parts[-2])


def _head(source: Source) -> bytes:
    """The first _HEAD_BYTES of a source's text; b"" if it cannot be read."""
    try:
        return read_head(source, _HEAD_BYTES)[:_HEAD_BYTES]
    except (OSError, EOFError, ValueError, DenpexInputError):
        return b""


def _printed_rank(sources: list[Source]) -> int | None:
    """The rank the lines of a local-rank folder's files print most often."""
    seen: Counter[int] = Counter()
    for source in sources:
        head = _head(source)
        lines = head.decode("utf-8", "replace").splitlines()
        if len(head) == _HEAD_BYTES:
            lines = lines[:-1]  # the last line may be cut
        for line in lines:
            if not any(word in line for word in _RANK_WORDS):
                continue
            rank = parse(line).rank
            if rank is not None:
                seen[rank] += 1
                if sum(seen.values()) >= _ENOUGH:
                    return seen.most_common(1)[0][0]
    return seen.most_common(1)[0][0] if seen else None


def global_ranks(sources: list[Source]) -> tuple[list[Source], list[str]]:
    """The sources, with their rank hints made global where several nodes' trees hold the same local ranks, and
    notes for the report. Each attempt's folder is read on its own: after a restart that changed the membership,
    the same local rank can be another global rank."""
    folders: dict[tuple[str, str, int], list[int]] = {}  # (tree, attempt, local rank) -> indexes of its sources
    for index, source in enumerate(sources):
        place = _place(source.path) if source.path is not None else None
        if place is not None:
            folders.setdefault(place, []).append(index)
    trees: dict[str, set[int]] = {}
    for tree, _, local in folders:
        trees.setdefault(tree, set()).add(local)
    locals_seen = Counter(local for locals_of in trees.values() for local in locals_of)
    if len(trees) < 2 or not any(count > 1 for count in locals_seen.values()):
        return sources, []  # one node's tree (or trees that share no local rank): the path's rank stands
    out = list(sources)
    unknown: list[str] = []
    for (tree, attempt, local), indexes in sorted(folders.items()):
        rank = _printed_rank([sources[i] for i in indexes])
        for i in indexes:
            out[i] = dataclasses.replace(sources[i], rank_hint=rank)
        if rank is None:
            unknown.append(f"{tree}/{attempt}/{local}")
    notes = [f"{len(trees)} torchrun log-dir trees hold the same local ranks (one per node, or several runs): a "
             "folder's number is its local rank, so each takes the global rank its own lines print"]
    if unknown:
        notes.append("no global rank printed in " + ", ".join(unknown[:5]) + (" …" if len(unknown) > 5 else "")
                     + ": lines there without a rank prefix have no rank")
    return out, notes
