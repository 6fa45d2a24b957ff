"""Bad input through the real CLI, in a subprocess: one line on stderr, exit code 2, no traceback,
and the user's files left exactly as they were, with nothing written next to them."""

from __future__ import annotations

import bz2
import gzip
import hashlib
import lzma
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import zstandard

from tests.conftest import CORPUS, REPO

LOG = CORPUS / "generated" / "gen-lowering-adaptive-maxpool-long" / "log.txt"
BIG = LOG.read_bytes() * 40  # ~200 KB: corruption lands past the first bytes that are sniffed
IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0


def run_cli(*args: str, stdin: bytes | None = None, prefix: list[str] | None = None, cwd: Path | None = None):
    env = {k: v for k, v in os.environ.items() if k != "DENPEX_DEBUG"}
    return subprocess.run(
        [*(prefix or []), sys.executable, "-m", "denpex", *args],
        input=stdin,
        stdin=None if stdin is not None else subprocess.DEVNULL,
        capture_output=True,
        env=env,
        cwd=cwd or REPO,
        timeout=120,
    )


def snapshot(folder: Path) -> dict[str, tuple[int, int, str]]:
    """Every entry under folder with its mode, mtime and content hash."""
    state = {}
    for path in sorted(folder.rglob("*")):
        info = path.lstat()
        digest = ""
        if path.is_file() and not path.is_symlink() and info.st_mode & 0o444:
            try:
                digest = hashlib.sha256(path.read_bytes()).hexdigest()
            except PermissionError:
                digest = "unreadable"
        state[os.fspath(path.relative_to(folder))] = (info.st_mode, info.st_mtime_ns, digest)
    return state


def assert_one_line_error(result, *, must_contain: str = "") -> str:
    stderr = result.stderr.decode("utf-8", "replace")
    stdout = result.stdout.decode("utf-8", "replace")
    assert result.returncode == 2, (result.returncode, stderr, stdout)
    assert "Traceback" not in stderr and "Traceback" not in stdout
    lines = stderr.splitlines()
    assert len(lines) == 1, stderr
    assert lines[0].startswith("denpex: error: "), stderr
    assert must_contain.lower() in lines[0].lower(), lines[0]
    assert stdout == "", stdout
    return lines[0]


def check_bad_input(folder: Path, args: list[str], must_contain: str, **kwargs) -> str:
    before = snapshot(folder)
    result = run_cli(*args, **kwargs)
    line = assert_one_line_error(result, must_contain=must_contain)
    assert snapshot(folder) == before, "input files changed or something was written next to them"
    return line


# -- the cases -------------------------------------------------------------------------------------


def test_missing_path(tmp_path):
    check_bad_input(tmp_path, ["diagnose", os.fspath(tmp_path / "no-such.log")], "no such file")


def test_missing_path_among_good_ones(tmp_path):
    good = tmp_path / "good.log"
    good.write_bytes(LOG.read_bytes())
    check_bad_input(tmp_path, ["diagnose", os.fspath(good), os.fspath(tmp_path / "gone.log")], "gone.log")


def test_unreadable_file_when_not_root(tmp_path):
    if IS_ROOT:
        pytest.skip("root reads a chmod 000 file; see the setpriv variant")
    path = tmp_path / "secret.log"
    path.write_bytes(LOG.read_bytes())
    path.chmod(0)
    try:
        check_bad_input(tmp_path, ["diagnose", os.fspath(path)], "permission denied")
    finally:
        path.chmod(0o644)


def test_unreadable_file_as_root_without_dac_override(tmp_path):
    """Root ignores file modes; drop CAP_DAC_OVERRIDE/CAP_DAC_READ_SEARCH so chmod 000 means something."""
    setpriv = shutil.which("setpriv")
    if not IS_ROOT or setpriv is None:
        pytest.skip("needs root and util-linux setpriv")
    prefix = [setpriv, "--bounding-set", "-dac_override,-dac_read_search", "--"]
    probe = subprocess.run([*prefix, sys.executable, "-c", "import denpex"], capture_output=True, cwd=REPO)
    if probe.returncode != 0:
        pytest.skip(f"cannot drop capabilities here: {probe.stderr[-200:]!r}")
    path = tmp_path / "secret.log"
    path.write_bytes(LOG.read_bytes())
    path.chmod(0)
    try:
        check_bad_input(tmp_path, ["diagnose", os.fspath(path)], "permission denied", prefix=prefix)
    finally:
        path.chmod(0o644)


