"""Frame a source's bytes into Lines: split on LF, drop CR and ANSI colours, decode leniently, parse headers."""

from __future__ import annotations

import codecs
import re
import time
from collections.abc import Iterable, Iterator

from denpex.ingest import headers
from denpex.ingest.rank_column import SNIFF_BYTES, RankColumn, columns_of, columns_of_head
from denpex.ingest.reading import Reading
from denpex.ingest.sources import Source, read_chunks
from denpex.model import Line

# One line is cut here. A progress bar that redraws with CR for hours is one "line" of many MB: only what
# follows its last CR is kept, so it stays small; anything else longer than this is cut to this size and ends
# with a marker, `… [N bytes cut]`, on every path (cut_line).
MAX_LINE_BYTES = 4 << 20
_CUT_LIMIT = MAX_LINE_BYTES + 64  # a line already cut carries its marker: it is not cut again

_UTF16_BOMS = (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)
# A progress bar's redraw: tqdm's `45%|####`, its rate or ETA, Rich's and Keras' bar glyphs.
_PROGRESS_BAR = re.compile(r"\d%\||\d(?:it/s|s/it)\b|\[\d+:\d+<|[\u2588\u2501\u2589\u258f]|\bETA\b|\d+/\d+ \[")


def _utf8(chunks: Iterable[bytes]) -> Iterator[bytes]:
    """Pass UTF-8 through; transcode UTF-16 with a BOM (PowerShell's `>` and Tee-Object write it)."""
    stream = iter(chunks)
    first = b""
    for chunk in stream:
        first += chunk
        if len(first) >= 4:
            break
    if not first:
        return
    if first.startswith(_UTF16_BOMS):
        decoder = codecs.getincrementaldecoder("utf-16")("replace")
        yield decoder.decode(first).encode("utf-8")
        for chunk in stream:
            yield decoder.decode(chunk).encode("utf-8")
        yield decoder.decode(b"", final=True).encode("utf-8")
        return
    if first.startswith(codecs.BOM_UTF8):
        first = first[len(codecs.BOM_UTF8) :]
    yield first
    yield from stream


def _bounded(parts: list[bytes]) -> bytes:
    """Join the pieces of one line, keeping what a terminal would show last and at most MAX_LINE_BYTES."""
    joined = b"".join(parts)
    if len(joined) > MAX_LINE_BYTES:
        cut = joined.rfind(b"\r", 0, len(joined) - 1)
        if cut >= 0:
            joined = joined[cut + 1 :]
        joined = joined[:MAX_LINE_BYTES]
    return joined


def cut_line(raw: bytes, shown_length: int | None = None) -> bytes:
    """A line over MAX_LINE_BYTES as every path reads it: what a terminal would show last (after its last CR),
    at most MAX_LINE_BYTES of it, and, when that shown part was longer, a marker of how many bytes were cut
    (redraws a CR overwrote are not "cut": a terminal never shows them). `shown_length`: the length after the
    last CR, when `raw` was bounded as it streamed in."""
    kept = _bounded([raw]).rstrip(b"\r")
    if shown_length is None:
        shown_length = _after_last_cr(raw, 0)
    dropped = shown_length - len(kept)
    return kept + f"… [{dropped:,} bytes cut]".encode() if dropped > 0 else kept


def _after_last_cr(piece: bytes, running: int) -> int:
    """Bytes after the last CR once `piece` is appended to a line that had `running` bytes after its last CR."""
    pos = piece.rfind(b"\r")
    return running + len(piece) if pos < 0 else len(piece) - pos - 1


