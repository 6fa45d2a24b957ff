"""Reports as new users read them (issue #15): 80 and 200 columns, error text in the rank table, full catalog
ids, Markdown rank and collateral tables, a verify command that runs as shown, GB ids, exit codes in --help."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys

import pytest
from rich.cells import cell_len
from rich.console import Console

from denpex.catalog import load
from denpex.exit_codes import EXIT_CODES
from denpex.report.shorten import common_root, shortened
from tests.conftest import CORPUS, REPO

GEN = (CORPUS / "generated").relative_to(REPO)  # as a user types them, from the repository root
LOGDIR = GEN / "gen-dist-rank2-keyerror-logdir"  # 4 ranks; log.txt's interleaved lines wrap at 80 columns
REFILED = GEN / "gen-cache-corrupt-isa-probe-so" / "log.txt"  # a compiler error re-filed by a refinement
GUTTER = re.compile(r"^ *\d+ [│▶] ")
CONTINUATION = re.compile(r"^ +│ ")


def run(*args: object, columns: int = 120, stdin: bytes | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "DENPEX_DEBUG"}
    env["COLUMNS"] = str(columns)
    done = subprocess.run(
        [sys.executable, "-m", "denpex", *map(str, args)],
        input=stdin,
        stdin=None if stdin is not None else subprocess.DEVNULL,
        capture_output=True,
        env=env,
        cwd=REPO,
        timeout=120,
    )
    return subprocess.CompletedProcess(done.args, done.returncode, done.stdout.decode(), done.stderr.decode())


def _panel_body(out: str) -> list[str]:
    """The root-cause panel's lines, without its borders."""
    lines = out.splitlines()
    top = next(i for i, ln in enumerate(lines) if ln.startswith("╭"))
    bottom = next(i for i, ln in enumerate(lines) if ln.startswith("╰"))
    return [ln[2:-1].rstrip() for ln in lines[top + 1 : bottom]]


def test_terminal_report_at_80_columns_fits_and_wrapped_log_lines_keep_the_gutter():
    done = run("diagnose", LOGDIR / "log.txt", columns=80)
    assert done.returncode == 1, done.stderr
    too_wide = [ln for ln in done.stdout.splitlines() if cell_len(ln) > 80]
    assert not too_wide, too_wide
    body = _panel_body(done.stdout)
    start = next(i for i, ln in enumerate(body) if GUTTER.match(ln))
    context = body[start:]
    assert all(GUTTER.match(ln) or CONTINUATION.match(ln) for ln in context), context
    assert sum(bool(CONTINUATION.match(ln)) for ln in context) >= 5  # the interleaved lines did wrap
    assert any(ln.lstrip().startswith("22 ▶ ") and "KeyError: 'sample_02_00003'" in ln for ln in context)
    # labels hang: the wrapped "why" goes on under itself, not under the label
    why = next(i for i, ln in enumerate(body) if ln.startswith("why "))
    assert body[why + 1].startswith(" " * 11) and body[why + 1].strip()


def test_rank_table_shows_error_text_and_cuts_with_an_ellipsis():
    done = run("diagnose", LOGDIR / "log.txt", columns=200)
    assert done.returncode == 1, done.stderr
    assert all(cell_len(ln) <= 200 for ln in done.stdout.splitlines())
    ranks = done.stdout.split("\nRanks")[1].split("Other findings")[0]
    rows = {int(m[1]): ln for ln in ranks.splitlines() if (m := re.match(r"^│ +(\d+) │", ln))}
    assert sorted(rows) == [0, 1, 2, 3]
    assert "KeyError: 'sample_02_00003'" in rows[2]
    assert "RuntimeError: [/__w/pytorch" in rows[1]  # the error itself, not the file:line it sits on
    assert "tests/corpus" not in ranks
    healthy = [ln.rstrip().rstrip("│").rstrip() for ln in rows.values()]
    assert any(cell.endswith("…") for cell in healthy)  # long last-healthy lines are cut with "…", not chopped
    assert "log.txt:22 (rank 2)" in done.stdout  # the path relative to the inputs' root


