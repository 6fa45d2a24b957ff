"""Catalog reference pages, generated from the entry files (`python -m denpex.catalog.docs OUTDIR`).

`denpex explain ID` prints the same text, so the docs and the tool never disagree.
"""

from __future__ import annotations

import sys
from pathlib import Path

from denpex.catalog.loader import load
from denpex.catalog.schema import Entry

# what the analysis does with an entry's flags (catalog.schema.Entry), in its page's words
_FLAG_SENTENCES = (
    ("stops_every_rank", "It stops every rank at once and names none: the initiating rank is the one whose logged "
     "training steps stop behind all the others' (it hung while they waited)."),
    ("kills_a_rank", "It reports a rank killed by a signal: another rank's report of waiting on that rank (a timeout, "
     "a barrier naming it) is this death's echo, whichever was printed first."),
    ("lost_peer", "It reports a lost peer: when every report is an echo, a collective's timeout comes before the lost "
     "connections it causes."),
    ("launcher_exit_report", "It is a launcher's report of a child's exit: the rank it names is a hint when no rank's "
     "own output names one."),
    ("echo_of_earlier_error", "After a fatal error of its own process (same file and rank) it is that error's echo: "
     "collateral, never the root cause."),
    ("original_below", "It re-raises another process's exception and prints it below: that original exception's "
     "line is the decisive line, and this entry's explanation and fix go with it."),
    ("left_by_a_crash", "It reads what a crash leaves behind: in an attempt torchelastic restarted after an earlier "
     "attempt crashed, it is that crash's echo."),
)


def entry_markdown(entry: Entry) -> str:
    out = [
        f"# {entry.title}",
        "",
        f"`{entry.id}` · category `{entry.category}` · layer `{entry.layer}` · role `{entry.role}` · "
        + ("fatal" if entry.fatal else "non-fatal"),
        "",
        "## What it means",
        "",
        entry.explanation.strip(),
        "",
        "## Confirm",
        "",
    ]
    out += [f"- {item}" for item in entry.checklist]
    out += ["", "## Fix", "", entry.fix.strip(), "", "## Verify", "", "```sh", entry.verify_shown(), "```"]
    if entry.siblings:
        out += ["", "## Other hypotheses and the control that separates them", ""]
        out += [f"- `{s.id}`: {s.control}" for s in entry.siblings]
    if entry.signatures:
        out += ["", "## Signatures", ""]
        for sig in entry.signatures:
            regex = f" — regex `{sig.regex}`" if sig.regex else ""
            out.append(f"- anchor `{sig.anchor}`{regex}")
    if entry.ring_peer:
        ring = entry.ring_peer
        peers = ", ".join(f"`{op}`: rank {offset:+d}" for op, offset in ring.offsets.items())
        out += ["", f"Initiating rank: the peer a report waited on, by its `{ring.field}` ({peers}, modulo the world "
                f"size), when the lines before it match `{ring.collective}`."]
    if entry.message_peer:
        peer = entry.message_peer
        peers = ", ".join(f"`{check}`: rank {offset:+d}" for check, offset in peer.offsets.items())
        out += ["", f"The report also names the peer that {peer.says}, by its `{peer.field}` ({peers}, modulo the "
                "world size): either that peer or the reporting rank is the culprit."]
    for flag, sentence in _FLAG_SENTENCES:
        if getattr(entry, flag):
            out += ["", sentence]
    if entry.graph_break_ids:
        out += ["", "Dynamo graph-break ids: " + ", ".join(f"`{g}`" for g in entry.graph_break_ids)]
    if entry.fixtures:
        out += ["", "## Proven on", ""]
        out += [f"- `{f.path}`" for f in entry.fixtures]
    if entry.references:
        out += ["", "## References", ""]
        out += [f"- {r}" for r in entry.references]
    return "\n".join(out) + "\n"


def write_docs(outdir: Path) -> list[Path]:
    outdir.mkdir(parents=True, exist_ok=True)
    catalog = load()
    written = []
    index = ["# Denpex catalog", "", "| id | category | layer | title |", "|---|---|---|---|"]
    for entry in catalog.entries:
        page = outdir / f"{entry.id}.md"
        page.write_text(entry_markdown(entry), encoding="utf-8")
        written.append(page)
        index.append(f"| [`{entry.id}`]({entry.id}.md) | `{entry.category}` | {entry.layer} | {entry.title} |")
    (outdir / "README.md").write_text("\n".join(index) + "\n", encoding="utf-8")
    return written


if __name__ == "__main__":
    write_docs(Path(sys.argv[1] if len(sys.argv) > 1 else "docs/catalog"))
