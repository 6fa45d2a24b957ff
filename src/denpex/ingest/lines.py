"""Frame a source's bytes into Lines: split on LF, drop CR and ANSI colours, decode leniently, parse headers."""

from __future__ import annotations

from collections.abc import Iterator

from denpex.ingest import headers
from denpex.ingest.sources import Source, read_chunks
from denpex.model import Line


def _raw_lines(source: Source) -> Iterator[bytes]:
    """Yield complete lines across chunk boundaries; memory holds one chunk, not the file."""
    pending = b""
    for chunk in read_chunks(source):
        if pending:
            chunk = pending + chunk
        parts = chunk.split(b"\n")
        pending = parts.pop()
        yield from parts
    if pending:
        yield pending


def frame(source: Source, start_seq: int = 0) -> Iterator[Line]:
    """Lines of one source, numbered from 1; invalid UTF-8 is replaced, never fatal."""
    seq = start_seq
    for number, raw in enumerate(_raw_lines(source), start=1):
        text = raw.decode("utf-8", "replace").rstrip("\r")
        if "\x1b" in text:
            text = headers.ANSI.sub("", text)
        if "\r" in text:  # progress bars redraw with CR: keep what was shown last
            text = text.rsplit("\r", 1)[-1] or text.replace("\r", "")
        head = headers.parse(text)
        seq += 1
        yield Line(
            file=source.name,
            number=number,
            text=text,
            body=head.body,
            rank=head.rank if head.rank is not None else source.rank_hint,
            local_rank=head.local_rank,
            host=head.host,
            pid=head.pid,
            level=head.level,
            timestamp=head.timestamp,
            compile_id=head.compile_id,
            seq=seq,
        )
