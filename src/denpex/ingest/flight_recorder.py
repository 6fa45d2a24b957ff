"""Read Flight Recorder dumps (`nccl_trace_rank_<r>`, gloo's too), pickled or JSON, without executing them.

Why: on a collective timeout PyTorch dumps each rank's ring buffer of recent collectives; which rank never
joined a collective is written there even when no log line says it. A dump is a pickle, and a pickle can run
code, so it is read by an unpickler that refuses every global: the dumps need only dicts, lists, tuples,
strings and numbers. A truncated dump gives the entries that were complete before the cut, and a note.
"""

from __future__ import annotations

import ast
import io
import json
import pickle
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from denpex.errors import DenpexInputError

PICKLE_HEADERS = (b"\x80\x02", b"\x80\x03", b"\x80\x04", b"\x80\x05")
MAX_DUMP_BYTES = 256 << 20  # a 2,000-entry buffer is ~1.5 MB; anything far larger is not a dump
# nccl_trace_rank_3, gloo_trace_rank_3, fr_dump_3.pkl: a dump whatever its bytes (the rank is the trailing number);
# a name with `flight` in it is a dump only when its bytes are a pickle or a JSON object (flight_test.log is a log)
_DUMP_NAME = re.compile(r"_trace_(?:json_)?rank_\d+$|^fr_dump", re.IGNORECASE)
_MAYBE_DUMP_NAME = re.compile(r"flight", re.IGNORECASE)
_TRAILING_NUMBER = re.compile(r"(\d+)(?:\.[A-Za-z]\w*)?$")  # nccl_trace_rank_3, dump_3.pkl, r3.bin
_STATES = ("scheduled", "started", "completed")


class DumpError(DenpexInputError):
    """A file that should be a Flight Recorder dump but cannot be read as one (one line, no traceback)."""


class _RefusedGlobal(pickle.UnpicklingError):
    pass


class SafeUnpickler(pickle._Unpickler):  # type: ignore[name-defined,misc]
    """pickle's own Unpickler (its pure-Python twin, whose stack stays readable after a truncation), with every
    global refused: no class, function or module can be named, by name or by extension code, so no object's code
    can run (REDUCE, BUILD, INST, OBJ and NEWOBJ need a callable that only a global could supply; the values the
    other opcodes make, strings, numbers and containers, cannot be called). Persistent ids are refused."""

    def find_class(self, module: str, name: str) -> Any:
        raise _RefusedGlobal(f"it asks for the Python global {module}.{name}, refused (a dump needs none)")

    def get_extension(self, code: int) -> Any:
        """copyreg's extension codes name globals by number (and its cache may hold one): refused too."""
        raise _RefusedGlobal(f"it asks for the Python global registered as extension {code}, refused")

    def persistent_load(self, pid: Any) -> Any:
        raise _RefusedGlobal("it holds a persistent id (an object stored elsewhere), refused")

    def partial(self) -> tuple[Any, set[int]]:
        """What was read before the input ended: the open containers, each filled with its complete items, and
        the ids of those open containers (an entry among them was cut off)."""
        levels = [list(level) for level in getattr(self, "metastack", [])] + [list(getattr(self, "stack", []))]
        cut: set[int] = set()
        for level in levels:
            if level and isinstance(level[-1], (dict, list)):
                cut.add(id(level[-1]))
        while len(levels) > 1:
            items = levels.pop()
            if not levels[-1]:
                continue
            container = levels[-1][-1]
            if isinstance(container, dict):
                for index in range(0, len(items) - 1, 2):
                    try:
                        container[items[index]] = items[index + 1]
                    except TypeError:  # an unhashable key: not a dump's
                        break
            elif isinstance(container, list):
                container.extend(items)
        return (levels[0][0] if levels and levels[0] else None), cut


@dataclass(frozen=True, slots=True)
class FrEntry:
    """One collective (or p2p op) as one rank's buffer recorded it."""

    record_id: int
    seq: int  # collective_seq_id (p2p_seq_id for a p2p op)
    pg: str  # the process group's name (`0`), as `process_group` gives it
    pg_desc: str
    op: str  # profiling_name: nccl:all_reduce, gloo:broadcast
    is_p2p: bool
    input_sizes: str
    input_dtypes: str
    state: str
    time_created_ns: int | None
    time_completed_ns: int | None
    where: str  # the innermost frame outside torch/distributed, `main at worker.py:120`


