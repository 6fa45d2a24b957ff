"""`denpex verify`: rerun the command after a fix; it is verified only if the failure's signature is gone and
the command passes (exit 0).

The signature comes from `--log OLD.log` (the old log's root cause: its catalog entry, plus the exception type
for uncaught exceptions, and its decisive line) or from `--entry ID` (any finding of that catalog entry). With
neither, the rerun must pass and show no failure at all.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from denpex.catalog import Catalog, load
from denpex.control.runner import Flag, RunResult, run
from denpex.errors import DenpexInputError
from denpex.model import Diagnosis, Finding, Verdict

EXIT_VERIFIED = 0
EXIT_NOT_VERIFIED = 1

_VOLATILE = re.compile(r"0x[0-9a-fA-F]+|\d+(?:\.\d+)?")


@dataclass
class Before:
    source: str  # "log" | "entry" | "none"
    entry_id: str | None = None
    exception: str | None = None  # for generic uncaught-exception entries
    quotes: list[str] = field(default_factory=list)  # the old decisive line, or the entry's signatures
    where: str = ""  # "OLD.log:57"


@dataclass
class VerifyResult:
    before: Before
    run: RunResult
    signature_gone: bool
    passed: bool
    after: list[str] = field(default_factory=list)  # what the rerun shows, quoted
    reasons: list[str] = field(default_factory=list)

    @property
    def verified(self) -> bool:
        return self.signature_gone and self.passed

    @property
    def exit_code(self) -> int:
        return EXIT_VERIFIED if self.verified else EXIT_NOT_VERIFIED


def _norm(text: str) -> str:
    return " ".join(_VOLATILE.sub("N", text).split())


def before_from_log(path: str, catalog: Catalog) -> Before:
    from denpex.api import diagnose_sources
    from denpex.ingest import resolve

    diagnosis = diagnose_sources(resolve([path]), catalog=catalog)
    root = diagnosis.root_cause
    if root is None or diagnosis.verdict is not Verdict.FAILURE:
        raise DenpexInputError(f"{path} shows no failure ({diagnosis.verdict.value}): nothing to verify against; "
                               "use --entry ID")
    exc = str(root.fields.get("exception") or "") if root.generic else None
    return Before("log", root.entry_id, exc or None, [root.evidence.text.strip()],
                  f"{root.evidence.file}:{root.evidence.line}")


def before_from_entry(entry_id: str, catalog: Catalog) -> Before:
    entry = catalog.get(entry_id)
    if entry is None:
        close = [e.id for e in catalog.entries if entry_id.lower() in e.id]
        hint = f" (did you mean: {', '.join(close[:5])})" if close else " (see `denpex catalog`)"
        raise DenpexInputError(f"no catalog entry {entry_id!r}{hint}")
    if entry.matched_by != "signature":
        raise DenpexInputError(f"{entry_id} has no signature of its own (it files uncaught exceptions or "
                               "re-filed findings): use --log OLD.log")
    quotes = [s.regex or s.anchor for s in entry.signatures]
    return Before("entry", entry.id, None, quotes, f"catalog entry {entry.id}")


def _matches(f: Finding, before: Before) -> bool:
    if f.entry_id != before.entry_id:
        return False
    if before.exception:
        return str(f.fields.get("exception") or "") == before.exception
    return True


def judge(before: Before, result: RunResult) -> VerifyResult:
    diagnosis: Diagnosis | None = result.diagnosis
    findings = diagnosis.findings if diagnosis is not None else []
    out = VerifyResult(before, result, signature_gone=True, passed=result.exit_code == 0)
    if before.source != "none":
        hits = [f for f in findings if _matches(f, before)]
        old_lines = {_norm(q) for q in before.quotes} if before.source == "log" else set()
        echoes = [f for f in findings if old_lines and _norm(f.evidence.text) in old_lines]
        if hits or echoes:
            out.signature_gone = False
            first = (hits or echoes)[0]
            out.after.append(f"{first.evidence.file}:{first.evidence.line}: {first.evidence.text.strip()}")
            out.reasons.append(f"the signature is still there ({first.entry_id}"
                               f"{', ' + str(first.count) + ' times' if first.count > 1 else ''})")
        else:
            out.after.append(f"no {before.entry_id}{' ' + before.exception if before.exception else ''} finding in "
                             f"{result.lines} lines")
    if result.error:
        out.passed = False
        out.reasons.append(result.error)
    elif result.timed_out:
        out.passed = False
        out.reasons.append("the command timed out")
    elif result.exit_code != 0:
        out.reasons.append(f"the command exited {result.exit_code}")
    if diagnosis is not None and diagnosis.verdict is Verdict.FAILURE and diagnosis.root_cause is not None:
        root = diagnosis.root_cause
        line = f"{root.evidence.file}:{root.evidence.line}: {root.evidence.text.strip()}"
        if before.source == "none":
            out.signature_gone = False
            out.reasons.append(f"the rerun fails with {root.entry_id}")
        if line not in out.after:
            out.after.append(f"rerun's failure [{root.entry_id}] {line}")
    if out.verified:
        out.after.append(f"command exited 0 in {result.duration:.1f}s")
    return out


def verify(
    argv: Sequence[str],
    *,
    entry_id: str | None = None,
    old_log: str | None = None,
    log_path: Path,
    env: Mapping[str, str] | None = None,
    echo: bool = True,
    on_flag: Callable[[Flag], None] | None = None,
    timeout: float | None = None,
    catalog: Catalog | None = None,
) -> VerifyResult:
    catalog = catalog or load()
    if entry_id and old_log:
        raise DenpexInputError("give --entry or --log, not both")
    if old_log:
        before = before_from_log(old_log, catalog)
    elif entry_id:
        before = before_from_entry(entry_id, catalog)
    else:
        before = Before("none", quotes=[], where="no earlier failure given")
    result = run(argv, log_path=log_path, env=env, echo=echo, on_flag=on_flag, timeout=timeout, catalog=catalog,
                 meta={"verify": {"entry": before.entry_id, "source": before.source, "where": before.where}})
    return judge(before, result)


def to_dict(v: VerifyResult) -> dict[str, object]:
    return {
        "verified": v.verified,
        "exit_code": v.exit_code,
        "signature_gone": v.signature_gone,
        "command_passed": v.passed,
        "command_exit_code": v.run.exit_code,
        "before": {"source": v.before.source, "entry": v.before.entry_id, "exception": v.before.exception,
                   "where": v.before.where, "quotes": v.before.quotes},
        "after": v.after,
        "reasons": v.reasons,
        "log": str(v.run.log_path),
        "seconds": round(v.run.duration, 2),
    }
