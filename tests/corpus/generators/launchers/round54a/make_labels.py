"""Writes label.json for every round54a case in POOL.  Labels come from what was induced (table C); the
decisive line is the FIRST timeout report of a waiting rank (any rank but the culprit) found in log.txt,
also_acceptable the other waiting ranks' timeout lines, and what the slow rank printed after waking is read
from its own lines.  Every decisive / also_acceptable line is checked to be a substring of a log.txt line
(and of ranks/<decisive_file> where set)."""
import json, os, re, sys
POOL = sys.argv[1] if len(sys.argv) > 1 else "/tmp/h54a/pool"
SRC = "real run: tests/corpus/generators/launchers/round54a/run_all.sh {id}, torch 2.13.0 CPU, gloo, {w} ranks"

HOW = {
 "dataload": "rank {r}'s data loader sleeps {s} s fetching its batch at step {k} (a stalled remote shard fetch)",
 "ckpt": "rank {r} alone saves a local checkpoint at step {k}: 1 MiB writes with fsync each, for {s} s",
 "eval": "rank {r} alone runs an evaluation pass of {n} batches at step {k} before the gradient all_reduce",
 "affinity": "rank {r} pins itself (os.sched_setaffinity) to core 0, where a busy-loop thread of its own also spins, then runs {n} iterations of pure-Python preprocessing at step {k} (CPU starvation)",
 "pyloop": "rank {r} runs a heavy pure-Python loop ({n} iterations) building its batch at step {k}",
 "gc": "rank {r} builds {n} cyclic objects at step {k} (automatic GC passes, then a logged gc.collect() pause)",
 "retry": "rank {r}'s shard read fails with EIO for {s} s at step {k} and is retried with exponential backoff 1,2,4,8,16 s (each retry logged as a WARNING)",
}
WHAT = {
 "dataload": "a stalled data fetch (sleep) in its loader", "ckpt": "a slow fsync-per-MiB local checkpoint save",
 "eval": "a rank-only evaluation pass", "affinity": "CPU starvation (pinned to one core shared with a busy-loop thread)",
 "pyloop": "a heavy pure-Python loop in its batch preparation", "gc": "a long garbage-collection pause (millions of reference cycles)",
 "retry": "a flaky read retried with exponential backoff",
}
FIX = {
 "dataload": "Make that rank's data fetch robust (prefetch, local cache, fetch timeout) or raise the process-group timeout above the worst fetch time.",
 "ckpt": "Save checkpoints asynchronously / on all ranks together (or to faster storage), or raise the process-group timeout around the save.",
 "eval": "Run evaluation on all ranks (sharded) or outside the collective step, or raise the process-group timeout.",
 "affinity": "Remove the CPU pinning / the stray busy thread on that rank so it gets its share of CPU.",
 "pyloop": "Move the heavy pure-Python preprocessing off the training step (DataLoader workers, vectorize) or raise the timeout.",
 "gc": "Avoid building millions of cyclic objects (cache tensors/arrays, gc.freeze, break cycles) on that rank.",
 "retry": "Fix the flaky storage read (or cap the retries/backoff below the process-group timeout).",
}
# id: (launcher, SLOW, culprit, step, world, timeout, slow_s or n, ts, catch, healthy, logdir)
C = {
 "run-r54a-loop-dataload-sleep":      ("shell", "dataload", 2, 3, 4, 15, 25, 1, 0, 0, 0),
 "run-r54a-loop-ckpt-fsync-nots":     ("shell", "ckpt", 3, 2, 5, 20, 28, 0, 0, 0, 0),
 "run-r54a-loop-affinity-starved":    ("shell", "affinity", 1, 4, 4, 15, "150000000", 1, 0, 0, 0),
 "run-r54a-loop-retry-backoff-nots":  ("shell", "retry", 4, 1, 5, 15, 25, 0, 0, 0, 0),
 "run-r54a-loop-catch-gc-pause":      ("shell", "gc", 2, 3, 4, 15, "20000000", 1, 1, 0, 0),
 "run-r54a-loop-healthy-slow-loader": ("shell", "dataload", 3, 2, 4, 20, 8, 1, 0, 1, 0),
 "run-r54a-torchrun-eval-rank1":      ("torchrun", "eval", 1, 3, 4, 15, "6500", 1, 0, 0, 0),
 "run-r54a-torchrun-pyloop-nots":     ("torchrun", "pyloop", 3, 2, 4, 20, "320000000", 0, 0, 0, 0),
 "run-r54a-torchrun-dataload-w5":     ("torchrun", "dataload", 2, 4, 5, 15, 17, 1, 0, 0, 0),
 "run-r54a-torchrun-catch-dataload":  ("torchrun", "dataload", 3, 1, 4, 15, 17, 1, 1, 0, 0),
 "run-r54a-torchrun-healthy-eval":    ("torchrun", "eval", 2, 3, 4, 20, "1200", 1, 0, 1, 0),
 "run-r54a-torchrun-logdir-ckpt":     ("torchrun", "ckpt", 2, 3, 4, 20, 22, 1, 0, 0, 1),
 "run-r54a-torchrun-logdir-retry-nots": ("torchrun", "retry", 1, 2, 5, 15, 10, 0, 0, 0, 1),
 "run-r54a-spawn-dataload-rank1":     ("mp.spawn", "dataload", 1, 3, 4, 15, 16, 1, 0, 0, 0),
 "run-r54a-spawn-affinity-nots":      ("mp.spawn", "affinity", 2, 2, 5, 15, "120000000", 0, 0, 0, 0),
 "run-r54a-spawn-gc-pause":           ("mp.spawn", "gc", 3, 4, 4, 15, "20000000", 1, 0, 0, 0),
 "run-r54a-spawn-ckpt-nots":          ("mp.spawn", "ckpt", 4, 3, 5, 20, 21, 0, 0, 0, 0),
 "run-r54a-spawn-eval-nots":          ("mp.spawn", "eval", 2, 1, 4, 20, "7000", 0, 0, 0, 0),
 "run-r54a-spawn-healthy-pyloop":     ("mp.spawn", "pyloop", 1, 3, 4, 20, "60000000", 1, 0, 1, 0),
}
NOTES = json.load(open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "wake_notes.json")))

