"""Denpex's startup hook. `denpex bisect` and `denpex run --backend` copy this file as `sitecustomize.py` into a
fresh temp dir and put that dir first on PYTHONPATH; Python's `site` module imports it at startup of every
Python process of the command (torchrun workers and subprocesses included, since they inherit the env).

Standard library only, and it never raises: the job must run exactly as without it, except that

  * DENPEX_HOOK_BACKEND=<name> (eager, aot_eager, aot_eager_decomp_partition, inductor) makes every
    `torch.compile(...)` call (and `nn.Module.compile`, which calls it) use that backend; for a backend other
    than inductor the inductor-only `mode=` / `options=` arguments are dropped (and reported);
  * DENPEX_HOOK_REPORT=<file> receives one JSON line per event: "loaded" (per process) and "compile"
    (requested and forced backend), so denpex can tell a control that ran from one that did nothing.

torch is not imported here: a meta-path finder waits for the job's own `import torch`, lets it finish, then
wraps `torch.compile`. An existing sitecustomize further down sys.path is still executed afterwards.
"""

import contextlib
import json
import os
import sys
import time

_BACKEND = os.environ.get("DENPEX_HOOK_BACKEND", "")
_REPORT = os.environ.get("DENPEX_HOOK_REPORT", "")
_HERE = os.path.dirname(os.path.abspath(__file__))
_INDUCTOR_ONLY = ("mode", "options")


def _note(event, **fields):
    if not _REPORT:
        return
    try:
        record = {"event": event, "pid": os.getpid(), "time": time.time()}
        record.update(fields)
        with open(_REPORT, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(record, default=str) + "\n")
    except Exception:  # noqa: BLE001,S110 - the hook must never break the job
        pass


def _name(backend):
    if isinstance(backend, str):
        return backend
    return getattr(backend, "__name__", None) or type(backend).__name__


def _wrap(torch):
    original = getattr(torch, "compile", None)
    if original is None or getattr(original, "__denpex_hook__", False):
        return
    import functools

    @functools.wraps(original)
    def compile(*args, **kwargs):  # noqa: A001 - it replaces torch.compile
        requested = _name(kwargs.get("backend", "inductor"))
        dropped = []
        if _BACKEND:
            kwargs["backend"] = _BACKEND
            if _BACKEND != "inductor":
                for key in _INDUCTOR_ONLY:
                    if kwargs.get(key) is not None:
                        dropped.append(key)
                    kwargs.pop(key, None)
        _note("compile", requested=requested, forced=_BACKEND or None, dropped=dropped)
        return original(*args, **kwargs)

    compile.__denpex_hook__ = True
    torch.compile = compile
    _note("patched", torch=getattr(torch, "__version__", "?"))


class _Loader:
    """Delegates to torch's own loader and wraps torch.compile once torch/__init__.py has run."""

    def __init__(self, inner):
        self._inner = inner

    def create_module(self, spec):
        return self._inner.create_module(spec)

    def exec_module(self, module):
        self._inner.exec_module(module)
        try:
            _wrap(module)
        except Exception as exc:  # noqa: BLE001
            _note("error", where="wrap", error=f"{type(exc).__name__}: {exc}")

    def __getattr__(self, name):
        return getattr(self._inner, name)


class _Finder:
    def find_spec(self, fullname, path=None, target=None):
        if fullname != "torch":
            return None
        with contextlib.suppress(ValueError):
            sys.meta_path.remove(self)  # once is enough; also avoids finding ourselves below
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None)
            if find is None:
                continue
            spec = find(fullname, path, target)
            if spec is not None:
                if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                    spec.loader = _Loader(spec.loader)
                return spec
        return None

    def invalidate_caches(self):
        pass


def _chain():
    """Run the sitecustomize that this one shadows, if there is one."""
    try:
        import importlib.machinery
        import importlib.util

        paths = [p for p in sys.path if os.path.abspath(p or os.curdir) != _HERE]
        spec = importlib.machinery.PathFinder.find_spec("sitecustomize", paths)
        if spec is None or spec.loader is None or os.path.dirname(os.path.abspath(spec.origin or "")) == _HERE:
            return
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    except Exception as exc:  # noqa: BLE001
        _note("error", where="chain", error=f"{type(exc).__name__}: {exc}")


def _install():
    _note("loaded", argv=sys.argv[:4], backend=_BACKEND or None, executable=sys.executable)
    if "torch" in sys.modules:
        _wrap(sys.modules["torch"])
    elif _BACKEND or _REPORT:
        sys.meta_path.insert(0, _Finder())
    _chain()


_install()
