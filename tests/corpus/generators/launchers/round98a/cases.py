#!/usr/bin/env python3
"""Round 98a: how output plumbing reshapes a failing job's log.  Runs every case and writes case folders.

usage: VENV=/work/h98/venv WORK=/work/h98/work OUT=/work/main/tests/blind/stage98 python cases.py [case-id ...]

Each case runs a real command line (torchrun / mp.spawn via spawn.py / shell loop via launch.sh, all running
train.py with gloo on CPU) from $WORK, where train.py, spawn.py and launch.sh are copied first.  The log files the
command wrote are copied into $OUT/<id>/ with only two rewrites: $VENV -> /opt/venv and $WORK -> /home/user/job.
label.json is then written; its decisive line is located with a regex in the produced file (control characters
such as CR and colour codes are never part of the chosen substring) and checked with `grep -F`.
Plumbing kinds:
  a  stdout block-buffered (stdout is a file, PYTHONUNBUFFERED unset, print() without flush), stderr unbuffered
  b  stdout and stderr to separate files (`> job.out 2> job.err`): folder case with ranks/job.out, ranks/job.err
  c  several ranks appending to ONE file without coordination (shell loop `>> shared.log 2>&1` per rank, or each
     rank opening the file with O_APPEND itself: train.py --shared-file), writing unbuffered
  d  a TTY captured with `script -q -c CMD log.txt` (CRLF, coloured logging, tqdm) or `2>&1 | tee log.txt`
     with and without `stdbuf -oL` (stdbuf does not change Python's own stdout buffering)
  e  one log appended to on every launch (`>> train.log 2>&1`), two launches
  f  the failing run's log cut by `head -c N` (N: first multiple of 512 past the decisive line that ends mid-line)
"""
import json, os, re, shutil, subprocess, sys, time

HERE = os.path.dirname(os.path.abspath(__file__))
VENV = os.environ.get("VENV", "/work/h98/venv")
WORK = os.environ.get("WORK", "/work/h98/work")
OUT = os.environ.get("OUT", "/work/main/tests/blind/stage98")
REL = "tests/corpus/generators/launchers/round98a"

TR = "torchrun --standalone --nproc-per-node {w} train.py"
SP = "python spawn.py --world {w}"
SH = "bash launch.sh {w}"
# torchrun always starts workers as `python -u script` (unbuffered stdout); with --no-python the command runs as
# given, so `python train.py` keeps Python's default block-buffered stdout when stdout is a file.
TRNP = "torchrun --standalone --nproc-per-node {w} --no-python python train.py"

CTRL = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\r")

# scenario -> (category, root_cause template, fix template)
SCEN = {
    "raise": ("user.code_error",
              "rank {r} raised {exc} in its own data-loading code at step {s}; the other ranks then lost their peer",
              "fix the sample index / record parsing on rank {r}'s shard so the lookup at step {s} succeeds"),
    "sigkill": ("mem.host_oom",
                "rank {r} was SIGKILLed at step {s} (no traceback); the surviving ranks lost their peer and were stopped",
                "find what killed rank {r} (OOM killer / host memory) and give the job more host memory or use less"),
    "hang": ("dist.collective_timeout",
             "rank {r} stalled for {hang}s before the loss all_reduce at step {s}, longer than the {t}s process-group timeout, so the waiting ranks timed out",
             "find why rank {r} stalls before the collective (slow I/O) or raise the process-group timeout"),
    "mismatch": ("dist.collective_mismatch",
                 "rank {r} all_reduced a 2-element loss tensor at step {s} while the other ranks all_reduced 1 element (TORCH_DISTRIBUTED_DEBUG=DETAIL caught the mismatch)",
                 "make rank {r} reduce the same shape as every other rank"),
    "compile": ("compile.graph_break_data_dependent",
                "only rank {r}'s model has a data-dependent branch, and torch.compile(fullgraph=True) cannot trace it, so rank {r} failed on its first forward",
                "make the branch branchless (torch.clamp / torch.where) or compile without fullgraph=True"),
}


def fault_args(scen, r, s, exc="KeyError"):
    if scen == "none":
        return ""
    a = f" --fault {scen} --fault-rank {r} --fault-step {s}"
    return a + (f" --exc {exc}" if scen == "raise" else "")


