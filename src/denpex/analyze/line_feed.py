"""Every line of an input into the collector, as the fast path would feed it.

The line path (small inputs, `--engine lines`, `denpex run`'s live watch) reads every line; the fast path
frames only the lines around candidates. For both to give one diagnosis, a line is matched only when the
scanning engine finds a candidate in it and it is not a repeat of lines already analysed (scan.repeats).
"""

from __future__ import annotations

from denpex.analyze.collect import Collector
from denpex.ingest.lines import shown_bytes
from denpex.model import Line
from denpex.scan.engines import best_engine
from denpex.scan.repeats import RepeatFilter, repeat_key
from denpex.scan.world_size import in_line


class LineFeed:
    """The lines of one input, in order."""

    def __init__(self, collector: Collector, name: str) -> None:
        self.collector = collector
        self.name = name
        self._engine = best_engine(collector.catalog).fresh()
        self._repeats = RepeatFilter()

    def feed(self, raw: bytes, line: Line) -> None:
        if b"orld" in raw or b"ORLD" in raw or b"\x1b" in raw:  # the job's size, from every line, as the fast
            self.collector.note_world_size(in_line(raw))  # path reads it
        key = repeat_key(raw)
        repeats = self._repeats
        if key in repeats.seen:  # a copy of an analysed line: counted, as a dense chunk counts it
            repeats.admit(key)
            self.collector.feed(line, False)
        elif key in repeats.plain:  # a copy of a line that held no candidate
            self.collector.feed(line, False)
        elif self._engine.scan(shown_bytes(raw), ranks=False).candidates:
            repeats.admit(key)
            self.collector.feed(line, True, key)
        else:
            repeats.note_plain(key)
            self.collector.feed(line, False)

    def close(self) -> None:
        """Hand the collector the counts of the repeats that were not analysed."""
        self.collector.add_repeats(self.name, self._repeats.skipped)
        self._repeats.skipped = {}
