"""Shared paths for the tests: the corpus copied into the repo so a fresh clone needs nothing else."""

from __future__ import annotations

from pathlib import Path

import pytest

TESTS = Path(__file__).parent
CORPUS = TESTS / "corpus"
REPO = TESTS.parent


@pytest.fixture(scope="session")
def corpus() -> Path:
    return CORPUS