def C(id, kind, launcher, scen, cmd, r=None, s=None, exc="KeyError", decisive=None, also=(), collateral=(),
      file="log.txt", out=("log.txt",), how="", env=None, pre=None, truncate=False, w=3, category=None,
      fatal=None, root=None, fix=None, timeout=240):
    return dict(id=id, kind=kind, launcher=launcher, scen=scen, cmd=cmd, r=r, s=s, exc=exc, decisive=decisive,
                also=list(also), collateral=list(collateral), file=file, out=list(out), how=how, env=env or {},
                pre=pre, truncate=truncate, w=w, category=category, fatal=fatal, root=root, fix=fix,
                timeout=timeout)


DETAIL = {"TORCH_DISTRIBUTED_DEBUG": "DETAIL"}
MISMATCH_RE = r"Detected mismatch between collectives on ranks\. Rank {r} is running collective: CollectiveFingerPrint\(SequenceNumber=\d+, OpType=ALLREDUCE, TensorShape=\[2\]"
TIMEOUT_RE = r"Timed out waiting \d+ms for \w+ operation to complete"
CLOSED_RE = r"Connection closed by peer \[[0-9.]+\]:\d+"
TR_KILL_RE = r"failed \(exitcode: -9\) local_rank: {r} \(pid: \d+\)"
TR_EXIT1_RE = r"failed \(exitcode: 1\) local_rank: \d \(pid: \d+\)"
SP_KILL_RE = r"process {r} terminated with signal SIGKILL"
SH_KILL_RE = r"line \d+: +\d+ Killed +RANK=\$r"
SH_STATUS_RE = r"\[launch\] rank {r} \(pid \d+\) exited with status 137"
SIGTERM_RE = r"Sending process \d+ closing signal SIGTERM"
SPAWN_TERM_RE = r"Terminating process \d+ via signal SIGTERM"
EXC_RE = {"KeyError": r"KeyError: 'shard0{r}-\d+'", "ValueError": r"ValueError: could not parse record 'shard0{r}-\d+'.*",
          "IndexError": r"IndexError: list index out of range"}
DD_RE = r"torch\._dynamo\.exc\.Unsupported: Data-dependent branching"

CASES = []


def add(*a, **k):
    CASES.append(C(*a, **k))


P = " --emit print"
# ---------------- (a) stdout block-buffered, stderr unbuffered ----------------
add("run98-torchrun-raise-bufstdout", "a", "torchrun", "raise",
    TRNP.format(w=3) + P + fault_args("raise", 2, 3) + " > log.txt 2>&1", r=2, s=3,
    decisive=EXC_RE["KeyError"], collateral=[CLOSED_RE, SIGTERM_RE, r"Root Cause \(first observed failure\)"])
add("run98-torchrun-sigkill-bufstdout", "a", "torchrun", "sigkill",
    TRNP.format(w=4) + P + fault_args("sigkill", 1, 4) + " > log.txt 2>&1", r=1, s=4, w=4,
    decisive=TR_KILL_RE, also=[r"exitcode  : -9 \(pid: \d+\)"], collateral=[SIGTERM_RE])
add("run98-mpspawn-raise-bufstdout", "a", "mp.spawn", "raise",
    SP.format(w=4) + P + fault_args("raise", 3, 2, "ValueError") + " > log.txt 2>&1", r=3, s=2, w=4, exc="ValueError",
    decisive=EXC_RE["ValueError"], also=[r"-- Process 3 terminated with the following error:"], collateral=[SPAWN_TERM_RE])
add("run98-mpspawn-hang-bufstdout", "a", "mp.spawn", "hang",
    SP.format(w=3) + P + fault_args("hang", 1, 2) + " > log.txt 2>&1", r=1, s=2,
    decisive=TIMEOUT_RE, collateral=[SPAWN_TERM_RE])
add("run98-shell-sigkill-bufstdout", "a", "shell", "sigkill",
    SH.format(w=3) + P + fault_args("sigkill", 2, 5) + " > log.txt 2>&1", r=2, s=5,
    decisive=SH_KILL_RE, also=[SH_STATUS_RE], collateral=[CLOSED_RE])
add("run98-shell-compile-bufstdout", "a", "shell", "compile",
    SH.format(w=3) + P + fault_args("compile", 1, 0) + " > log.txt 2>&1", r=1, s=0,
    decisive=DD_RE, collateral=[CLOSED_RE])