class OpenLine:
    """The pieces of a line not yet ended, bounded as they arrive: at most what cut_line keeps of it (what a
    terminal shows last, MAX_LINE_BYTES of it) plus one piece. Every path that sees a line in pieces (chunks)
    reads it through this, so a long line reads the same on all of them."""

    __slots__ = ("_pieces", "_size", "_total", "_shown", "_full")

    def __init__(self) -> None:
        self.clear()

    def clear(self) -> None:
        self._pieces: list[bytes] = []
        self._size = 0  # bytes held
        self._total = 0  # bytes of the line, including those already dropped
        self._shown = 0  # of which after its last CR
        self._full = False  # what is held is all the line will keep, unless a CR follows

    def __bool__(self) -> bool:
        return self._total > 0

    def add(self, piece: bytes) -> None:
        """More of the line, no newline in it."""
        if not piece:
            return
        carriage = piece.rfind(b"\r")
        self._total += len(piece)
        self._shown = self._shown + len(piece) if carriage < 0 else len(piece) - carriage - 1
        if carriage < 0 and self._full:  # a 100 MB line is not copied past its first 4 MiB
            return
        self._full = False
        self._pieces.append(piece)
        self._size += len(piece)
        if self._size > 2 * MAX_LINE_BYTES:
            held = _bounded(self._pieces)
            if carriage == len(piece) - 1 and not held.endswith(b"\r"):
                held += b"\r"  # a CR at the end cuts the line only if more text follows: keep it for then
            self._pieces = [held]
            self._size = len(held)
            self._full = len(held) >= MAX_LINE_BYTES and carriage != len(piece) - 1

    def close(self, piece: bytes = b"") -> bytes:
        """The line's last piece (before its newline): the line as every path reads it. The buffer is empty after."""
        if not self._pieces:
            line = piece if len(piece) <= MAX_LINE_BYTES else cut_line(piece)
        else:
            self.add(piece)
            joined = _bounded(self._pieces)
            line = cut_line(joined, self._shown) if self._total > MAX_LINE_BYTES else joined
        self.clear()
        return line


def _raw_lines(chunks: Iterable[bytes]) -> Iterator[bytes]:
    """Yield complete lines across chunk boundaries; a line over MAX_LINE_BYTES is cut (cut_line).

    Memory holds one chunk plus the unfinished line, and joining the pieces of a long line is linear.
    """
    pending = OpenLine()
    for chunk in chunks:
        if not chunk:
            continue
        parts = chunk.split(b"\n")
        if len(parts) == 1:  # no newline in this chunk: the current line goes on
            pending.add(chunk)
            continue
        yield pending.close(parts[0])
        last = parts.pop()
        for raw in parts[1:]:
            yield raw if len(raw) <= MAX_LINE_BYTES else cut_line(raw)
        pending.add(last)
    if pending:
        yield pending.close()


def shown_text(text: str) -> str:
    """A line as a terminal shows it: colour and cursor codes gone, CR redraws resolved (shown_segment)."""
    if "\x1b" in text:  # colours first: `bar\r\x1b[0m` ends in a CR once its reset is gone
        text = headers.ANSI.sub("", text).replace("\x1b", "")  # and a stray ESC of no known sequence
    text = text.rstrip("\r")
    if "\r" in text:
        text = shown_segment(text)
    return text


def shown_bytes(raw: bytes) -> bytes:
    """shown_text of raw bytes, as bytes: what decides a line's candidacy and repeat key on every path, so a
    log with colour codes or CRLF ends is judged as its plain text is. Bytes without ESC or CR pass as they
    are (invalid UTF-8 is then kept, as the scanners see it)."""
    if len(raw) > _CUT_LIMIT:  # the fast path frames the whole line: cut it as the line path did
        raw = cut_line(raw)
    if b"\x1b" not in raw and b"\r" not in raw:
        return raw
    return shown_text(raw.decode("utf-8", "replace")).encode("utf-8", "surrogatepass")


# headers.ANSI, except that an unterminated OSC stops at a newline: on lines joined with newlines it then
# removes what it removes from each line alone
_ANSI_IN_LINES = re.compile(headers.ANSI.pattern.replace("[^\\x07\\x1b]", "[^\\x07\\x1b\\n]"))
assert _ANSI_IN_LINES.pattern != headers.ANSI.pattern


