"""Write label.json for every round-49a case and check it against the log.

The category and initiating rank come from what each case induced (run_all.sh / desync49a.py); the
decisive line is the first line of the log that matches the case's `pick` pattern (checked: it must be
an exact substring of a line of log.txt and, for ranks/ cases, of the decisive_file). Each pick was
chosen after reading the logs; the script refuses to write a label whose pattern finds nothing.

Usage: labels49a.py [POOL]   (default /tmp/h49a/pool)
"""
import json
import os
import re
import sys

POOL = sys.argv[1] if len(sys.argv) > 1 else "/tmp/h49a/pool"
SRC = "tests/corpus/generators/launchers/round49a/run_all.sh"

# Patterns for the decisive line (the part matched is the decisive substring).
DETAIL = r"(?:\[rank\d\]: )?RuntimeError: Detected mismatch between collectives on ranks\. Rank {r} is running collective: CollectiveFingerPrint\(SequenceNumber=\d+,? ?OpType=\w+"
ENFORCE = r"op\.preamble\.length <= op\.nbytes\. \d+ vs \d+\. Received data size doesn't match expected size\. Is there a distributed collective mismatch in your code\?"
TIMEOUT = r"(?:\[rank{r}\]: )?RuntimeError: \[[^\]]*\] Timed out waiting \d+ms for \w+ operation to complete"
MONITORED = r"\[Rank 0\]: Ranks? [\d, ]+ failed to pass monitoredBarrier in \d+ ms"
MON_SUMMARY = r"\[Rank 0\]: Ranks [\d, ]+ failed to pass monitoredBarrier in \d+ ms"
CLOSED = r"(?:\[rank{r}\]: )?RuntimeError: \[[^\]]*\] Connection closed by peer \[[\d.]+\]:\d+"
ANYR = r"\d"

WHAT = {
    "skip": "skips the gradient all_reduce at step {s} (a 'grad norm below threshold' shortcut only it takes) and goes on to the loss all_reduce",
    "order": "calls the lr broadcast before the gradient all_reduce at step {s} while the other ranks all_reduce first",
    "dtype": "all_reduces its loss as float64 at step {s} while the other ranks all_reduce float32",
    "op": "calls all_gather on its loss at step {s} while the other ranks call all_reduce",
    "count": "all_reduces a 2-element loss tensor at step {s} while the other ranks all_reduce 1 element",
    "short": "has a data shard one batch shorter, leaves the training loop after {s} steps and waits in the final barrier while the others are in the next step's all_reduce",
    "exit0": "has a data shard one batch shorter, leaves the training loop after {s} steps and exits without the final barrier while the others are in the next step's all_reduce",
    "extra_barrier": "calls an extra dist.barrier() (a debug sync only it runs) at step {s}",
    "extra_reduce": "all_reduces an extra grad-norm metric only it computes at step {s}",
    "monitored": "is stuck in a slow data fetch at step {s} while the others wait in dist.monitored_barrier(wait_all_ranks=True)",
}
FIX = {
    "skip": "Take the skip decision collectively (all_reduce the condition) or always call the gradient all_reduce on every rank.",
    "order": "Issue collectives in the same order on every rank (all_reduce, then broadcast).",
    "dtype": "Cast the tensor to the same dtype on every rank before the all_reduce.",
    "op": "Call the same collective (all_reduce) on every rank.",
    "count": "All-reduce tensors of the same shape on every rank.",
    "short": "Give every rank the same number of batches (even shards / drop_last, or Join for uneven inputs).",
    "exit0": "Give every rank the same number of batches (even shards / drop_last, or Join for uneven inputs).",
    "extra_barrier": "Run the debug barrier on every rank or not at all.",
    "extra_reduce": "Compute and all_reduce the metric on every rank, or log it locally without a collective.",
    "monitored": "Find why the named rank(s) stall in data loading (or raise the timeout); the barrier itself is only the detector.",
}

