"""Where the fast path's one-core time goes on a real log: Hyperscan per pattern group, against ripgrep.

#13 asks for 2x ripgrep's rate on one core on the realistic log. This splits the candidate scan into the
pattern groups the Hyperscan engine compiles (catalog anchors, the structural literals, the per-rank marker
literals) and times each group alone on the same text, in 1 MiB chunks as the engine scans, best of
--repeat, next to `rg -c -F -f ANCHORS` and `denpex diagnose --workers 1` on the same file. It says which
group a faster scan would have to change; it changes nothing itself.

    python benchmarks/bench_real.py --sizes 1G --density-size '' --repeated-size '' --no-long-line \
        --repeat 1 --compressed '' --workdir /tmp/br     # makes the realistic log once
    python benchmarks/bench_scan_parts.py /tmp/br/realistic-1G.log [--mib 256] [--repeat 3]

The three groups leave out the engine's two sparse literals for the other rank forms (`[Rank `, `[default`);
the engine row is the engine itself.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))
from denpex.catalog.loader import load  # noqa: E402
from denpex.scan.engines import _RANK_FORMS, _RANK_LIMIT, STRUCTURAL_LITERALS, HyperscanEngine, anchors_of  # noqa: E402

CHUNK = 1 << 20


def _best(repeat: int, work: Callable[[], object]) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("log", type=Path)
    parser.add_argument("--mib", type=int, default=256, help="MiB of the log's start to time")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    import hyperscan

    with open(args.log, "rb") as handle:
        data = handle.read(args.mib << 20)
    chunks = [data[at : at + CHUNK] for at in range(0, len(data), CHUNK)]
    per_gib = (1 << 30) / len(data)
    catalog = load()
    plain, folded = anchors_of(catalog)
    anchors = [(re.escape(a), 0) for a in plain] + [(re.escape(a), hyperscan.HS_FLAG_CASELESS) for a in folded]
    structural = [(re.escape(s), 0) for s in STRUCTURAL_LITERALS]
    ranks = [(re.escape(form + b"%d]" % r), hyperscan.HS_FLAG_SINGLEMATCH)
             for r in range(_RANK_LIMIT) for form in _RANK_FORMS[:1]]
    groups = {
        "catalog anchors": anchors,
        "anchors + structural literals": anchors + structural,
        f"rank markers alone ({len(ranks)} literals)": ranks,
        "anchors + structural + rank markers": anchors + structural + ranks,
    }

    def scan_with(patterns: list[tuple[bytes, int]]) -> float:
        db = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
        db.compile(expressions=[p for p, _ in patterns], flags=[f for _, f in patterns])
        scratch = hyperscan.Scratch(db)

        def work() -> None:
            for chunk in chunks:
                db.scan(chunk, match_event_handler=lambda *_: None, scratch=scratch)
        return _best(args.repeat, work)

    print(f"# {args.log.name}: first {len(data) >> 20} MiB, {len(plain) + len(folded)} anchors; seconds per GiB, "
          f"best of {args.repeat}")
    print("| scan | s/GiB |\n|---|---|")
    for name, patterns in groups.items():
        print(f"| Hyperscan: {name} | {scan_with(patterns) * per_gib:.2f} |")
    engine = HyperscanEngine(catalog)

    def engine_scan() -> None:
        session = engine.fresh()  # once per pass, as the fast path does per input
        for chunk in chunks:
            session.scan(chunk)
    print(f"| HyperscanEngine.scan (with its callbacks) | {_best(args.repeat, engine_scan) * per_gib:.2f} |")
    rg = shutil.which("rg")
    with tempfile.TemporaryDirectory() as tmp:
        sample = Path(tmp) / "sample.log"
        sample.write_bytes(data)
        anchor_file = Path(tmp) / "anchors.txt"
        anchor_file.write_bytes(b"\n".join(plain + folded) + b"\n")
        if rg:
            rg_s = _best(args.repeat, lambda: subprocess.run([rg, "-c", "-F", "-f", str(anchor_file), str(sample)],
                                                             capture_output=True))
            print(f"| rg -c -F -f ANCHORS (process) | {rg_s * per_gib:.2f} |")
        denpex = [sys.executable, "-m", "denpex", "diagnose", "--workers", "1", "--format", "json", str(sample)]
        print(f"| denpex diagnose --workers 1 (process) | "
              f"{_best(args.repeat, lambda: subprocess.run(denpex, capture_output=True)) * per_gib:.2f} |")


if __name__ == "__main__":
    main()
