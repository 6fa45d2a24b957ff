"""Realistic benchmark logs: real corpus text repeated across ranks, and a density sweep.

`realistic`: every `log.txt` of tests/corpus (real program output) with its causes removed (tracebacks and
every line that looks like an error), repeated and interleaved across ranks in blocks, as a multi-rank job
prints it; one real CUDA OOM (tests/corpus/gpu/gpu-cuda-oom, an H200 run) is planted at 90% on rank 3.
What is left is dense: warnings every step, NCCL INFO, recompile records, progress bars, long lines.

`density`: synthetic training lines of which a given fraction hits a catalog anchor (a real, non-fatal
warning line from the corpus with its numbers varied), with the same planted OOM.

`coloured`: the realistic log as a colouring log handler (Rich's, coloredlogs) prints it: level words and
numbers wrapped in colour codes.

`repeated-oom`: one real CUDA OOM line, repeated; `long-line`: one line of the given size between healthy
lines, then the planted OOM.

    python benchmarks/genreal.py OUT --kind realistic --size 1G
"""

from __future__ import annotations

import argparse
import random
import re
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "corpus"
PLANTED = CORPUS / "gpu" / "gpu-cuda-oom" / "log.txt"
PLANTED_RANK = 3

# a line that may state a failure: removed, so that the planted OOM is the only cause in the log
_FAILURE_WORDS = re.compile(
    r"Traceback|Error|error|ERROR|Exception|exception|FAIL|[Ff]ail|[Ff]atal|Kill|kill|SIG[A-Z]{2,}|[Ss]ignal"
    r"|exitcode|exit code|exit status|[Tt]ime(?:d)? ?out|[Aa]bort|out of memory|OOM|[Aa]ssert|[Uu]nsupported"
    r"|[Tt]erminat|crash|[Ss]egmentation|core dump|refused|reset by peer|[Cc]annot|[Cc]ould not|[Ii]nvalid"
    r"|not found|No such file|[Pp]ermission denied|[Mm]ismatch|[Ii]llegal|[Dd]eprecat"
    r"|Duplicate GPU|data inconsistency|should have|Bootstrap|NCCL WARN|not compatible|no matching function"
    r"|[Dd]river|Connection closed|CUDA capability"
    r"|\[E\d{4}|^E\d{4} |\[E |preparing to dump|You marked|specialized"
)
_RANK_PREFIX = re.compile(r"^\s*(?:\[rank\d+\]|\[default\d+\]|\d+:|\[\d+,\d+\]<std(?:out|err)>:)")

# real benign lines that hit a catalog anchor (copied from corpus logs); numbers are varied per line
WARNINGS = (
    "V1129 14:43:57.936000 10417 torch/_dynamo/guards.py:5396] [0/{k}] [__recompiles] Recompiling function "
    "score in /home/user/jobs/6190c461/evaluate.py:10",
    "[rank{r}]:[W1129 14:43:{s:02d}.{us:06d} reducer.cpp:1431] Warning: find_unused_parameters=True was specified "
    "in DDP constructor, but did not find any unused parameters in the forward pass. This flag results in an extra "
    "traversal of the autograd graph every iteration,  which can adversely affect performance.",
)
HEALTHY = "[rank{r}]: step {step} loss {loss:.4f} lr 3.0e-04 grad_norm {gn:.3f} tokens/s {tps}"


def _clean_lines(text: str) -> Iterator[str]:
    """A corpus log without its causes: traceback blocks and failure-looking lines dropped."""
    in_traceback = False
    for line in text.splitlines():
        body = _RANK_PREFIX.sub("", line)
        if in_traceback:
            if body[:1].isspace() or not body.strip():
                continue
            in_traceback = False
            continue  # the exception statement that ends the traceback
        if "Traceback (most recent call last)" in line:
            in_traceback = True
            continue
        if _FAILURE_WORDS.search(line):
            continue
        yield line


def _states_a_failure():
    """A test by the catalog itself: a line on which a fatal cause or symptom signature fires. The word list
    above misses wordings the corpus gains (`Parameters which did not receive grad for rank 1`), and one such
    line left in would compete with the planted OOM."""
    from denpex.catalog import load
    from denpex.ingest.lines import build_line
    from denpex.scan.engine import LineMatcher

    matcher = LineMatcher(load())

    def fails(text: str) -> bool:
        line = build_line(text.encode("utf-8", "replace"), "corpus", 1, 1, None, None)
        for hit in matcher.match(line):
            role = hit.signature.role or hit.entry.role
            fatal = hit.signature.fatal if hit.signature.fatal is not None else hit.entry.fatal
            if fatal and role in ("cause", "symptom"):
                return True
        return False

    return fails


def corpus_lines() -> list[list[str]]:
    fails = _states_a_failure()
    logs = []
    for path in sorted(CORPUS.rglob("log.txt")):
        lines = [ln for ln in _clean_lines(path.read_text(encoding="utf-8", errors="replace")) if not fails(ln)]
        if lines:
            logs.append(lines)
    return logs


def _planted() -> str:
    return "".join(f"[rank{PLANTED_RANK}]: {line}\n" for line in PLANTED.read_text(encoding="utf-8").splitlines())