# id: launcher, scenario, culprit ranks, step, category, pick pattern, pick-rank ('culprit', 'waiting' or None),
#     confidence, what the log shows (root-cause tail), collateral
CASES = {
    "run-r49a-torchrun-skip": ("torchrun", "skip", [3], 2, "dist.collective_mismatch", ENFORCE, None, "high",
        "gloo's enforce on the culprit says the received size does not match (gradient chunk vs loss) and rank 3 alone logs that it skips the gradient sync",
        ["rank 3 aborts (SIGABRT, 'terminate called after throwing gloo::EnforceNotMet')", "ranks 0 and 2 fail with 'Connection closed by peer' / 'Connection reset by peer' in the gradient all_reduce", "torchrun SIGTERMs the rest and names rank 3 (exitcode -6) as root cause"]),
    "run-r49a-shell-skip-detail": ("shell", "skip", [2], 3, "dist.collective_mismatch", DETAIL, "first", "high",
        "with TORCH_DISTRIBUTED_DEBUG=DETAIL every rank reports a collective fingerprint mismatch naming rank 2, which alone logs that it skips the gradient sync",
        ["the same fingerprint mismatch on every rank", "every rank exits with status 1"]),
    "run-r49a-spawn-skip-detail-cppinfo": ("mp.spawn", "skip", [4], 2, "dist.collective_mismatch", DETAIL, "first", "high",
        "with TORCH_DISTRIBUTED_DEBUG=DETAIL the fingerprint check reports the mismatch against rank 4, which alone logs that it skips the gradient sync",
        ["TORCH_CPP_LOG_LEVEL=INFO c10d store trace lines", "mp.spawn terminates the other processes and re-raises the first failing process's error"]),
    "run-r49a-mpirun-order": ("mpirun", "order", [2], 2, "dist.collective_timeout", TIMEOUT, "waiting", "medium",
        "the log shows only gloo timeouts on every rank (rank 2's and rank 3's differ only in recv/send); nothing names rank 2 as the one that broadcast first",
        ["every rank times out in gloo", "mpirun aborts the job after the first non-zero exit"]),
    "run-r49a-torchrun-order-detail": ("torchrun", "order", [4], 2, "dist.collective_mismatch", DETAIL, "first", "high",
        "with TORCH_DISTRIBUTED_DEBUG=DETAIL the fingerprint mismatch shows rank 4 running BROADCAST where the others run ALLREDUCE",
        ["the same fingerprint mismatch on every rank", "torchrun SIGTERMs the remaining ranks"]),
    "run-r49a-spawn-dtype": ("mp.spawn", "dtype", [1], 3, "dist.collective_mismatch", ENFORCE, None, "medium",
        "gloo's enforce states a received-size mismatch (8 vs 4 bytes) but not which rank sent the float64 tensor",
        ["a process aborts with 'terminate called after throwing gloo::EnforceNotMet'", "mp.spawn terminates the others and reports a process killed by SIGABRT"]),
    "run-r49a-torchrun-op": ("torchrun", "op", [5], 2, "dist.collective_timeout", TIMEOUT, "waiting", "medium",
        "the log shows only gloo timeouts on every rank (rank 5's is a send timeout, the others recv); nothing names rank 5 as the one that called all_gather",
        ["every rank times out in gloo", "torchrun SIGTERMs the remaining ranks"]),
    "run-r49a-shell-count": ("shell", "count", [2], 3, "dist.collective_timeout", TIMEOUT, "waiting", "medium",
        "the log shows only gloo timeouts on every rank; nothing names rank 2 as the one with the 2-element tensor",
        ["rank 1 fails with 'Connection closed by peer' once another rank has exited", "the other ranks time out in gloo", "every rank exits with status 1"]),
    "run-r49a-mpirun-dtype-detail": ("mpirun", "dtype", [3], 2, "dist.collective_mismatch", DETAIL, "first", "high",
        "with TORCH_DISTRIBUTED_DEBUG=DETAIL the fingerprint mismatch shows rank 3 with TensorDtypes=Double where the others have Float",
        ["the same fingerprint mismatch on every rank", "mpirun aborts the job"]),
    "run-r49a-spawn-op-detail-cppinfo": ("mp.spawn", "op", [2], 3, "dist.collective_mismatch", DETAIL, "first", "high",
        "with TORCH_DISTRIBUTED_DEBUG=DETAIL the fingerprint mismatch shows rank 2 running ALLGATHER where the others run ALLREDUCE",
        ["TORCH_CPP_LOG_LEVEL=INFO c10d store trace lines", "mp.spawn terminates the other processes and re-raises the first failing process's error"]),
    "run-r49a-torchrun-count-detail": ("torchrun", "count", [1], 2, "dist.collective_mismatch", DETAIL, "first", "high",
        "with TORCH_DISTRIBUTED_DEBUG=DETAIL the fingerprint mismatch shows rank 1 with TensorShape=[2] where the others have [1]",
        ["the same fingerprint mismatch on every rank", "torchrun SIGTERMs the remaining ranks"]),
    "run-r49a-torchrun-short": ("torchrun", "short", [2], 4, "dist.collective_timeout", TIMEOUT, "waiting", "high",
        "rank 2 alone logs 'training finished after 4 steps' and then every rank times out in gloo",
        ["every rank times out in gloo (rank 2 in its final barrier)", "torchrun reports the first failed rank, not rank 2"]),
    "run-r49a-spawn-exit0": ("mp.spawn", "exit0", [3], 4, "dist.peer_or_store_failure", CLOSED, None, "high",
        "rank 3 alone logs 'training finished after 4 steps' and leaves; the others lose the connection to it in the next gradient all_reduce",
        ["mp.spawn terminates the others and re-raises process 0's 'Connection closed by peer'"]),
    "run-r49a-mpirun-short": ("mpirun", "short", [4], 4, "dist.collective_timeout", TIMEOUT, "waiting", "high",
        "rank 4 alone logs 'training finished after 4 steps' and then every rank times out in gloo",
        ["every rank times out in gloo (rank 4 in its final barrier)", "mpirun aborts the job"]),
    "run-r49a-shell-short-detail": ("shell", "short", [1], 4, "dist.collective_mismatch", DETAIL, "first", "high",
        "rank 1 alone logs 'training finished after 4 steps'; with TORCH_DISTRIBUTED_DEBUG=DETAIL the fingerprint check shows rank 1 in BARRIER while the others are in ALLREDUCE",
        ["the same fingerprint mismatch on every rank", "every rank exits with status 1"]),
    "run-r49a-torchrun-exit0-detail-cppinfo": ("torchrun", "exit0", [3], 4, "dist.collective_timeout", MONITORED, None, "high",
        "rank 3 alone logs 'training finished after 4 steps' and exits; DETAIL's per-collective monitored barrier on rank 0 reports that rank 3 failed to pass it",
        ["ranks 1, 2 and 4 report 'received errors while waiting for send/recv from rank 0' with 'Connection closed by peer'", "TORCH_CPP_LOG_LEVEL=INFO c10d trace lines"]),
    "run-r49a-spawn-extra-barrier": ("mp.spawn", "extra_barrier", [4], 2, "dist.collective_timeout", TIMEOUT, None, "medium",
        "rank 4 alone logs 'debug sync before metrics'; mp.spawn shows only one gloo timeout, from another process",
        ["mp.spawn terminates the other processes and re-raises the first failing process's timeout"]),
    "run-r49a-shell-extra-reduce": ("shell", "extra_reduce", [3], 2, "dist.collective_timeout", TIMEOUT, "waiting", "medium",
        "only rank 3 logs a 'global grad norm' line; the extra all_reduce pairs with the others' loss all_reduce and later every rank times out",
        ["ranks 0, 2 and 4 fail with 'Connection closed by peer' once another rank has exited", "ranks 1, 3 and 5 time out in gloo", "every rank exits with status 1"]),
    "run-r49a-mpirun-extra-barrier": ("mpirun", "extra_barrier", [1], 3, "dist.collective_timeout", TIMEOUT, "waiting", "medium",
        "rank 1 alone logs 'debug sync before metrics', then every rank times out in gloo without naming a rank",
        ["every rank times out in gloo", "mpirun aborts the job"]),
    "run-r49a-torchrun-extra-reduce-detail": ("torchrun", "extra_reduce", [2], 3, "dist.collective_mismatch", DETAIL, "first", "high",
        "the extra all_reduce has the same fingerprint as the others' loss all_reduce, so with TORCH_DISTRIBUTED_DEBUG=DETAIL the mismatch shows one collective later: rank 2 all_reduces shape [1] where the others all_reduce the [2372] gradients",
        ["the same fingerprint mismatch on every rank", "torchrun SIGTERMs the remaining ranks"]),
    "run-r49a-mpirun-extra-reduce-detail": ("mpirun", "extra_reduce", [5], 2, "dist.collective_mismatch", DETAIL, "first", "high",
        "the extra all_reduce has the same fingerprint as the others' loss all_reduce, so with TORCH_DISTRIBUTED_DEBUG=DETAIL the mismatch shows one collective later: rank 5 runs ALLREDUCE where the others run the lr BROADCAST",
        ["the same fingerprint mismatch on every rank", "TORCH_CPP_LOG_LEVEL=INFO c10d trace lines", "mpirun aborts the job"]),
    "run-r49a-shell-extra-barrier-detail": ("shell", "extra_barrier", [3], 2, "dist.collective_mismatch", DETAIL, "first", "high",
        "with TORCH_DISTRIBUTED_DEBUG=DETAIL the fingerprint mismatch shows rank 3 in BARRIER while the others are in ALLREDUCE",
        ["the same fingerprint mismatch on every rank", "every rank exits with status 1"]),
    "run-r49a-torchrun-monitored": ("torchrun", "monitored", [2], 2, "dist.collective_timeout", MONITORED, None, "high",
        "rank 0's monitored_barrier reports that rank 2 failed to pass it; rank 2 last logged fetching a remote batch",
        ["ranks 1 and 3 report 'received errors while waiting for send/recv from rank 0' with a gloo recv timeout", "torchrun SIGTERMs the stuck rank"]),
    "run-r49a-mpirun-monitored-two": ("mpirun", "monitored", [1, 3], 2, "dist.collective_timeout", MONITORED, None, "medium",
        "rank 0's monitored_barrier names ranks 1 and 3 as failing to pass it; both were stuck at the same time, the label names the lower one",
        ["ranks 2 and 4 report 'received errors while waiting for send/recv from rank 0'", "mpirun aborts the job"]),
    "run-r49a-spawn-monitored": ("mp.spawn", "monitored", [3], 3, "dist.collective_timeout", MONITORED, None, "high",
        "rank 0's monitored_barrier reports that rank 3 failed to pass it; rank 3 last logged fetching a remote batch",
        ["mp.spawn terminates the other processes and re-raises rank 0's error"]),
    "run-r49a-shell-monitored-two": ("shell", "monitored", [2, 5], 2, "dist.collective_timeout", MONITORED, None, "medium",
        "rank 0's monitored_barrier names ranks 2 and 5 as failing to pass it; both were stuck at the same time, the label names the lower one",
        ["ranks 1, 3 and 4 report 'received errors while waiting for send/recv from rank 0'", "the stuck ranks later fail with 'Connection closed by peer'"]),
    "run-r49a-torchrun-healthy": ("torchrun", "none", [], 0, "none", None, None, "high", "", []),
    "run-r49a-mpirun-healthy": ("mpirun", "none", [], 0, "none", None, None, "high", "", []),
    "run-r49a-spawn-healthy-detail": ("mp.spawn", "none", [], 0, "none", None, None, "high", "", []),
    "run-r49a-shell-healthy": ("shell", "none", [], 0, "none", None, None, "high", "", []),
}