add("run98-mpspawn-healthy-bufstdout", "a", "mp.spawn", "none",
    SP.format(w=3) + P + " > log.txt 2>&1")

# ---------------- (b) stdout and stderr in separate files ----------------
B = " > job.out 2> job.err"
add("run98-torchrun-raise-splitfiles", "b", "torchrun", "raise",
    TR.format(w=3) + P + fault_args("raise", 1, 4, "IndexError") + B, r=1, s=4, exc="IndexError",
    decisive=EXC_RE["IndexError"], file="job.err", out=("job.out", "job.err"), collateral=[CLOSED_RE, SIGTERM_RE])
add("run98-torchrun-sigkill-splitfiles", "b", "torchrun", "sigkill",
    TR.format(w=4) + " --emit logging" + fault_args("sigkill", 3, 2) + B, r=3, s=2, w=4,
    decisive=TR_KILL_RE, also=[r"exitcode  : -9 \(pid: \d+\)"], file="job.err", out=("job.out", "job.err"),
    collateral=[SIGTERM_RE])
add("run98-mpspawn-hang-splitfiles", "b", "mp.spawn", "hang",
    SP.format(w=3) + " --emit logging" + fault_args("hang", 2, 3) + B, r=2, s=3,
    decisive=TIMEOUT_RE, file="job.err", out=("job.out", "job.err"), collateral=[SPAWN_TERM_RE])
add("run98-shell-raise-splitfiles-caught", "b", "shell", "raise",
    SH.format(w=3) + " --emit logging --catch" + fault_args("raise", 1, 2) + B, r=1, s=2,
    decisive=EXC_RE["KeyError"], file="job.out", out=("job.out", "job.err"),
    also=[r"\[rank1\] ERROR rank 1 failed, exiting"], collateral=[CLOSED_RE],
    how="train.py --catch: the exception is caught and written with logger.exception() to the stdout handler, so the traceback is in job.out, not job.err")
add("run98-mpspawn-mismatch-splitfiles", "b", "mp.spawn", "mismatch",
    SP.format(w=3) + P + fault_args("mismatch", 1, 5) + B, r=1, s=5, env=DETAIL,
    decisive=MISMATCH_RE, file="job.err", out=("job.out", "job.err"), collateral=[SPAWN_TERM_RE])
add("run98-shell-sigkill-splitfiles", "b", "shell", "sigkill",
    SH.format(w=4) + " --emit logging" + fault_args("sigkill", 2, 3) + B, r=2, s=3, w=4,
    decisive=SH_KILL_RE, file="job.err", out=("job.out", "job.err"), also=[SH_STATUS_RE], collateral=[CLOSED_RE])

# ---------------- (c) several ranks appending to one shared file ----------------
UNBUF = {"PYTHONUNBUFFERED": "1"}
add("run98-shell-raise-sharedfile", "c", "shell", "raise",
    "RANK_OUT=shared.log " + SH.format(w=3) + P + fault_args("raise", 1, 3, "ValueError") + " >> shared.log 2>&1",
    r=1, s=3, exc="ValueError", env=UNBUF, out=("shared.log",), decisive=EXC_RE["ValueError"], collateral=[CLOSED_RE],
    how="launch.sh appends every rank's stdout+stderr to shared.log (>> per rank), PYTHONUNBUFFERED=1")
add("run98-shell-sigkill-sharedfile", "c", "shell", "sigkill",
    "RANK_OUT=shared.log " + SH.format(w=4) + P + fault_args("sigkill", 2, 2) + " >> shared.log 2>&1",
    r=2, s=2, w=4, env=UNBUF, out=("shared.log",), decisive=SH_KILL_RE, also=[SH_STATUS_RE], collateral=[CLOSED_RE],
    how="launch.sh appends every rank's stdout+stderr to shared.log (>> per rank), PYTHONUNBUFFERED=1")
add("run98-mpspawn-raise-sharedfile", "c", "mp.spawn", "raise",
    SP.format(w=4) + P + " --shared-file shared.log" + fault_args("raise", 2, 4) + " >> shared.log 2>&1",
    r=2, s=4, w=4, out=("shared.log",), decisive=EXC_RE["KeyError"], collateral=[SPAWN_TERM_RE, CLOSED_RE],
    how="each rank opens shared.log with O_APPEND itself and writes unbuffered (train.py --shared-file); the launcher appends there too")