@dataclass(slots=True)
class FrDump:
    """One rank's dump, as far as it could be read."""

    name: str
    rank: int | None
    version: str = ""
    entries: list[FrEntry] = field(default_factory=list)
    pg_ranks: dict[str, list[int]] = field(default_factory=dict)  # pg name -> its global ranks
    last_completed: dict[str, int] = field(default_factory=dict)  # pg name -> pg_status' last completed seq
    last_enqueued: dict[str, int] = field(default_factory=dict)  # pg name -> pg_status' last enqueued seq
    notes: list[str] = field(default_factory=list)
    partial: bool = False


def named_like_dump(path: Path) -> bool:
    """Named as PyTorch names its dumps (TORCH_FR_DUMP_TEMP_FILE + rank), or a pickle's suffix."""
    return _DUMP_NAME.search(path.name) is not None or path.suffix.lower() in (".pkl", ".pickle")


def is_dump(path: Path, head: bytes) -> bool:
    """A pickle, a file named as a dump, or a JSON object under a name with `flight` in it."""
    return is_pickle(head) or named_like_dump(path) or (
        _MAYBE_DUMP_NAME.search(path.name) is not None and head.lstrip()[:1] == b"{")


def is_pickle(head: bytes) -> bool:
    return head.startswith(PICKLE_HEADERS)


def rank_of(name: str) -> int | None:
    found = _TRAILING_NUMBER.search(Path(name).name)
    return int(found.group(1)) if found else None


def read_dump(path: Path, display: str) -> FrDump:
    """The dump at `path`; DumpError when nothing of it can be read (not a dump, a refused global, no entries).

    The bytes are read first and unpickled from memory: a length field in the pickle (8 bytes of it for a
    string) then asks for at most what the file holds, never a huge read from the file itself."""
    try:
        if path.stat().st_size > MAX_DUMP_BYTES:
            raise DumpError(f"not read as a Flight Recorder dump: {display} is over {MAX_DUMP_BYTES >> 20} MiB")
        with open(path, "rb") as handle:
            data = handle.read(MAX_DUMP_BYTES + 1)
    except OSError as exc:
        raise DumpError(f"cannot read {display}: {exc.strerror or exc}") from None
    if len(data) > MAX_DUMP_BYTES:  # it grew since
        raise DumpError(f"not read as a Flight Recorder dump: {display} is over {MAX_DUMP_BYTES >> 20} MiB")
    return parse_dump(data, display)


def parse_dump(data: bytes, display: str) -> FrDump:
    """A dump held in memory (stdin, a test's bytes)."""
    return _parse(io.BytesIO(data), display)


def _parse(handle: BinaryIO, display: str) -> FrDump:
    dump = FrDump(name=display, rank=rank_of(display))
    cut: set[int] = set()
    head = handle.read(64)
    handle.seek(0)
    if head.lstrip()[:1] == b"{":
        raw = _json(handle.read(MAX_DUMP_BYTES + 1), display, dump)
    else:
        raw, cut = _unpickle(handle, display, dump)
    if not isinstance(raw, dict):
        raise DumpError(f"not a Flight Recorder dump: {display} (no dict of entries)")
    dump.version = str(raw.get("version", ""))
    if isinstance(raw.get("rank"), int):
        dump.rank = raw["rank"]
    _groups(raw, dump)
    entries = raw.get("entries")
    if entries is None and "entries" not in raw:
        if dump.partial:
            dump.notes.append(f"{display}: cut off before its entries; only its header was read")
            return dump
        raise DumpError(f"not a Flight Recorder dump: {display} (no `entries`)")
    for item in entries if isinstance(entries, list) else []:
        entry = _entry(item) if id(item) not in cut else None
        if entry is not None:
            dump.entries.append(entry)
        elif id(item) in cut:
            dump.notes.append(f"{display}: its last entry was cut off and left out")
    if dump.partial:
        dump.notes.append(f"{display}: {len(dump.entries)} complete entries read")
    return dump


