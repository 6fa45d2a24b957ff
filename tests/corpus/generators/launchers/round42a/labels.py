"""labels.py [OUT] - write label.json for every round-42a case folder in OUT (default /work/helpers/stage42).
The decisive line is the first log line (log.txt, or the ranks/ tree for torchrun --log-dir) reporting the gloo
timeout on a waiting rank; it is checked to be a substring of a line of that file. initiating_rank is the stuck
rank where the log lets a reader single it out, else null (JUDGE below says why, case by case)."""
import glob, json, os, re, sys

OUT = sys.argv[1] if len(sys.argv) > 1 else "/work/helpers/stage42"
SRC = "real run: tests/corpus/generators/launchers/round42a/run_all.sh {id} (job.py), torch 2.13.0 CPU, gloo"
LAUNCH = {"torchrun": "torchrun", "spawn": "mp.spawn", "mpirun": "mpirun"}
HOW = {"torchrun": "torchrun --tee 3 > log.txt 2>&1",
       "torchrun-logdir": "torchrun --log-dir D --redirects 3 > log.txt 2>&1 (worker output only in ranks/)",
       "spawn": "python job.py --spawn N (mp.spawn) > log.txt 2>&1",
       "mpirun": "mpirun --oversubscribe --tag-output -np N python job.py > log.txt 2>&1"}
ROOT = {
  "deadlock": "Rank {r} deadlocks at step {s}: its main thread and a prefetch thread take two locks (index_lock, buf_lock) in opposite orders, so it never reaches the step's all_reduce and the other ranks' gloo collective times out after {t} s.",
  "filelock": "Rank {r} blocks forever at step {s} on an exclusive flock of the vocab cache lock file that another process (a stale cache writer) holds, so the other ranks' gloo all_reduce times out after {t} s.",
  "spin": "Rank {r} spins forever at step {s} in a rejection-sampling loop (min_len=512) that no record of its shard can satisfy, so the other ranks' gloo all_reduce times out after {t} s.",
  "pipe": "Rank {r} blocks forever at step {s} reading a line from a tokenizer helper subprocess's stdout pipe that never delivers, so the other ranks' gloo all_reduce times out after {t} s.",
  "socket": "Rank {r} blocks forever at step {s} in recv() on a feature-server socket that accepted the connection but never answers, so the other ranks' gloo all_reduce times out after {t} s.",
  "loader": "Rank {r}'s DataLoader worker blocks forever reading the record of batch {s} and the DataLoader has timeout=0, so rank {r} never reaches the all_reduce and the other ranks' gloo collective times out after {t} s.",
  "lonebarrier": "Rank {r} alone calls dist.barrier() at step {s} (a checkpoint-writer barrier the others never call), so the collectives no longer line up and the other ranks' all_reduce times out after {t} s.",
  "retry": "Rank {r} sits in an unbounded retry loop (feature store unavailable, 'retrying in 5 s') at step {s}, so the other ranks' gloo all_reduce times out after {t} s.",
}
FIX = {
  "deadlock": "Take the two shard-cache locks in one fixed order in both threads (or use one lock); dump the stuck rank's threads (py-spy dump) to confirm.",
  "filelock": "Find and stop the process holding the lock file (lsof/fuser), and acquire it with a timeout instead of a blocking flock.",
  "spin": "Bound the resampling loop (max attempts, or fall back to shorter records) and check the shard has records of the required length.",
  "pipe": "Read the helper's output with a timeout and check the helper process is alive and writing.",
  "socket": "Set a socket timeout on the feature-server connection and fix/restart the feature server.",
  "loader": "Set DataLoader(timeout=...) so a hung worker raises, and fix the blocking read in the dataset's __getitem__.",
  "lonebarrier": "Make every rank call the same barrier (or none); do not guard collectives with a rank-dependent condition.",
  "retry": "Bound the retry loop (max attempts, then raise) and restore the feature store; keep retries shorter than the process-group timeout.",
}
PAT = re.compile(r"Timed out waiting \d+ms|timed out|Timeout|DistBackendError")

# id -> (initiating rank or None, notes); filled in after reading each log
JUDGE = json.load(open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "judge.json")))


def parse(id):
    m = re.match(r"run42a-(torchrun-logdir|torchrun|spawn|mpirun)-(\w+?)-(?:slow-|retry-)?r(\d+)", id)
    return m.group(1), m.group(2), int(m.group(3))


def first_match(path, pat):
    for line in open(path, errors="replace"):
        if re.search(pat, line):
            return line.rstrip("\n")
    return None


for d in sorted(glob.glob(os.path.join(OUT, "run42a-*"))):
    id = os.path.basename(d)
    if id not in JUDGE:
        print("no judgement for", id); continue
    launcher, kind, r = parse(id)
    env = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "run_all.sh")).read()
    envs = re.search(re.escape(id) + r"\|([^|]*)\|(.*)", env)
    t = re.search(r"PG_TIMEOUT=(\d+)", envs.group(1)).group(1)
    s = int(re.search(r"STUCK_STEP=(\d+)", envs.group(1)).group(1)) if "STUCK_STEP" in envs.group(1) else None
    j = JUDGE[id]
    lab = {"id": id, "source": SRC.format(id=id), "launcher": LAUNCH[launcher.split("-")[0]], "framework": "plain",
           "genuine": False, "confirmed_by": "induced", "operator": None}
    if kind == "healthy":
        lab.update(category="none", fatal=False, decisive_line=None, also_acceptable=[], initiating_rank=None,
                   collateral=[], root_cause=j["root"], fix="Nothing to fix: the job completed.",
                   induced_how=f"{envs.group(1)}; {HOW[launcher]}, {envs.group(2)}", confidence="high")
    else:
        dec, dfile = None, None
        if launcher == "torchrun-logdir":
            for f in sorted(glob.glob(os.path.join(d, "ranks", "attempt_0", "*", "stderr.log"))):
                line = first_match(f, j.get("pat", r"Timed out waiting \d+ms"))
                if line:
                    dec, dfile = line, os.path.relpath(f, os.path.join(d, "ranks")); break
        else:
            dec = first_match(os.path.join(d, "log.txt"), j.get("pat", r"Timed out waiting \d+ms"))
        assert dec, id
        also = list(j.get("also", []))
        if j.get("pat_also"):   # e.g. the stuck rank's first 'retrying in 5 s' warning
            src = sorted(glob.glob(os.path.join(d, "ranks", "attempt_0", "*", "*.log"))) if dfile else [os.path.join(d, "log.txt")]
            also += [l for l in (first_match(f, re.escape(j["pat_also"])) for f in src) if l][:1]
        lab.update(category="dist.collective_timeout", fatal=True, decisive_line=dec, also_acceptable=also,
                   initiating_rank=j["rank"], collateral=j.get("collateral", []),
                   root_cause=ROOT[kind].format(r=r, s=s + 1, t=t), fix=FIX[kind],
                   induced_how=f"{envs.group(1)} (job.py STUCK={kind}: rank {r} blocks in its data code before the all_reduce of step {s + 1}); {HOW[launcher]}, {envs.group(2)}",
                   confidence=j.get("confidence", "high"))
        if dfile:
            lab["decisive_file"] = dfile
    if j.get("notes"):
        lab["notes"] = j["notes"]
    json.dump(lab, open(os.path.join(d, "label.json"), "w"), indent=1)
    print(id, lab["category"], lab["initiating_rank"], (lab.get("decisive_file") or "log.txt"), (lab["decisive_line"] or "")[:90])
