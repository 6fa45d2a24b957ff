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
