"""`denpex diagnose --format html` (issue 15): one offline page, opened in a real headless Chromium.

The browser is Debian's `chromium` (installed by .ci/run), driven by Playwright's Python package with
`executable_path`; Playwright never downloads a browser here. Without one the browser tests skip locally
and fail in CI (CI=true), so a CI run cannot pass without having looked at the page.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from html.parser import HTMLParser
from itertools import groupby
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CORPUS, REPO

GEN = CORPUS / "generated"
MULTI_RANK = GEN / "gen-dist-rank2-keyerror" / "log.txt"  # 4 torchrun ranks, rank 2 raises, 1 and 3 echo
COMPILE = GEN / "gen-cpp-compile-error" / "log.txt"  # torch.compile: Inductor's C++ compile fails
CLEAN = GEN / "gen-dist-success-4rank" / "log.txt"
ARTIFACTS = REPO / "tests" / "artifacts"  # screenshots, ignored by git

SCRIPT_PAYLOAD = "<script>window.__pwned=1</script>"
IMG_PAYLOAD = '"><img src=x onerror="window.__pwned=1">'


def _denpex(*args: str | os.PathLike[str]) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "DENPEX_DEBUG"}
    done = subprocess.run(
        [sys.executable, "-m", "denpex", *map(os.fspath, args)],
        capture_output=True,
        env=env,
        cwd=REPO,
        timeout=120,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    return subprocess.CompletedProcess(done.args, done.returncode, done.stdout.decode(), done.stderr.decode())


def _report(log: Path, tmp_path: Path) -> tuple[Path, dict[str, Any]]:
    """The HTML page written to a file, and the JSON report of the same log to check it against (a corpus
    log is named relative to the repository, as a user in it would, so the screenshots show that)."""
    if log.is_relative_to(REPO):
        log = log.relative_to(REPO)
    done = _denpex("diagnose", "--format", "html", log)
    assert done.returncode in (0, 1, 3), done.stderr
    page = tmp_path / f"{log.parent.name}.html"
    page.write_text(done.stdout, encoding="utf-8")
    data = json.loads(_denpex("diagnose", "--format", "json", log).stdout)
    return page, data


def _hostile_log(tmp_path: Path) -> Path:
    """The real multi-rank KeyError log with hostile text in rank 2's traceback: the KeyError's message (the
    decisive line) becomes an <img onerror> breakout, the frame line above it a <script>, and one more frame
    line control characters (terminal escapes are resolved on reading; these are not)."""
    lines = MULTI_RANK.read_text(encoding="utf-8").splitlines(keepends=True)
    decisive = next(i for i, line in enumerate(lines) if line.startswith("[rank2]: KeyError:"))
    lines[decisive] = f"[rank2]: KeyError: '{IMG_PAYLOAD}'\n"
    lines[decisive - 1 : decisive - 1] = [
        f"[rank2]:     key = '{SCRIPT_PAYLOAD}'\n",
        "[rank2]:     print('\x01\x7f raw bytes')\n",
    ]
    log = tmp_path / "hostile" / "log.txt"
    log.parent.mkdir()
    log.write_text("".join(lines), encoding="utf-8")
    return log


_RANK = re.compile(r"\[rank(\d+)\]")


def _ranks_1024_log(tmp_path: Path) -> Path:
    """A 1,024-rank torchrun log made from the real 4-rank one: every run of consecutive lines with one rank
    prefix is copied once per target rank with the prefix rewritten (rank 2, the failing one, stays alone;
    ranks 0 and 1 go to every rank 0 and 1 mod 4; rank 3 to every other rank), the rest kept as it is."""
    world = 1024
    targets = {
        0: [t for t in range(world) if t % 4 == 0],
        1: [t for t in range(world) if t % 4 == 1],
        2: [2],
        3: [t for t in range(world) if t % 4 in (2, 3) and t != 2],
    }
    out: list[str] = []
    lines = MULTI_RANK.read_text(encoding="utf-8").splitlines(keepends=True)
    for rank, run in groupby(lines, key=lambda line: int(m.group(1)) if (m := _RANK.search(line)) else None):
        block = list(run)
        if rank is None:
            out += block
            continue
        for target in targets[rank]:
            out += [_RANK.sub(f"[rank{target}]", line, count=1) for line in block]
    log = tmp_path / "ranks-1024" / "log.txt"
    log.parent.mkdir()
    log.write_text("".join(out), encoding="utf-8")
    return log


# --- without a browser ---------------------------------------------------------------------------------------


class _Tags(HTMLParser):
    """Every start tag and its attributes, as a browser's tokenizer sees them."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


