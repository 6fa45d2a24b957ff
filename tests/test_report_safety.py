"""What a report shows of a log is safe and bounded (issue 14, items 8 and 10)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from denpex.report.display import visible
from denpex.report.json_schema import MAX_SHOWN_LINE


def _denpex(*args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "denpex", *args], capture_output=True, timeout=120, check=False)


HOSTILE = (b"ok line\n\x1b]2;pwned\x07\x1b[2J\x1b#8\x1bP1$r\x1b\\ RuntimeError: CUDA error: an illegal memory access "
           b"was encountered \xc2\x9b31m \xc2\x9d0;title\x07\n")


@pytest.mark.parametrize("fmt", ["terminal", "markdown", "html"])
def test_no_control_character_of_a_log_or_a_file_name_reaches_the_output(tmp_path, fmt):
    log = tmp_path / "run\x1b]2;title\x07.log"
    log.write_bytes(HOSTILE)
    done = _denpex("diagnose", "--format", fmt, str(log))
    assert done.returncode == 1, done.stderr
    out = done.stdout + done.stderr
    assert b"\x1b" not in out and b"\x07" not in out
    assert b"\xc2\x9b" not in out and b"\xc2\x9d" not in out  # C1 controls (CSI, OSC) in UTF-8
    assert b"illegal memory access" in out and b"\\x1b" in out  # shown, escaped


def test_visible_keeps_text_and_tabs():
    assert visible("a\tb") == "a\tb"
    assert visible("a\x1b[2Jb\x9b") == "a\\x1b[2Jb\\x9b"


def test_a_huge_error_line_is_cut_in_the_report_with_a_marker(tmp_path):
    log = tmp_path / "long.log"
    log.write_text("ok\nRuntimeError: CUDA error: an illegal memory access was encountered " + "x" * 3_000_000 + "\n")
    done = _denpex("diagnose", "--format", "json", str(log))
    report = json.loads(done.stdout)
    text = report["root_cause"]["evidence"]["text"]
    assert text.startswith("RuntimeError: CUDA error: an illegal memory access")
    assert len(text) < MAX_SHOWN_LINE + 100 and text.endswith("more characters cut]")
    assert len(done.stdout) < 20 * MAX_SHOWN_LINE


def _outside_code(markdown: str) -> str:
    """The text a renderer would treat as Markdown: fenced blocks and code spans removed."""
    import re

    kept, fenced = [], None
    for line in markdown.splitlines():
        marker = re.match(r"^(`{3,})", line)
        if fenced is None and marker:
            fenced = marker.group(1)
        elif fenced is not None and line.strip() == fenced:
            fenced = None
        elif fenced is None:
            kept.append(re.sub(r"(`+)(.+?)\1", "", line))
    return "\n".join(kept)


def test_markdown_holds_hostile_values_as_data(tmp_path):
    # issue 14, item 11: a backtick in a captured frame path, a file name with a newline and a fence, raw HTML
    from denpex.report.markdown import code, fence

    folder = tmp_path / "x\n```\n<img src=x onerror=alert(1)>"
    folder.mkdir()
    log = folder / "train.log"
    log.write_text('Traceback (most recent call last):\n  File "/home/u/`evil`/train.py", line 3, in <module>\n'
                   "    main()\nKeyError: '<img src=x onerror=alert(1)>'\n")
    done = _denpex("diagnose", "--format", "markdown", str(log))
    out = done.stdout.decode()
    assert done.returncode == 1, done.stderr
    assert _outside_code(out).count("<img") == 0  # HTML only inside code, where it renders as text
    assert [line for line in out.splitlines() if line.startswith("```")] == ["````text", "````", "````sh", "````"]
    assert "``/home/u/`evil`/train.py``" in out  # a span longer than the backticks inside
    assert code("a``b") == "```a``b```" and fence(["````x"])[0] == "`````text"
