"""Every regex in the catalog is linear-time: it compiles under Hyperscan, which has no backtracking and
refuses backreferences and lookaround, so no log line can make Denpex hang on a pattern."""

from __future__ import annotations

import re

import pytest

from denpex.catalog import load
from denpex.scan.linear_regex import compile_linear

hyperscan = pytest.importorskip("hyperscan")


def _regexes():
    for entry in load().entries:
        for sig in entry.signatures:
            if sig.regex:
                yield entry.id, "signature", sig.regex, sig.ignore_case
        for detail in entry.details:
            yield entry.id, "detail", detail.regex, False
        for refinement in entry.refinements:
            yield entry.id, "refine", refinement.when, False


REGEXES = list(_regexes())


@pytest.mark.parametrize(("entry_id", "kind", "regex", "caseless"), REGEXES,
                         ids=[f"{e}:{k}:{i}" for i, (e, k, _, _) in enumerate(REGEXES)])
def test_regex_compiles_under_a_linear_engine(entry_id, kind, regex, caseless):
    # named groups are Python syntax for captures; Hyperscan only needs the shape of the pattern
    shape = re.sub(r"\(\?P<\w+>", "(", regex).encode()
    db = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
    flags = hyperscan.HS_FLAG_ALLOWEMPTY | (hyperscan.HS_FLAG_CASELESS if caseless else 0)
    db.compile(expressions=[shape], ids=[0], elements=1, flags=[flags])


def _matching(sigs: list, lines: set[str]):
    """(signature, line) for every line each regex matches, as the matcher compiles it (RE2, linear).

    One RE2::Set per case mode reads each line once for all regexes; a regex RE2 rejects is searched line by
    line with the matcher's fallback. Python's backtracking `re` took minutes on the long JSON lines of the
    TORCH_TRACE fixtures, and one RE2 search per regex and line ~20 s on this corpus."""
    import re2

    for caseless in (False, True):
        group = [sig for sig in sigs if sig.ignore_case == caseless]
        options = re2.Options()
        options.case_sensitive = not caseless
        options.log_errors = False
        options.max_mem = 256 << 20
        regex_set = re2.Set.SearchSet(options)
        in_set, alone = [], []
        for sig in group:
            try:
                regex_set.Add(sig.regex)
                in_set.append(sig)
            except Exception:  # re2.error: a construct RE2 rejects (the matcher falls back to `re` too)
                alone.append(sig)
        regex_set.Compile()
        for line in lines:
            for index in regex_set.Match(line) or ():
                yield in_set[index], line
        for sig in alone:
            pattern = compile_linear(sig.regex, sig.ignore_case)
            yield from ((sig, line) for line in lines if pattern.search(line))


def test_no_regex_matches_a_real_line_without_its_anchor():
    # the scanner only confirms lines that contain the anchor: a regex that also matches lines without it
    # would find things the fast path can never see
    from tests.conftest import CORPUS, TESTS

    logs = list(CORPUS.rglob("*.txt")) + list(CORPUS.rglob("*.log")) + list((TESTS / "fixtures").rglob("*.log"))
    lines = {line for log in logs for line in log.read_text(encoding="utf-8", errors="replace").splitlines()}
    assert len(lines) > 3000
    owner = {}
    sigs = []
    for entry in load().entries:
        for sig in entry.signatures:
            if sig.regex is not None:
                owner[id(sig)] = entry.id
                sigs.append(sig)
    matched = 0
    for sig, line in _matching(sigs, lines):
        matched += 1
        anchor = sig.anchor.lower() if sig.ignore_case else sig.anchor
        text = line.lower() if sig.ignore_case else line
        assert anchor in text, f"{owner[id(sig)]}: /{sig.regex}/ matches without {anchor!r}: {line[:200]}"
    assert matched > 1000  # the corpus holds real lines of most entries: the check ran on them