def test_the_page_escapes_hostile_log_text_and_links_to_nothing(tmp_path):
    log = _hostile_log(tmp_path)
    done = _denpex("diagnose", "--format", "html", log)
    assert done.returncode == 1, done.stderr
    page = done.stdout
    assert "window.__pwned" in page  # the hostile lines are in the report ...
    assert SCRIPT_PAYLOAD not in page and IMG_PAYLOAD not in page  # ... never as markup
    assert "&lt;script&gt;window.__pwned=1&lt;/script&gt;" in page
    assert "&#34;&gt;&lt;img src=x onerror=&#34;window.__pwned=1&#34;&gt;" in page
    assert "\x01" not in page and "\\x01\\x7f raw bytes" in page  # control characters shown as escapes
    parser = _Tags()
    parser.feed(page)
    tags = parser.tags
    assert not [t for t, _ in tags if t in ("img", "link", "iframe", "object", "embed", "base", "form")]
    scripts = [attrs for t, attrs in tags if t == "script"]
    assert len(scripts) == 1 and "src" not in scripts[0]
    for tag, attrs in tags:
        for name, value in attrs.items():
            assert not name.startswith("on"), (tag, name)  # no inline event handler anywhere
            if name in ("href", "src", "action", "xlink:href", "srcset", "poster"):
                assert value is not None and value.startswith("#"), (tag, name, value)  # in-page links only
    assert "url(" not in page and "@import" not in page and not re.search(r"<script[^>]*\ssrc=", page)


def test_a_clean_report_renders_and_says_so():
    done = _denpex("diagnose", "--format", "html", CLEAN)
    assert done.returncode == 0, done.stderr
    assert "No failure or warning found" in done.stdout and done.stdout.rstrip().endswith("</html>")


def test_ranks_without_timestamps_are_placed_by_line_number(tmp_path):
    log = tmp_path / "no-time.log"  # the real multi-rank log with its timestamps cut off
    log.write_text(re.sub(r"(?m)^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d+ ", "", MULTI_RANK.read_text()), encoding="utf-8")
    page = _denpex("diagnose", "--format", "html", log).stdout
    assert "x axis: line number within each rank" in page
    assert page.count('<g class="row') == 4 and '<g class="row init" id="rank-2"' in page


def test_with_doctor_what_the_probe_found_has_its_own_section():
    """A C++ toolchain root cause always gets a doctor note (it confirms, finds a related problem, or finds
    nothing here that explains it), whatever this machine has."""
    from markupsafe import escape  # Jinja2's own escaping

    log = GEN / "gen-cpp-missing-compiler" / "log.txt"
    report = json.loads(_denpex("diagnose", "--doctor", "--format", "json", log).stdout)
    doctor = [n for n in report["notes"] if n.startswith("doctor")]
    checks = report["environment"]  # every check the probe made, as facts of this machine
    assert checks and {"toolchain", "python"} <= {c["section"] for c in checks}
    page = _denpex("diagnose", "--doctor", "--format", "html", log).stdout
    assert doctor and 'id="environment"' in page
    section = page.split('id="environment"', 1)[1].split("</section>", 1)[0]
    assert all(str(escape(n)) in section for n in doctor), (doctor, section)
    assert all(f"<td>{escape(c['name'])}</td>" in section for c in checks)  # (summaries hold timings: another run)
    assert json.loads(_denpex("diagnose", "--format", "json", log).stdout)["environment"] is None


def test_the_template_is_autoescaped_and_never_marks_text_safe():
    from denpex.report import html

    assert html._template().environment.autoescape is True
    assert "|safe" not in html._TEMPLATES.joinpath("report.html.j2").read_text().replace(" ", "")


# --- in Chromium ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    executable = shutil.which("chromium")
    reason = None
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        reason = "playwright is not installed (pip install -e '.[test]')"
    if reason is None and executable is None:
        reason = "no chromium on PATH (apt-get install chromium; .ci/run does it)"
    if reason is not None:
        if os.environ.get("CI"):
            pytest.fail(f"browser tests cannot run in CI: {reason}")
        pytest.skip(reason)
    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=executable)
        yield chromium
        chromium.close()


class _Page:
    """A page opened in its own context, with everything the browser said and asked for kept."""

    def __init__(self, browser: Any, path: Path, clipboard: bool = False) -> None:
        self.context = browser.new_context(viewport={"width": 1280, "height": 800})
        if clipboard:
            self.context.grant_permissions(["clipboard-read", "clipboard-write"])
        self.page = self.context.new_page()
        self.console: list[str] = []
        self.errors: list[str] = []
        self.requests: list[str] = []
        self.failed: list[str] = []
        self.page.on("console", lambda m: self.console.append(f"{m.type}: {m.text}"))
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("request", lambda r: self.requests.append(r.url))
        self.page.on("requestfailed", lambda r: self.failed.append(r.url))
        self.url = path.resolve().as_uri()

    def open(self) -> Any:
        self.page.goto(self.url, wait_until="load")
        return self.page

    def shot(self, name: str, full_page: bool = False) -> None:
        ARTIFACTS.mkdir(exist_ok=True)
        self.page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=full_page)

    def close(self) -> None:
        self.context.close()