add("run98-mpspawn-hang-sharedfile", "c", "mp.spawn", "hang",
    SP.format(w=3) + P + " --shared-file shared.log" + fault_args("hang", 1, 2) + " >> shared.log 2>&1",
    r=1, s=2, out=("shared.log",), decisive=TIMEOUT_RE, collateral=[SPAWN_TERM_RE],
    how="each rank opens shared.log with O_APPEND itself and writes unbuffered (train.py --shared-file); the launcher appends there too")
add("run98-torchrun-mismatch-sharedfile", "c", "torchrun", "mismatch",
    TR.format(w=4) + P + " --shared-file shared.log" + fault_args("mismatch", 3, 3) + " >> shared.log 2>&1",
    r=3, s=3, w=4, env=DETAIL, out=("shared.log",), decisive=MISMATCH_RE, collateral=[SIGTERM_RE],
    how="each rank opens shared.log with O_APPEND itself and writes unbuffered (train.py --shared-file); torchrun appends there too")
add("run98-shell-healthy-sharedfile", "c", "shell", "none",
    "RANK_OUT=shared.log " + SH.format(w=4) + P + " >> shared.log 2>&1", w=4, env=UNBUF, out=("shared.log",),
    how="launch.sh appends every rank's stdout+stderr to shared.log (>> per rank), PYTHONUNBUFFERED=1")

# ---------------- (d) TTY via script(1), and tee with / without stdbuf ----------------
T = " --emit logging --tqdm"
def S(cmd):
    # stty: script(1) run from a non-terminal gives the pty 0x0, where tqdm draws nothing; give it a size
    return f"script -q -c 'stty rows 40 cols 120; {cmd}' log.txt"
add("run98-torchrun-raise-script", "d", "torchrun", "raise",
    S(TR.format(w=3) + T + fault_args("raise", 1, 3)), r=1, s=3, decisive=EXC_RE["KeyError"],
    collateral=[CLOSED_RE, SIGTERM_RE])
add("run98-mpspawn-sigkill-script", "d", "mp.spawn", "sigkill",
    S(SP.format(w=3) + T + fault_args("sigkill", 2, 3)), r=2, s=3, decisive=SP_KILL_RE, collateral=[SPAWN_TERM_RE, CLOSED_RE])
add("run98-shell-hang-script", "d", "shell", "hang",
    S(SH.format(w=3) + T + fault_args("hang", 1, 2)), r=1, s=2, decisive=TIMEOUT_RE, collateral=[CLOSED_RE])
add("run98-torchrun-compile-script", "d", "torchrun", "compile",
    S(TR.format(w=3) + T + fault_args("compile", 2, 0)), r=2, s=0, decisive=DD_RE, collateral=[CLOSED_RE, SIGTERM_RE])
add("run98-torchrun-healthy-script", "d", "torchrun", "none", S(TR.format(w=4) + T), w=4)
add("run98-torchrun-raise-tee", "d", "torchrun", "raise",
    TR.format(w=4) + P + " --tqdm" + fault_args("raise", 3, 5) + " 2>&1 | tee log.txt", r=3, s=5, w=4,
    decisive=EXC_RE["KeyError"], collateral=[CLOSED_RE, SIGTERM_RE])
add("run98-mpspawn-mismatch-tee-stdbuf", "d", "mp.spawn", "mismatch",
    "stdbuf -oL " + SP.format(w=3) + P + " --tqdm" + fault_args("mismatch", 2, 2) + " 2>&1 | tee log.txt",
    r=2, s=2, env=DETAIL, decisive=MISMATCH_RE, collateral=[SPAWN_TERM_RE])
add("run98-shell-sigkill-tee-stdbuf", "d", "shell", "sigkill",
    "stdbuf -oL " + SH.format(w=3) + P + fault_args("sigkill", 1, 4) + " 2>&1 | tee log.txt", r=1, s=4,
    decisive=SH_KILL_RE, also=[SH_STATUS_RE], collateral=[CLOSED_RE])

# ---------------- (e) one log appended to on every launch ----------------
def twice(first, second):
    return f"{first} >> train.log 2>&1; {second} >> train.log 2>&1"
