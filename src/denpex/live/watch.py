"""`denpex watch`: diagnose growing logs as they are written, and say the root cause the moment it shows.

The lines that `ingest.follow` hands out go, in arrival order, into one streaming `Collector` (the one
`denpex diagnose` feeds on its line path, through the same `LineFeed`), so nothing is read twice. After each
poll that brought new lines the current decision is taken: `decide()` on a deep copy of the collection,
because decide re-files and demotes candidates in place and the collector keeps appending to the same
ones. Copy and decision cost milliseconds on a job's logs (the collection is bounded: a few occurrences per
finding with their context) and happen at most once per poll period.

A rotated or truncated file keeps its name; its line numbers start again at 1 (a note says so).
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable
from dataclasses import dataclass

from denpex.analyze.collect import Collector
from denpex.analyze.decide import decide
from denpex.analyze.line_feed import LineFeed
from denpex.catalog import Catalog
from denpex.errors import DenpexInputError
from denpex.ingest.follow import Event, FollowedFile, Follower
from denpex.ingest.lines import StreamFraming
from denpex.live.process import exited
from denpex.model import Diagnosis, Finding, Line


@dataclass(slots=True)
class Change:
    """The root cause (or its initiating rank) changed: `previous` is None for the first finding."""

    diagnosis: Diagnosis
    root: Finding
    previous: tuple[str, int | None] | None  # (id, rank) of the root cause shown before
    wall: float  # time.time() when denpex decided it


@dataclass(slots=True)
class _Stream:
    """What framing one followed file needs between polls."""

    feed: LineFeed
    framing: StreamFraming
    generation: int = 0
    number: int = 0
    fed: int = 0  # the number of the last line fed


def _key(root: Finding | None) -> tuple[str, int | None] | None:
    return None if root is None else (root.entry_id, root.rank)


# A rank's silence is evidence only once its output has had time to arrive: while files still grow, the rank
# that looks silent may be flushing its own traceback (it dies after, or as, its peers report the loss)
SILENCE_SETTLE_S = 1.0
_ABSENCE_EVIDENCE = ("silent", "absent_from_timeouts", "waited_on")


def ready_to_show(root: Finding, idle_for: float) -> bool:
    """Whether a root cause can be shown now: one that rests on a rank saying nothing waits until every
    followed file has been idle for SILENCE_SETTLE_S; every other kind of evidence is shown at once."""
    return root.rank_evidence not in _ABSENCE_EVIDENCE or idle_for >= SILENCE_SETTLE_S


class LiveDiagnosis:
    """Lines of many files in, the current decision out, the final Diagnosis at the end."""

    def __init__(self, catalog: Catalog, context: int = 100) -> None:
        self.catalog = catalog
        self.collector = Collector(catalog, context=context)
        self._streams: dict[str, _Stream] = {}
        self._seq = 0
        self._decided_at = -1  # lines_read when the last decision was taken
        self._entries_memo = {id(e): e for e in catalog.entries}  # deepcopy shares the catalog's entries
        self.notes: list[str] = []
        # files whose first lines were read before their launcher column was learned (the live decisions lack it)
        self.read_early: list[str] = []
        self.rotated = False

    @property
    def inputs(self) -> list[str]:
        return list(self._streams)

    def feed(self, followed: FollowedFile, lines: list[bytes]) -> None:
        """Frame and feed complete lines of one file, as `ingest.lines.framed` frames a file."""
        stream = self._streams.get(followed.name)
        if stream is None:
            stream = self._streams[followed.name] = _Stream(LineFeed(self.collector, followed.name),
                                                            StreamFraming(followed.name, followed.rank_hint))
        if followed.generation != stream.generation:
            self.rotated = True
            self._frame(stream, stream.framing.flush())  # the old file's held lines; the new one's columns are its own
            stream.framing = StreamFraming(followed.name, followed.rank_hint)
            stream.generation, stream.number, stream.fed = followed.generation, 0, 0
            self.notes.append(f"{followed.name} was rotated or truncated while watched: line numbers of its "
                              "earlier lines refer to the earlier file")
        for raw in lines:
            stream.number += 1
            self._seq += 1
            self._frame(stream, stream.framing.push(raw, stream.number, self._seq))

    def _frame(self, stream: _Stream, lines: list[tuple[bytes, Line]]) -> None:
        """Feed framed lines; a stream framed again from its start (a column found after its first lines were read
        without it) feeds only those not fed yet: the other files share the analysis, so it is not started over."""
        if stream.framing.restarted and lines:
            early = sum(1 for _, line in lines if line.number <= stream.fed)
            if early:
                self.read_early.append(stream.framing.name)
            lines = [(raw, line) for raw, line in lines if line.number > stream.fed]
        for raw, line in lines:
            stream.feed.feed(raw, line)
            stream.fed = line.number

    def settle(self) -> None:
        """Frame the lines a stream has held too long for its column decision (ingest.lines.StreamFraming.due), so
        a finding is shown without waiting for the decision."""
        for stream in self._streams.values():
            if stream.framing.due():
                self._frame(stream, stream.framing.settle())

    def current(self) -> Diagnosis | None:
        """The decision on everything fed so far; None when nothing new was fed since the last one."""
        result = self.collector.result
        if result.lines_read == self._decided_at:
            return None
        self._decided_at = result.lines_read
        collection = copy.deepcopy(result, dict(self._entries_memo))
        diagnosis = decide(collection, self.catalog, self.inputs)
        diagnosis.notes.extend(collection.notes)
        return diagnosis

    def finish(self) -> Diagnosis:
        """The final diagnosis, as `api.diagnose_sources` builds it on the line path."""
        for stream in self._streams.values():
            self._frame(stream, stream.framing.flush())
            stream.feed.close()
        collection = self.collector.finish()
        diagnosis = decide(collection, self.catalog, self.inputs)
        diagnosis.notes.extend(collection.notes)
        diagnosis.notes.extend(dict.fromkeys(self.notes))
        if collection.repeated_lines:
            diagnosis.notes.append(
                f"{collection.repeated_lines:,} copies of lines already analysed (same text, digits aside) were "
                "counted under the findings of their first copy, not analysed again"
            )
        return diagnosis


@dataclass
class WatchOptions:
    interval: float = 0.2
    idle: float | None = None  # end when every file has been idle this long
    until_pid: int | None = None  # end once this process has exited (and what it left is read)


def watch(
    inputs: list[str],
    catalog: Catalog,
    options: WatchOptions,
    *,
    on_change: Callable[[Change], None],
    on_event: Callable[[Event], None],
    stopped: Callable[[], bool],
    context: int = 100,
) -> tuple[Diagnosis, str]:
    """Follow `inputs` until `stopped()` (Ctrl-C), the process exits or the files go idle; report each
    change of root cause through `on_change`. Returns the final diagnosis and why the watch ended."""
    follower = Follower(inputs)  # a missing path raises DenpexInputError before anything is read
    live = LiveDiagnosis(catalog, context)
    shown: tuple[str, int | None] | None = None
    held: Diagnosis | None = None  # a decision resting on silence, waiting for the files to settle
    reason = ""
    try:
        while True:
            began = time.monotonic()
            if stopped():
                reason = "interrupted"
            elif options.until_pid is not None and exited(options.until_pid):
                reason = f"process {options.until_pid} exited"
            elif options.idle is not None and follower.idle_for() >= options.idle:
                reason = f"every file idle for {options.idle:g} s"
            batches, events = follower.poll(final=bool(reason))
            for event in events:
                on_event(event)
            for followed, lines in batches:
                live.feed(followed, lines)
            if reason:
                break
            live.settle()
            diagnosis = live.current() or held
            held = None
            root = diagnosis.root_cause if diagnosis is not None else None
            if diagnosis is not None and root is not None and _key(root) != shown:
                if ready_to_show(root, follower.idle_for()):
                    previous = shown
                    shown = _key(root)
                    on_change(Change(diagnosis, root, previous, time.time()))
                else:
                    held = diagnosis  # shown once the files settle, unless a newer decision replaces it
            time.sleep(max(0.0, options.interval - (time.monotonic() - began)))
    finally:
        follower.close()
    final = live.finish()
    if live.read_early and not live.rotated:
        # a file's launcher column was learned after its first lines had been read without it: the files are all
        # there, so the final report reads them as `denpex diagnose` does
        from denpex.api import diagnose

        try:
            reread = diagnose(inputs, catalog=catalog, context=context, workers=1)
        except (DenpexInputError, OSError):  # a file went away meanwhile: the live report is all there is
            final.notes.append(f"{', '.join(live.read_early)}: a launcher column was learned after the first lines "
                               "had been read without it, and the files could not be read again")
        else:
            final = reread
            final.notes.append(f"{', '.join(live.read_early)}: a launcher column was learned after the first lines "
                               "had been shown; this final report read the files again with it")
    if final.root_cause is not None and _key(final.root_cause) != shown:
        on_change(Change(final, final.root_cause, shown, time.time()))
    return final, reason



def change_line(change: Change) -> str:
    """One line for the terminal: what failed, on which rank, where; the log's text made visible."""
    from denpex.report.display import visible

    root = change.root
    when = time.strftime("%H:%M:%S", time.localtime(change.wall))
    rank = "rank ?" if root.rank is None else f"rank {root.rank}"
    where = f"{root.evidence.file}:{root.evidence.line}"
    text = root.evidence.text.strip()
    text = text if len(text) <= 200 else text[:199] + "…"
    if change.previous is None:
        head = f"finding: {rank}: {root.entry_id}"
    else:
        was_id, was_rank = change.previous
        was = f"{was_id} on rank {'?' if was_rank is None else was_rank}"
        head = f"update: root cause now {root.entry_id} on {rank} (was {was})"
    return visible(f"[{when}] {head} at {where}: {text}")
