"""Inductor and Triton cache dirs: resolved as torch resolves them, then checked for what breaks a compile.

Resolution, mirrored without importing torch (torch/_inductor/runtime/cache_dir_utils.py, torch 2.13):
    inductor  = abspath($TORCHINDUCTOR_CACHE_DIR or <tempfile.gettempdir()>/torchinductor_<getpass.getuser()>)
                (characters \\ / : * ? " < > | in the user name become _; no user name -> uid_<uid>)
    precompiled headers = <the *default* dir above>/precompiled_headers, even when TORCHINDUCTOR_CACHE_DIR is set
    triton, under Inductor = $TRITON_CACHE_DIR or <inductor>/triton/<device>   (triton_heuristics sets it)
    triton, standalone     = $TRITON_CACHE_DIR or ($TRITON_HOME or ~)/.triton/cache   (triton/knobs.py)

Each dir is checked for: regular file in its place, owner and mode, read-only or noexec mount, a real write
(one empty `.denpex-doctor-*` file is created and removed at once),
free space and inodes, sub-dirs of other users that we cannot write, held and stale lock files, and damaged
artifacts (a .so/.o/.cubin that is not a complete ELF file, a .py that does not parse, a .json that does not load).
"""

from __future__ import annotations

import ast
import contextlib
import errno
import json
import os
import re
import shutil
import stat
import struct
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from denpex.doctor.model import Check, DoctorReport, Problem

SECTION = "cache"
SCAN_BUDGET_S = 3.0  # per dir; `denpex doctor --deep` lifts it
MAX_PARSE_BYTES = 20 << 20
LOW_SPACE = 1 << 30
NO_SPACE = 100 << 20
_ELF_KINDS = (".so", ".o", ".cubin", ".hsaco")
_SHOWN = 5


# -- resolution ----------------------------------------------------------------------------------------------------
def _user(env: Mapping[str, str]) -> str:
    for name in ("LOGNAME", "USER", "LNAME", "USERNAME"):  # getpass.getuser's order
        if env.get(name):
            return env[name]
    try:
        import pwd

        return pwd.getpwuid(os.getuid()).pw_name
    except (KeyError, ImportError, OSError):
        getuid = getattr(os, "getuid", None)
        return f"uid_{getuid()}" if callable(getuid) else "unknown_user"


def _tempdir(env: Mapping[str, str]) -> str:
    if env is os.environ:
        return tempfile.gettempdir()
    for name in ("TMPDIR", "TEMP", "TMP"):  # tempfile._candidate_tempdir_list, then the usual dirs
        path = env.get(name)
        if path and os.path.isdir(path) and os.access(path, os.W_OK | os.X_OK):
            return os.path.abspath(path)
    for path in ("/tmp", "/var/tmp", "/usr/tmp"):
        if os.path.isdir(path) and os.access(path, os.W_OK | os.X_OK):
            return path
    return os.getcwd()


def default_inductor_dir(env: Mapping[str, str]) -> str:
    user = re.sub(r'[\\/:*?"<>|]', "_", _user(env))
    return os.path.join(_tempdir(env), "torchinductor_" + user)


def inductor_dir(env: Mapping[str, str]) -> str:
    return os.path.abspath(env.get("TORCHINDUCTOR_CACHE_DIR") or default_inductor_dir(env))


def triton_dirs(env: Mapping[str, str], inductor: str) -> dict[str, str]:
    if env.get("TRITON_CACHE_DIR") is not None:
        return {"triton": env["TRITON_CACHE_DIR"]}
    home = env.get("TRITON_HOME") or os.path.expanduser("~/")
    return {"triton (under Inductor)": os.path.join(inductor, "triton"),
            "triton (standalone)": os.path.join(home, ".triton", "cache")}


@dataclass(slots=True)
class CacheDir:
    label: str  # "inductor", "triton (standalone)", ...
    path: str
    source: str  # "TORCHINDUCTOR_CACHE_DIR", "default", ...
    required: bool = True  # torch creates it on first compile; False: only used in some setups