L = " --emit logging"
add("run98-torchrun-raise-appended", "e", "torchrun", "raise",
    twice(TR.format(w=3) + L, TR.format(w=3) + L + fault_args("raise", 2, 2)), r=2, s=2, out=("train.log",),
    decisive=EXC_RE["KeyError"], collateral=[CLOSED_RE, SIGTERM_RE], how="launch 1 healthy, launch 2 fails; both append to train.log")
add("run98-mpspawn-sigkill-appended", "e", "mp.spawn", "sigkill",
    twice(SP.format(w=3) + P, SP.format(w=3) + P + fault_args("sigkill", 1, 3)), r=1, s=3, out=("train.log",),
    decisive=SP_KILL_RE, collateral=[SPAWN_TERM_RE, CLOSED_RE], how="launch 1 healthy, launch 2 fails; both append to train.log")
add("run98-torchrun-hang-appended", "e", "torchrun", "hang",
    twice(TR.format(w=4) + L, TR.format(w=4) + L + fault_args("hang", 3, 1)), r=3, s=1, w=4, out=("train.log",),
    decisive=TIMEOUT_RE, collateral=[SIGTERM_RE], how="launch 1 healthy, launch 2 fails; both append to train.log")
add("run98-shell-fixed-appended", "e", "shell", "none",
    twice(SH.format(w=3) + L + fault_args("raise", 1, 3, "ValueError"), SH.format(w=3) + L), out=("train.log",),
    how="launch 1 fails (rank 1 ValueError at step 3), launch 2 (fixed) succeeds; both append to train.log",
    root="the first launch failed (rank 1 raised ValueError at step 3) but the relaunch ran to completion, so the job as logged last succeeded",
    fix="nothing to fix: the last launch finished; the earlier failure was already fixed")

# ---------------- (f) log cut off mid-line by head -c ----------------
add("run98-torchrun-raise-truncated", "f", "torchrun", "raise",
    TR.format(w=3) + L + fault_args("raise", 1, 2) + " > full.log 2>&1", r=1, s=2, truncate=True,
    decisive=EXC_RE["KeyError"], collateral=[CLOSED_RE])
# (mp.spawn prints a waiting rank's timeout only as the last line of its own traceback, at the very end of
#  the log, so a cut after it removes nothing: torchrun, whose summary follows, is used for the hang instead)
add("run98-torchrun-hang-truncated", "f", "torchrun", "hang",
    TR.format(w=4) + L + fault_args("hang", 2, 3) + " > full.log 2>&1", r=2, s=3, w=4, truncate=True,
    decisive=TIMEOUT_RE, collateral=[SIGTERM_RE])
add("run98-shell-mismatch-truncated", "f", "shell", "mismatch",
    SH.format(w=3) + L + fault_args("mismatch", 1, 4) + " > full.log 2>&1", r=1, s=4, env=DETAIL, truncate=True,
    decisive=MISMATCH_RE, collateral=[CLOSED_RE])

KIND_TXT = {
    "a": "stdout redirected to a file with PYTHONUNBUFFERED unset (ranks' print() lines block-buffered, stderr unbuffered)",
    "b": "stdout and stderr saved to separate files (> job.out 2> job.err)",
    "c": "several ranks appending to one shared file without coordination",
    "d": "terminal output captured (script(1) pty, or 2>&1 | tee, with/without stdbuf -oL)",
    "e": "the same log file appended to on every launch (>> train.log 2>&1)",
    "f": "the failing run's log truncated mid-line by head -c N",
}


def rewrite(data: bytes) -> bytes:
    return data.replace(VENV.encode(), b"/opt/venv").replace(WORK.encode(), b"/home/user/job")


def find(regex, text, nth=0):
    """first match of regex inside a control-character-free segment of a line: (matched text, byte offset of line end)."""
    rx = re.compile(regex)
    pos, hits = 0, 0
    for line in text.split("\n"):
        for seg in CTRL.split(line):
            m = rx.search(seg)
            if m:
                if hits == nth:
                    return m.group(0).strip(), pos + len(line.encode("utf-8", "surrogateescape"))
                hits += 1
                break
        pos += len(line.encode("utf-8", "surrogateescape")) + 1
    return None, None


def grep_f(s, path):
    return subprocess.run(["grep", "-qF", "--", s, path]).returncode == 0


MARK = f"R98A_MARK={os.getpid()}"


