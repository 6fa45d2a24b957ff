"""Split the blind pool into a dev half and a test half, at random, recorded by a seed.

    python tests/blind/split.py            # check every case in pool/, then move it to dev/ or test/
    python tests/blind/split.py --check    # only check the labels of every case in pool/, dev/ and test/
    python tests/blind/split.py --round 2 --seed 20261202   # the second collection: pool2/ -> dev2/, test2/

The assignment of a case depends only on the seed, its stratum and the other members of that stratum:
strata are (public thread, category) and (real run, scenario), so each half gets its share of every category,
of the healthy logs and of every launcher scenario. Within a stratum the cases are ordered by a hash of the
seed and their id, and dealt alternately to test and dev (the first one by the seed's coin). `SPLIT.json`
records the seed and the resulting assignment. Labels were written before Denpex ran on any of these logs.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import re
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SEED = 20261201
CATEGORIES = {
    "compile.lowering_error", "compile.cpp_toolchain_missing", "compile.cpp_compile_error",
    "compile.cache_corruption", "compile.triton_error", "compile.version_mismatch",
    "compile.graph_break_data_dependent", "compile.dynamo_unsupported", "compile.recompile_limit",
    "compile.dynamic_shape_guard", "compile.cudagraph_incompatible", "compile.backend_internal_error",
    "dist.collective_timeout", "dist.nccl_error", "dist.peer_or_store_failure", "dist.collective_mismatch",
    "dist.teardown_abort", "mem.cuda_oom", "mem.host_oom", "mem.cpu_alloc_failure", "cuda.illegal_memory_access",
    "cuda.device_side_assert", "env.cuda_driver_or_arch", "user.code_error", "none",
}


def problems(case: Path) -> list[str]:
    """What is wrong with a case folder: the label format of tests/corpus/README.md."""
    out: list[str] = []
    label_path = case / "label.json"
    if not label_path.is_file():
        return ["no label.json"]
    label = json.loads(label_path.read_text(encoding="utf-8"))
    if label.get("id") != case.name:
        out.append(f"id {label.get('id')!r} is not the folder name")
    if label.get("category") not in CATEGORIES:
        out.append(f"unknown category {label.get('category')!r}")
    ranks = case / "ranks"
    log = case / "log.txt"
    if not log.is_file() and not ranks.is_dir():
        return out + ["no log.txt and no ranks/"]
    decisive = label.get("decisive_line")
    if label.get("category") == "none":
        if decisive is not None:
            out.append("a healthy case has no decisive_line")
        return out
    if not decisive:
        return out + ["no decisive_line"]
    if label.get("decisive_file"):
        named = ranks / str(label["decisive_file"])
        if not named.is_file():
            return out + [f"decisive_file {label['decisive_file']!r} is not a file under ranks/"]
        texts = [_text(named)]
    elif log.is_file():
        texts = [_text(log)]
    else:
        texts = [_text(p) for p in ranks.rglob("*") if p.is_file()]
    wanted = [decisive, *label.get("also_acceptable", [])]
    if not any(want in line for text in texts for line in text.splitlines() for want in wanted):
        out.append("decisive_line is not a substring of any one line of the log")
    return out


def _text(path: Path) -> str:
    """A log's text; a gzip-compressed one (`log.txt.gz`, as a tool stored it) decompressed."""
    if path.suffix == ".gz":
        with gzip.open(path, "rt", encoding="utf-8", errors="replace") as handle:
            return handle.read()
    return path.read_text(encoding="utf-8", errors="replace")


def stratum(case: Path) -> str:
    label = json.loads((case / "label.json").read_text(encoding="utf-8"))
    # GPU runs came after the first deal: strata of their own leave every earlier case where it was
    # real runs are named run-..., or runN-... after their round (run7-, run14-). Rounds 11-13 named theirs runN-
    # too but were dealt as threads: kept so, a rerun of their split must give the recorded halves
    prefix = case.name.split("-", 1)[0]
    numbered = re.fullmatch(r"run(\d+)", prefix)
    real_run = prefix in ("run", "run7") or (numbered is not None and int(numbered.group(1)) >= 14)
    kind = "gpu-run" if case.name.startswith("run-gpu") else "run" if real_run else "thread"
    return f"{kind}:{label['category']}"


def _order(seed: int, name: str) -> str:
    return hashlib.sha256(f"{seed}:{name}".encode()).hexdigest()


def assign(cases: list[Path], seed: int) -> dict[str, str]:
    by_stratum: dict[str, list[Path]] = {}
    for case in cases:
        by_stratum.setdefault(stratum(case), []).append(case)
    halves: dict[str, str] = {}
    for name, members in sorted(by_stratum.items()):
        members.sort(key=lambda c: _order(seed, c.name))
        first_to_test = int(_order(seed, name), 16) % 2 == 0
        for i, case in enumerate(members):
            halves[case.name] = "test" if (i % 2 == 0) == first_to_test else "dev"
    return halves


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only check the labels")
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--round", type=int, default=1, help="which collection: 2 splits pool2/ into dev2/, test2/")
    args = parser.parse_args()
    suffix = "" if args.round == 1 else str(args.round)
    halves = [HERE / f"{half}{suffix}" for half in ("pool", "dev", "test")]
    every = sorted(p.parent for half in halves for p in half.glob("*/label.json"))
    extra = sorted(p.parent for p in (HERE / "dev-extra").glob("*/label.json")) if not suffix else []
    bad = {case.name: problems(case) for case in every + extra}
    bad = {k: v for k, v in bad.items() if v}
    for name, found in bad.items():
        print(f"{name}: {'; '.join(found)}", file=sys.stderr)
    if args.check or bad:
        print(f"{len(every) + len(extra)} cases, {len(bad)} with problems")
        return 1 if bad else 0
    halves = assign(every, args.seed)
    for case in every:
        target = HERE / f"{halves[case.name]}{suffix}" / case.name
        if case != target:
            target.parent.mkdir(exist_ok=True)
            shutil.move(str(case), str(target))
    record = {"seed": args.seed, "dev": sorted(k for k, v in halves.items() if v == "dev"),
              "test": sorted(k for k, v in halves.items() if v == "test")}
    (HERE / f"SPLIT{suffix}.json").write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    print(f"{len(record['dev'])} dev, {len(record['test'])} test (seed {args.seed})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