def resolve(env: Mapping[str, str], torch_default: str | None = None) -> tuple[list[CacheDir], list[str]]:
    notes: list[str] = []
    default = default_inductor_dir(env)
    if torch_default and os.path.abspath(torch_default) != os.path.abspath(default):
        notes.append(f"torch's default_cache_dir() says {torch_default}, denpex's mirror said {default}: "
                     "using torch's")
        default = torch_default
    if env.get("TORCHINDUCTOR_CACHE_DIR"):
        inductor, source = os.path.abspath(env["TORCHINDUCTOR_CACHE_DIR"]), "TORCHINDUCTOR_CACHE_DIR"
    else:
        inductor, source = os.path.abspath(default), "default"
    dirs = [CacheDir("inductor", inductor, source)]
    headers = os.path.join(default, "precompiled_headers")
    if os.path.lexists(headers) or source == "default":
        dirs.append(CacheDir("inductor precompiled headers", headers, "always the default dir", required=False))
    for label, path in triton_dirs(env, inductor).items():
        src = "TRITON_CACHE_DIR" if label == "triton" else ("TRITON_HOME" if env.get("TRITON_HOME") and
                                                               "standalone" in label else "default")
        dirs.append(CacheDir(label, os.path.abspath(os.path.expanduser(path)), src, required=False))
    return dirs, notes


# -- artifact checks -----------------------------------------------------------------------------------------------
def elf_damage(path: str, size: int) -> str | None:
    """Why a file that should be an ELF object is not a complete one, or None when it looks whole."""
    if size == 0:
        return "empty (0 bytes)"
    try:
        with open(path, "rb") as handle:
            head = handle.read(64)
    except OSError as exc:
        return f"unreadable ({exc.strerror})"
    if head[:4] != b"\x7fELF":
        return f"not an ELF file (starts with {head[:12]!r})"
    if len(head) < 52 or head[4] not in (1, 2) or head[5] not in (1, 2):
        return "truncated or invalid ELF header"
    end = "<" if head[5] == 1 else ">"
    if head[4] == 2:
        if len(head) < 64:
            return "truncated ELF header"
        e_type = struct.unpack_from(end + "H", head, 16)[0]
        phoff, shoff = struct.unpack_from(end + "QQ", head, 32)
        phentsize, phnum, shentsize, shnum = struct.unpack_from(end + "HHHH", head, 54)
    else:
        e_type = struct.unpack_from(end + "H", head, 16)[0]
        phoff, shoff = struct.unpack_from(end + "II", head, 28)
        phentsize, phnum, shentsize, shnum = struct.unpack_from(end + "HHHH", head, 42)
    needed = max(phoff + phnum * phentsize if phnum else 0, shoff + shnum * shentsize if shnum else 0)
    if needed > size:
        return f"truncated: its headers need {needed} bytes, the file has {size}"
    if path.endswith(".so") and e_type != 3:
        return f"not a shared library (ELF type {e_type})"
    return None


def python_damage(path: str, size: int) -> str | None:
    if size == 0:
        return "empty (0 bytes)"
    if size > MAX_PARSE_BYTES:
        return None
    try:
        with open(path, "rb") as handle:
            source = handle.read()
        ast.parse(source, filename=path)
    except SyntaxError as exc:
        return f"does not parse: line {exc.lineno}: {exc.msg}"
    except (ValueError, OSError) as exc:  # null bytes, unreadable
        return f"does not parse: {exc}"
    return None


def json_damage(path: str, size: int) -> str | None:
    if size == 0:
        return "empty (0 bytes)"
    try:
        with open(path, "rb") as handle:
            json.loads(handle.read())
    except (ValueError, OSError) as exc:
        return f"not valid JSON: {exc}"
    return None


def _damage(path: str, size: int) -> tuple[str, str] | None:
    """(entry id, reason) for a damaged artifact."""
    name = path.rsplit("/", 1)[-1]
    if name.endswith(_ELF_KINDS):
        why = elf_damage(path, size)
        if why:
            return ("cache-truncated-shared-object" if name.endswith((".so", ".o")) else
                    "cache-corrupt-stale-artifact", why)
    elif name.endswith(".py"):
        why = python_damage(path, size)
        if why:
            return ("cache-corrupt-python-module", why)
    elif name.endswith(".json"):
        why = json_damage(path, size)
        if why:
            return ("cache-corrupt-stale-artifact", why)
    return None


def _lock_holders() -> dict[int, int]:
    """inode -> pid of every flock/posix lock on this machine (/proc/locks)."""
    holders: dict[int, int] = {}
    try:
        with open("/proc/locks", encoding="utf-8") as handle:
            for line in handle:
                parts = line.split()
                if len(parts) >= 6 and ":" in parts[5]:
                    try:
                        holders[int(parts[5].split(":")[-1])] = int(parts[4])
                    except ValueError:
                        continue
    except OSError:
        pass
    return holders


@dataclass
class Scan:
    files: int = 0
    bytes: int = 0
    checked: int = 0
    complete: bool = True
    damaged: list[tuple[str, str, str]] = field(default_factory=list)  # (entry, path, why)
    locks: int = 0
    held: list[tuple[str, int | None]] = field(default_factory=list)
    foreign_unwritable: list[tuple[str, int]] = field(default_factory=list)  # dirs of others we cannot write
    seconds: float = 0.0


