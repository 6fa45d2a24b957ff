"""Shared paths for the tests: the corpus copied into the repo so a fresh clone needs nothing else.

The suite runs on three pytest-xdist workers (pyproject's addopts; the machines have two cores, and one
worker spends most of its time waiting on its module's subprocess pool). Each module goes whole to one
worker, and modules that share expensive runs go together (SHARED_SCOPES), so module- and session-scoped
runs are made once. A module with slow subprocess runs (start_background_runs) starts them on a small pool
of its own: under xdist when its first test needs them (the module is scheduled first, so that the pool
runs beside every other module); in one process (`-n 0`) when the session begins, with the module's tests
ordered last.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

TESTS = Path(__file__).parent
CORPUS = TESTS / "corpus"
REPO = TESTS.parent
# the corpus's generators are the programs that produced its logs, some of them pytest files that fail on purpose
# (round 28b's `test_dist28b.py`): not tests of Denpex
collect_ignore_glob = ["corpus/generators/*"]


@pytest.fixture(scope="session")
def corpus() -> Path:
    return CORPUS


def _module(item: pytest.Item) -> object:
    return getattr(item, "module", None)


def under_xdist() -> bool:
    """This process is an xdist worker (the suite's default); False with -n 0 or -p no:xdist."""
    return "PYTEST_XDIST_WORKER" in os.environ


# test modules that share one module's session-wide runs (tests/control_lab.py): one worker for both
SHARED_SCOPES = {"tests/test_doctor.py": "tests/test_control.py"}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A module whose runs go to a pool of their own (RUN_LAST) comes first under xdist, last in one process
    (see the module docstring); the order within each module is kept."""
    items.sort(key=lambda item: bool(getattr(_module(item), "RUN_LAST", False)) != under_xdist())


def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object:
    """`--dist loadfile`, with the modules of SHARED_SCOPES sent to the same worker. (xdist's own loadgroup
    marks tests by rewriting their node ids, which pytest 9.2's node ids no longer allow.)"""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class SharedRunsScheduling(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            scope = super()._split_scope(nodeid)
            return SHARED_SCOPES.get(scope, scope)

    return SharedRunsScheduling(config, log)


def start_runs_once(module: object, session: pytest.Session, tmp_path_factory: pytest.TempPathFactory) -> None:
    """Start a module's background runs unless they were started already."""
    if not getattr(module, "_started", False):
        module._started = True  # type: ignore[attr-defined]
        module.start_background_runs(session.items, tmp_path_factory)  # type: ignore[attr-defined]


@pytest.fixture(scope="session", autouse=True)
def background_runs(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory):
    """In one process, start the slow subprocess runs of the selected modules that have them when the
    session begins: they wait on a core the foreground tests mostly leave idle. Under xdist every worker
    collects every module but runs only some: the module starts its own runs (start_runs_once)."""
    modules = {_module(item) for item in request.session.items}
    starters = [m for m in modules if hasattr(m, "start_background_runs")]
    if not under_xdist():
        for module in starters:
            start_runs_once(module, request.session, tmp_path_factory)
    yield
    for module in starters:
        module.stop_background_runs()
