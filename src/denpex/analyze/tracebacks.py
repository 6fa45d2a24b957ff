"""Follow Python tracebacks line by line, per output stream, to know which line is the raised exception.

Why: the decisive line of most compile failures is inside an exception's (often multi-line) message,
and a wrapper such as `BackendCompilerFailed: backend='inductor' raised:` puts the real exception on
the next line. Knowing the block a line belongs to lets the ranking compare findings of one event.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from denpex.model import Line

TRACEBACK_HEADER = "Traceback (most recent call last):"
_CHAIN = ("The above exception was the direct cause", "During handling of the above exception")
_EXCEPTION_LINE = re.compile(r"^(?P<type>[A-Za-z_][\w.]*)(?::(?P<msg>.*))?$")
_FRAME = re.compile(r'^\s+File "(?P<path>[^"]+)", line \d+, in (?P<func>\S+)')
_MAX_FRAMES_KEPT = 400
_MAX_MESSAGE_LINES = 5000


@dataclass(slots=True)
class Block:
    """One traceback (or a chain of them): its frames, its exception line and its message lines."""

    block_id: int
    header: Line
    logged: bool  # printed by a logger at a level (a handled exception), not by the interpreter on exit
    frames: list[str] = field(default_factory=list)
    last_frame_path: str | None = None
    exception: Line | None = None
    exception_type: str | None = None
    message_lines: int = 0
    chained: bool = False


class _Stream:
    __slots__ = ("block", "state", "chain_pending")

    def __init__(self) -> None:
        self.block: Block | None = None
        self.state = "idle"  # idle | frames | message | inner
        self.chain_pending = False


class TracebackTracker:
    """Feed lines in order; `feed` says which block a line belongs to and whether it is the exception line."""

    def __init__(self) -> None:
        self._streams: dict[tuple[str, int | None], _Stream] = {}
        self._next_id = 0

    def feed(self, line: Line) -> tuple[Block | None, bool]:
        key = (line.file, line.rank)
        stream = self._streams.get(key)
        if stream is None:
            stream = self._streams[key] = _Stream()
        body = line.body
        stripped = body.strip()
        if stripped.startswith(TRACEBACK_HEADER):
            chained = stream.chain_pending and stream.block is not None
            if chained:
                assert stream.block is not None
                block = stream.block
                block.chained = True
            else:
                self._next_id += 1
                block = Block(self._next_id, header=line, logged=line.level in ("D", "I", "W"))
            stream.block = block
            stream.state = "frames"
            stream.chain_pending = False
            return block, False
        if any(stripped.startswith(c) for c in _CHAIN):
            stream.chain_pending = True
            return stream.block, False
        block = stream.block
        if block is None or stream.state == "idle":
            return None, False
        if stream.state == "frames":
            if body[:1].isspace() or not stripped or stripped.startswith("^"):
                frame = _FRAME.match(body)
                if frame:
                    block.last_frame_path = frame.group("path")
                if len(block.frames) < _MAX_FRAMES_KEPT:
                    block.frames.append(stripped)
                return block, False
            if _EXCEPTION_LINE.match(stripped):
                return self._exception(stream, block, line, stripped), True
            stream.state = "idle"
            return None, False
        if stream.state == "inner":
            if not stripped:
                return block, False
            return self._exception(stream, block, line, stripped), True
        # message state: the exception's message runs on until a new log record or a long way
        if line.level is not None and line.level != block.header.level:
            stream.state = "idle"
            return None, False
        block.message_lines += 1
        if block.message_lines > _MAX_MESSAGE_LINES:
            stream.state = "idle"
            return None, False
        return block, False

    def _exception(self, stream: _Stream, block: Block, line: Line, stripped: str) -> Block:
        block.exception = line
        block.exception_type = stripped.split(":", 1)[0]
        block.message_lines = 0
        # `BackendCompilerFailed: backend='inductor' raised:` carries its cause on the next line
        stream.state = "inner" if stripped.endswith("raised:") else "message"
        return block
