"""Load and validate the catalog: one TOML file per failure kind under catalog/entries/."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path

from pydantic import ValidationError

from denpex.catalog.schema import Entry
from denpex.errors import DenpexInputError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


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


def load_entry(path: Path) -> Entry:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        entry = Entry.model_validate(data)
    except tomllib.TOMLDecodeError as exc:
        raise CatalogError(f"catalog entry {path.name}: invalid TOML: {exc}") from None
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise CatalogError(f"catalog entry {path.name}: {where}: {first['msg']}") from None
    if entry.id != path.stem:
        raise CatalogError(f"catalog entry {path.name}: id {entry.id!r} must match the file name")
    return entry


def entries_dir() -> Path:
    return Path(str(resources.files("denpex.catalog") / "entries"))


@lru_cache(maxsize=4)
def load(directory: str | None = None) -> Catalog:
    """All entries, sorted by id; sibling ids must exist (a dangling sibling is a catalog bug)."""
    root = Path(directory) if directory else entries_dir()
    entries = tuple(sorted((load_entry(p) for p in root.glob("*.toml")), key=lambda e: e.id))
    if not entries:
        raise CatalogError(f"no catalog entries in {root}")
    known = {e.id for e in entries}
    for entry in entries:
        for target in [s.id for s in entry.siblings] + [r.entry for r in entry.refinements] + entry.points_to:
            if target not in known:
                raise CatalogError(f"catalog entry {entry.id}: refers to unknown entry {target!r}")
    return Catalog(entries)
