"""Score a labelled folder at every commit of a range: what each change did to it, case by case.

    python tests/blind/measure_commits.py BASE [HEAD] [--cases tests/blind/test] [--out effect.json]

Each commit is checked out into a temporary worktree and scored on the same cases (those of the working
tree: the labels never change between commits) through the evaluation API. The report lists, per commit that
changed any case, the cases it fixed and broke on each check. It runs Denpex's code from history, so run it
only on your own repository.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CHECKS = ("category", "decisive_line", "rank", "verdict", "healthy_clean")


def _git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=REPO, check=True, capture_output=True, text=True).stdout


def _score(commit: str, cases: Path, python: str) -> dict[str, dict[str, bool]]:
    with tempfile.TemporaryDirectory() as tmp:
        tree = Path(tmp) / "tree"
        _git("worktree", "add", "--detach", str(tree), commit)
        try:
            env = dict(os.environ, PYTHONPATH=str(tree / "src"), DENPEX_NO_CACHE="1")
            done = subprocess.run([python, "-c", _PER_CASE, str(cases)], env=env, capture_output=True, text=True,
                                  check=True, cwd=tmp)
        finally:
            _git("worktree", "remove", "--force", str(tree))
    return json.loads(done.stdout)


# per-case checks through the evaluation API (`denpex eval --format json` lists only the misses)
_PER_CASE = (
    "import json, sys\n"
    "from pathlib import Path\n"
    "from denpex.evaluate import evaluate\n"
    "score = evaluate([sys.argv[1]])\n"
    "print(json.dumps({Path(r.case).name: r.checks for r in score.results}))\n"
)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("base")
    parser.add_argument("head", nargs="?", default="HEAD")
    parser.add_argument("--cases", default=str(REPO / "tests" / "blind" / "test"))
    parser.add_argument("--out")
    args = parser.parse_args()
    commits = [args.base, *_git("rev-list", "--reverse", f"{args.base}..{args.head}").split()]
    cases = Path(args.cases).resolve()
    previous: dict[str, dict[str, bool]] | None = None
    effects = []
    for commit in commits:
        scores = _score(commit, cases, sys.executable)
        totals = {c: sum(1 for s in scores.values() if s.get(c)) for c in CHECKS}
        subject = _git("log", "-1", "--format=%h %s", commit).strip()
        change: dict[str, dict[str, list[str]]] = {}
        if previous is not None:
            for check in CHECKS:
                fixed = sorted(k for k, s in scores.items() if s.get(check) and not previous.get(k, {}).get(check))
                broke = sorted(k for k, s in scores.items() if check in s and not s[check]
                               and previous.get(k, {}).get(check))
                if fixed or broke:
                    change[check] = {"fixed": fixed, "broke": broke}
        if previous is None or change:
            print(f"{subject[:100]}\n  totals {totals}")
            for check, moved in change.items():
                print(f"  {check}: +{len(moved['fixed'])} -{len(moved['broke'])}  fixed {moved['fixed']}"
                      f"{'  broke ' + str(moved['broke']) if moved['broke'] else ''}")
        effects.append({"commit": subject, "totals": totals, "change": change})
        previous = scores
    if args.out:
        Path(args.out).write_text(json.dumps(effects, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