def shown_lines(raws: list[bytes]) -> list[bytes]:
    """shown_bytes of each of these lines (none holds a newline). The common case, colour codes and no CR, is
    resolved in one decode, one substitution and one encode over the lines joined: per line, those calls
    made most of a coloured log's time."""
    shown = list(raws)
    coloured = [i for i, raw in enumerate(raws) if b"\x1b" in raw and b"\r" not in raw and len(raw) <= _CUT_LIMIT]
    if len(coloured) < len(raws):
        for i in set(range(len(raws))).difference(coloured):
            shown[i] = shown_bytes(raws[i])
    if coloured:
        text = b"\n".join(map(raws.__getitem__, coloured)).decode("utf-8", "replace")
        plain = _ANSI_IN_LINES.sub("", text).replace("\x1b", "").encode("utf-8", "surrogatepass")
        for i, line in zip(coloured, plain.split(b"\n"), strict=True):
            shown[i] = line
    return shown


def shown_segment(text: str) -> str:
    """What a terminal shows of a line that CR redraws: the last segment, unless that is a progress bar and an
    earlier segment is a log line of its own (a message the bar's next redraw overwrote on screen only)."""
    segments = [segment for segment in text.split("\r") if segment.strip()]
    if not segments:
        return ""
    last = segments[-1]
    if _PROGRESS_BAR.search(last):
        for segment in reversed(segments[:-1]):
            if not _PROGRESS_BAR.search(segment):
                return segment
    return last


def build_line(raw: bytes, name: str, number: int, seq: int, rank_hint: int | None, year: int | None,
               time_hint: float | None = None, host_column: bool = False,
               rank_column: RankColumn | None = None) -> Line:
    """One Line from its raw bytes: decode leniently, drop CR and ANSI colours, parse the headers.

    `year` is that of the last line with a full date (glog stamps have none); the new one is in Line.year.
    `host_column`: the input's lines are led by a cluster shell's `host: ` (ingest.host_column); `rank_column`: by a
    launcher column learned from the input (ingest.rank_column), whose number is the process's slot.
    """
    if len(raw) > _CUT_LIMIT:  # the fast path frames the whole line: cut it as the line path did
        raw = cut_line(raw)
    text = shown_text(raw.decode("utf-8", "replace"))
    column = rank_column.match(text) if rank_column is not None else None
    head = headers.parse(text[column[1]:] if column else text, year, host_column)
    if column is not None:  # the launcher's number, as srun's `N: `: what the line says besides is a claim
        if head.rank is not None and head.rank != column[0]:
            head.claimed = head.rank
        head.rank = head.slot = column[0]
        head.rank_is_slot = True
        if column[2] is not None:
            head.host = column[2]
    return Line(
        file=name,
        number=number,
        text=text,
        body=head.body,
        rank=head.rank if head.rank is not None else rank_hint,
        local_rank=head.local_rank,
        host=head.host,
        pid=head.pid,
        level=head.level,
        timestamp=head.timestamp if head.timestamp is not None else time_hint,
        compile_id=head.compile_id,
        origin=head.origin,
        slot=head.slot,
        rank_is_slot=head.rank_is_slot,  # set only with a rank, and a claim only beside it (ingest.headers)
        claimed=head.claimed,
        wall=head.wall if head.timestamp is not None else None,
        seq=seq,
        year=head.year if head.year is not None else year,
    )


def framed(source: Source, start_seq: int = 0, reading: Reading | None = None,
           columns: tuple[bool, RankColumn | None] | None = None) -> Iterator[tuple[bytes, Line]]:
    """(raw bytes, Line) of each line of one source, numbered from 1; invalid UTF-8 is replaced, never fatal.
    `reading` collects what the answer must mention (a stream that broke off, NUL bytes); `columns`: the source's
    rank_column.columns_of, when the caller already sniffed it."""
    seq = start_seq
    year: int | None = None
    tagged, column = columns if columns is not None else columns_of(source)
    for number, raw in enumerate(_raw_lines(source_bytes(source, 1 << 20, reading)), start=1):
        seq += 1
        line = build_line(raw, source.name, number, seq, source.rank_hint, year, source.time_hint, tagged, column)
        year = line.year
        yield raw, line


