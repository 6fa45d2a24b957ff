"""A log whose last line was cut mid-message: a paste that stopped, a process killed while it wrote.

Why: `[Rank 5] Watchdog caught collective operati` holds no whole anchor, so nothing matches and the log reads
clean although it ends on the failure. Only the last line of an input can be cut so; its end is read as the start
of a catalog anchor when it holds enough of one, as a weak (anchor-only) hit that says it was cut.
"""

from __future__ import annotations

from denpex.catalog.loader import Catalog, derived
from denpex.catalog.schema import Entry, Signature

MIN_CUT_CHARS = 20  # at least this much of an anchor must be there
MIN_CUT_SHARE = 0.6  # and at least this share of it: a few common words are no message


def _long_anchors(catalog: Catalog) -> list[tuple[str, Entry, Signature]]:
    found = [(sig.anchor, entry, sig) for entry in catalog.entries for sig in entry.signatures
             if len(sig.anchor) > MIN_CUT_CHARS and not entry.advisory]
    return sorted(found, key=lambda item: -len(item[0]))


def cut_anchor(text: str, catalog: Catalog) -> tuple[Entry, Signature, str] | None:
    """(entry, signature, the anchor) when `text` ends with most of an anchor but not all of it."""
    stripped = text.rstrip("\r\n")
    if not stripped or stripped != stripped.rstrip():  # a line that ends in a space ended where it meant to
        return None
    for anchor, entry, sig in derived(catalog, "cut-anchors", lambda: _long_anchors(catalog)):
        if anchor[:MIN_CUT_CHARS] not in stripped:
            continue
        least = max(MIN_CUT_CHARS, int(len(anchor) * MIN_CUT_SHARE))
        for length in range(len(anchor) - 1, least - 1, -1):
            if stripped.endswith(anchor[:length]):
                return entry, sig, anchor
    return None
