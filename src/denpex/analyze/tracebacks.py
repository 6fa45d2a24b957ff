"""Follow Python tracebacks line by line, per output stream, to know what each line is.

Why: the decisive line of most compile failures is inside an exception's (often multi-line) message;
a wrapper such as `BackendCompilerFailed: backend='inductor' raised:` puts the real exception on the
next line; and source lines echoed under `File "...", line N` are not events at all. Knowing the block
a line belongs to lets the ranking compare findings of one event.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import Enum

from denpex.model import Line

# and the TorchScript interpreter's, under its report (`Traceback of TorchScript (most recent call last):`, also
# `..., serialized code` / `..., original code` for loaded models)
TRACEBACK_HEADER = re.compile(
    r"^(?:Original )?Traceback(?: of TorchScript(?:, (?:serialized|original) code)?)? \(most recent call last\):")
# IPython/Jupyter print the exception class first: `CacheLimitExceeded      Traceback (most recent call last)`
_IPYTHON_HEADER = re.compile(r"^(?P<exc>[A-Za-z_][\w.]*)\s{2,}Traceback \(most recent call last\)\s*$")
# IPython's frames: `Cell In[21], line 5`, `File ~/x.py:451, in f(...)`, `----> 5     result = run()`, `~/x.py in f()`,
# Colab's linked ones `[/usr/lib/x.py](https://localhost:8080/#) in f(...)`, `<ipython-input-6-..> in <cell>()`,
# the numbered source lines around the arrow (`    111 `) and Colab's `25 frames` fold
_IPYTHON_FRAME = re.compile(
    r"^(?:Cell In\[\d+\], line \d+|File [~/\\\w.:-][^\n]*:\d+, in |-+> ?\d+\b|\S+\.py in \S+\("
    r"|\[[^\]]+\]\([^)]*\) in .*\(|<ipython-input-[\w-]+> in |\d+ frames$|\d+(?: .*)?$)"
)
# a header glued after a progress bar that printed no newline: `100%|####| 5/5 [00:02<00:00]Traceback (...):`
_GLUED_HEADER = re.compile(r"\S.*?(?P<header>Traceback \(most recent call last\):)\s*$")
# an exception glued after a progress bar: `45%|####5     | 45/100 [00:10<00:12, 4.5it/s]RuntimeError: ...`
_GLUED_AFTER_BAR = re.compile(r"^.*?\d+%\|[^|]*\|[^\[\]]*\[[^\]]*\]\s*(?P<rest>\S.*)$")
# torch.distributed.checkpoint's CheckpointException quotes each failed rank's traceback under a header naming it
_HEADER_RANK = re.compile(r"\(RANK (?P<rank>\d+)\)\s*$")
# torch.distributed.rpc re-raises a remote function's exception on the caller with the callee named first
# (torch/distributed/rpc/internal.py, RemoteException, 1.x-2.13): `On WorkerInfo(id=2, name=worker2):`, the
# exception's repr, then the callee's traceback; the id is the callee's RPC rank, the job's rank under torchrun and
# mp.spawn
_REMOTE_WORKER = re.compile(r"\bOn WorkerInfo\(id=(?P<rank>\d+), name=[^)]*\):")
_REMOTE_REACH = 3  # lines between that header and the callee's `Traceback (most recent call last):`
# rich's traceback (rich.traceback.install, RichHandler, typer, Accelerate's launcher): a box per traceback, its frames
# as `│ /path/file.py:233 in main │`, nested boxes for an exception group's sub-exceptions, the exception after the box
_BOX_CHARS = frozenset("╭│╰")
_RICH_HEADER = re.compile(r"^╭─+ Traceback \(most recent call last\)")
_RICH_FRAME = re.compile(r"^(?P<path>\S+?):(?P<line>\d+) in (?P<func>\S+)$")
_BOX_LEFT = re.compile(r"^(?:│ ?)+")
_BOX_RIGHT = re.compile(r"(?: ?│)+$")
# pytest's report of a failed test: the exception and its message on `E   ` lines under the failing source line
_PYTEST_E = re.compile(r"^E {3,}(?P<rest>\S.*?)\s*$|^E\s*$")
# Python 3.11's exception groups: `+ Exception Group Traceback (most recent call last):`, then every line of the group
# and of its sub-exceptions' tracebacks behind a `| ` margin, the sub-exceptions between `+-+---- 1 ----` rules
_GROUP_HEADER = re.compile(r"^ *(?:\| )?\+ Exception Group Traceback \(most recent call last\):")
_GROUP_RULE = re.compile(r"^ *\+-")
_GROUP_MARGIN = re.compile(r"^ *\| ?")
_CHAIN = ("The above exception was the direct cause", "During handling of the above exception")
_EXCEPTION_LINE = re.compile(r"^[A-Za-z_][\w.]*(?::.*)?$")
# an exception line in a pasted excerpt, without the traceback above it
_ORPHAN_EXCEPTION = re.compile(
    r"^(?:[a-z_][\w]*\.)*(?:[A-Z]\w*(?:Error|Exception|Failed|Interrupt|Exit)|Exception)\b(?::|$)"
)
# the same inside an error-level log record: `ERROR - training failed: RuntimeError: CUDA error: ...`
_RECORDED_EXCEPTION = re.compile(
    r"(?:^|[\s:\]])(?P<exc>(?:[a-z_][\w]*\.)*(?:[A-Z]\w*(?:Error|Exception|Failed|Interrupt)|Exception)): \S"
)
# an error record that names the exception it died of without its message's colon (an excepthook's one-line summary:
# `CRITICAL [rank 3] train: FATAL: uncaught RuntimeError at step 3, traceback written to crash/rank3.txt`)
_NAMED_UNCAUGHT = re.compile(
    r"\b(?:[Uu]ncaught|[Uu]nhandled)\s+(?:exception\s+)?(?P<exc>(?:[a-z_][\w]*\.)*[A-Z]\w*(?:Error|Exception|Interrupt))"
    r"\b(?!:)[\s,;(]*(?P<rest>.*)$"
)
_CLASS_REPR = re.compile(r"^<class '(?P<cls>[A-Za-z_][\w.]*)'>:\s?")
# ComfyUI's error report (`# ComfyUI Error Report`, `## Error Details`): the class and the message on two Markdown
# bullets, `- **Exception Type:** torch._dynamo.exc.Unsupported` then `- **Exception Message:** <message>`; its
# stack trace section lists frames only
_REPORT_TYPE = re.compile(r"^- \*\*Exception Type:\*\* (?P<cls>[A-Za-z_][\w.]*)$")
_REPORT_MESSAGE = re.compile(r"^- \*\*Exception Message:\*\* ?(?P<msg>.*)$")
# after frames with no header above them (a pasted excerpt cut at the top), what an exception line looks like
_HEADLESS_EXCEPTION = re.compile(
    r"^(?:[a-z_]\w*\.)+[A-Z]\w*(?::|$)|^[A-Z]\w*(?:Error|Exception|Failed|Interrupt|Exit|Iteration|Unsupported"
    r"|Warning)\b(?::|$)"
)
_FRAME = re.compile(r'^\s*File "(?P<path>[^"]+)", line \d+, in (?P<func>\S+)')  # flush left in a paste, too
_FRAME_TAIL = re.compile(r'^[^\s"]*\.py", line \d+, in \S+$')  # a frame line cut at the start of an excerpt
_MAX_FRAMES_KEPT = 400
_MAX_MESSAGE_LINES = 5000


class Kind(str, Enum):
    HEADER = "header"
    FRAME = "frame"  # a `File ...` line or the source it echoes: never evidence
    EXCEPTION = "exception"  # the raised exception's first line
    MESSAGE = "message"  # a later line of the exception's message
    OTHER = "other"


@dataclass(slots=True)
class Block:
    """One traceback (or a chain of them): its frames, its exception line and its message lines."""

    block_id: int
    header: Line
    logged: bool  # printed by a logger at a level (a handled exception), not by the interpreter on exit
    orphan: bool = False  # an exception line with no traceback above it (a pasted excerpt)
    frames: list[str] = field(default_factory=list)
    last_frame_path: str | None = None
    exception: Line | None = None
    exception_type: str | None = None
    message_lines: int = 0
    chained: bool = False
    headless: bool = False  # frames with no `Traceback` header above them (the excerpt was cut)
    indent: int | None = None  # how far the whole traceback is indented (torchelastic's summary quotes it by 2)
    ipython: bool = False  # IPython's layout: the class on the header line, `Cell In[..]`/`---->` frames
    wrapped_by_backend: bool = False  # `BackendCompilerFailed: backend='inductor' raised:` carried the exception
    about_rank: int | None = None  # the rank whose traceback this is, where its header says (`... last): (RANK 1)`)
    # the rank of the log record a bare header follows (`[rank1] ERROR training failed`, then `Traceback ...`:
    # logger.exception prints the record's traceback on the lines after its message)
    record_rank: int | None = None
    rich: bool = False  # drawn by rich: frames in boxes
    box_closed: bool = False  # rich: the innermost box just closed, the exception comes next
    pytest: bool = False  # pytest's `E   ` lines
    # the exception as Python would have printed it (`Class: message`), where the log split the two over lines (a
    # report's `Exception Type:` and `Exception Message:` bullets): what the catalog reads for the exception line
    stated: str | None = None


# a line of Python source, never a message: `raise RuntimeError(f"NCCL error: {error_str}")`, `x = f(y)`
_SOURCE_STATEMENT = re.compile(r"(?:raise|return|assert|yield|await)\b|[A-Za-z_][\w.]*(?:\[[^\]]*\])? *[-+*/]?= ")
# an indented `raise X(...)` is a traceback's echoed source wherever it stands: a paste that starts below its frame
# (`(Worker pid=31037)     raise RuntimeError(f"NCCL error: {error_str}")`) is no report of the error it names
_RAISE_SOURCE = re.compile(r"raise [A-Za-z_][\w.]*\(")


_LOST_PREFIX_REACH = 3  # lines between a paste's unprefixed frames and its rank-prefixed exception
# log records of the same stream printed between a traceback's frames: stdout and stderr merged (torchrun --tee
# interleaves its two files; a logger on stdout, the interpreter on stderr). More than this in a row end it.
_INTERLEAVED_REACH = 20


class _Stream:
    __slots__ = ("block", "state", "chain_pending", "after_frame", "last_number", "interleaved", "in_group",
                 "reported_class", "remote")

    def __init__(self) -> None:
        self.block: Block | None = None
        self.state = "idle"  # idle | frames | message | inner
        self.chain_pending = False
        self.after_frame = False
        self.last_number = 0  # the line number of the stream's last line
        self.interleaved = 0  # log records seen in a row since the traceback's last frame
        self.in_group = False  # inside an exception group's margins
        self.reported_class: str | None = None  # a report's `Exception Type:` bullet, until its message
        self.remote: tuple[int, int] | None = None  # (callee's rank, line number) of an RPC remote exception's header


def _part_of_chain(body: str) -> bool:
    """A chained traceback's marker (`During handling of the above exception ...`), or a blank line around it: part
    of the same record (looked at only for a bare line right after a ranked record's traceback)."""
    stripped = body.strip()
    return not stripped or stripped.startswith(_CHAIN)


class TracebackTracker:
    """Feed lines in order; `feed` says which block a line belongs to and what kind of line it is."""

    def __init__(self) -> None:
        self._streams: dict[tuple[str, int | None], _Stream] = {}
        # per file, the ranked stream whose traceback a bare next line continues, and that stream's last line number
        self._record_of_file: dict[str, tuple[tuple[str, int | None], int]] = {}
        self._next_id = 0

    def feed(self, line: Line) -> tuple[Block | None, Kind]:
        key = (line.file, line.rank)
        if line.rank is None and line.pid is not None and line.text.startswith("(") and "pid=" in line.text[:80]:
            # a process a launcher tags on every line (Ray's and vLLM's `(Worker pid=3985) `): its lines are its
            # own stream, whatever another process's tagged lines interleave with them
            key = (f"{line.file}\0pid={line.pid}", None)
        elif line.rank is None:
            # a record whose logger prefixes its first line only (SGLang's `[... TP7] Scheduler hit an exception:
            # Traceback ...`, `logger.exception` under a rank-tagged format): its bare lines right after go on
            # with that rank's traceback, not a headless one of no rank
            going_on = self._record_of_file.get(line.file)
            if going_on is not None and going_on[1] == line.number - 1:
                key = going_on[0]
        block, kind = self._feed(line, key)
        if kind is Kind.HEADER and line.rank is None and key[1] is not None and block is not None \
                and block.header is line:
            block.record_rank = key[1]
        # a ranked traceback header, or a ranked warning or error record whose traceback (exc_info) may follow bare
        starts = line.rank is not None and (kind is Kind.HEADER or (
            kind is Kind.OTHER and line.level in ("W", "E", "F") and line.timestamp is not None))
        goes_on = (line.rank is None and key[1] is not None and block is not None
                   and (kind is not Kind.OTHER or _part_of_chain(line.body)))
        if starts or goes_on:
            self._record_of_file[line.file] = (key, line.number)
        else:
            self._record_of_file.pop(line.file, None)
        return block, kind

    def _feed(self, line: Line, key: tuple[str, int | None]) -> tuple[Block | None, Kind]:
        stream = self._streams.get(key)
        if stream is None:
            stream = self._streams[key] = _Stream()
        stream.last_number = line.number
        body = line.body
        if _GROUP_HEADER.match(body):
            if stream.in_group and stream.block is not None and stream.state != "idle":
                stream.chain_pending = True  # a group inside a group: the same event
            stream.in_group = True
            return self._header(stream, line), Kind.HEADER
        if stream.in_group:
            if _GROUP_RULE.match(body):
                return stream.block, Kind.OTHER
            margin = _GROUP_MARGIN.match(body)
            if margin is None:
                stream.in_group = False
            else:
                body = body[margin.end() :]  # the line inside the group's margin
                if TRACEBACK_HEADER.match(body.strip()) and stream.block is not None:
                    stream.chain_pending = True  # a sub-exception's traceback: the group's event
        stripped = body.strip()
        if "WorkerInfo(" in stripped and (remote := _REMOTE_WORKER.search(stripped)) is not None:
            stream.remote = (int(remote.group("rank")), line.number)
        is_frame = _FRAME.match(body) is not None or _FRAME_TAIL.search(body) is not None
        indented = body[:1].isspace()
        # source echoed under a frame, indented, or flush left in a paste that lost its indentation
        echo = not is_frame and (stream.after_frame and (indented or _SOURCE_STATEMENT.match(stripped) is not None)
                                 or indented and _RAISE_SOURCE.match(stripped) is not None)
        # source echoed under a frame runs on (multi-line calls) until the next unindented line
        stream.after_frame = is_frame or echo
        if "Traceback (" in stripped and not TRACEBACK_HEADER.match(stripped):
            glued = _GLUED_HEADER.match(stripped)
            if glued and not stream.after_frame:
                stripped = glued.group("header")
        if body[:1] == "E" and (reported := _PYTEST_E.match(body)) is not None:
            return self._pytest(stream, line, reported.group("rest") or "")
        if stripped[:1] in _BOX_CHARS:
            boxed = self._rich(stream, line, stripped)
            if boxed is not None:
                return boxed
        ipython = _IPYTHON_HEADER.match(stripped)
        if ipython:
            block = self._header(stream, line)
            block.ipython = True
            # a notebook exported to Markdown indents its outputs as a code block: the class and the message it
            # states later stand at the header's indentation, its frames and source deeper
            block.indent = (len(body) - len(body.lstrip())) or None
            self._exception(stream, block, line, ipython.group("exc"))
            stream.state = "frames"  # the class came first; its frames and message follow
            return block, Kind.EXCEPTION
        if TRACEBACK_HEADER.match(stripped):
            if stripped.startswith("Original") and stream.block is not None and stream.state != "idle":
                # a DataLoader worker's traceback printed inside the main process's exception message:
                # the same event, so the worker's own error competes with `Caught X in DataLoader worker`
                stream.chain_pending = True
            return self._header(stream, line), Kind.HEADER
        if any(stripped.startswith(c) for c in _CHAIN):
            stream.chain_pending = True
            return stream.block, Kind.OTHER
        block = stream.block
        if stream.state == "frames" and block is not None:
            if (line.level in ("D", "I", "W") and block.header.level is None
                    and stream.interleaved < _INTERLEAVED_REACH):
                # the interpreter prints a traceback's lines bare: a log record among them came from another
                # writer of the same process (`INFO step 1` between `Traceback` and its frames), not its exception;
                # a traceback logged line by line (`W1202 ... [0/1]   File ...`) has its header's level
                stream.interleaved += 1
                return None, Kind.OTHER
            stream.interleaved = 0
            if block.rich and block.box_closed and _EXCEPTION_LINE.match(stripped):
                # rich prints the exception after its box, indented like the box under a RichHandler record
                return self._exception(stream, block, line, stripped), Kind.EXCEPTION
            indent = len(body) - len(body.lstrip())
            if block.indent is None and _FRAME.match(body):
                block.indent = max(indent - 2, 0)  # a traceback quoted inside a summary is indented as a whole
            if (block.indent and indent == block.indent and not is_frame and _EXCEPTION_LINE.match(stripped)
                    and (not block.headless or _HEADLESS_EXCEPTION.match(stripped))):
                return self._exception(stream, block, line, stripped), Kind.EXCEPTION
            if block.ipython and _IPYTHON_FRAME.match(stripped):
                return block, Kind.FRAME
            if is_frame or echo or body[:1].isspace() or not stripped or stripped.startswith(("^", "~")):
                frame = _FRAME.match(body)
                if frame:
                    block.last_frame_path = frame.group("path")
                if stripped and len(block.frames) < _MAX_FRAMES_KEPT:
                    block.frames.append(stripped)
                return block, Kind.FRAME
            if _EXCEPTION_LINE.match(stripped) and (not block.headless or _HEADLESS_EXCEPTION.match(stripped)):
                return self._exception(stream, block, line, stripped), Kind.EXCEPTION
            stream.state = "idle"
        elif stream.state == "inner" and block is not None:
            if not stripped:
                return block, Kind.MESSAGE
            block.wrapped_by_backend = True
            return self._exception(stream, block, line, stripped), Kind.EXCEPTION
        elif stream.state == "message" and block is not None:
            # an orphan's message (an excerpt starting at the exception line) goes on only over lines of the same
            # record: unleveled ones, or ones the same logger call prefixed alike (vLLM's `ERROR ... file.py:226]`
            # on every line of the exception it logs)
            same_record = line.level == block.header.level and line.origin is not None \
                and line.origin == block.header.origin
            ends = (line.level is not None and line.level != block.header.level) or (
                block.orphan and (not stripped or line.level is not None and not same_record)
            )
            if not ends and block.message_lines < _MAX_MESSAGE_LINES:
                if is_frame or echo:
                    return block, Kind.FRAME
                block.message_lines += 1
                return block, Kind.MESSAGE
            stream.state = "idle"
        if is_frame and _FRAME.match(body):
            # frames with no header: the excerpt lost its `Traceback (most recent call last):` line
            self._next_id += 1
            block = Block(self._next_id, header=line, logged=line.level in ("D", "I", "W"), headless=True)
            stream.block = block
            stream.state = "frames"
            frame = _FRAME.match(body)
            block.last_frame_path = frame.group("path") if frame else None
            block.frames.append(stripped)
            return block, Kind.FRAME
        if is_frame or echo:
            return None, Kind.FRAME
        candidate = stripped
        if "%|" in stripped:
            glued = _GLUED_AFTER_BAR.match(stripped)
            if glued:
                candidate = glued.group("rest")
        reported = _CLASS_REPR.match(candidate)
        if reported:  # `<class 'torch._dynamo.exc.UserError'>: message`, how some reports print an exception
            candidate = f"{reported.group('cls')}: {candidate[reported.end():]}"
            return self._orphan(stream, line, candidate), Kind.EXCEPTION
        if candidate[:4] != "- **":
            stream.reported_class = None  # a class bullet holds only for the message bullet right after it
        else:
            typed = _REPORT_TYPE.match(candidate)
            if typed:
                stream.reported_class = typed.group("cls")
                return None, Kind.OTHER
            message = _REPORT_MESSAGE.match(candidate)
            if message and stream.reported_class is not None:
                candidate, stream.reported_class = f"{stream.reported_class}: {message.group('msg')}", None
                return self._orphan(stream, line, candidate, stated=True), Kind.EXCEPTION
        if line.level is None and _ORPHAN_EXCEPTION.match(candidate):
            return self._orphan(stream, line, candidate), Kind.EXCEPTION
        if line.level in ("E", "F"):
            recorded = _RECORDED_EXCEPTION.search(candidate)
            if recorded:
                return self._orphan(stream, line, candidate[recorded.start("exc") :]), Kind.EXCEPTION
            named = _NAMED_UNCAUGHT.search(candidate)
            if named:
                stated = f"{named.group('exc')}: {named.group('rest')}"
                return self._orphan(stream, line, stated, stated=True), Kind.EXCEPTION
        if line.level == "W" and _ORPHAN_EXCEPTION.match(candidate):
            # a warning record that is an exception (Dynamo's suppress_errors, a logged `except`): handled,
            # the job went on; a warning finding, not a failure
            return self._orphan(stream, line, candidate, logged=True), Kind.EXCEPTION
        return None, Kind.OTHER

    def _pytest(self, stream: _Stream, line: Line, rest: str) -> tuple[Block | None, Kind]:
        """pytest's `E   ` lines: the first that names an exception is its statement, the others its message."""
        block = stream.block
        if block is not None and block.pytest and stream.state == "message":
            block.message_lines += 1
            return block, Kind.MESSAGE
        if not _EXCEPTION_LINE.match(rest) or ":" not in rest:
            return None, Kind.OTHER  # `E       assert 3 == 4`, `E        +  where ...`: an assertion's report
        self._next_id += 1
        block = Block(self._next_id, header=line, logged=False, pytest=True)
        stream.block = block
        return self._exception(stream, block, line, rest), Kind.EXCEPTION

    def _rich(self, stream: _Stream, line: Line, stripped: str) -> tuple[Block | None, Kind] | None:
        """A line of a rich traceback's boxes, or None when it is not one (a table, a progress panel)."""
        inner = _BOX_RIGHT.sub("", _BOX_LEFT.sub("", stripped)).strip()
        nested = stripped.startswith("│")
        if _RICH_HEADER.match(inner):
            if nested and stream.block is not None and stream.block.rich and stream.state != "idle":
                stream.chain_pending = True  # an exception group's sub-exception, inside the group's box
            block = self._header(stream, line)
            block.rich, block.box_closed = True, False
            return block, Kind.HEADER
        block = stream.block
        if block is None or not block.rich or stream.state == "idle":
            return None
        if inner.startswith("╰"):
            block.box_closed = True
            return block, Kind.FRAME
        if inner.startswith("╭"):  # a sub-exception's or a locals' box
            block.box_closed = False
            return block, Kind.FRAME
        if nested and block.box_closed and _EXCEPTION_LINE.match(inner):
            return self._exception(stream, block, line, inner), Kind.EXCEPTION
        if stream.state == "message":
            block.message_lines += 1
            return block, Kind.MESSAGE
        frame = _RICH_FRAME.match(inner)
        if frame is not None:
            block.last_frame_path = frame.group("path")
            if len(block.frames) < _MAX_FRAMES_KEPT:  # as the interpreter prints it, for what reads frames
                path, number, func = frame.group("path", "line", "func")
                block.frames.append(f'File "{path}", line {number}, in {func}')
        return block, Kind.FRAME

    def _orphan(self, stream: _Stream, line: Line, stripped: str, logged: bool = False, stated: bool = False) -> Block:
        """An exception line with no traceback above it: a pasted excerpt, or one a log record carries. `stated`:
        `stripped` was rebuilt from what the line says (Block.stated), and the catalog reads it too."""
        self._next_id += 1
        block = Block(self._next_id, header=line, logged=logged, orphan=True)
        stream.block = block
        lost = self._streams.get((line.file, None)) if line.rank is not None else None
        if (lost is not None and lost.block is not None and lost.state == "frames"
                and 0 < line.number - lost.last_number <= _LOST_PREFIX_REACH):
            # a paste that lost the rank prefix of its first lines: the frames just above, without a prefix, are
            # this exception's traceback (`File ".../triton/compiler/..."` then `[rank0]: AttributeError: ...`)
            block.frames = list(lost.block.frames)
            block.last_frame_path = lost.block.last_frame_path
            block.headless = True
            lost.state = "idle"
        self._exception(stream, block, line, stripped)
        block.stated = stripped if stated else None
        return block

    def forget(self, file: str) -> None:
        for key in [k for k in self._streams if k[0] == file or k[0].startswith(f"{file}\0")]:
            del self._streams[key]

    def _header(self, stream: _Stream, line: Line) -> Block:
        chained = stream.chain_pending and stream.block is not None
        if chained:
            assert stream.block is not None
            block = stream.block
            block.chained = True
        else:
            self._next_id += 1
            block = Block(self._next_id, header=line, logged=line.level in ("D", "I", "W"))
        named = _HEADER_RANK.search(line.body)
        if named is not None:
            block.about_rank = int(named.group("rank"))
        elif stream.remote is not None and line.number - stream.remote[1] <= _REMOTE_REACH:
            block.about_rank = stream.remote[0]  # the callee's traceback, printed by the caller
        stream.block = block
        stream.state = "frames"
        stream.chain_pending = False
        stream.interleaved = 0
        return block

    def _exception(self, stream: _Stream, block: Block, line: Line, stripped: str) -> Block:
        block.exception = line
        block.exception_type = stripped.split(":", 1)[0]
        block.stated = None  # set by the caller for the exception line it rebuilt, and for no later one
        block.message_lines = 0
        # `BackendCompilerFailed: backend='inductor' raised:` carries its cause on the next line
        stream.state = "inner" if stripped.endswith("raised:") else "message"
        return block