def kill_leftovers():
    """leave no rank behind: SIGKILL, by pid, every process that carries this driver's marker variable."""
    me = os.getpid()
    for pid in filter(str.isdigit, os.listdir("/proc")):
        if int(pid) == me:
            continue
        try:
            envb = open(f"/proc/{pid}/environ", "rb").read().split(b"\0")
        except OSError:
            continue
        if MARK.encode() in envb:
            print(f"   killing leftover pid {pid}", flush=True)
            try:
                os.kill(int(pid), 9)
            except OSError:
                pass


def run_case(c, attempt):
    rundir = WORK
    for f in ("train.py", "spawn.py", "launch.sh"):
        shutil.copy(os.path.join(HERE, f), os.path.join(WORK, f))
    for f in c["out"] + ["log.txt", "full.log", "job.out", "job.err", "shared.log", "train.log"]:
        p = os.path.join(WORK, f)
        if os.path.exists(p):
            os.remove(p)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("TORCH", "PYTHONUNBUFFERED", "NCCL", "OMP_", "MASTER_", "RANK", "WORLD_SIZE", "LOCAL_RANK"))}
    env["PATH"] = f"{VENV}/bin:" + env["PATH"]
    env["VIRTUAL_ENV"] = VENV
    env.pop("PYTHONPATH", None)
    env.update(c["env"])
    k, v = MARK.split("=")
    env[k] = v
    cmd = c["cmd"]
    envtxt = " ".join(f"{k}={v}" for k, v in c["env"].items())
    print(f"== {c['id']} (attempt {attempt}): {envtxt} {cmd}", flush=True)
    first_len = None
    t0 = time.time()
    if c["kind"] == "e":
        first, second = cmd.split("; ", 1)
        subprocess.run(["bash", "-o", "pipefail", "-c", first], cwd=rundir, env=env, stdin=subprocess.DEVNULL, timeout=c["timeout"])
        raw = open(os.path.join(WORK, "train.log"), "rb").read()
        first_len = len(rewrite(raw))  # offset of launch 2 in the rewritten file
        rc = subprocess.run(["bash", "-o", "pipefail", "-c", second], cwd=rundir, env=env, stdin=subprocess.DEVNULL, timeout=c["timeout"]).returncode
    else:
        rc = subprocess.run(["bash", "-o", "pipefail", "-c", cmd], cwd=rundir, env=env, stdin=subprocess.DEVNULL, timeout=c["timeout"]).returncode
    print(f"   ran {time.time() - t0:.1f}s rc={rc}", flush=True)
    kill_leftovers()
    return first_len, rc