@pytest.mark.skipif(not Path("/proc/self/mem").exists(), reason="Linux /proc only")
def test_file_whose_read_fails():
    # open() succeeds, read() fails with EIO: the read error path, whoever runs the tests
    line = assert_one_line_error(run_cli("diagnose", "/proc/self/mem"))
    assert "cannot read /proc/self/mem" in line


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom"])
def test_endless_binary_device(device):
    if not Path(device).exists():
        pytest.skip(f"no {device}")
    assert_one_line_error(run_cli("diagnose", device), must_contain="binary")


def test_binary_file(tmp_path):
    path = tmp_path / "model.log"
    path.write_bytes(b"\x7fELF\x02\x01\x01\x00" + os.urandom(4096) + bytes(64))
    check_bad_input(tmp_path, ["diagnose", os.fspath(path)], "binary")


def test_empty_file(tmp_path):
    path = tmp_path / "empty.log"
    path.write_bytes(b"")
    check_bad_input(tmp_path, ["diagnose", os.fspath(path)], "empty input")


def test_whitespace_only_file(tmp_path):
    path = tmp_path / "blank.log"
    path.write_bytes(b"\n\n   \r\n\t\n")
    check_bad_input(tmp_path, ["diagnose", os.fspath(path)], "empty input")


def test_directory_with_no_logs(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "weights.pt").write_bytes(b"PK\x03\x04" + bytes(100))
    (tmp_path / "config.yaml").write_text("lr: 0.1\n")
    check_bad_input(tmp_path, ["diagnose", os.fspath(tmp_path)], "no log files in directory")


def test_empty_directory(tmp_path):
    check_bad_input(tmp_path, ["diagnose", os.fspath(tmp_path)], "no log files in directory")


def test_directory_with_only_empty_and_binary_logs(tmp_path):
    (tmp_path / "rank0.log").write_bytes(b"")
    (tmp_path / "rank1.log").write_bytes(b"\x00\x01\x02" * 100)
    check_bad_input(tmp_path, ["diagnose", os.fspath(tmp_path)], "no log files in directory")


def test_truncated_gz_cut_in_its_header(tmp_path):
    path = tmp_path / "log.txt.gz"
    path.write_bytes(gzip.compress(BIG)[:5])
    check_bad_input(tmp_path, ["diagnose", os.fspath(path)], "log.txt.gz")


