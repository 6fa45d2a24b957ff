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

from denpex.ingest.headers import parse
from denpex.ingest.sources import Source

_HEAD_BYTES = 1 << 16  # the head of each file: ranks are printed from the first lines on


def _tree_of(path: Path) -> tuple[str, int] | None:
    """(the tree: its path up to the run id, the local rank) of a file in a torchrun log-dir layout."""
    parts = path.parts
    if len(parts) < 4 or not parts[-2].isdigit() or not parts[-3].startswith("attempt_"):
        return None
    return str(Path(*parts[:-3])), int(parts[-2])


def _printed_rank(files: list[Path]) -> int | None:
    """The rank the lines of a local-rank folder's files print most often."""
    seen: Counter[int] = Counter()
    for path in files:
        try:
            with open(path, "rb") as handle:
                head = handle.read(_HEAD_BYTES)
        except OSError:
            continue
        for line in head.decode("utf-8", "replace").splitlines()[:-1 or None]:
            rank = parse(line).rank
            if rank is not None:
                seen[rank] += 1
    return seen.most_common(1)[0][0] if seen else None


def global_ranks(sources: list[Source]) -> tuple[list[Source], list[str]]:
    """The sources, with their rank hints made global where several nodes' trees hold the same local ranks, and
    notes for the report."""
    trees: dict[str, dict[int, list[int]]] = {}  # tree -> local rank -> indexes of its sources
    for index, source in enumerate(sources):
        place = _tree_of(source.path) if source.path is not None and source.compression is None else None
        if place is not None:
            trees.setdefault(place[0], {}).setdefault(place[1], []).append(index)
    locals_seen = Counter(local for folders in trees.values() for local in folders)
    if len(trees) < 2 or not any(count > 1 for count in locals_seen.values()):
        return sources, []  # one node's tree (or trees that share no local rank): the path's rank stands
    out = list(sources)
    unknown: list[str] = []
    for tree, folders in sorted(trees.items()):
        for local, indexes in sorted(folders.items()):
            rank = _printed_rank([p for p in (sources[i].path for i in indexes) if p is not None])
            for i in indexes:
                out[i] = dataclasses.replace(sources[i], rank_hint=rank)
            if rank is None:
                unknown.append(f"{tree}/attempt_*/{local}")
    notes = [f"{len(trees)} torchrun log-dir trees hold the same local ranks (one per node): a folder's number is "
             "its local rank, so each takes the global rank its own lines print"]
    if unknown:
        notes.append("no global rank printed in " + ", ".join(unknown[:5]) + (" …" if len(unknown) > 5 else "")
                     + ": lines there without a rank prefix have no rank")
    return out, notes
