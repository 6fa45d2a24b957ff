"""Load and validate the catalog: one TOML file per failure kind under catalog/entries/."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, TypeVar

from denpex.cachefiles import cache_path, read_cached, write_cached
from denpex.catalog import schema
from denpex.catalog.schema import Entry
from denpex.errors import DenpexInputError


class CatalogError(DenpexInputError):
    """An entry file is not valid TOML or breaks the schema."""


@dataclass(frozen=True)
class Catalog:
    entries: tuple[Entry, ...]
    by_id: dict[str, Entry] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "by_id", {entry.id: entry for entry in self.entries})

    def get(self, entry_id: str) -> Entry | None:
        return self.by_id.get(entry_id)

    def explaining(self, name: str) -> list[Entry]:
        """The entry with this id, or the entries that carry this Dynamo graph-break id (`GB0170`, any case)."""
        entry = self.get(name)
        if entry is not None:
            return [entry]
        if not self.is_graph_break_id(name):
            return []
        return [e for e in self.entries if name.upper() in (g.upper() for g in e.graph_break_ids)]

    @staticmethod
    def is_graph_break_id(name: str) -> bool:
        """Whether `name` is written like a Dynamo graph-break id: GB and four digits."""
        return len(name) == 6 and name[:2].upper() == "GB" and name[2:].isascii() and name[2:].isdigit()

    def fallback(self, layer: str) -> Entry | None:
        """The generic entry that files a layer's unexplained exceptions (`fallback_for = "<layer>"`)."""
        return next((e for e in self.entries if e.fallback_for == layer), None)

    def generic(self, matched_by: str) -> Entry | None:
        """The entry that files what no signature matches, of one kind (`process_exit`, `rank_silence`)."""
        return next((e for e in self.entries if e.matched_by == matched_by), None)


_T = TypeVar("_T")
_DERIVED: dict[tuple[int, str], tuple[Catalog, Any]] = {}


def derived(catalog: Catalog, kind: str, build: Callable[[], _T]) -> _T:
    """What a catalog compiles into (a scan engine, a line matcher), built once per catalog for the process:
    a Hyperscan database compile or ~3 ms of anchor sets per diagnosis add up over thousands of inputs. The
    catalog is kept beside what was built from it, so its id cannot pass to another catalog meanwhile."""
    key = (id(catalog), kind)
    known = _DERIVED.get(key)
    if known is None or known[0] is not catalog:
        known = _DERIVED[key] = (catalog, build())
    return known[1]  # type: ignore[no-any-return]


def load_entry(path: Path) -> Entry:
    from pydantic import ValidationError

    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib

    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        entry: Entry = _validator().validate_python(data)
    except tomllib.TOMLDecodeError as exc:
        raise CatalogError(f"catalog entry {path.name}: invalid TOML: {exc}") from None
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise CatalogError(f"catalog entry {path.name}: {where}: {first['msg']}") from None
    except ValueError as exc:  # the checks in the dataclasses' __post_init__
        raise CatalogError(f"catalog entry {path.name}: {exc}") from None
    if entry.id != path.stem:
        raise CatalogError(f"catalog entry {path.name}: id {entry.id!r} must match the file name")
    return entry


@lru_cache(maxsize=1)
def _validator() -> Any:
    return schema.validator()


def entries_dir() -> Path:
    return Path(__file__).resolve().parent / "entries"  # a real folder: entries are listed with scandir


@lru_cache(maxsize=4)
def load(directory: str | None = None) -> Catalog:
    """All entries, sorted by id; sibling ids must exist (a dangling sibling is a catalog bug).

    Parsing and validating 130 TOML files costs ~50 ms on every run; the validated entries are kept in
    Denpex's cache, which loads in ~3 ms. The cache is keyed by the schema's source and, as Python keys
    its .pyc files, by each entry file's name, size and modification time: a stat per file instead of
    a read (3,000 entries: 10 ms instead of 70).
    """
    root = Path(directory) if directory else entries_dir()
    stats = _entry_files(root)
    key = (sys.version_info[:2], Path(schema.__file__).read_bytes(), stats)
    path = cache_path("catalog", key, ".json")
    cached = read_cached(path)
    if cached is not None:
        try:
            return Catalog(tuple(_rebuilt(Entry, item) for item in json.loads(cached)))
        except (ValueError, TypeError, KeyError, AttributeError):  # damaged or foreign: validate the sources
            pass
    catalog = _validated(root, [root / stat[0] for stat in stats])
    write_cached(path, json.dumps([asdict(e) for e in catalog.entries]).encode())
    return catalog


# the nested dataclasses of an entry, by field: rebuilt from the cache's plain JSON (data, never code)
_NESTED = {"signatures": schema.Signature, "details": schema.Detail, "refinements": schema.Refinement,
           "siblings": schema.Sibling, "fixtures": schema.Fixture}
_NESTED_ONE = {"ring_peer": schema.RingPeer, "message_peer": schema.MessagePeer}  # optional single tables


def _rebuilt(cls: type, data: dict[str, Any]) -> Any:
    """An entry as validated when the cache was written (its key covers the schema and every entry file).

    The fields are set without __init__: its checks (every regex compiled) ran when the entry was validated,
    and re-running them would cost what the cache saves.
    """
    if not isinstance(data, dict):
        raise TypeError("a cached entry is not an object")
    names = {f for f in cls.__dataclass_fields__}
    if set(data) != names:
        raise KeyError("cached entry fields differ from the schema")
    obj = object.__new__(cls)
    for name, value in data.items():
        if cls is Entry and name in _NESTED:
            value = [_rebuilt(_NESTED[name], item) for item in value]
        elif cls is Entry and name in _NESTED_ONE and value is not None:
            value = _rebuilt(_NESTED_ONE[name], value)
        object.__setattr__(obj, name, value)
    return obj


def _entry_files(root: Path) -> list[tuple[str, int, int, int]]:
    """(name, size, mtime in ns, inode) of every *.toml file in root, by name; none when root is unreadable."""
    try:
        with os.scandir(root) as found:
            stats = [(e.name, e.stat()) for e in found if e.name.endswith(".toml") and e.is_file()]
    except OSError:
        return []
    return sorted((name, st.st_size, st.st_mtime_ns, st.st_ino) for name, st in stats)


def _validated(root: Path, files: list[Path]) -> Catalog:
    entries = tuple(sorted((load_entry(p) for p in files), key=lambda e: e.id))
    if not entries:
        raise CatalogError(f"no catalog entries in {root}")
    known = {e.id for e in entries}
    for entry in entries:
        for target in [s.id for s in entry.siblings] + [r.entry for r in entry.refinements] + entry.points_to:
            if target not in known:
                raise CatalogError(f"catalog entry {entry.id}: refers to unknown entry {target!r}")
    return Catalog(entries)
