"""Denpex on realistic text, against ripgrep and cat in the same run: real logs, a density sweep, worst cases.

Logs (benchmarks/genreal.py, generated once into --workdir):
  realistic   real corpus logs with their causes removed, repeated and interleaved over 8 ranks, one real
              CUDA OOM planted at 90% on rank 3 (--sizes, e.g. 256M,1G,4G)
  coloured    the realistic text as a colouring log handler prints it (a fifth of the lines painted)
              (--coloured-size)
  density-P   synthetic training lines of which P% hit a catalog anchor (a real warning line, numbers varied),
              the same OOM planted (--density-size)
  long-line   one 100 MB line full of anchor hits between healthy lines, then the OOM
  repeated    one real CUDA OOM line repeated on 8 ranks (--repeated-size)

Each is timed end to end as separate processes, warm (page cache), best of --repeat:
  cat FILE > /dev/null                         the reading ceiling
  rg -c -F -f ANCHORS FILE                     ripgrep with the catalog's anchors as literals (what Denpex scans for)
  denpex diagnose --format json FILE           --workers 1 and every core
and prints MB/s, the ratio of Denpex's rate to ripgrep's, peak RSS, whether the planted cause was found
(root cause cuda-oom), and whether every worker count gave the same diagnosis.

Why literals for ripgrep: with the catalog's regexes (`rg -c -f`), ripgrep took 6 minutes for 64 MiB of the
realistic log (bounded repetitions such as `[^\\n]{0,2000}` defeat its DFA); `--rg-regex` adds that column
with a time limit. `--patterns` times 300 and 3,000 synthetic anchors on the realistic log (Python API).

    python benchmarks/bench_real.py --sizes 256M,1G [--density-size 256M] [--patterns] [--compressed 64M]

--compressed also times a .zst of one frame against one of 16 MiB frames that record their sizes, on one worker
and on every core (the second is split across cores from a text of 64 MiB on: use --compressed 256M for that).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from benchmarks import genreal  # noqa: E402
from benchmarks.bench_scale import BENCH_ENV, catalog_patterns, denpex_cli, denpex_cmd, run, summary, synthetic_catalog  # noqa: E402,E501
from benchmarks.genlog import parse_size  # noqa: E402

DENSITIES = (0.00001, 0.001, 0.01, 0.1, 1.0)


def _found(report: str) -> bool:
    try:
        root = json.loads(report).get("root_cause") or {}
    except ValueError:
        return False
    return root.get("id") == "cuda-oom"


def _anchors(into: Path) -> Path:
    from denpex.catalog import load

    anchors = sorted({sig.anchor for entry in load().entries for sig in entry.signatures})
    into.write_text("\n".join(anchors) + "\n", encoding="utf-8")
    return into


def _logs(work: Path, args: argparse.Namespace) -> list[tuple[str, Path]]:
    logs: list[tuple[str, Path]] = []

    def make(name: str, build) -> None:  # type: ignore[no-untyped-def]
        path = work / f"{name}.log"
        if not path.exists():
            build(str(path))
        logs.append((name, path))

    for size in [s for s in args.sizes.split(",") if s]:
        make(f"realistic-{size}", lambda p, s=size: genreal.realistic(p, parse_size(s)))
    if args.coloured_size:
        make(f"coloured-{args.coloured_size}", lambda p: genreal.coloured(p, parse_size(args.coloured_size)))
    if args.density_size:
        for fraction in DENSITIES:
            make(f"density-{fraction * 100:g}%-{args.density_size}",
                 lambda p, f=fraction: genreal.density(p, parse_size(args.density_size), f))
    if args.long_line:
        make("long-line-100M", lambda p: genreal.long_line(p, 100 << 20))
    if args.repeated_size:
        make(f"repeated-oom-{args.repeated_size}", lambda p: genreal.repeated_oom(p, parse_size(args.repeated_size)))
    return logs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="256M,1G", help="realistic log sizes")
    parser.add_argument("--coloured-size", default="256M", help="size of the coloured realistic log; '' skips")
    parser.add_argument("--density-size", default="256M", help="size of each density-sweep log; '' skips")
    parser.add_argument("--repeated-size", default="2G", help="size of the repeated-OOM log; '' skips")
    parser.add_argument("--no-long-line", dest="long_line", action="store_false")
    parser.add_argument("--workdir", default=os.path.join(tempfile.gettempdir(), "denpex-bench-real"))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--rg-regex", action="store_true", help="also rg -c -f with the catalog's regexes (slow)")
    parser.add_argument("--patterns", action="store_true", help="300 vs 3,000 anchors on the first realistic log")
    parser.add_argument("--compressed", default="", metavar="SIZE",
                        help="the first SIZE of the first realistic log as .gz/.zst/.xz/.bz2 (level 1), each "
                             "against its own decompressor; '' skips")
    args = parser.parse_args()
    work = Path(args.workdir)
    work.mkdir(parents=True, exist_ok=True)
    anchors = _anchors(work / "anchors.txt")
    regexes = work / "patterns-rg.txt"
    regexes.write_text("\n".join(catalog_patterns(posix=False)) + "\n", encoding="utf-8")
    ncores = len(os.sched_getaffinity(0))
    rg = shutil.which("rg")
    print(f"# {len(anchors.read_text().splitlines())} anchors, {ncores} cores, python {sys.version.split()[0]}")
    print("| log | MB | cat s | rg -F s | denpex 1 worker s (MB/s) | x rg | "
          f"denpex {ncores} workers s (MB/s) | x rg | peak RSS MB | cause found | same diagnosis |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for name, path in _logs(work, args):
        mb = path.stat().st_size / 1e6
        t_cat, _, _ = run(["sh", "-c", f"cat '{path}' > /dev/null"], repeat=args.repeat)
        t_rg = run([rg, "-c", "-F", "-f", str(anchors), str(path)], repeat=args.repeat)[0] if rg else float("nan")
        results = []
        for workers in (1, ncores):
            t, rss, out = run(denpex_cli(path, "auto", workers), env=BENCH_ENV, repeat=args.repeat)
            results.append((t, rss, out))
        (t1, rss1, out1), (tn, rssn, outn) = results
        same = summary(out1) == summary(outn)
        print(f"| {name} | {mb:,.0f} | {t_cat:.2f} | {t_rg:.2f} | {t1:.2f} ({mb / t1:,.0f}) | {t_rg / t1:.2f} | "
              f"{tn:.2f} ({mb / tn:,.0f}) | {t_rg / tn:.2f} | {max(rss1, rssn) / 1024:.0f} | "
              f"{_found(out1) and _found(outn)} | {same} |", flush=True)
        if args.rg_regex and rg:
            t, _, _ = run(["timeout", "120", rg, "-c", "-f", str(regexes), str(path)], repeat=1)
            print(f"|   rg -c -f (catalog regexes, 120 s limit) | | | {t:.1f} | | | | | | | |", flush=True)
    if args.patterns:
        real = next(p for n, p in _logs(work, args) if n.startswith("realistic"))
        print("\n| anchors | denpex 1 worker s | rg -F s | root cause |\n|---|---|---|---|")
        for count in (300, 3000):
            folder, literals = synthetic_catalog(count, work / f"catalog-{count}")
            lits = work / f"literals-{count}.txt"
            lits.write_text("\n".join(literals) + "\n", encoding="utf-8")
            t, _, out = run(denpex_cmd(real, "auto", 1, folder), env=BENCH_ENV, repeat=args.repeat)
            t_rg = run([rg, "-c", "-F", "-f", str(lits), str(real)], repeat=args.repeat)[0] if rg else float("nan")
            try:  # the synthetic catalog has no cuda-oom entry: the planted OOM is an uncaught CUDA error
                root = (json.loads(out)[1] or ["none"])[0]
            except (ValueError, IndexError, TypeError):
                root = "no answer (the run failed)"
            print(f"| {count} | {t:.2f} | {t_rg:.2f} | {root} |", flush=True)
    if args.compressed:
        real = next(p for n, p in _logs(work, args) if n.startswith("realistic"))
        compressed(work, real, parse_size(args.compressed), args.repeat)


# (format, compress command, decompress-to-stdout command); the files are made with the standard tools
_CODECS = (("gz", ["gzip", "-1", "-c"], ["gzip", "-dc"]), ("zst", ["zstd", "-1", "-q", "-c"], ["zstd", "-dcq"]),
           ("xz", ["xz", "-1", "-T1", "-c"], ["xz", "-dc"]), ("bz2", ["bzip2", "-1", "-c"], ["bzip2", "-dc"]))


def compressed(work: Path, source: Path, size: int, repeat: int) -> None:
    """Denpex on the same text plain and compressed, one worker, against each format's own decompressor: the
    goal is that a format costs no more over the plain log than its decompressor takes alone."""
    plain = work / f"compress-{size >> 20}M.log"
    if not plain.exists():
        with open(source, "rb") as src, open(plain, "wb") as dst:
            dst.write(src.read(size))
    t_plain = run(denpex_cli(plain, "auto", 1), env=BENCH_ENV, repeat=repeat)[0]
    print(f"\n| {size >> 20} MiB of the realistic log | file MB | denpex 1 worker s | over plain s | decompressor "
          "alone s | over plain minus decompressor s |\n|---|---|---|---|---|---|")
    print(f"| plain | {plain.stat().st_size / 1e6:,.0f} | {t_plain:.2f} | | | |")
    for suffix, pack, unpack in _CODECS:
        if not shutil.which(pack[0]):
            print(f"| .{suffix} | ({pack[0]} not installed) | | | | |")
            continue
        path = work / f"{plain.name}.{suffix}"
        if not path.exists():
            with open(plain, "rb") as src, open(path, "wb") as dst:
                subprocess.run(pack, stdin=src, stdout=dst, check=True)
        t = run(denpex_cli(path, "auto", 1), env=BENCH_ENV, repeat=repeat)[0]
        t_dec = run(["sh", "-c", f"{' '.join(unpack)} '{path}' > /dev/null"], repeat=repeat)[0]
        print(f"| .{suffix} | {path.stat().st_size / 1e6:,.1f} | {t:.2f} | {t - t_plain:+.2f} | {t_dec:.2f} | "
              f"{t - t_plain - t_dec:+.2f} |", flush=True)
    split_layouts(work, plain, repeat)


def split_layouts(work: Path, plain: Path, repeat: int) -> None:
    """A compressed file of one piece is one stream; a .zst of several frames that record their size, or a .gz
    of several members, is split over the cores (ingest.zstd_frames, ingest.gzip_members). Each against the plain
    file, on one worker and on every core (the split needs a text of at least fast.PARALLEL_FILE_BYTES)."""
    import zstandard

    ncores = len(os.sched_getaffinity(0))
    framed = work / f"{plain.name}.frames.zst"
    if not framed.exists():
        compressor = zstandard.ZstdCompressor(level=1)  # each frame records its size in its header
        with open(plain, "rb") as src, open(framed, "wb") as dst:
            while piece := src.read(16 << 20):
                dst.write(compressor.compress(piece))
    members = work / f"{plain.name}.members.gz"
    if not members.exists() and shutil.which("gzip"):
        with open(plain, "rb") as src, open(members, "wb") as dst:  # `gzip -c part >> log.gz`, 16 MiB parts
            while piece := src.read(16 << 20):
                dst.write(subprocess.run(["gzip", "-1", "-c"], input=piece, capture_output=True, check=True).stdout)
    print(f"\n| compressed layout | file MB | denpex 1 worker s | denpex {ncores} workers s | decompressor alone s |")
    print("|---|---|---|---|---|")
    for name, path, unpack in (("plain (no compression)", plain, None),
                               ("one zstd frame (zstd -1)", work / f"{plain.name}.zst", "zstd -dcq"),
                               ("16 MiB zstd frames with sizes (python-zstandard)", framed, "zstd -dcq"),
                               ("one gzip member (gzip -1)", work / f"{plain.name}.gz", "gzip -dc"),
                               ("16 MiB gzip members (gzip -1 -c part >> log.gz)", members, "gzip -dc")):
        if not path.exists():
            continue
        t1 = run(denpex_cli(path, "auto", 1), env=BENCH_ENV, repeat=repeat)[0]
        tn = run(denpex_cli(path, "auto", ncores), env=BENCH_ENV, repeat=repeat)[0]
        t_dec = (run(["sh", "-c", f"{unpack} '{path}' > /dev/null"], repeat=repeat)[0]
                 if unpack and shutil.which(unpack.split()[0]) else float("nan"))
        print(f"| {name} | {path.stat().st_size / 1e6:,.1f} | {t1:.2f} | {tn:.2f} | {t_dec:.2f} |", flush=True)


if __name__ == "__main__":
    main()