def _write(path: str, size: int, make_block: Iterator[str]) -> int:
    """Blocks until 90% of size, the planted OOM, blocks to size; whole lines only."""
    written = 0
    planted = False
    with open(path, "wb") as out:
        for text in make_block:
            block = text.encode("utf-8")
            if not planted and written + len(block) >= size * 9 // 10:
                out.write(_planted().encode("utf-8"))
                planted = True
            if written + len(block) >= size and planted:
                block = block[: size - written]
                out.write(block[: block.rfind(b"\n") + 1])
                break
            out.write(block)
            written += len(block)
    return Path(path).stat().st_size


def realistic(path: str, size: int, ranks: int = 8, seed: int = 1) -> int:
    return _write(path, size, _realistic_blocks(ranks, seed))


# what a colouring handler paints (Rich's, coloredlogs, torchtitan's metrics): the level word, and the numbers
# Rich's highlighter picks out
_LEVEL = re.compile(r"\b(INFO|WARNING|DEBUG)\b")
_NUMBER = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)(?![\w.])")


def _paint(line: str) -> str:
    line = _LEVEL.sub(lambda m: f"\x1b[32m{m.group(1)}\x1b[0m", line, count=1)
    return _NUMBER.sub(lambda m: f"\x1b[1;36m{m.group(1)}\x1b[0m", line)


def coloured(path: str, size: int, ranks: int = 8, seed: int = 1) -> int:
    """The realistic log as a colouring log handler prints it: its INFO/WARNING/DEBUG lines painted."""

    def blocks() -> Iterator[str]:
        block = next(_realistic_blocks(ranks, seed))
        painted = "".join(_paint(line) if _LEVEL.search(line) else line for line in block.splitlines(True))
        while True:
            yield painted

    return _write(path, size, blocks())


def _realistic_blocks(ranks: int, seed: int) -> Iterator[str]:
    rnd = random.Random(seed)
    logs = corpus_lines()

    def blocks() -> Iterator[str]:
        streams = [iter(()) for _ in range(ranks)]

        def stream(rank: int) -> Iterator[str]:
            while True:
                order = list(range(len(logs)))
                rnd.shuffle(order)
                for k in order:
                    for line in logs[k]:
                        yield line if _RANK_PREFIX.match(line) else f"[rank{rank}]: {line}"

        streams = [stream(r) for r in range(ranks)]
        while True:  # a few MB of interleaved text, then that block again: generating is the slow part
            parts = []
            total = 0
            while total < (4 << 20):
                rank = rnd.randrange(ranks)
                for _ in range(rnd.randrange(1, 20)):
                    line = next(streams[rank]) + "\n"
                    parts.append(line)
                    total += len(line)
            block = "".join(parts)
            while True:
                yield block

    return blocks()


def density(path: str, size: int, fraction: float, ranks: int = 8, seed: int = 1) -> int:
    rnd = random.Random(seed)

    def blocks() -> Iterator[str]:
        step = 0
        parts = []
        total = 0
        while total < (4 << 20):
            step += 1
            r = rnd.randrange(ranks)
            if rnd.random() < fraction:
                line = rnd.choice(WARNINGS).format(r=r, k=step % 64, s=step % 60, us=rnd.randrange(10**6))
            else:
                line = HEALTHY.format(r=r, step=step, loss=rnd.random() * 3, gn=rnd.random(), tps=rnd.randrange(10**5))
            parts.append(line + "\n")
            total += len(line) + 1
        block = "".join(parts)
        while True:
            yield block

    return _write(path, size, blocks())


def repeated_oom(path: str, size: int) -> int:
    line = next(x for x in PLANTED.read_text(encoding="utf-8").splitlines() if "OutOfMemoryError" in x)
    block = "".join(f"[rank{r}]: {line}\n" for r in range(8)) * 512

    def blocks() -> Iterator[str]:
        while True:
            yield block

    return _write(path, size, blocks())


def long_line(path: str, size: int) -> int:
    """Healthy lines, one line of `size` bytes of repeated log text, healthy lines, the planted OOM."""
    healthy = "".join(HEALTHY.format(r=0, step=s, loss=0.5, gn=0.1, tps=1000) + "\n" for s in range(1000))
    unit = b"[W reducer.cpp:1431] Warning: grad strides do not match bucket view strides Error " * 1
    with open(path, "wb") as out:
        out.write(healthy.encode())
        left = size
        while left > 0:
            piece = unit * min(max(left // len(unit), 1), 1 << 14)
            out.write(piece[:left])
            left -= len(piece[:left])
        out.write(b"\n" + healthy.encode() + _planted().encode())
    return Path(path).stat().st_size


def main() -> None:
    from benchmarks.genlog import parse_size

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out")
    parser.add_argument("--kind", choices=("realistic", "coloured", "density", "repeated-oom", "long-line"),
                        default="realistic")
    parser.add_argument("--size", type=parse_size, default=parse_size("256M"))
    parser.add_argument("--fraction", type=float, default=0.01, help="density: share of lines hitting an anchor")
    args = parser.parse_args()
    if args.kind == "realistic":
        n = realistic(args.out, args.size)
    elif args.kind == "coloured":
        n = coloured(args.out, args.size)
    elif args.kind == "density":
        n = density(args.out, args.size, args.fraction)
    elif args.kind == "repeated-oom":
        n = repeated_oom(args.out, args.size)
    else:
        n = long_line(args.out, args.size)
    print(f"wrote {n:,} bytes to {args.out}")


if __name__ == "__main__":
    import sys

    sys.path.insert(0, str(ROOT))
    main()
