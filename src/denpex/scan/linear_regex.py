"""Catalog regexes run in linear time: RE2 where it accepts the pattern, Python's `re` otherwise.

A signature's regex confirms a candidate line and extracts its fields. Under Python's backtracking `re`, some
catalog patterns take seconds on a long adversarial line (`(?P<condition>.*) INTERNAL ASSERT FAILED` on 30 KB of
spaces: 3 s; the cache-path patterns: 14 s). RE2 (google-re2) matches in time linear in the line whatever the
pattern. It rejects a few constructs (repetition counts over 1,000); those patterns stay on `re`, and every
catalog pattern is fed adversarial lines by tests/test_catalog_patterns.py. RE2's `\\d`, `\\w` and `\\s` are
ASCII classes where Python's are Unicode: a field of non-ASCII word characters ends earlier under RE2.
"""

from __future__ import annotations

import functools
import re
from typing import Any, Protocol


class Searcher(Protocol):
    def search(self, text: str) -> Any: ...


_RE2: Any = None
_RE2_MISSING = False


def _re2() -> Any:
    global _RE2, _RE2_MISSING
    if _RE2 is None and not _RE2_MISSING:
        try:
            import re2

            _RE2 = re2
        except ImportError:  # e.g. a platform without a google-re2 wheel: `re` it is
            _RE2_MISSING = True
    return _RE2


@functools.lru_cache(maxsize=1024)
def compile_linear(pattern: str, ignore_case: bool = False) -> Any:
    """The pattern compiled (search, finditer, groupdict): RE2 when it takes it, else Python's re."""
    re2 = _re2()
    if re2 is not None:
        options = re2.Options()
        options.case_sensitive = not ignore_case
        options.log_errors = False  # a pattern RE2 rejects falls back quietly, no C++ log line on stderr
        try:
            return re2.compile(pattern, options)  # type: ignore[no-any-return]
        except Exception:  # re2.error: a construct RE2 does not support
            pass
    return re.compile(pattern, re.IGNORECASE if ignore_case else 0)


class LiteralSet:
    """Which of many literals occur in a text, in one linear pass (RE2::Set), whatever their number.

    Testing ~350 anchors one by one reads a line ~350 times: 0.25 s for one 1.6 MB line. For long lines the
    line matcher asks this instead. Without RE2 (or if RE2 cannot build the set) `present` answers None and the
    caller tests each literal itself.
    """

    def __init__(self, literals: list[str]) -> None:
        self._set: Any = None
        re2 = _re2()
        if re2 is None or not literals:
            return
        options = re2.Options()
        options.log_errors = False
        options.max_mem = 64 << 20
        try:
            built = re2.Set.SearchSet(options)
            for literal in literals:
                built.Add(re.escape(literal))
            built.Compile()
        except Exception:  # re2.error: too large or a pattern it rejects
            return
        self._set = built

    def present(self, text: str) -> set[int] | None:
        """Indexes (in the order given) of the literals in `text`, or None when the set is unavailable."""
        if self._set is None:
            return None
        # the wrapper answers None for "no literal"; a set of literals compiles to a DFA no larger than their
        # trie (~9,000 states for the catalog's anchors), far inside max_mem, so RE2 never gives up on one
        return set(self._set.Match(text) or ())