def build(c):
    cid = c["id"]
    stage = os.path.join(WORK, "cases", cid)
    shutil.rmtree(stage, ignore_errors=True)
    os.makedirs(stage)
    for attempt in range(1, 4):
        first_len, rc = run_case(c, attempt)
        note = ""
        if c["truncate"]:
            full = open(os.path.join(WORK, "full.log"), "rb").read()
            text = rewrite(full).decode("utf-8", "surrogateescape")
            d, end = find(c["decisive"].format(r=c["r"]), text)
            if d is None:
                print("   decisive not in full log, rerun"); continue
            # the truncation happens on the original file; find the offset there
            raw_d, raw_end = find(c["decisive"].format(r=c["r"]), full.decode("utf-8", "surrogateescape"))
            n = (raw_end // 512 + 1) * 512
            while n < len(full) and full[n - 1:n] == b"\n":
                n += 512
            if n >= len(full):
                nl = full.find(b"\n", raw_end + 1)
                n = raw_end + 1 + max(1, (nl - raw_end) // 2) if nl > 0 else len(full) - 1
            if n >= len(full) - 1 or full[n - 1:n] == b"\n":
                print("   nothing left to cut after the decisive line, rerun"); continue
            with open(os.path.join(WORK, "log.txt"), "wb") as fo:
                subprocess.run(["head", "-c", str(n), os.path.join(WORK, "full.log")], stdout=fo, check=True)
            note = f"; then `head -c {n} full.log > log.txt` (the full log was {len(full)} bytes; cut mid-line as a full disk quota would)"
            srcs = ["log.txt"]
        else:
            srcs = c["out"]
        # copy with path rewriting
        if c["kind"] == "b":
            os.makedirs(os.path.join(stage, "ranks"), exist_ok=True)
            dst = {s: os.path.join(stage, "ranks", s) for s in srcs}
        else:
            dst = {srcs[0]: os.path.join(stage, "log.txt")}
        for s, dpath in dst.items():
            with open(os.path.join(WORK, s), "rb") as fi, open(dpath, "wb") as fo:
                fo.write(rewrite(fi.read()))
        if c["kind"] == "b":
            check = os.path.join(stage, "ranks", c["file"])
        else:
            check = os.path.join(stage, "log.txt")
        rawcheck = open(check, "rb").read()
        text = rawcheck.decode("utf-8", "surrogateescape")
        ok = True
        decisive = None
        if c["scen"] != "none":
            decisive, end = find(c["decisive"].format(r=c["r"]), text)
            ok = decisive is not None and grep_f(decisive, check)
            if ok and first_len is not None:  # the decisive line must be in the second launch
                ok = rawcheck.find(decisive.encode("utf-8", "surrogateescape")) >= first_len
            ok = ok and (rc != 0 or c["cmd"].startswith("script"))
        else:
            # healthy / fixed: the (last) launch exited 0 and printed no traceback
            tail = rawcheck[first_len:] if first_len else rawcheck
            ok = rc == 0 and b"Traceback" not in tail and b"training finished" in tail
        if not ok:
            print(f"   check failed (decisive={decisive!r}), rerun", flush=True)
            continue
        write_label(c, decisive, text, check, note)
        print(f"   ok: decisive={decisive!r}", flush=True)
        return True
    print(f"!! {cid}: gave up after 3 attempts", flush=True)
    return False


def write_label(c, decisive, text, check, note):
    scen, r, s = c["scen"], c["r"], c["s"]
    also, coll = [], []
    for rx in c["also"]:
        d, _ = find(rx.format(r=r), text)
        if d and grep_f(d, check):
            also.append(d)
    for rx in c["collateral"]:
        d, _ = find(rx.format(r=r), text)
        if d and grep_f(d, check):
            coll.append(d)
    if scen == "none":
        category, fatal = "none", False
        root = c["root"] or "healthy run: every rank finished training; nothing failed"
        fix = c["fix"] or "nothing to fix"
    else:
        category, root_t, fix_t = SCEN[scen]
        fatal = True
        fmt = dict(r=r, s=s, exc=c["exc"], hang=35, t=15)
        root, fix = root_t.format(**fmt), fix_t.format(**fmt)
    envtxt = " ".join(f"{k}={v}" for k, v in c["env"].items())
    how = f"{KIND_TXT[c['kind']]}: `{(envtxt + ' ') if envtxt else ''}{c['cmd']}`"
    if c["how"]:
        how += "; " + c["how"]
    if scen != "none":
        how += f"; rank {r} induced to '{scen}' at step {s}" + (f" ({c['exc']})" if scen == "raise" else "")
    how += note
    lab = {
        "id": c["id"],
        "source": f"real run: {REL}/run_all.sh {c['id']} (cases.py, train.py), torch 2.13.0 CPU, gloo",
        "category": category, "fatal": fatal, "decisive_line": decisive, "also_acceptable": also,
        "initiating_rank": r if scen != "none" else None, "collateral": coll, "operator": None,
        "root_cause": root, "fix": fix, "launcher": c["launcher"], "framework": "plain", "genuine": False,
        "induced_how": how, "confirmed_by": "induced", "confidence": "high",
    }
    if c["kind"] == "b":
        lab["decisive_file"] = c["file"] if scen != "none" else None
    stage = os.path.join(WORK, "cases", c["id"])
    with open(os.path.join(stage, "label.json"), "w") as f:
        json.dump(lab, f, indent=1, ensure_ascii=False)
        f.write("\n")


def main():
    want = sys.argv[1:]
    todo = [c for c in CASES if not want or c["id"] in want]
    assert len({c["id"] for c in CASES}) == len(CASES)
    failed = []
    for c in todo:
        if build(c):
            dst = os.path.join(OUT, c["id"])
            shutil.rmtree(dst, ignore_errors=True)
            shutil.copytree(os.path.join(WORK, "cases", c["id"]), dst)
        else:
            failed.append(c["id"])
    print(f"done: {len(todo) - len(failed)} ok, failed: {failed}")


if __name__ == "__main__":
    main()