def _unpickle(handle: BinaryIO, display: str, dump: FrDump) -> tuple[Any, set[int]]:
    reader = SafeUnpickler(handle)
    try:
        return reader.load(), set()
    except _RefusedGlobal as exc:
        raise DumpError(f"not read as a Flight Recorder dump: {display}: {exc}") from None
    except Exception as exc:  # noqa: BLE001 - untrusted bytes: any failure to parse is a bad dump, never a crash
        recovered, cut = reader.partial()
        if not isinstance(recovered, dict) or not recovered:
            reason = "it ends early" if isinstance(exc, EOFError) else str(exc).splitlines()[0] if str(exc) else (
                type(exc).__name__)
            raise DumpError(f"cannot read Flight Recorder dump {display}: {reason}") from None
        dump.partial = True
        how = "it ends early (truncated)" if isinstance(exc, EOFError) or "truncated" in str(exc) else (
            f"it is corrupt ({type(exc).__name__})")
        dump.notes.append(f"{display}: {how}; what was complete before the break was read")
        return recovered, cut


def _json(data: bytes, display: str, dump: FrDump) -> Any:
    text = data.decode("utf-8", "replace")
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as exc:
        entries = _json_entries(text)
        if entries is None:
            raise DumpError(f"cannot read Flight Recorder dump {display}: not valid JSON ({exc})") from None
        dump.partial = True
        dump.notes.append(f"{display}: it is not complete JSON (truncated?); the entries complete before the "
                          "break were read")
        return {"entries": entries}


_ENTRIES_KEY = re.compile(r'"entries"\s*:\s*\[')


def _json_entries(text: str) -> list[Any] | None:
    """The complete entries of a cut-off JSON dump: each `{...}` of its `entries` list, up to the break."""
    found = _ENTRIES_KEY.search(text)
    if found is None:
        return None
    decoder = json.JSONDecoder()
    entries: list[Any] = []
    at = found.end()
    while True:
        while at < len(text) and text[at] in " \t\r\n,":
            at += 1
        if at >= len(text) or text[at] == "]":
            return entries
        try:
            item, at = decoder.raw_decode(text, at)
        except (ValueError, RecursionError):
            return entries
        entries.append(item)


def _groups(raw: dict[Any, Any], dump: FrDump) -> None:
    config = raw.get("pg_config")
    if isinstance(config, dict):
        for key, group in config.items():
            if not isinstance(group, dict):
                continue
            ranks = _rank_list(group.get("ranks"))
            if ranks is not None:
                dump.pg_ranks[str(group.get("name", key))] = ranks
    status = raw.get("pg_status")
    if isinstance(status, dict):
        for key, group in status.items():
            if not isinstance(group, dict):
                continue
            if isinstance(group.get("last_completed_collective"), int):
                dump.last_completed[str(key)] = group["last_completed_collective"]
            if isinstance(group.get("last_enqueued_collective"), int):
                dump.last_enqueued[str(key)] = group["last_enqueued_collective"]


def _rank_list(value: Any) -> list[int] | None:
    """`ranks` is written as the text `'[0, 1]'`: read as a literal, never evaluated."""
    if isinstance(value, str):
        try:
            value = ast.literal_eval(value) if len(value) < 1 << 20 else None
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            return None
    if isinstance(value, (list, tuple)) and all(isinstance(r, int) for r in value):
        return list(value)
    return None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _entry(item: Any) -> FrEntry | None:
    if not isinstance(item, dict) or not isinstance(item.get("profiling_name"), str):
        return None
    is_p2p = bool(item.get("is_p2p", False))
    seq = item.get("p2p_seq_id" if is_p2p else "collective_seq_id")
    state = item.get("state")
    if not isinstance(seq, int) or state not in _STATES:
        return None
    group = item.get("process_group")
    pg, desc = (str(group[0]), str(group[1])) if isinstance(group, (list, tuple)) and len(group) == 2 else (
        str(item.get("pg_id", "")), "")
    return FrEntry(
        record_id=item.get("record_id") if isinstance(item.get("record_id"), int) else -1,
        seq=seq,
        pg=pg,
        pg_desc=desc,
        op=item["profiling_name"],
        is_p2p=is_p2p,
        input_sizes=str(item.get("input_sizes", "")),
        input_dtypes=str(item.get("input_dtypes", "")),
        state=state,
        time_created_ns=_int(item.get("time_created_ns")),
        time_completed_ns=_int(item.get("time_discovered_completed_ns")),
        where=_where(item.get("frames")),
    )


def _where(frames: Any) -> str:
    if not isinstance(frames, list):
        return ""
    for frame in frames:
        if isinstance(frame, dict) and "torch/distributed" not in str(frame.get("filename", "")):
            return f"{frame.get('name', '?')} at {Path(str(frame.get('filename', '?'))).name}:{frame.get('line', '?')}"
    return ""
