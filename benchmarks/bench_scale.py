"""Throughput of `denpex diagnose` on big multi-rank logs, against ripgrep, grep and cat in the same run.

For each size it generates (once, cached in --workdir) a realistic multi-rank log with a failure buried
near the end (benchmarks/genlog.py), drops nothing from the page cache (warm runs: the file was just
written or read), and times, end to end as separate processes:

  cat FILE > /dev/null                      the reading ceiling
  rg -c -f PATTERNS FILE                    ripgrep with the catalog's own patterns
  grep -c -E -f PATTERNS FILE               GNU grep with the same patterns
  denpex diagnose --format json FILE        the installed command, --workers 1 and every core, per engine

and reports MB/s, ratios to ripgrep, peak RSS, and whether every Denpex run found the same diagnosis.
`--patterns` adds a scaling run with synthetic catalogs of 30, 300 and 3,000 patterns (one core, through
the Python API, which takes a catalog folder), with `rg -F -f` over the same literals as the reference.

    python benchmarks/bench_scale.py --sizes 256M,1G [--patterns] [--engines hyperscan,re2]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from benchmarks.genlog import generate, generate_rank_dir, parse_size  # noqa: E402

_META = set(".^$*+?()[]{}|\\")
_CLASS = {"d": ("0-9", "[0-9]"), "s": ("[:space:]", "[[:space:]]"), "w": ("[:alnum:]_", "[[:alnum:]_]"),
          "S": (None, "[^[:space:]]"), "D": (None, "[^0-9]"), "W": (None, "[^[:alnum:]_]")}


def _literal(text: str) -> str:
    return "".join("\\" + c if c in _META else c for c in text)


def _posix(pattern: str) -> str:
    """Python regex -> POSIX ERE for grep -E: named/non-capturing groups, \\d \\s \\w in and out of classes."""
    pattern = re.sub(r"\(\?P<\w+>", "(", pattern).replace("(?:", "(")
    out, i, in_class = [], 0, False
    while i < len(pattern):
        c = pattern[i]
        if c == "\\" and i + 1 < len(pattern):
            nxt = pattern[i + 1]
            if nxt in _CLASS and (_CLASS[nxt][0] if in_class else _CLASS[nxt][1]):
                out.append(_CLASS[nxt][0] if in_class else _CLASS[nxt][1])
            elif nxt == "b":
                out.append("\\b")
            else:
                out.append("\\" + nxt if nxt in _META else nxt)
            i += 2
            continue
        if c == "[" and not in_class:
            in_class = True
        elif c == "]" and in_class and out and out[-1] not in ("[", "[^"):
            in_class = False
        out.append(c)
        i += 1
    return "".join(out)


def catalog_patterns(posix: bool) -> list[str]:
    """The catalog's signatures as a grep user would write them: the regex, else the literal anchor."""
    from denpex.catalog import load

    out = []
    for entry in load().entries:
        for sig in entry.signatures:
            if sig.regex is None:
                out.append(_literal(sig.anchor))
            else:
                # one pattern file: group names would clash between patterns, so drop them
                out.append(_posix(sig.regex) if posix else re.sub(r"\(\?P<\w+>", "(", sig.regex))
    return out


def run(cmd: list[str], env: dict[str, str] | None = None, repeat: int = 3) -> tuple[float, int, str]:
    """Best wall time of `repeat` runs, peak RSS (KiB, largest process, GNU time), and the last stdout."""
    times = []
    out = ""
    rss = 0
    gnu_time = shutil.which("time") or "/usr/bin/time"
    with tempfile.NamedTemporaryFile("r") as mem:
        for _ in range(repeat):
            wrapped = [gnu_time, "-q", "-f", "%M", "-o", mem.name, *cmd] if os.path.exists(gnu_time) else cmd
            t0 = time.perf_counter()
            proc = subprocess.run(wrapped, capture_output=True, text=True, env=env, check=False)
            times.append(time.perf_counter() - t0)
            out = proc.stdout
            mem.seek(0)
            text = mem.read().strip().splitlines()
            if text and text[-1].isdigit():
                rss = max(rss, int(text[-1]))
    return min(times), rss, out


def denpex_cli(path: Path, engine: str, workers: int) -> list[str]:
    """The command a user runs, end to end: start-up, scan, analysis, the JSON report, exit."""
    script = Path(sys.executable).parent / "denpex"
    exe = [str(script)] if script.exists() else [sys.executable, "-m", "denpex"]
    return [*exe, "diagnose", "--format", "json", "--engine", engine, "--workers", str(workers), str(path)]


def summary(report: str) -> str:
    """What must be identical across engines and core counts: verdict, root cause, collateral, lines read."""
    try:
        data = json.loads(report)
    except ValueError:
        return report
    root = data.get("root_cause") or {}
    evidence = root.get("evidence") or {}
    return json.dumps([data.get("verdict"), root.get("id"), root.get("rank"), evidence.get("line"),
                       [[g.get("id"), g.get("ranks"), g.get("count")] for g in data.get("collateral", [])],
                       data.get("lines_read")])


