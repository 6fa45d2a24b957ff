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


def test_no_regex_matches_a_real_line_without_its_anchor():
    # the scanner only confirms lines that contain the anchor: a regex that also matches lines without it
    # would find things the fast path can never see
    from tests.conftest import CORPUS, TESTS

    logs = list(CORPUS.rglob("*.txt")) + list(CORPUS.rglob("*.log")) + list((TESTS / "fixtures").rglob("*.log"))
    lines = {line for log in logs for line in log.read_text(encoding="utf-8", errors="replace").splitlines()}
    assert len(lines) > 3000
    for entry in load().entries:
        for sig in entry.signatures:
            if sig.regex is None:
                continue
            # compiled as the matcher compiles it (RE2, linear): Python's backtracking `re` took minutes on the
            # long JSON lines of the TORCH_TRACE fixtures
            pattern = compile_linear(sig.regex, sig.ignore_case)
            anchor = sig.anchor.lower() if sig.ignore_case else sig.anchor
            for line in lines:
                if pattern.search(line):
                    text = line.lower() if sig.ignore_case else line
                    assert anchor in text, f"{entry.id}: /{sig.regex}/ matches without {anchor!r}: {line[:200]}"
