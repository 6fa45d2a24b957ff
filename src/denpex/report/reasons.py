"""The "why" line in words: a re-filed finding's reason names the text the log showed, never a regex.

Why: the analyzer words a re-filed finding's reason as `re-filed from ID: the log shows /REGEX/` (the
refinement's `when` pattern). Users read that regex as output. The report finds the text the pattern matched
in the lines it shows and quotes that, with the line number; when it cannot, it names the entries instead.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from denpex.catalog import Catalog
from denpex.report.shorten import cut

_REFILED = re.compile(r"^re-filed from (?P<source>[\w.-]+): the log shows /(?P<pattern>.*)/$", re.DOTALL)
_QUOTED = 60  # characters of the matched text quoted


def worded(reason: str, target_title: str, lines: Iterable[tuple[str, int]], catalog: Catalog) -> str:
    """`reason` with a refinement's regex replaced by the text it matched in `lines` ((text, line number) pairs)."""
    refiled = _REFILED.match(reason)
    if refiled is None:
        return reason
    source = refiled["source"]
    entry = catalog.get(source)
    was = f"re-filed from {source}" + (f" ({entry.title})" if entry is not None else "")
    found = _first_match(refiled["pattern"], lines)
    if found is None:
        return f"{was}: the lines around it point to {target_title}"
    text, line = found
    return f"{was}: the log shows “{cut(text, _QUOTED)}” at line {line}"


def _first_match(pattern: str, lines: Iterable[tuple[str, int]]) -> tuple[str, int] | None:
    try:
        regex = re.compile(pattern)
    except re.error:  # a pattern only the scanner's engine reads: say what it points to instead
        return None
    for text, number in lines:
        match = regex.search(text)
        if match and match.group(0).strip():
            return match.group(0).strip(), number
    return None