def test_corrupt_zst(tmp_path):
    packed = bytearray(zstandard.ZstdCompressor(write_checksum=True).compress(BIG))
    for offset in range(len(packed) // 2, len(packed) // 2 + 8):
        packed[offset] ^= 0xA5
    path = tmp_path / "log.txt.zst"
    path.write_bytes(bytes(packed))
    check_bad_input(tmp_path, ["diagnose", os.fspath(path)], "log.txt.zst")


def test_truncated_zst(tmp_path):  # zstandard's stream reader alone would end quietly here
    packed = zstandard.ZstdCompressor().compress(BIG)
    path = tmp_path / "log.txt.zst"
    path.write_bytes(packed[: len(packed) // 2])
    check_bad_input(tmp_path, ["diagnose", os.fspath(path)], "truncated")


def test_zst_that_is_not_zstd(tmp_path):
    path = tmp_path / "log.txt.zst"
    path.write_bytes(LOG.read_bytes())
    check_bad_input(tmp_path, ["diagnose", os.fspath(path)], "not a valid zstd file")


@pytest.mark.parametrize(("suffix", "compress"), [(".bz2", bz2.compress), (".xz", lzma.compress)])
def test_corrupt_bz2_and_xz(tmp_path, suffix, compress):
    packed = bytearray(compress(BIG))
    for offset in range(len(packed) // 2, len(packed) // 2 + 8):
        packed[offset] ^= 0xA5
    path = tmp_path / f"log.txt{suffix}"
    path.write_bytes(bytes(packed))
    check_bad_input(tmp_path, ["diagnose", os.fspath(path)], f"log.txt{suffix}")


def test_no_arguments_at_all(tmp_path):
    assert_one_line_error(run_cli(cwd=tmp_path), must_contain="no command")


def test_diagnose_without_input(tmp_path):
    check_bad_input(tmp_path, ["diagnose"], "no input", cwd=tmp_path)


def test_empty_stdin(tmp_path):
    check_bad_input(tmp_path, ["diagnose", "-"], "empty input", stdin=b"")


def test_binary_stdin(tmp_path):
    check_bad_input(tmp_path, ["diagnose", "-"], "binary", stdin=b"\x00\x01garbage" * 50)


def test_file_name_too_long(tmp_path):
    check_bad_input(tmp_path, ["diagnose", "x" * 5000], "cannot read", cwd=tmp_path)


def test_unknown_option_is_one_line():
    assert_one_line_error(run_cli("diagnose", "--no-such-option", os.fspath(LOG)), must_contain="no such option")


def test_bad_choice_is_one_line():
    assert_one_line_error(run_cli("diagnose", "--format", "xml", os.fspath(LOG)), must_contain="--format")


def test_unknown_command_is_one_line():
    assert_one_line_error(run_cli("diagnoze", os.fspath(LOG)), must_contain="no such command")


def test_good_input_is_left_alone_too(tmp_path):
    """The happy path must not write next to the logs either (no caches, no reports)."""
    (tmp_path / "rank0.log").write_bytes(LOG.read_bytes())
    (tmp_path / "rank1.log.gz").write_bytes(gzip.compress(LOG.read_bytes()))
    before = snapshot(tmp_path)
    result = run_cli("diagnose", "--format", "json", os.fspath(tmp_path))
    assert result.returncode == 1, result.stderr
    assert result.stderr == b""
    assert snapshot(tmp_path) == before


def test_the_api_refuses_a_path_that_does_not_exist_and_takes_text_explicitly():
    # issue 14, item 9: a mistyped path was diagnosed as a one-line log and came back clean
    import denpex
    from denpex.errors import DenpexInputError

    with pytest.raises(DenpexInputError, match="no such file or directory: /nonexistent/train.log"):
        denpex.diagnose("/nonexistent/train.log")
    with pytest.raises(DenpexInputError):
        denpex.diagnose("rank3.log.gz")
    line = "RuntimeError: CUDA error: an illegal memory access was encountered"
    assert denpex.diagnose(text=line).root_cause.entry_id == denpex.diagnose(line).root_cause.entry_id
    assert denpex.diagnose(text="/nonexistent/train.log").verdict.value == "clean"  # text is text
    with pytest.raises(TypeError):
        denpex.diagnose()


def test_an_unreadable_or_empty_input_among_several_is_left_out_with_a_note(tmp_path):
    # issue 14, item 5: torchrun leaves 0-byte stdout.log files beside the stderr.log that holds the failure
    import json
    import subprocess
    import sys

    from tests.conftest import CORPUS

    (tmp_path / "0").mkdir()
    (tmp_path / "2").mkdir()
    (tmp_path / "0" / "stdout.log").write_bytes(b"")
    (tmp_path / "2" / "stdout.log").write_bytes(b"")
    real = CORPUS / "generated" / "gen-dist-rank2-keyerror" / "log.txt"
    (tmp_path / "2" / "stderr.log").write_bytes(real.read_bytes())
    files = sorted(str(p) for p in tmp_path.rglob("*.log"))
    for fmt in ("json", "markdown", "terminal"):
        done = subprocess.run([sys.executable, "-m", "denpex", "diagnose", "--format", fmt, *files],
                              capture_output=True, text=True, timeout=120, check=False)
        assert done.returncode == 1, done.stderr
        assert "left out" in done.stdout + done.stderr and "0/stdout.log" in done.stdout + done.stderr
        if fmt == "json":
            assert json.loads(done.stdout)["root_cause"]["rank"] == 2
    empty = [f for f in files if f.endswith("stdout.log")]
    only_empty = subprocess.run([sys.executable, "-m", "denpex", "diagnose", *empty],
                                capture_output=True, text=True, timeout=120, check=False)
    assert only_empty.returncode == 2 and only_empty.stderr.count("\n") == 1  # nothing readable: one line, exit 2