PREFIX = re.compile(r"^(\[default(\d)\]:|\[1,(\d)\]<std\w+>:|\[r(\d)\] )")


def line_rank(line):
    m = PREFIX.match(line)
    if m:
        return int(next(g for g in m.groups()[1:] if g is not None))
    m = re.search(r"\[rank(\d)\]", line)
    return int(m.group(1)) if m else None


def pick(lines, pattern, mode, culprits):
    """First line matching pattern; mode 'waiting': on a rank other than the culprit."""
    for ln in lines:
        m = re.search(pattern.format(r=ANYR), ln)
        if not m:
            continue
        if mode == "waiting" and line_rank(ln) in culprits:
            continue
        return ln, m.group(0)
    return None, None


def main():
    n = 0
    for cid, (launcher, scen, culprits, step, cat, pattern, mode, conf, shows, coll) in CASES.items():
        d = os.path.join(POOL, cid)
        if not os.path.isdir(d):
            print("MISSING", cid)
            continue
        log = open(os.path.join(d, "log.txt"), encoding="utf-8", errors="replace").read().splitlines()
        lab = {"id": cid, "source": f"real run: {SRC} {cid} (desync49a.py), torch 2.13.0 CPU, gloo",
               "category": cat, "fatal": cat != "none"}
        if cat == "none":
            lab.update(decisive_line=None, also_acceptable=[], initiating_rank=None, collateral=[], operator=None,
                       root_cause="Healthy run: all ranks issue the same collectives in the same order and finish.",
                       fix="Nothing to fix.")
        else:
            full, dec = pick(log, pattern, mode, culprits)
            if dec is None:
                print("NO DECISIVE LINE", cid)
                continue
            also = []
            if pattern is MONITORED:  # rank 0's summary line ('Ranks i, j failed ...') says the same
                for ln in log:
                    m = re.search(MON_SUMMARY, ln)
                    if m and m.group(0) != dec:
                        also.append(m.group(0))
                        break
            if pattern is DETAIL:  # the culprit's own fingerprint line states the same mismatch
                for ln in log:
                    m = re.search(DETAIL.format(r=culprits[0]), ln)
                    if m and m.group(0) != dec:
                        also.append(m.group(0))
                        break
            what = WHAT[scen].format(s=step)
            if len(culprits) > 1:
                what = what.replace(" is stuck", " are stuck")
            who = "Ranks " + " and ".join(map(str, culprits)) if len(culprits) > 1 else f"Rank {culprits[0]}"
            lab.update(decisive_line=dec, also_acceptable=also, initiating_rank=culprits[0], collateral=coll,
                       operator=None, root_cause=f"{who} {what}, so the ranks fall out of step in their collectives; {shows}.",
                       fix=FIX[scen])
        lab.update(launcher=launcher, framework="plain", genuine=False,
                   induced_how=f"desync49a.py --fault {scen}" + (f" --culprit {','.join(map(str, culprits))} --step {step}" if culprits else ""),
                   confirmed_by="induced", confidence=conf, torch_version="2.13.0")
        if os.path.isdir(os.path.join(d, "ranks")) and lab["decisive_line"]:
            for root, _, files in sorted(os.walk(os.path.join(d, "ranks"))):
                for f in sorted(files):
                    p = os.path.join(root, f)
                    if lab["decisive_line"] in open(p, encoding="utf-8", errors="replace").read():
                        lab.setdefault("decisive_file", os.path.relpath(p, os.path.join(d, "ranks")))
            assert "decisive_file" in lab, cid
        # checks: decisive and also_acceptable lines are substrings of a line of log.txt
        for s in [lab["decisive_line"]] + lab["also_acceptable"]:
            if s is not None:
                assert any(s in ln for ln in log), (cid, s)
        json.dump(lab, open(os.path.join(d, "label.json"), "w"), indent=1, ensure_ascii=False)
        n += 1
        print(f"{cid:42s} {cat:28s} rank={lab['initiating_rank']} conf={conf} file={lab.get('decisive_file')}\n    {lab['decisive_line']}")
    print(n, "labels written")


if __name__ == "__main__":
    main()
