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
        self._warm_started = time.monotonic()
        # the warm cache takes the longest (a compile from scratch): start it now, in the background, while
        # the tests that do not need it run; warm_cache() waits for it
        self._warm_log = open(root / "populate.log", "w+")  # noqa: SIM115 - closed in warm_cache()
        self._warm_proc = subprocess.Popen([PY, str(self.small)], env=self.env(root / "warm_cache"), cwd=root,
                                           stdout=self._warm_log, stderr=subprocess.STDOUT, text=True)

    def env(self, cache: Path | None = None, **extra: str) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k not in _SCRUB and not k.startswith(_SCRUB_PREFIXES)}
        env["DENPEX_RUNS_DIR"] = str(self.root / "runs")
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
        if self._warm is None:
            rc = self._warm_proc.wait(timeout=TIMEOUT)
            self.timings["populate warm cache (background)"] = time.monotonic() - self._warm_started
            self._warm_log.seek(0)
            output = self._warm_log.read()
            self._warm_log.close()
            assert rc == 0 and "ok" in output, output[-3000:]
            self._warm = self.root / "warm_cache"
        return self._warm

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
