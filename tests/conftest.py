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


def _module(item: pytest.Item) -> object:
    return getattr(item, "module", None)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A module whose runs start in the background (RUN_LAST) has its tests last, so the runs have the rest
    of the session to finish in; the order within each module is kept."""
    items.sort(key=lambda item: bool(getattr(_module(item), "RUN_LAST", False)))


@pytest.fixture(scope="session", autouse=True)
def background_runs(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory):
    """Start the slow subprocess runs of the selected modules that have them when the session begins: they
    wait on a core the foreground tests mostly leave idle."""
    modules = {_module(item) for item in request.session.items}
    starters = [m for m in modules if hasattr(m, "start_background_runs")]
    for module in starters:
        module.start_background_runs(request.session.items, tmp_path_factory)
    yield
    for module in starters:
        module.stop_background_runs()