# The normal case: Python writes and reuses bytecode (pip compiles it at install). This sandbox sets
# PYTHONDONTWRITEBYTECODE, which would recompile every module on every run (~25 ms more start-up).
BENCH_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def denpex_cmd(path: Path, engine: str, workers: int, catalog: str | None = None) -> list[str]:
    """Through the Python API, for the pattern-scaling runs (the CLI always uses the installed catalog)."""
    code = (
        "import sys,json,denpex.api as a;from denpex.catalog import load;"
        "c=load(sys.argv[4]) if sys.argv[4] else None;"
        "d=a.diagnose(sys.argv[1],engine=sys.argv[2],workers=int(sys.argv[3]),catalog=c);r=d.root_cause;"
        "print(json.dumps([d.verdict.value,r and [r.entry_id,r.rank,r.evidence.line,r.evidence.text],"
        "[[g.entry_id,g.ranks,g.count] for g in d.collateral],d.lines_read]))"
    )
    return [sys.executable, "-c", code, str(path), engine, str(workers), catalog or ""]


def synthetic_anchors(count: int) -> list[str]:
    """`count` distinct anchors built from the real catalog's words ("NCCL watchdog: timeout"), so they are
    as likely to nearly match log text as real ones; deterministic."""
    import random

    from denpex.catalog import load

    words = sorted({w for e in load().entries for s in e.signatures for w in re.findall(r"[A-Za-z_]{4,}", s.anchor)})
    rnd = random.Random(6)
    seen: dict[str, None] = {}
    while len(seen) < count:
        first, second, third = rnd.sample(words, 3)
        seen[f"{first} {second}: {third}"] = None
    return list(seen)