def test_terminal_report_rendered_at_80_and_200_columns_on_a_console():
    from denpex.api import diagnose_sources
    from denpex.ingest import resolve
    from denpex.report.json_schema import build
    from denpex.report.terminal import render

    catalog = load()
    report = build(diagnose_sources(resolve([str(LOGDIR / "ranks")]), catalog=catalog), catalog)
    for width in (80, 200):
        console = Console(width=width, record=True, file=io.StringIO())
        render(report, console)
        text = console.export_text()
        assert max(cell_len(ln) for ln in text.splitlines()) <= width
        assert "rank2_stderr.log:10 (rank 2)" in text
        assert "KeyError: 'sample_02_00003'" in text.split("Ranks")[-1]


def test_paths_are_shortened_from_the_left_relative_to_the_common_root():
    files = ["/scratch/job/logs/rank0/stderr.log", "/scratch/job/logs/rank3/stderr.log"]
    root = common_root(files)
    assert root == "/scratch/job/logs"
    assert shortened(files[1], root) == "rank3/stderr.log"
    long = "/a/very/long/folder/name/that/goes/on/and/on/rank3/stderr.log"
    assert shortened(long, "", 20) == "…/rank3/stderr.log"
    assert len(shortened("x" * 80, "", 20)) == 20
    assert common_root(["<stdin>"]) == ""


def test_the_why_line_quotes_log_text_not_a_regex():
    done = run("diagnose", REFILED)
    assert done.returncode == 1, done.stderr
    assert "re-filed from cpp-compiler-error-line" in done.stdout
    assert "|_load_from_cache|" not in done.stdout and "the log shows /" not in done.stdout
    reason = json.loads(run("diagnose", "--format", "json", REFILED).stdout)["root_cause"]["reason"]
    assert re.fullmatch(
        r"re-filed from cpp-compiler-error-line \(C/C\+\+ compiler error\): the log shows "
        r"“[^”]*cache_hit_post_compile[^”]*”",
        reason,
    ), reason


@pytest.mark.parametrize("columns", [80, 120])
def test_catalog_shows_every_id_in_full(columns):
    done = run("catalog", columns=columns)
    assert done.returncode == 0, done.stderr
    assert all(cell_len(ln) <= columns for ln in done.stdout.splitlines())
    shown = {m[1] for ln in done.stdout.splitlines() if (m := re.match(r"^│ (\S+) +│", ln))}
    ids = {e.id for e in load().entries}
    assert ids <= shown, sorted(ids - shown)[:5]


def test_markdown_has_rank_table_collateral_and_an_inputs_summary():
    done = run("diagnose", "--format", "markdown", LOGDIR)
    assert done.returncode == 1, done.stderr
    out = done.stdout
    summary = re.search(
        r"lines from (\d+) files under `tests/corpus/generated/gen-dist-rank2-keyerror-logdir/`: "
        r"`log.txt`, `ranks/\S+`, `ranks/\S+` and (\d+) more$",
        out,
        re.M,
    )
    assert summary and int(summary[2]) == int(summary[1]) - 3
    assert "### Collateral (echoes of the root cause)" in out
    assert re.search(
        r"^\| Lost the connection .*\(`peer-connection-lost`\) \| 2 \(1,3\) \| 4 \| `log.txt:45` \|$", out, re.M
    )
    table = out.split("### Ranks")[1].split("###")[0]
    assert "| **2** (initiating) | 1 | 30 | `KeyError: 'sample_02_00003'` |" in table
    assert len(re.findall(r"^\| \S", table, re.M)) == 1 + 4  # header and 4 ranks