@pytest.mark.parametrize("log", [MULTI_RANK, COMPILE], ids=["multi-rank", "torch-compile"])
def test_the_page_loads_offline_with_no_console_error_and_the_root_cause_above_the_fold(browser, tmp_path, log):
    path, data = _report(log, tmp_path)
    view = _Page(browser, path)
    page = view.open()
    view.shot(f"html-{log.parent.name}")
    view.shot(f"html-{log.parent.name}-full", full_page=True)
    assert not view.errors and not [m for m in view.console if m.startswith(("error", "warning"))], view.console
    assert not view.failed
    assert view.requests and all(url.startswith(("file:", "data:")) for url in view.requests), view.requests
    root = data["root_cause"]
    for selector, text in (("#root-id", root["id"]), ("#decisive", root["evidence"]["text"])):
        element = page.locator(selector)
        assert element.is_visible(), selector
        box = element.bounding_box()
        assert box is not None and box["y"] >= 0 and box["y"] + box["height"] <= 800, (selector, box)
        assert text in element.inner_text(), (selector, text)
    assert page.locator("#decisive").inner_text().startswith(str(root["evidence"]["line"]))
    view.close()


@pytest.mark.parametrize("way", ["clipboard-api", "execCommand-fallback"])
def test_the_copy_button_puts_the_verify_command_on_the_clipboard(browser, tmp_path, way):
    path, data = _report(COMPILE, tmp_path)
    view = _Page(browser, path, clipboard=True)
    if way == "execCommand-fallback":  # a browser without the async clipboard: the selected-textarea path
        view.page.add_init_script("Object.defineProperty(Navigator.prototype, 'clipboard', {get: () => undefined})")
    page = view.open()
    page.click("#copy-verify")
    page.wait_for_function("document.getElementById('copy-verify').textContent === 'Copied'", timeout=5000)
    reader = view.context.new_page()  # a page of the same origin whose clipboard API is intact
    reader.goto(view.url)
    assert reader.evaluate("navigator.clipboard.readText()") == data["root_cause"]["verify"]
    assert not view.errors
    view.close()


def test_hostile_log_text_shows_as_text_and_runs_nothing(browser, tmp_path):
    path, data = _report(_hostile_log(tmp_path), tmp_path)
    assert data["root_cause"]["evidence"]["text"] == f"[rank2]: KeyError: '{IMG_PAYLOAD}'"  # the fixture does it
    assert any(SCRIPT_PAYLOAD in ln["text"] for ln in data["root_cause"]["context_before"])
    view = _Page(browser, path)
    page = view.open()
    view.shot("html-hostile")
    assert page.evaluate("typeof window.__pwned") == "undefined"
    assert page.evaluate("document.images.length") == 0
    assert page.evaluate("document.scripts.length") == 1
    assert IMG_PAYLOAD in page.locator("#decisive").inner_text()
    line = page.locator("#context tr", has_text=SCRIPT_PAYLOAD)
    assert line.count() == 1 and line.is_visible()
    assert not view.errors and not view.failed
    view.close()


def test_a_1024_rank_timeline_loads_with_every_rank(browser, tmp_path):
    """The 1,024-rank log is the real 4-rank torchrun log with its rank blocks replicated for ranks 0..1023
    (see _ranks_1024_log). How fast it loads (issue 15: under two seconds) is measured by
    benchmarks/bench_html.py, not here: a timed test flakes on a loaded machine; this one checks the page."""
    path, data = _report(_ranks_1024_log(tmp_path), tmp_path)
    assert len(data["ranks"]) == 1024 and data["root_cause"]["rank"] == 2
    view = _Page(browser, path)
    page = view.open()
    view.shot("html-1024-ranks")
    assert page.evaluate("performance.timing.loadEventEnd") > 0  # the load event ran to its end
    assert page.locator("#timeline g.row").count() == 1024
    assert page.locator("#timeline g.row.init").get_attribute("id") == "rank-2"
    echoes = page.locator('#timeline a[href="#collateral-peer-connection-lost"]').count()
    assert echoes == len(next(g for g in data["collateral"] if g["id"] == "peer-connection-lost")["ranks"])
    assert page.evaluate("document.getElementsByTagName('*').length") < 10 * 1024  # a few nodes per rank
    box = page.locator(".timeline").bounding_box()
    assert box is not None and box["height"] <= 0.7 * 800 + 2  # scrolls inside its box, not the page
    mark = page.locator("#timeline a").first  # an echo's mark leads to its collateral group
    href = mark.get_attribute("href")
    assert href is not None and href.startswith("#collateral-")
    mark.click()
    assert page.evaluate("location.hash") == href and page.locator(href).count() == 1
    assert not view.errors and not view.failed
    view.close()
