"""`denpex doctor` on real broken setups: a CXX that points nowhere, a damaged Inductor cache, cache dirs that
belong to someone else, cannot be written, or are regular files; and `denpex diagnose --doctor`.

Cache-dir cases need no torch run (doctor is asked with --no-import); the CXX and damaged-cache cases use real
torch (marked `torch`). Ownership and immutability cases need root (tests run as root here) and skip, saying
why, where the machine does not allow them.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from denpex.catalog import load
from denpex.doctor import caches, versions
from tests import control_lab

SRC = Path(__file__).resolve().parents[1] / "src" / "denpex" / "doctor"
CORPUS = Path(__file__).resolve().parent / "corpus"


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> control_lab.Lab:
    shared = control_lab.lab(tmp_path_factory.getbasetemp())
    request.addfinalizer(shared.join)
    return shared


def _doctor(lab: control_lab.Lab, env: dict[str, str], *extra: str) -> tuple[int, dict]:
    done = lab.denpex("doctor", "--format", "json", *extra, env=env)
    assert done.rc in (0, 1, 3), done.err
    return done.rc, done.json()


def _problems(report: dict, entry: str, path: str | None = None) -> list[dict]:
    return [p for p in report["problems"] if p["entry_id"] == entry and (path is None or p["path"] == path)]


# -- cache dirs (no torch run) --------------------------------------------------------------------------------
def test_cache_dir_that_is_a_regular_file(lab: control_lab.Lab, tmp_path: Path) -> None:
    cache = tmp_path / "inductor_cache"
    cache.write_text("not a directory\n")
    rc, report = _doctor(lab, lab.env(cache), "--no-import")
    found = _problems(report, "cache-dir-unusable", str(cache))
    assert rc == 1 and found, report["problems"]
    assert found[0]["severity"] == "error"
    assert "regular file" in found[0]["evidence"]
    assert "FileExistsError" in found[0]["detail"]
    assert f"mv {cache}" in found[0]["fix"] and "TORCHINDUCTOR_CACHE_DIR" in found[0]["fix"]


def test_cache_dir_owned_by_another_user(lab: control_lab.Lab, tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root to chown a dir to another uid")
    shared = tmp_path / "shared_cache"
    shared.mkdir()
    (shared / "ab").mkdir()
    os.chown(shared, 4321, 4321)
    os.chown(shared / "ab", 4321, 4321)
    rc, report = _doctor(lab, lab.env(shared), "--no-import")
    found = _problems(report, "cache-dir-unusable", str(shared))
    assert found, report["problems"]
    assert "uid 4321" in found[0]["evidence"] and "belongs to another user" in found[0]["title"]
    assert "TORCHINDUCTOR_CACHE_DIR" in found[0]["fix"]
    # root can still write there, so this is a warning, not an error
    assert found[0]["severity"] == "warning" and rc in (1, 3)


def _immutable(path: Path) -> bool:
    if os.geteuid() != 0 or shutil.which("chattr") is None:
        return False
    return subprocess.run(["chattr", "+i", str(path)], capture_output=True).returncode == 0


def test_cache_dir_that_cannot_be_written(lab: control_lab.Lab, tmp_path: Path) -> None:
    blocked = tmp_path / "blocked_cache"
    blocked.mkdir()
    how = None
    if _immutable(blocked):
        how = "chattr +i"
    elif os.geteuid() != 0:
        blocked.chmod(0o555)
        how = "chmod 555"
    if how is None:
        pytest.skip("root here cannot make a dir unwritable (no chattr +i on this file system)")
    try:
        rc, report = _doctor(lab, lab.env(blocked), "--no-import")
    finally:
        if how == "chattr +i":
            subprocess.run(["chattr", "-i", str(blocked)], check=True)
        else:
            blocked.chmod(0o755)
    found = _problems(report, "cache-dir-unusable", str(blocked))
    assert rc == 1 and found, (how, report["problems"])
    assert found[0]["severity"] == "error" and "not writable" in found[0]["title"]
    assert "Errno" in found[0]["evidence"] or "permission" in found[0]["evidence"]


def test_cache_dir_on_a_read_only_mount(lab: control_lab.Lab, tmp_path: Path) -> None:
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("needs root and mount for a read-only bind mount")
    src, mnt = tmp_path / "ro_src", tmp_path / "ro_mnt"
    src.mkdir()
    mnt.mkdir()
    if subprocess.run(["mount", "--bind", str(src), str(mnt)], capture_output=True).returncode != 0:
        pytest.skip("bind mounts are not allowed here")
    try:
        if subprocess.run(["mount", "-o", "remount,bind,ro", str(mnt)], capture_output=True).returncode != 0:
            pytest.skip("read-only remount is not allowed here")
        rc, report = _doctor(lab, lab.env(mnt), "--no-import")
    finally:
        subprocess.run(["umount", str(mnt)], capture_output=True)
    found = _problems(report, "cache-dir-unusable", str(mnt))
    assert rc == 1 and found and "read-only" in found[0]["title"], report["problems"]


def test_damage_detectors_on_real_files(tmp_path: Path) -> None:
    """The artifact checks on real files: this interpreter's own extension modules and a real .py."""
    import _json  # an ELF shared library on Linux builds of CPython

    so = Path(_json.__file__)
    if not so.name.endswith(".so"):
        pytest.skip("this Python's _json is not a shared library")
    assert caches.elf_damage(str(so), so.stat().st_size) is None
    cut = tmp_path / "cut.so"
    cut.write_bytes(so.read_bytes()[: so.stat().st_size // 2])
    assert "truncated" in caches.elf_damage(str(cut), cut.stat().st_size)
    junk = tmp_path / "junk.so"
    junk.write_bytes(b"garbage\n")
    assert "not an ELF file" in caches.elf_damage(str(junk), junk.stat().st_size)
    source = Path(caches.__file__).read_text()
    half = tmp_path / "half.py"
    half.write_text(source[: len(source) // 2])
    assert caches.python_damage(str(Path(caches.__file__)), len(source)) is None
    assert "does not parse" in caches.python_damage(str(half), half.stat().st_size)


def test_doctor_without_torch_says_so(lab: control_lab.Lab, tmp_path: Path) -> None:
    """--python points at an interpreter without torch: the probe still runs and says torch is missing."""
    venv = tmp_path / "bare"
    base = getattr(sys, "_base_executable", None) or sys.executable
    if subprocess.run([base, "-m", "venv", "--without-pip", str(venv)], capture_output=True).returncode != 0:
        pytest.skip("cannot create a bare venv here")
    bare = venv / "bin" / "python"
    rc, report = _doctor(lab, lab.env(tmp_path / "cache"), "--python", str(bare))
    assert report["torch_installed"] is False
    torch_check = next(c for c in report["checks"] if c["name"] == "torch")
    assert "torch is not installed" in torch_check["summary"]
    assert any(c["name"] == "C++ compiler (Inductor)" for c in report["checks"])


def test_problem_entries_exist_in_the_catalog() -> None:
    catalog = load()
    used = set()
    for path in SRC.glob("*.py"):
        used |= set(re.findall(r'Problem\(\s*"([a-z0-9.-]+)"', path.read_text()))
        used |= set(re.findall(r'entry = "([a-z0-9.-]+)"', path.read_text()))
        used |= set(re.findall(r'\("(cache-[a-z-]+)"', path.read_text()))
    assert len(used) >= 8, used
    assert not [e for e in used if catalog.get(e) is None], used


def test_triton_pairing_table() -> None:
    rows = versions.table()
    minors = {".".join(r.torch.split(".")[:2]) for r in rows}
    assert {f"2.{n}" for n in range(1, 14)} <= minors
    assert all(r.verified in ("metadata", "recalled", "secondary") and r.source for r in rows)
    assert versions.pinned_by_table("2.7.1+cu126").triton == "3.3.1"
    assert versions.pinned_by_table("2.7.0").triton == "3.3.0"
    assert versions.pinned_by_table("2.4.1+cu121").triton == "3.0.0"
    assert versions.pinned_by_metadata(['triton==3.7.1; platform_system == "Linux"']) == ("triton", "3.7.1")
    assert versions.pinned_by_metadata(["filelock", "sympy>=1.13.3"]) is None


# -- real torch -------------------------------------------------------------------------------------------------
@pytest.mark.torch
def test_doctor_names_a_cxx_that_points_nowhere(lab: control_lab.Lab, tmp_path: Path) -> None:
    pytest.importorskip("torch")
    env = lab.env(tmp_path / "cache", CXX="/nonexistent/g++")
    done = lab.denpex("doctor", "--format", "json", env=env, name="doctor (imports torch)")
    report = done.json()
    found = _problems(report, "cxx-compiler-missing")
    assert done.rc == 1 and found, report["problems"]
    assert found[0]["evidence"] == "CXX=/nonexistent/g++ does not exist"
    assert "unset CXX" in found[0]["fix"]
    cxx = next(c for c in report["checks"] if c["name"] == "C++ compiler (Inductor)")
    assert cxx["facts"]["search"] == [None, "/nonexistent/g++"]  # read from the installed torch's config.py
    assert cxx["facts"]["search_from"].startswith("torch/_inductor/config.py:")
    torch_check = next(c for c in report["checks"] if c["name"] == "torch")
    assert torch_check["status"] == "ok" and "2." in torch_check["summary"]
    print(f"\ndoctor with torch import took {report['elapsed_s']:.2f}s (wall {done.seconds:.2f}s)")
    assert report["elapsed_s"] < 60


@pytest.mark.torch
def test_doctor_finds_the_damaged_cache_files(lab: control_lab.Lab) -> None:
    pytest.importorskip("torch")
    cache = lab.corrupt_cache()
    rc, report = _doctor(lab, lab.env(cache), "--no-import")
    py = _problems(report, "cache-corrupt-python-module")
    so = _problems(report, "cache-truncated-shared-object")
    assert rc == 1 and py and so, report["problems"]
    assert py[0]["path"].startswith(str(cache)) and "does not parse" in py[0]["evidence"]
    assert so[0]["path"].endswith(".main.so") and "not an ELF file" in so[0]["evidence"]
    assert f"rm -rf {cache}" in py[0]["fix"]
    # the warm cache it was copied from is whole
    rc, clean = _doctor(lab, lab.env(lab.warm_cache()), "--no-import")
    assert not [p for p in clean["problems"] if p["entry_id"].startswith("cache-") and
                str(p.get("path", "")).startswith(str(lab.warm_cache()))], clean["problems"]


@pytest.mark.torch
def test_diagnose_with_doctor_confirms_the_root_cause(lab: control_lab.Lab, tmp_path: Path) -> None:
    """A real torch 2.13 log of the CXX failure (from the corpus), diagnosed on a machine with the same CXX."""
    pytest.importorskip("torch")
    log = CORPUS / "generated" / "gen-cpp-missing-compiler" / "log.txt"
    env = lab.env(tmp_path / "cache", CXX="/nonexistent/g++")
    done = lab.denpex("diagnose", "--doctor", "--format", "json", str(log), env=env)
    data = done.json()
    assert done.rc == 1 and data["root_cause"]["id"] == "cxx-compiler-missing"
    assert "doctor confirms: CXX=/nonexistent/g++ does not exist" in data["root_cause"]["reason"]
    assert data["root_cause"]["fields"]["doctor"] == "CXX=/nonexistent/g++ does not exist"
    assert any(n.startswith("doctor confirms") for n in data["notes"])
    # the same log on a machine whose compiler works: the doctor says it cannot confirm it
    done = lab.denpex("diagnose", "--doctor", "--format", "json", str(log), env=lab.env(tmp_path / "cache"))
    data = done.json()
    assert "doctor confirms" not in data["root_cause"]["reason"]
    assert any("doctor found nothing on this machine" in n for n in data["notes"])