def test_markdown_rank_table_escapes_a_hostile_error(tmp_path):
    hostile = "RuntimeError: a | b `tick` <img src=x onerror=alert(1)> | c"
    (tmp_path / "rank0.log").write_text("step 1 loss 0.5\nstep 2 loss 0.4\n")
    (tmp_path / "rank1.log").write_text(
        "step 1 loss 0.5\nTraceback (most recent call last):\n"
        '  File "/home/u/train.py", line 3, in <module>\n    main()\n' + hostile + "\n"
    )
    done = run("diagnose", "--format", "markdown", tmp_path)
    assert done.returncode == 1, done.stderr
    table = done.stdout.split("### Ranks")[1].split("###")[0]
    row = next(ln for ln in table.splitlines() if ln.startswith("| ") and "RuntimeError" in ln)
    assert len(re.findall(r"(?<!\\)\|", row)) == 6  # five cells: the log's `|` cannot open another
    outside = re.sub(r"(`+).*?\1", "", row.replace("\\|", ""))
    assert "<img" not in outside and "RuntimeError" not in outside


def test_stdin_diagnosis_prints_no_unrunnable_verify_command():
    log = (LOGDIR / "log.txt").read_bytes()
    done = run("diagnose", "-", stdin=log, columns=100)
    assert done.returncode == 1, done.stderr
    assert "<stdin>' --" not in done.stdout and "--log '<stdin>'" not in done.stdout
    assert "save it to failed.log first, then run:" in done.stdout
    assert "denpex verify --log failed.log -- <your command>" in done.stdout
    as_json = json.loads(run("diagnose", "--format", "json", "-", stdin=log).stdout)["root_cause"]
    assert as_json["verify"] == "denpex verify --log failed.log -- <your command>"
    assert as_json["verify_setup"].startswith("the log was read from <stdin>")
    from_file = json.loads(run("diagnose", "--format", "json", LOGDIR / "log.txt").stdout)["root_cause"]
    assert from_file["verify_setup"] is None and "--log tests/corpus/" in from_file["verify"]


def test_explain_answers_a_graph_break_id_in_any_case():
    carriers = sorted(e.id for e in load().entries if "GB0170" in e.graph_break_ids)
    assert carriers
    for name in ("GB0170", "gb0170"):
        done = run("explain", name)
        assert done.returncode == 0, done.stderr
        assert all(entry in done.stdout for entry in carriers)
    as_json = json.loads(run("explain", "GB0170", "--format", "json").stdout)
    assert [e["id"] for e in as_json] == carriers


def test_explain_an_unknown_graph_break_id_is_one_line_exit_2():
    done = run("explain", "GB9999")
    assert done.returncode == 2 and done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("denpex: error: no catalog entry carries graph-break id GB9999")


def test_explain_and_diagnose_use_one_placeholder_for_the_command():
    done = run("explain", "uncaught-user-exception", "--format", "markdown")
    assert "{command}" not in done.stdout and "denpex verify --log failed.log -- <your command>" in done.stdout
    assert "-- <your command>" in run("diagnose", LOGDIR / "log.txt").stdout


def _help(*command: str) -> str:
    done = run(*command, "--help", columns=100)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_every_commands_help_lists_its_exit_codes():
    from denpex.cli import cli

    commands = cli.list_commands(None)  # type: ignore[arg-type]
    assert set(EXIT_CODES) == {"denpex", *commands}  # a new command needs its row
    for name in ["denpex", *commands]:
        text = _help() if name == "denpex" else _help(name)
        block = text.split("Exit codes:")[1]
        for code, meaning in EXIT_CODES[name]:
            assert re.search(rf"^ +{re.escape(str(code))} +{re.escape(meaning[:30])}", block, re.M), (name, code)


def test_exit_code_table_agrees_with_the_commands():
    from denpex.control import bisect, verify
    from denpex.errors import ExitCode

    codes = {name: {code for code, _ in rows} for name, rows in EXIT_CODES.items()}
    assert {bisect.EXIT_OWNER, bisect.EXIT_INCONCLUSIVE, bisect.EXIT_NOT_REPRODUCED} <= codes["bisect"]
    assert {verify.EXIT_VERIFIED, verify.EXIT_NOT_VERIFIED} <= codes["verify"]
    assert {int(c) for c in ExitCode} <= codes["denpex"]
