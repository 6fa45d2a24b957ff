"""Every catalog regex, as Denpex runs it (scan.linear_regex), stays fast on adversarial lines (#14 item 3).

Under Python's backtracking `re` some patterns took 3-14 s on a 30 KB line (`(?P<condition>.*) INTERNAL ASSERT
FAILED` after 30 KB of spaces; the cache-path patterns after `[Errno 28]` and 30 KB of path characters). The
lines here repeat what each pattern repeats (spaces, path characters, its own anchor) and end in near misses.
The budget is generous (a loaded CI machine); a backtracking pattern takes seconds, a linear one milliseconds.
"""

from __future__ import annotations

import time

import pytest

from denpex.catalog import load
from denpex.scan.linear_regex import compile_linear

LENGTH = 30_000
BUDGET_S = 1.0


def _patterns():
    for entry in load().entries:
        for sig in entry.signatures:
            if sig.regex:
                yield entry.id, sig.regex, sig.ignore_case, sig.anchor
        for detail in entry.details:
            yield entry.id, detail.regex, False, ""
        for refinement in entry.refinements:
            yield entry.id, refinement.when, False, ""


PATTERNS = list(_patterns())


def _adversarial(anchor: str) -> list[str]:
    unit = anchor or "x"
    times = LENGTH // max(len(unit), 1)
    return [
        unit + " " * LENGTH,  # the anchor, then a long run of what `.*`, `\\s*`, `[^x]*` consume
        " " * LENGTH + unit,
        (unit + " ") * times,  # the anchor over and over: every start position looks promising
        "a/" * (LENGTH // 2) + unit,  # path characters before it: `\\S+`, `[^\\s'"]*` runs
        unit + "a/" * (LENGTH // 2) + unit[:-1],  # ... and a near miss at the end
        (unit[:-1] + "x") * times + unit,  # near misses, then the real thing
        unit + "'" + "a" * LENGTH + "(" + "1" * LENGTH,  # quotes, parentheses and digits left open
    ]


@pytest.mark.parametrize(("entry_id", "regex", "caseless", "anchor"), PATTERNS,
                         ids=[f"{e}:{i}" for i, (e, _, _, _) in enumerate(PATTERNS)])
def test_each_catalog_pattern_is_fast_on_adversarial_lines(entry_id, regex, caseless, anchor):
    pattern = compile_linear(regex, caseless)
    worst = 0.0
    for line in _adversarial(anchor):
        start = time.perf_counter()
        pattern.search(line)
        worst = max(worst, time.perf_counter() - start)
    assert worst < BUDGET_S, f"{entry_id}: {regex!r} took {worst:.2f} s on a {LENGTH:,}-character line"