def synthetic_catalog(patterns: int, into: Path) -> tuple[str, list[str]]:
    """A catalog of exactly `patterns` signatures (the uncaught-* entries the analysis always needs have
    none), in entries of two literal anchors each: scaling with the pattern count alone. Also returns
    the anchors, for ripgrep."""
    from denpex.catalog.loader import entries_dir

    into.mkdir(parents=True, exist_ok=True)
    for old in into.glob("*.toml"):
        old.unlink()
    for path in entries_dir().glob("uncaught-*.toml"):
        text = path.read_text()
        # only the entry and its signatures: siblings and refinements name entries this catalog leaves out
        cuts = [text.index(table) for table in ("[[sibling]]", "[[refine]]") if table in text]
        text = text[: min(cuts)] if cuts else text
        (into / path.name).write_text(text)
    anchors = synthetic_anchors(patterns)
    for k in range(0, patterns, 2):
        eid = f"synthetic-{k:05d}"
        signatures = "".join(f'[[signature]]\nanchor = "{anchor}"\n' for anchor in anchors[k : k + 2])
        (into / f"{eid}.toml").write_text(
            f'id = "{eid}"\ncategory = "user.code_error"\ntitle = "synthetic {k}"\nlayer = "user_code"\n'
            f'role = "cause"\nfatal = true\nexplanation = "A synthetic entry used only to measure scaling with'
            f' the number of patterns."\nchecklist = ["none"]\nfix = "none"\nverify = "denpex verify"\n'
            + signatures
        )
    return str(into), anchors


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="256M,1G")
    parser.add_argument("--workdir", default=os.path.join(tempfile.gettempdir(), "denpex-bench"))
    parser.add_argument("--engines", default="hyperscan")
    parser.add_argument("--patterns", action="store_true", help="also measure 30/300/3000 patterns")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--rank-files", default="", help="also a torchrun --log-dir tree, e.g. 1024x2M")
    args = parser.parse_args()
    work = Path(args.workdir)
    work.mkdir(parents=True, exist_ok=True)
    patterns = work / "patterns-rg.txt"  # Rust regex syntax takes the catalog's regexes as they are
    patterns.write_text("\n".join(catalog_patterns(posix=False)) + "\n")
    posix = work / "patterns-ere.txt"
    posix.write_text("\n".join(catalog_patterns(posix=True)) + "\n")
    ncores = len(os.sched_getaffinity(0))
    print(f"# {len(catalog_patterns(False))} catalog patterns, {ncores} cores, python {sys.version.split()[0]}")
    print(f"{'size':>6} {'tool':<34} {'seconds':>8} {'MB/s':>8} {'x rg':>6} {'peak RSS MB':>12}")
    per_size = []
    for text in [t for t in args.sizes.split(",") if t]:  # --sizes '' runs only the other measurements
        size = parse_size(text)
        log = work / f"multirank-{text}.log"
        if not log.exists() or log.stat().st_size < size:
            generate(str(log), size)
        mb = log.stat().st_size / 1e6
        rows = [
            ("cat > /dev/null", ["sh", "-c", f"cat '{log}' > /dev/null"]),
            ("rg -c -f catalog", ["rg", "-c", "-f", str(patterns), str(log)]),
            ("grep -c -E -f catalog", ["grep", "-c", "-E", "-f", str(posix), str(log)]),
        ]
        for engine in args.engines.split(","):
            rows.append((f"denpex {engine} 1 core", denpex_cli(log, engine, 1)))
            rows.append((f"denpex {engine} {ncores} cores", denpex_cli(log, engine, ncores)))
        rg_time = None
        results = {}
        diagnoses = set()
        for name, cmd in rows:
            if shutil.which(cmd[0]) is None:
                print(f"{text:>6} {name:<34} (not installed)")
                continue
            seconds, rss, out = run(cmd, env=BENCH_ENV, repeat=args.repeat)
            if name.startswith("rg"):
                rg_time = seconds
            if name.startswith("denpex"):
                diagnoses.add(summary(out))
            ratio = f"{rg_time / seconds:6.2f}" if rg_time else "     -"
            results[name] = seconds
            print(f"{text:>6} {name:<34} {seconds:8.2f} {mb / seconds:8.0f} {ratio} {rss / 1024:12.0f}")
        per_size.append((mb, results))
        print(f"# {text}: identical diagnosis across every denpex run: {len(diagnoses) == 1}; "
              f"{json.loads(next(iter(diagnoses)))[1:4] if diagnoses else None}")
    if len(per_size) > 1:
        for name in per_size[0][1]:
            if name in per_size[-1][1]:
                small, big = per_size[0], per_size[-1]
                growth = (big[1][name] / small[1][name]) / (big[0] / small[0])
                print(f"# time growth per size growth, {name}: {growth:.2f} (1.00 = linear)")
    if args.rank_files:
        count, _, each = args.rank_files.partition("x")
        tree = work / f"ranks-{args.rank_files}"
        if not tree.exists():
            generate_rank_dir(str(tree), ranks=int(count), per_rank=parse_size(each))
        mb = sum(p.stat().st_size for p in tree.rglob("*.log")) / 1e6
        rows = [("cat (all files) > /dev/null", ["sh", "-c", f"cat '{tree}'/attempt_0/*/stderr.log > /dev/null"]),
                ("rg -c -f catalog (dir)", ["rg", "-c", "-f", str(patterns), str(tree)])]
        for engine in args.engines.split(","):
            rows.append((f"denpex {engine} 1 core (dir)", denpex_cli(tree, engine, 1)))
            rows.append((f"denpex {engine} {ncores} cores (dir)", denpex_cli(tree, engine, ncores)))
        found = set()
        for name, cmd in rows:
            seconds, rss, out = run(cmd, env=BENCH_ENV, repeat=args.repeat)
            if name.startswith("denpex"):
                found.add(summary(out))
            print(f"{args.rank_files:>6} {name:<34} {seconds:8.2f} {mb / seconds:8.0f} {'':>6} {rss / 1024:12.0f}")
        print(f"# {count} rank files, {mb:.0f} MB: identical diagnosis across runs: {len(found) == 1}; "
              f"{json.loads(next(iter(found)))[1:4] if found else None}")
    if args.patterns:
        log = work / f"multirank-{args.sizes.split(',')[0]}.log"
        mb = log.stat().st_size / 1e6
        rates: dict[str, dict[int, float]] = {"denpex": {}, "rg": {}}
        for n in (30, 300, 3000):
            cat, anchors = synthetic_catalog(n, work / f"catalog-{n}")
            from denpex.catalog import load

            count = sum(len(e.signatures) for e in load.__wrapped__(cat).entries)
            listed = work / f"patterns-{n}.txt"
            listed.write_text("\n".join(anchors) + "\n")
            seconds, rss, _ = run(denpex_cmd(log, args.engines.split(",")[0], 1, cat), env=BENCH_ENV,
                                  repeat=args.repeat)
            rg_seconds, _, _ = run(["rg", "-c", "-F", "-f", str(listed), str(log)], repeat=args.repeat)
            rates["denpex"][n], rates["rg"][n] = mb / seconds, mb / rg_seconds
            print(f"# {count:>5} patterns: denpex 1 core {seconds:6.2f} s {mb / seconds:6.0f} MB/s (peak RSS "
                  f"{rss / 1024:.0f} MB); rg -F {rg_seconds:6.2f} s {mb / rg_seconds:6.0f} MB/s")
        for tool, rate in rates.items():
            print(f"# {tool}: 3,000 patterns run at {rate[3000] / rate[300]:.2f}x the rate of 300 (1.00 = flat)")


if __name__ == "__main__":
    main()
