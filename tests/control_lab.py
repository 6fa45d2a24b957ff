"""Shared real-torch runs for tests/test_doctor.py and tests/test_control.py (not a test module itself).

A compile on CPU costs 10-60 s, so each expensive artifact is made once per session and shared across both
test modules through this module's globals: a script, a warm Inductor cache filled by one successful run,
and a copy of that cache with garbage written into its artifacts. Nothing is mocked: every run is a real
`python small.py` under real torch, every denpex call is the real CLI in a subprocess.
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

PY = sys.executable
TIMEOUT = 600

SMALL = """\
import torch


def f(x):
    return torch.sin(x) + torch.cos(x) * 2


out = torch.compile(f)(torch.randn(64))
print("ok", float(out.sum()))
"""

# The first line a real torch call prints (an allocation torch refuses), then a long quiet stretch.
EARLY_FAILURE = """\
import sys, time, traceback
import torch

try:
    torch.empty(2**50, dtype=torch.uint8)
except RuntimeError:
    traceback.print_exc()
for step in range(3000):
    print(f"step {step} loss 0.{step:04d}")
sys.stdout.flush()
time.sleep(float(sys.argv[1]) if len(sys.argv) > 1 else 6)
sys.exit(3)
"""

_SCRUB = ("CXX", "CC", "TORCH_LOGS", "TORCH_COMPILE_DEBUG", "PYTHONWARNINGS", "TRITON_CACHE_DIR",
          "DENPEX_RUNS_DIR")
_SCRUB_PREFIXES = ("TORCHDYNAMO_", "TORCHINDUCTOR_", "TORCH_COMPILE_", "DENPEX_HOOK_")


@dataclass
class Done:
    rc: int
    out: str
    err: str
    seconds: float

    def json(self) -> dict:
        return json.loads(self.out)


class Lab:
    def __init__(self, root: Path) -> None:
        self.root = root
        root.mkdir(parents=True, exist_ok=True)
        self.small = root / "small.py"
        self.small.write_text(SMALL)
        self.early = root / "early_failure.py"
        self.early.write_text(EARLY_FAILURE)
        self._warm: Path | None = None
        self._copies = 0
        self.timings: dict[str, float] = {}
        # The damaged-cache pipeline is the longest chain of compiles (fill a cache from scratch, damage a copy,
        # bisect it: another compile from scratch). The first torch test starts it in the background so that it
        # overlaps the other torch runs; warm_cache() and damaged_bisect() wait for their part of it.
        self._warm_ready = threading.Event()
        self._damaged: tuple[Path, Done] | None = None
        self._error: BaseException | None = None
        self._pipeline = threading.Thread(target=self._damaged_pipeline, daemon=True)

    def start_background(self) -> None:
        if not self._pipeline.is_alive() and self._pipeline.ident is None:
            self._pipeline.start()

    def join(self) -> None:
        """Do not leave compiles running after the tests (a failed test may not have waited for them)."""
        if self._pipeline.ident is not None:
            self._pipeline.join(TIMEOUT)

    def _damaged_pipeline(self) -> None:
        try:
            cache = self.root / "warm_cache"
            done = self.python(self.small, self.env(cache), name="populate warm cache (background)")
            assert done.rc == 0 and "ok" in done.out, done.err[-3000:]
            self._warm = cache
            self._warm_ready.set()
            damaged = self.corrupt_cache()
            bisect = self.denpex("bisect", "--format", "json", "--", PY, str(self.small), env=self.env(damaged),
                                 name="bisect (damaged cache, background)")
            self._damaged = (damaged, bisect)
        except BaseException as exc:  # noqa: BLE001 - re-raised in the test that needs it
            self._error = exc
            self._warm_ready.set()

    def env(self, cache: Path | None = None, **extra: str) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k not in _SCRUB and not k.startswith(_SCRUB_PREFIXES)}
        env["DENPEX_RUNS_DIR"] = str(self.root / "runs")
        env["TORCHINDUCTOR_COMPILE_THREADS"] = "1"  # no pool of compile workers: ~7 CPU-s less per compile
        if cache is not None:
            env["TORCHINDUCTOR_CACHE_DIR"] = str(cache)
            env["TRITON_CACHE_DIR"] = str(cache / "triton")
        env.update(extra)
        return env

    def denpex(self, *args: str, env: dict[str, str], timeout: float = TIMEOUT, name: str = "") -> Done:
        t0 = time.monotonic()
        proc = subprocess.run([PY, "-m", "denpex", *args], env=env, cwd=self.root, capture_output=True, text=True,
                              timeout=timeout)
        done = Done(proc.returncode, proc.stdout, proc.stderr, time.monotonic() - t0)
        if name:
            self.timings[name] = done.seconds
        return done

    def python(self, script: Path, env: dict[str, str], name: str = "") -> Done:
        t0 = time.monotonic()
        proc = subprocess.run([PY, str(script)], env=env, cwd=self.root, capture_output=True, text=True,
                              timeout=TIMEOUT)
        done = Done(proc.returncode, proc.stdout, proc.stderr, time.monotonic() - t0)
        if name:
            self.timings[name] = done.seconds
        return done

    def warm_cache(self) -> Path:
        """An Inductor cache filled by one successful compile of small.py (CXX unset: torch's g++)."""
        self.start_background()
        self._warm_ready.wait(TIMEOUT)
        if self._warm is None:
            raise AssertionError(f"filling the warm cache failed: {self._error!r}")
        return self._warm

    def damaged_bisect(self) -> tuple[Path, Done]:
        """`denpex bisect --format json` on small.py over a damaged copy of the warm cache (run in background)."""
        self.start_background()
        self._pipeline.join(TIMEOUT)
        if self._damaged is None:
            raise AssertionError(f"the damaged-cache pipeline failed: {self._error!r}")
        return self._damaged

    def corrupt_cache(self) -> Path:
        """A new copy of the warm cache after garbage was written into its compiled artifacts: every cached
        output-code module cut in half (as a killed writer leaves it) and every kernel library overwritten."""
        self._copies += 1
        cache = self.root / f"corrupt_cache_{self._copies}"
        shutil.rmtree(cache, ignore_errors=True)
        shutil.copytree(self.warm_cache(), cache)
        damaged = 0
        for path in glob.glob(str(cache / "*" / "*.py")):
            data = Path(path).read_text()
            Path(path).write_text(data[: len(data) // 2])
            damaged += 1
        for path in glob.glob(str(cache / "*" / "*.main.so")):
            Path(path).write_bytes(b"garbage written over a compiled kernel\n" * 8)
            damaged += 1
        assert damaged >= 2, f"the warm cache has no artifacts to damage: {list(cache.rglob('*'))[:20]}"
        return cache


_LABS: dict[str, Lab] = {}


def lab(base: Path) -> Lab:
    """One Lab per session, whichever test module asks first (base: tmp_path_factory.getbasetemp())."""
    key = str(base)
    if key not in _LABS:
        _LABS[key] = Lab(base / "control_lab")
    return _LABS[key]