def scan(root: str, budget_s: float | None = SCAN_BUDGET_S) -> Scan:
    out = Scan()
    start = time.perf_counter()
    me = os.geteuid() if hasattr(os, "geteuid") else None
    holders: dict[int, int] | None = None
    stack = [root]
    while stack:
        current = stack.pop()
        try:
            entries = list(os.scandir(current))
        except OSError:
            continue
        for entry in entries:
            if budget_s is not None and time.perf_counter() - start > budget_s:
                out.complete = False
                stack.clear()
                break
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISDIR(st.st_mode):
                if me is not None and st.st_uid != me and not os.access(entry.path, os.W_OK | os.X_OK):
                    out.foreign_unwritable.append((entry.path, st.st_uid))
                stack.append(entry.path)
                continue
            if not stat.S_ISREG(st.st_mode):
                continue
            out.files += 1
            out.bytes += st.st_size
            if entry.name.endswith(".lock"):
                out.locks += 1
                if holders is None:
                    holders = _lock_holders()
                if st.st_ino in holders:
                    out.held.append((entry.path, holders[st.st_ino]))
                continue
            if entry.name.endswith((*_ELF_KINDS, ".py", ".json")):
                out.checked += 1
                found = _damage(entry.path, st.st_size)
                if found:
                    out.damaged.append((found[0], entry.path, found[1]))
    out.seconds = time.perf_counter() - start
    return out


# -- the dir itself ------------------------------------------------------------------------------------------------
def _owner(uid: int) -> str:
    try:
        import pwd

        return f"{pwd.getpwuid(uid).pw_name} (uid {uid})"
    except (KeyError, ImportError):
        return f"uid {uid}"


