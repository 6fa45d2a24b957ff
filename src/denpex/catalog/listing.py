"""`denpex catalog` as a table: ids are never cut (people type them into `denpex explain`), the rest wraps.

At narrow widths the columns that matter least go first: layer and role below 160 columns, and below 100 the
category moves under the title, so the id column keeps its full width at 80 columns too.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console
from rich.table import Table
from rich.text import Text

from denpex.catalog.schema import Entry

_ALL_COLUMNS = 160  # id, category, layer, role, title
_CATEGORY_COLUMN = 100  # id, category, title; narrower: id, title with the category under it


def render(entries: Sequence[Entry], console: Console) -> None:
    id_width = max((len(e.id) for e in entries), default=2)
    table = Table(title=f"{len(entries)} catalog entries", title_justify="left")
    table.add_column("id", no_wrap=True, min_width=id_width, style="cyan")
    wide, medium = console.width >= _ALL_COLUMNS, console.width >= _CATEGORY_COLUMN
    if medium:
        table.add_column("category", overflow="fold")
    if wide:
        table.add_column("layer", overflow="fold")
        table.add_column("role", overflow="fold")
    table.add_column("title" if medium else "title · category", overflow="fold")
    for e in entries:
        if wide:
            table.add_row(e.id, e.category, e.layer, e.role, e.title)
        elif medium:
            table.add_row(e.id, e.category, e.title)
        else:
            table.add_row(e.id, Text.assemble(e.title, "\n", (e.category, "dim")))
    console.print(table)
