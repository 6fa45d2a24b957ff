"""Fuzz the whole pipeline with Hypothesis, outside CI: a million hostile inputs, no crash, no disagreement.

The inputs come from the strategies of tests/test_hostile_properties.py (windows of real corpus logs mixed
with control characters, colour codes, carriage returns, invalid UTF-8 and long lines; 5-40 lines each, in
Hypothesis runs of 5,000 examples); one in 2,000 is a
large input (1-4 MB of a hostile line repeated, or a real window repeated) for the time-per-MB check. Each
input is diagnosed by the line path and by one fast engine (Hyperscan, RE2 and the Python scanner in turn);
every fifth also as CRLF and with colour codes sprinkled in. A failure is:
  crash          any exception but DenpexInputError
  disagreement   an engine's diagnosis differs from the line path's, or a CRLF/colour variant's root cause
                 differs from the plain text's
  slow           the fast engine's diagnosis took over 1 CPU second per MB (process time, so other load on the
                 machine does not count; inputs under 1 MB count as 1 MB: a fixed cost of a few milliseconds per
                 call is not a per-byte cost); counted, not raised, since timing cannot replay. The line path is
                 the oracle here, not the engine under test: `auto` runs it only below api.FAST_PATH_BYTES (64
                 KiB), and its cost is per line (7-25 us), not per byte (1 MB of 2-byte lines: 3.3 s), so its
                 worst is reported (lines_max_seconds_per_mb) but not judged
The first crash or disagreement of each worker is written to --out (and Hypothesis stops that worker).

    python benchmarks/fuzz.py --inputs 1000000 [--workers N] [--seed S] [--out benchmarks/fuzz-failures]
    python benchmarks/fuzz.py --merge A.json B.json     # runs with --summary and distinct seeds, added up
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import json
import multiprocessing
import os
import sys
import time
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
_BATCH = 5_000  # examples per Hypothesis run


def _worker(job: tuple[int, int, int, str]) -> dict[str, object]:
    index, count, seed, out = job
    warnings.filterwarnings("ignore")
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as hypothesis_seed
    from hypothesis import strategies as st
    from tests.test_engines import _engines
    from tests.test_hostile_properties import FILES, coloured, logs, outcome, root

    from denpex.catalog import load

    load()  # cached for every input
    parent = os.getppid()
    engines = _engines()
    stats: dict[str, object] = {"inputs": 0, "bytes": 0, "max_s": 0.0, "max_s_per_mb": 0.0, "large": 0,
                                "lines_max_s_per_mb": 0.0,
                                "failure": None, "worker": index}

    def keep(text: str, what: str) -> None:
        """The failing text, byte for byte, for a regression test."""
        Path(out).mkdir(parents=True, exist_ok=True)
        (Path(out) / f"worker-{index}-{what}.log").write_bytes(text.encode("utf-8", "surrogatepass"))

    def timed(text: str, engine: str) -> tuple[tuple, float]:
        """CPU seconds of one diagnosis: the cost per byte, whatever else the machine is running."""
        started = time.process_time()
        result = outcome(text, engine)
        return result, time.process_time() - started

    def check(lines: list[str], engine: str, variant_seed: int) -> None:
        text = "\n".join(lines) + "\n"
        size = len(text.encode("utf-8", "surrogatepass"))
        expected, line_s = timed(text, "lines")
        got, fast_s = timed(text, engine)
        if got != expected:
            keep(text, "input")
            raise AssertionError(f"disagreement: {engine} gave {got!r}, the line path {expected!r}")
        if variant_seed % 5 == 0:
            plain = outcome(text, "lines", root)
            for variant in ("\r\n".join(lines) + "\r\n", "\n".join(coloured(lines, variant_seed)) + "\n"):
                for name in ("lines", engine):
                    if outcome(variant, name, root) != plain:
                        keep(variant, "variant")
                        raise AssertionError(f"disagreement: a CRLF/colour variant on {name} gave "
                                             f"{outcome(variant, name, root)!r}, the plain text {plain!r}")
        elapsed = fast_s  # the engine under test: what `auto` runs on an input this size or larger
        per_mb = elapsed / max(size / 1e6, 1.0)
        stats["lines_max_s_per_mb"] = max(float(stats["lines_max_s_per_mb"]),  # type: ignore[arg-type]
                                          line_s / max(size / 1e6, 1.0))
        stats["inputs"] = int(stats["inputs"]) + 1  # type: ignore[call-overload]
        stats["bytes"] = int(stats["bytes"]) + size  # type: ignore[call-overload]
        stats["max_s"] = max(float(stats["max_s"]), elapsed)  # type: ignore[arg-type]
        stats["large"] = int(stats["large"]) + (size >= 1 << 20)  # type: ignore[call-overload]
        if per_mb > float(stats["max_s_per_mb"]):  # type: ignore[arg-type]
            stats["max_s_per_mb"] = per_mb
            stats["worst"] = f"{elapsed:.3f}s for {size:,} bytes"
        if per_mb > 1.0:  # timing is not replayable, so it is counted rather than raised
            stats["slow"] = int(stats.get("slow", 0)) + 1  # type: ignore[call-overload]
        if os.getppid() != parent:  # the run was stopped: a worker left behind would fuzz on, unseen
            raise SystemExit(0)
        if int(stats["inputs"]) % 2000 == 0:  # type: ignore[call-overload]  # a run cut short still reports
            Path(out).mkdir(parents=True, exist_ok=True)
            (Path(out) / f"progress-{index}.json").write_text(json.dumps(stats), encoding="utf-8")

    def batch(number: int, size: int) -> None:
        """One Hypothesis run of `size` examples. Batches keep Hypothesis's memory of explored inputs small: in
        one run of 500,000 it grew past 400 MB, and collecting that heap showed up as 1.5 s 'slow' inputs."""

        @hypothesis_seed(int.from_bytes(hashlib.blake2b(b"%d/%d/%d" % (seed, index, number), digest_size=8).digest()))
        @settings(max_examples=size, database=None, phases=[Phase.generate], deadline=None,
                  suppress_health_check=list(HealthCheck))
        @given(lines=logs(5, 40), pick=st.integers(0, 2**32), variant_seed=st.integers(0, 2**32))
        def run(lines: list[str], pick: int, variant_seed: int) -> None:
            mixed = (pick * 0x9E3779B1) & 0xFFFFFFFF  # Hypothesis favours 0 and small numbers: spread them
            large = mixed % 2000 == 7
            check(big_example(mixed) if large else lines, engines[mixed % len(engines)], variant_seed)

        run()
        gc.collect()  # between batches, outside any timed diagnosis

    def big_example(mixed: int) -> list[str]:
        """One in 2,000: 1-4 MB of a hostile unit repeated on one line, or a real log window repeated."""
        import random

        rng = random.Random(mixed)
        if rng.random() < 0.5:
            unit = rng.choice(["Error ", "\x1b[31mout of memory\x1b[0m ", "\r 45%|####   | ", "Traceback ", "é\x9b"])
            return [unit * (rng.randint(1 << 20, 4 << 20) // len(unit))]
        real = rng.choice(FILES)
        return real * max(1, rng.randint(1 << 20, 4 << 20) // max(1, sum(map(len, real))))

    try:
        for number in range(-(-count // _BATCH)):
            batch(number, min(_BATCH, count - number * _BATCH))
    except BaseException as exc:  # the first failure of this worker: keep its input
        inner = getattr(exc, "exceptions", None) or [exc]  # a FlakyFailure wraps the real one
        stats["failure"] = f"{type(exc).__name__}: " + " | ".join(f"{type(e).__name__}: {e}" for e in inner)[:4000]
        Path(out).mkdir(parents=True, exist_ok=True)
        (Path(out) / f"worker-{index}.txt").write_text(str(stats["failure"]), encoding="utf-8")
    return stats


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--inputs", type=int, default=1_000_000)
    parser.add_argument("--workers", type=int, default=len(os.sched_getaffinity(0)))
    parser.add_argument("--seed", type=int, default=20261201)
    parser.add_argument("--out", default=str(HERE / "fuzz-failures"))
    parser.add_argument("--results", default=str(HERE / "RESULTS-fuzz.md"))
    parser.add_argument("--summary", help="also write the run's summary as JSON here (for --merge)")
    parser.add_argument("--merge", nargs="+", metavar="SUMMARY",
                        help="add up the summaries of runs with different seeds (e.g. on several machines)")
    parser.add_argument("--goal", type=int, default=1_000_000, help="inputs a merged report needs to PASS")
    args = parser.parse_args()
    if args.merge:
        runs = [json.loads(Path(path).read_text(encoding="utf-8")) for path in args.merge]
        _report(_merged(runs), args.goal, args.results, runs)
        return
    per = -(-args.inputs // args.workers)
    started = time.time()
    jobs = [(k, per, args.seed, args.out) for k in range(args.workers)]
    with multiprocessing.get_context("spawn").Pool(args.workers) as pool:
        results = pool.map(_worker, jobs)
    wall = time.time() - started
    failures = [r["failure"] for r in results if r["failure"]]
    summary = {
        "inputs": sum(int(r["inputs"]) for r in results),  # type: ignore[call-overload]
        "bytes": sum(int(r["bytes"]) for r in results),  # type: ignore[call-overload]
        "large_inputs": sum(int(r["large"]) for r in results),  # type: ignore[call-overload]
        "max_seconds_per_input": round(max(float(r["max_s"]) for r in results), 3),  # type: ignore[arg-type]
        "max_seconds_per_mb": round(max(float(r["max_s_per_mb"]) for r in results), 3),  # type: ignore[arg-type]
        "worst": max(results, key=lambda r: float(r["max_s_per_mb"])).get("worst"),  # type: ignore[arg-type]
        "slow_inputs": sum(int(r.get("slow", 0)) for r in results),  # type: ignore[call-overload]
        "lines_max_seconds_per_mb": round(max(float(r["lines_max_s_per_mb"]) for r in results), 3),  # type: ignore[arg-type]
        "failures": failures, "wall_seconds": round(wall), "workers": args.workers, "seed": args.seed,
        "command": f"python benchmarks/fuzz.py --inputs {args.inputs} --workers {args.workers} --seed {args.seed}",
    }
    print(json.dumps(summary, indent=2))
    if args.summary:
        Path(args.summary).write_text(json.dumps(summary, indent=2), encoding="utf-8")
    sys.exit(_report(summary, args.inputs, args.results, [summary]))


def _merged(runs: list[dict]) -> dict:
    """Runs with distinct seeds explore distinct inputs, so their counts add up and their worsts take the max."""
    worst = max(runs, key=lambda r: float(r["max_seconds_per_mb"]))
    return {
        "inputs": sum(r["inputs"] for r in runs), "bytes": sum(r["bytes"] for r in runs),
        "large_inputs": sum(r["large_inputs"] for r in runs),
        "max_seconds_per_input": max(r["max_seconds_per_input"] for r in runs),
        "max_seconds_per_mb": worst["max_seconds_per_mb"], "worst": worst["worst"],
        "slow_inputs": sum(r["slow_inputs"] for r in runs),
        "lines_max_seconds_per_mb": max(r["lines_max_seconds_per_mb"] for r in runs),
        "failures": [f for r in runs for f in r["failures"]],
        "wall_seconds": sum(r["wall_seconds"] for r in runs), "workers": [r["workers"] for r in runs],
        "seed": [r["seed"] for r in runs],
    }


def _report(summary: dict, goal: int, results: str, runs: list[dict]) -> int:
    """Write RESULTS-fuzz.md: PASS only for `goal` inputs or more with no failure and no slow input."""
    if len({r["seed"] for r in runs}) < len(runs):  # each batch's seed hashes (seed, worker, batch)
        raise SystemExit("two runs share a seed: they fuzzed the same inputs, so their counts do not add up")
    verdict = "PASS" if summary["inputs"] >= goal and not summary["failures"] and not summary["slow_inputs"] else "FAIL"
    commands = "\n".join(f"    {r.get('command', r['seed'])}   ({r['inputs']:,} inputs, {r['wall_seconds']} s)"
                         for r in runs)
    Path(results).write_text(
        "# Fuzz benchmark (benchmarks/fuzz.py)\n\n"
        f"{commands}\n\n"
        f"{verdict}: {summary['inputs']:,} inputs ({summary['bytes']:,} bytes, {summary['large_inputs']} of 1-4 MB), "
        f"{len(summary['failures'])} failures, slowest input {summary['max_seconds_per_input']} CPU s, "
        f"worst {summary['max_seconds_per_mb']} CPU s per MB (inputs under 1 MB counted as 1 MB), "
        f"{summary['slow_inputs']} inputs over 1 s per MB; the line path (the oracle, not judged) at worst "
        f"{summary.get('lines_max_seconds_per_mb', '?')} CPU s per MB.\n\n"
        f"```json\n{json.dumps(summary, indent=2)}\n```\n",
        encoding="utf-8")
    return 0 if verdict == "PASS" else 1


if __name__ == "__main__":
    main()