class StreamFraming:
    """Frames a live stream's lines (`denpex run`'s output, a watched file) as `framed` frames a saved file.

    A file's host and rank columns are decided from its first bytes before any line is framed; a stream has no first
    bytes yet, so its columns are decided once as many lines have arrived as that decision reads (SNIFF_LINES lines
    or SNIFF_BYTES) or the stream ends. Lines wait for that decision at most HOLD_S (`due`): then they are framed as
    they are (`settle`), so a finding is shown without waiting, and the decision stays open. When it comes and finds a
    column those early lines lacked, every line of the stream so far is framed again and `restarted` says so: the
    caller analyses the stream afresh from its first line. Each line keeps the number and sequence it was given.
    """

    SNIFF_LINES = 200
    HOLD_S = 0.5

    def __init__(self, name: str, rank_hint: int | None = None) -> None:
        self.name = name
        self.rank_hint = rank_hint
        self.year: int | None = None
        self.columns: tuple[bool, RankColumn | None] | None = None
        self.restarted = False  # the last lines returned start over from the stream's first line
        self._head: list[tuple[bytes, int, int]] = []  # every line seen while the columns are undecided
        self._head_bytes = 0
        self._held = 0  # how many of the head's last lines are not framed yet
        self._held_since: float | None = None
        self._provisional = False  # some head lines were framed before the decision

    def push(self, raw: bytes, number: int, seq: int) -> list[tuple[bytes, Line]]:
        """The lines that can be framed now: none while the columns are undecided (at most HOLD_S), then every
        held one."""
        self.restarted = False
        if self.columns is not None:
            return [(raw, self._build(raw, number, seq))]
        self._head.append((raw, number, seq))
        self._head_bytes += len(raw) + 1
        self._held += 1
        if self._held_since is None:
            self._held_since = time.monotonic()
        if len(self._head) < self.SNIFF_LINES and self._head_bytes < SNIFF_BYTES:
            return []
        return self.flush()

    def due(self) -> bool:
        """Have lines waited HOLD_S for the column decision? Then `settle` frames them."""
        return self._held_since is not None and time.monotonic() - self._held_since >= self.HOLD_S

    def settle(self) -> list[tuple[bytes, Line]]:
        """Frame the held lines as they are, the columns still undecided (a pause, or lines held too long)."""
        self.restarted = False
        if self.columns is not None or not self._held:
            return []
        held = self._head[len(self._head) - self._held:]
        self._held, self._held_since, self._provisional = 0, None, True
        return [(raw, self._build(raw, number, seq)) for raw, number, seq in held]

    def flush(self) -> list[tuple[bytes, Line]]:
        """Decide the columns from what has arrived (at the stream's end, however little) and frame the held lines,
        or, when early lines were framed without a column now found, every line again (`restarted`)."""
        self.restarted = False
        if self.columns is not None:
            return []
        self.columns = columns_of_head(b"".join(raw + b"\n" for raw, _, _ in self._head)[:SNIFF_BYTES])
        self.restarted = self._provisional and self.columns != (False, None)
        lines = self._head if self.restarted else self._head[len(self._head) - self._held:]
        self.year = None if self.restarted else self.year
        framed = [(raw, self._build(raw, number, seq)) for raw, number, seq in lines]
        self._head, self._head_bytes, self._held, self._held_since = [], 0, 0, None
        return framed

    def _build(self, raw: bytes, number: int, seq: int) -> Line:
        tagged, column = self.columns or (False, None)
        line = build_line(raw, self.name, number, seq, self.rank_hint, self.year, None, tagged, column)
        self.year = line.year
        return line


def frame(source: Source, start_seq: int = 0) -> Iterator[Line]:
    """Lines of one source, numbered from 1; invalid UTF-8 is replaced, never fatal."""
    for _, line in framed(source, start_seq):
        yield line


def source_bytes(source: Source, chunk_size: int = 16 << 20, reading: Reading | None = None) -> Iterator[bytes]:
    """The source's bytes as UTF-8 chunks (UTF-16 transcoded), for the fast path's scanners; `reading`, if
    given, counts NUL bytes and notes where a compressed stream broke off."""
    chunks = _utf8(read_chunks(source, chunk_size, reading))
    return reading.watch(chunks) if reading is not None else chunks