def _human(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TiB"


def _existing_ancestor(path: str) -> str:
    current = path
    while not os.path.lexists(current):
        parent = os.path.dirname(current)
        if parent == current:
            break
        current = parent
    return current


def _write_probe(path: str) -> str | None:
    """Create and remove a file the way a compile would; None when that works, else the error."""
    try:
        fd, name = tempfile.mkstemp(prefix=".denpex-doctor-", dir=path)
    except OSError as exc:
        return f"[Errno {exc.errno}] {exc.strerror}"
    os.close(fd)
    with contextlib.suppress(OSError):
        os.unlink(name)
    return None


def _env_fix(cache: CacheDir) -> str:
    var, leaf = (("TRITON_CACHE_DIR", "triton") if cache.label.startswith("triton") else
                 ("TORCHINDUCTOR_CACHE_DIR", "torchinductor"))
    return f"`export {var}=$HOME/.cache/{leaf}` (a dir of your own)"


def check_dir(report: DoctorReport, cache: CacheDir, budget_s: float | None = SCAN_BUDGET_S) -> None:
    path = cache.path
    name = f"{cache.label} cache"
    facts: dict[str, Any] = {"path": path, "source": cache.source}
    if not os.path.lexists(path):
        anchor = _existing_ancestor(path)
        facts["exists"] = False
        facts["nearest_existing"] = anchor
        if os.path.exists(anchor) and not os.path.isdir(anchor):
            report.add(Check(SECTION, name, "error", f"{path}: {anchor} is a regular file", facts))
            report.problem(Problem(
                "cache-dir-unusable", "error", f"The {cache.label} cache dir cannot be created",
                f"{anchor} is a regular file, so os.makedirs({path}) raises an error when torch.compile starts.",
                f"move {anchor} away, or {_env_fix(cache)}", evidence=f"{anchor} is a regular file", path=anchor))
            return
        if not os.access(anchor, os.W_OK | os.X_OK):
            status = "error" if cache.required else "warning"
            report.add(Check(SECTION, name, status, f"{path} does not exist and {anchor} is not writable", facts))
            report.problem(Problem(
                "cache-dir-unusable", "error" if cache.required else "warning",
                f"The {cache.label} cache dir cannot be created",
                f"{path} does not exist and its parent {anchor} is not writable by you.",
                f"`mkdir -p {path}` as its owner, or {_env_fix(cache)}",
                evidence=f"{anchor}: not writable", path=anchor))
            return
        report.add(Check(SECTION, name, "ok", f"{path} (not created yet; {anchor} is writable)", facts))
        _space(report, cache, anchor, facts)
        return
    if os.path.islink(path) and not os.path.exists(path):
        report.add(Check(SECTION, name, "error", f"{path} is a dangling symlink", facts))
        report.problem(Problem("cache-dir-unusable", "error", f"The {cache.label} cache dir is a dangling symlink",
                               f"{path} points to {os.readlink(path)}, which does not exist.",
                               f"remove the link or create its target, or {_env_fix(cache)}",
                               evidence=f"{path} -> {os.readlink(path)}", path=path))
        return
    st = os.stat(path)
    facts.update({"exists": True, "owner": _owner(st.st_uid), "mode": stat.filemode(st.st_mode)})
    if not stat.S_ISDIR(st.st_mode):
        kind = "a regular file" if stat.S_ISREG(st.st_mode) else "not a directory"
        report.add(Check(SECTION, name, "error", f"{path} is {kind}", facts))
        consequence = ("torch.compile fails at its first step with `FileExistsError: [Errno 17] File exists` "
                       "(os.makedirs in cache_dir())" if cache.label == "inductor" else
                       "every kernel write under it fails with NotADirectoryError")
        report.problem(Problem(
            "cache-dir-unusable", "error", f"The {cache.label} cache dir is {kind}",
            f"{path} is {kind}: {consequence}.",
            f"move the file away (`mv {path} {path}.bak`), or {_env_fix(cache)}",
            evidence=f"{path} is {kind} ({stat.filemode(st.st_mode)}, {st.st_size} bytes)", path=path))
        return
    problems_before = len(report.problems)
    me = os.geteuid() if hasattr(os, "geteuid") else st.st_uid
    writable = os.access(path, os.W_OK | os.X_OK)
    vfs = os.statvfs(path)
    read_only = bool(vfs.f_flag & getattr(os, "ST_RDONLY", 1))
    noexec = bool(vfs.f_flag & getattr(os, "ST_NOEXEC", 8))
    probe_error = _write_probe(path) if writable and not read_only else None
    facts.update({"writable": writable and not probe_error and not read_only, "read_only_mount": read_only,
                  "noexec_mount": noexec})
    if read_only:
        report.problem(Problem(
            "cache-dir-unusable", "error", f"The {cache.label} cache dir is on a read-only mount",
            f"{path} is on a read-only file system: the first cache write fails with [Errno 30].",
            f"remount it read-write, or {_env_fix(cache)}", evidence=f"{path}: read-only file system", path=path))
    elif not writable or probe_error:
        why = probe_error or "permission denied"
        owner = "" if st.st_uid == me else f", owned by {_owner(st.st_uid)}"
        report.problem(Problem(
            "cache-dir-unusable", "error", f"The {cache.label} cache dir is not writable",
            f"{path} ({stat.filemode(st.st_mode)}{owner}) cannot be written by you: {why}. The first kernel write "
            "fails.", f"fix its ownership (`chown -R $USER {path}`) or {_env_fix(cache)}",
            evidence=f"creating a file in {path}: {why}", path=path))
    elif st.st_uid != me:
        report.problem(Problem(
            "cache-dir-unusable", "warning", f"The {cache.label} cache dir belongs to another user",
            f"{path} is owned by {_owner(st.st_uid)} ({stat.filemode(st.st_mode)}), not by you ({_owner(me)}). "
            "You can write it now, but the files you create there are yours: that user's jobs then fail to "
            "overwrite or lock them (PermissionError), and a dir at a predictable path in /tmp that someone "
            "else owns can feed you their kernels.",
            f"give each user and job its own cache: {_env_fix(cache)}",
            evidence=f"{path}: owner {_owner(st.st_uid)}, you are {_owner(me)}", path=path))
    if noexec and cache.label != "inductor precompiled headers":
        report.problem(Problem(
            "cache-dir-unusable", "error", f"The {cache.label} cache dir is on a noexec mount",
            f"{path} is mounted noexec: compiled kernels (.so) written there cannot be loaded "
            "('failed to map segment from shared object').", _env_fix(cache),
            evidence=f"{path}: noexec mount", path=path))
    found = scan(path, budget_s)
    facts.update({"files": found.files, "bytes": found.bytes, "checked": found.checked,
                  "scan_complete": found.complete, "scan_s": round(found.seconds, 3), "lock_files": found.locks,
                  "held_locks": [{"path": p, "pid": pid} for p, pid in found.held],
                  "damaged": [{"entry": e, "path": p, "why": w} for e, p, w in found.damaged[:200]]})
    _report_damage(report, cache, found)
    if found.foreign_unwritable:
        first, uid = found.foreign_unwritable[0]
        report.problem(Problem(
            "cache-dir-unusable", "error", f"Parts of the {cache.label} cache belong to another user",
            f"{len(found.foreign_unwritable)} sub-dir(s) of {path} are owned by others and not writable by you "
            f"(first: {first}, {_owner(uid)}); a compile whose kernel lands there fails with PermissionError.",
            f"{_env_fix(cache)}, or have the owner fix permissions", evidence=f"{first}: owner {_owner(uid)}",
            path=first))
    size = f"{_human(found.bytes)} in {found.files} file(s)" + ("" if found.complete else " (scan stopped at the "
                                                                 "time budget; --deep scans everything)")
    status = "ok"
    if len(report.problems) > problems_before:
        status = "error" if any(p.severity == "error" for p in report.problems[problems_before:]) else "warning"
    report.add(Check(SECTION, name, status, f"{path}: {size}, owner {facts['owner']}, {facts['mode']}", facts))
    if found.held:
        held = ", ".join(f"{p} (pid {pid})" for p, pid in found.held[:3])
        report.add(Check(SECTION, f"{name} locks", "warning",
                         f"{len(found.held)} lock(s) held by running processes: {held}; a compile that needs one "
                         "waits for it (Inductor's LOCK_TIMEOUT is 600 s)"))
    elif found.locks:
        report.add(Check(SECTION, f"{name} locks", "info",
                         f"{found.locks} lock file(s), none held: stale but harmless (torch locks with flock, so a "
                         "lock file nobody holds blocks nothing)"))
    _space(report, cache, path, facts)


def _report_damage(report: DoctorReport, cache: CacheDir, found: Scan) -> None:
    by_entry: dict[str, list[tuple[str, str]]] = {}
    for entry, path, why in found.damaged:
        by_entry.setdefault(entry, []).append((path, why))
    titles = {
        "cache-truncated-shared-object": "damaged compiled kernel libraries (.so)",
        "cache-corrupt-python-module": "cached Python modules that do not parse",
        "cache-corrupt-stale-artifact": "damaged cache artifacts",
    }
    for entry, items in by_entry.items():
        shown = "; ".join(f"{p}: {w}" for p, w in items[:_SHOWN])
        more = f" (and {len(items) - _SHOWN} more)" if len(items) > _SHOWN else ""
        report.problem(Problem(
            entry, "error", f"{len(items)} {titles.get(entry, 'damaged artifacts')} in the {cache.label} cache",
            f"{shown}{more}. Torch loads these on a cache hit and fails instead of recompiling.",
            f"delete the damaged files or the whole dir: `rm -rf {cache.path}` (the next run recompiles)",
            evidence=f"{items[0][0]}: {items[0][1]}", path=items[0][0]))


def _space(report: DoctorReport, cache: CacheDir, path: str, facts: dict[str, Any]) -> None:
    try:
        usage = shutil.disk_usage(path)
        vfs = os.statvfs(path)
    except OSError:
        return
    facts.update({"free_bytes": usage.free, "total_bytes": usage.total, "free_inodes": vfs.f_favail})
    if usage.free < NO_SPACE or (vfs.f_files and vfs.f_favail == 0):
        what = "no free inodes" if vfs.f_files and vfs.f_favail == 0 else f"{_human(usage.free)} free"
        report.problem(Problem(
            "cache-dir-unusable", "error", f"The disk of the {cache.label} cache is full",
            f"{path}: {what}; kernel writes fail with [Errno {errno.ENOSPC}] No space left on device.",
            f"free space there or {_env_fix(cache)}", evidence=f"{path}: {what}", path=path))
    elif usage.free < LOW_SPACE:
        report.problem(Problem(
            "cache-dir-unusable", "warning", f"The disk of the {cache.label} cache is nearly full",
            f"{path}: only {_human(usage.free)} free.", f"free space there or {_env_fix(cache)}",
            evidence=f"{path}: {_human(usage.free)} free", path=path))


def probe(report: DoctorReport, env: Mapping[str, str], torch_default: str | None,
          budget_s: float | None = SCAN_BUDGET_S) -> list[CacheDir]:
    dirs, notes = resolve(env, torch_default)
    report.notes.extend(notes)
    checked: list[str] = []
    for cache in dirs:
        inside = next((d for d in checked if cache.path.startswith(d.rstrip(os.sep) + os.sep)), None)
        if inside is not None:
            report.add(Check(SECTION, f"{cache.label} cache", "info",
                             f"{cache.path} (inside {inside}, checked with it)",
                             {"path": cache.path, "source": cache.source}))
            continue
        checked.append(cache.path)
        if not cache.required and not os.path.lexists(cache.path):
            report.add(Check(SECTION, f"{cache.label} cache", "info", f"{cache.path} (not created yet)",
                             {"path": cache.path, "source": cache.source, "exists": False}))
            continue
        check_dir(report, cache, budget_s)
    return dirs