RANK_RE = re.compile(r"\[rank ?(\d)\]|\[default(\d)\]|training aborted on rank (\d)|-- Process (\d) terminated")


def rank_of(line, last):
    m = RANK_RE.search(line)
    if m:
        return int(next(g for g in m.groups() if g is not None))
    return last


def main():
    for cid, (launcher, slow, r, k, w, tmo, sv, ts, catch, healthy, logdir) in C.items():
        d = os.path.join(POOL, cid)
        if not os.path.isdir(d):
            print("MISSING", cid); continue
        lines = open(os.path.join(d, "log.txt"), errors="replace").read().splitlines()
        how = HOW[slow].format(r=r, s=sv, n=sv, k=k)
        how = f"SLOW={slow} CULPRIT={r} SLOW_STEP={k}, world {w}, process-group timeout {tmo} s; " + how + \
              ("; every rank catches the failure, logs it with logging.exception and exits 1" if catch else "") + \
              ("; log lines carry timestamps" if ts else "; log lines carry no timestamps")
        lab = {"id": cid, "source": SRC.format(id=cid, w=w)}
        if healthy:
            assert not any("Error" in l or "Timed out" in l for l in lines), cid
            lab.update(category="none", fatal=False, decisive_line=None, also_acceptable=[], initiating_rank=None,
                       collateral=[], operator=None,
                       root_cause=f"No failure: rank {r} is slowed by {WHAT[slow]} at step {k}, but stays within the {tmo} s timeout; the other ranks wait in all_reduce (their step time grows) and the job finishes.",
                       fix="None needed.")
        else:
            tmos, last = [], None
            for l in lines:
                last = rank_of(l, last)
                if "Timed out waiting" in l:
                    tmos.append((last, l))
            waiting = [(rk, l) for rk, l in tmos if rk != r]
            assert waiting, cid
            dec = waiting[0][1].strip()
            # strip a leading tee prefix so the line also matches ranks/ files
            dec = re.sub(r"^\[default\d\]:", "", dec)
            if ts and not dec.startswith("[rank"):
                pass
            also = []
            for rk, l in waiting[1:]:
                s = re.sub(r"^\[default\d\]:", "", l.strip())
                if s != dec and s not in also and rk not in [x[0] for x in waiting[:1]]:
                    also.append(s)
            note = NOTES[cid]["note"]
            also += NOTES[cid].get("also", [])
            lab.update(category="dist.collective_timeout", fatal=True, decisive_line=dec, also_acceptable=also,
                       initiating_rank=r,
                       collateral=[f"the other ranks' gloo timeouts in the step-{k} gradient all_reduce",
                                   f"after waking, slow rank {r} printed: {note}"],
                       operator=None,
                       root_cause=f"Rank {r} was slowed by {WHAT[slow]} at step {k} beyond the {tmo} s process-group timeout, so the waiting ranks timed out in the gradient all_reduce; rank {r} was not dead and reported its own error only after waking ({note}).",
                       fix=FIX[slow])
        lab.update(launcher=launcher, framework="plain", torch_version="2.13.0", genuine=False, induced_how=how,
                   confirmed_by="induced", confidence="high" if not healthy else "high")
        if logdir and not healthy:
            for rk, l in [(x, y) for x, y in tmos if x != r][:1]:
                lab["decisive_file"] = f"attempt_0/{rk}/stderr.log"
                txt = open(os.path.join(d, "ranks", lab["decisive_file"]), errors="replace").read()
                assert lab["decisive_line"] in txt, (cid, "decisive_file")
        for s in ([lab["decisive_line"]] if lab["decisive_line"] else []) + lab["also_acceptable"]:
            assert any(s in l for l in lines), (cid, s)
        json.dump(lab, open(os.path.join(d, "label.json"), "w"), indent=2, ensure_ascii=False)
        print(cid, lab["category"], lab["initiating_rank"], "|", lab["decisive_line"])


if __name__ == "__main__":
    main()
