#!/usr/bin/env python3
"""Round 94a: how the launcher itself shapes the log (plain PyTorch train.py, gloo, CPU).

Runs one case per call (or all), each a real launcher command over train.py with one induced fault:
  (a) torchrun --standalone --max-restarts 2 (a rank fails on every attempt / only on attempt 0),
      and --log-dir D --tee 3 / --redirects 3 (D copied to ranks/, attempt_N/<local_rank>/std{out,err}.log);
  (b) two torchrun agents on localhost acting as two nodes (--nnodes 2 --nproc-per-node 2, c10d rendezvous),
      each agent's console in its own file (ranks/node0.log, ranks/node1.log; no log.txt);
  (c) the legacy `python -m torch.distributed.launch --use-env`;
  (d) launch_by_hand.sh: a shell loop with RANK/WORLD_SIZE/MASTER_ADDR/MASTER_PORT and `sed -u` (or awk)
      prefixing every rank's output into one shared log.txt.
The case folder gets log.txt (or ranks/), with the venv path rewritten to /opt/venv and the work dir to
/home/user/job, and label.json whose decisive_line is taken from the log by the case's regex.

usage: run_cases.py [--list] [ID ...|all]    env: VENV (default /work/h94/venv), WORK (/work/h94/work),
                                              OUT (/work/h94/build): where case folders are written
"""
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
VENV = os.environ.get("VENV", "/work/h94/venv")
WORK = os.environ.get("WORK", "/work/h94/work")
OUT = os.environ.get("OUT", "/work/h94/build")
NO_SHARE = {"TORCH_DISABLE_SHARE_RDZV_TCP_STORE": "1"}  # fresh worker store per restart (pytorch#135712)
INFO = {"LOGLEVEL": "INFO"}  # torchrun agent logs at INFO: rendezvous rounds, restarts
DETAIL = {"TORCH_DISTRIBUTED_DEBUG": "DETAIL"}

# --- decisive-line regexes (matched text = decisive_line) ---
def RAISE(r, kind="KeyError"):
    return r"\[rank%d\]: %s: .*" % (r, kind)

SIGKILL_TR = r"failed \(exitcode: -9\) local_rank: %d \(pid: \d+\)"
SIGKILL_SH = r"launch_by_hand\.sh: line \d+: +\d+ Killed"
TIMEOUT = r"\[rank\d\]: RuntimeError: \S+ Timed out waiting \d+ms for \w+ operation to complete"
MISMATCH = r"op\.preamble\.length <= op\.nbytes\. \d+ vs \d+\. Received data size doesn't match expected size\."
MISMATCH_D = r"\[rank\d\]: RuntimeError: Detected mismatch between collectives on ranks\. Rank \d+ is running collective: CollectiveFingerPrint\(SequenceNumber=\d+, OpType=ALLREDUCE, TensorShape=\[\d+\]"
RDZV = r"torch\.distributed\.elastic\.rendezvous\.api\.RendezvousTimeoutError"

CASES = []


def case(id, kind, n, targs, cat, rank, pat=None, tr="", env=None, must=(), dfile=None, note="", **kw):
    CASES.append(dict(id=id, kind=kind, n=n, targs=targs, cat=cat, rank=rank, pat=pat, tr=tr,
                      env=env or {}, must=list(must), dfile=dfile, note=note, **kw))


# (a) torchrun --standalone --max-restarts 2 ------------------------------------------------------------
case("run94-torchrun-restart-raise", "standalone", 3, "--fault raise --fail-rank 1 --fail-step 3",
     "user.code_error", 1, RAISE(1), tr="--max-restarts 2", env=NO_SHARE, must=["attempt 2"])
case("run94-torchrun-restart-raise-w4", "standalone", 4,
     "--fault raise --raise-kind value --fail-rank 2 --fail-step 5", "user.code_error", 2, RAISE(2, "ValueError"),
     tr="--max-restarts 2", env={**NO_SHARE, **INFO}, must=["attempt 2"])
case("run94-torchrun-restart-sigkill", "standalone", 4, "--fault sigkill --fail-rank 2 --fail-step 2",
     "mem.host_oom", 2, SIGKILL_TR % 2, tr="--max-restarts 2", env=NO_SHARE, must=["attempt 2"])
case("run94-torchrun-restart-sigkill-w3", "standalone", 3, "--fault sigkill --fail-rank 1 --fail-step 4",
     "mem.host_oom", 1, SIGKILL_TR % 1, tr="--max-restarts 2", env={**NO_SHARE, **INFO}, must=["attempt 2"])
case("run94-torchrun-restart-hang", "standalone", 3,
     "--fault hang --fail-rank 2 --fail-step 1 --pg-timeout 15 --hang-s 60", "dist.collective_timeout", 2,
     TIMEOUT, tr="--max-restarts 2", env=NO_SHARE, must=["attempt 2"])
case("run94-torchrun-restart-mismatch", "standalone", 4, "--fault mismatch --fail-rank 3 --fail-step 3",
     "dist.collective_mismatch", 3, MISMATCH, tr="--max-restarts 2", env=NO_SHARE, must=["attempt 2"])
case("run94-torchrun-restart-mismatch-detail", "standalone", 3, "--fault mismatch --fail-rank 1 --fail-step 2",
     "dist.collective_mismatch", 1, MISMATCH_D, tr="--max-restarts 2", env={**NO_SHARE, **DETAIL},
     must=["attempt 2", r"TensorShape=\[609\]"])
case("run94-torchrun-restart-raise-once", "standalone", 3,
     "--fault raise --fail-rank 2 --fail-step 2 --attempts 1", "none", None, tr="--max-restarts 2",
     env=NO_SHARE, must=[RAISE(2), "attempt 1", "training finished after 8 steps"])
case("run94-torchrun-restart-sigkill-once", "standalone", 4,
     "--fault sigkill --fail-rank 1 --fail-step 3 --attempts 1", "none", None, tr="--max-restarts 2",
     env={**NO_SHARE, **INFO}, must=[SIGKILL_TR % 1, "attempt 1", "training finished after 8 steps"])
case("run94-torchrun-logdir-raise", "logdir", 4, "--fault raise --fail-rank 3 --fail-step 5 --steps 7",
     "user.code_error", 3, RAISE(3), tr="--max-restarts 2 --tee 3", env=NO_SHARE,
     dfile="attempt_0/3/stderr.log", must=["attempt 2"])
case("run94-torchrun-logdir-sigkill", "logdir", 3, "--fault sigkill --fail-rank 2 --fail-step 3",
     "mem.host_oom", 2, SIGKILL_TR % 2, tr="--max-restarts 2 --tee 3", env=NO_SHARE, must=["attempt 2"])
case("run94-torchrun-logdir-redirect-raise", "logdir", 3, "--fault raise --fail-rank 2 --fail-step 4",
     "user.code_error", 2, RAISE(2), tr="--max-restarts 2 --redirects 3", env=NO_SHARE,
     dfile="attempt_0/2/stderr.log")

# (b) two torchrun agents on localhost = two nodes x 2 ranks ------------------------------------------------
case("run94-torchrun2n-raise", "twonode", 4, "--fault raise --fail-rank 2 --fail-step 3",
     "user.code_error", 2, RAISE(2))
case("run94-torchrun2n-raise-restart", "twonode", 4,
     "--fault raise --raise-kind value --fail-rank 3 --fail-step 4", "user.code_error", 3,
     RAISE(3, "ValueError"), tr="--max-restarts 1", env=NO_SHARE, must=["attempt 1"])
case("run94-torchrun2n-sigkill", "twonode", 4, "--fault sigkill --fail-rank 3 --fail-step 2",
     "mem.host_oom", 3, SIGKILL_TR % 1)
case("run94-torchrun2n-sigkill-r2", "twonode", 4, "--fault sigkill --fail-rank 2 --fail-step 5",
     "mem.host_oom", 2, SIGKILL_TR % 0, env=INFO)
case("run94-torchrun2n-hang", "twonode", 4,
     "--fault hang --fail-rank 3 --fail-step 3 --pg-timeout 15 --hang-s 60", "dist.collective_timeout", 3,
     TIMEOUT)
case("run94-torchrun2n-mismatch", "twonode", 4, "--fault mismatch --fail-rank 2 --fail-step 2",
     "dist.collective_mismatch", 2, MISMATCH)
case("run94-torchrun2n-mismatch-detail", "twonode", 4, "--fault mismatch --fail-rank 3 --fail-step 4",
     "dist.collective_mismatch", 3, MISMATCH_D, env=DETAIL, must=[r"TensorShape=\[609\]"])
case("run94-torchrun2n-rdzv-timeout", "twonode", 4, "", "dist.peer_or_store_failure", None, RDZV,
     tr="--rdzv-conf join_timeout=30", no_node1=True)
case("run94-torchrun2n-rdzv-timeout-info", "twonode", 4, "", "dist.peer_or_store_failure", None, RDZV,
     tr="--rdzv-conf join_timeout=20", env=INFO, no_node1=True)
case("run94-torchrun2n-healthy", "twonode", 4, "--steps 10", "none", None,
     must=["training finished after 10 steps"])

# (c) legacy python -m torch.distributed.launch --use-env ---------------------------------------------------
case("run94-launch-raise", "launch", 3, "--fault raise --fail-rank 1 --fail-step 2", "user.code_error", 1,
     RAISE(1))
case("run94-launch-sigkill", "launch", 3, "--fault sigkill --fail-rank 2 --fail-step 4", "mem.host_oom", 2,
     SIGKILL_TR % 2)
case("run94-launch-mismatch", "launch", 3, "--fault mismatch --fail-rank 1 --fail-step 3",
     "dist.collective_mismatch", 1, MISMATCH)
case("run94-launch-mismatch-detail", "launch", 3, "--fault mismatch --fail-rank 2 --fail-step 1",
     "dist.collective_mismatch", 2, MISMATCH_D, env=DETAIL, must=[r"TensorShape=\[609\]"])
case("run94-launch-hang", "launch", 3, "--fault hang --fail-rank 1 --fail-step 3 --pg-timeout 20 --hang-s 60",
     "dist.collective_timeout", 1, TIMEOUT)
case("run94-launch-raise-w4", "launch", 4,
     "--fault raise --raise-kind value --fail-rank 3 --fail-step 6", "user.code_error", 3,
     RAISE(3, "ValueError"))

# (d) shell loop, ranks started by hand, output prefixed by sed (or awk) into one log ------------------------
case("run94-shell-sigkill-rank0", "shell", 3, "--fault sigkill --fail-rank 0 --fail-step 3", "mem.host_oom", 0,
     SIGKILL_SH)
case("run94-shell-sigkill-rank0-store", "shell", 4,
     "--fault sigkill --fail-rank 0 --fail-step 3 --ckpt-every 2 --kill-at-ckpt", "mem.host_oom", 0, SIGKILL_SH,
     must=["recvValueWithTimeout failed", "checkpoint for step 2 committed"])
case("run94-shell-raise", "shell", 4, "--fault raise --fail-rank 2 --fail-step 2", "user.code_error", 2,
     RAISE(2))
case("run94-shell-raise-r1", "shell", 3, "--fault raise --raise-kind value --fail-rank 1 --fail-step 5",
     "user.code_error", 1, RAISE(1, "ValueError"), prefix="awk")
case("run94-shell-hang", "shell", 3, "--fault hang --fail-rank 2 --fail-step 3 --pg-timeout 15 --hang-s 40",
     "dist.collective_timeout", 2, TIMEOUT)
case("run94-shell-hang-w4", "shell", 4, "--fault hang --fail-rank 1 --fail-step 1 --pg-timeout 20 --hang-s 45",
     "dist.collective_timeout", 1, TIMEOUT, prefix="awk")
case("run94-shell-mismatch", "shell", 4, "--fault mismatch --fail-rank 3 --fail-step 4",
     "dist.collective_mismatch", 3, MISMATCH)
case("run94-shell-healthy", "shell", 4, "--steps 9 --ckpt-every 3", "none", None,
     must=["training finished after 9 steps", "checkpoint for step 9 committed"])


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def command(c, port):
    """The launcher command line for case c (run in WORK with the venv's bin first on PATH)."""
    return " ".join(_command(c, port).split())


def _command(c, port):
    t = "train.py " + c["targs"] if c["targs"] else "train.py"
    if c["kind"] == "standalone":
        return f"torchrun --standalone --nproc-per-node {c['n']} {c['tr']} {t}"
    if c["kind"] == "logdir":
        return f"torchrun --standalone --nproc-per-node {c['n']} --log-dir logs/{c['id']} {c['tr']} {t}"
    if c["kind"] == "twonode":
        return (f"torchrun --nnodes 2 --nproc-per-node 2 --rdzv-backend c10d --rdzv-endpoint localhost:{port} "
                f"--rdzv-id {c['id'][6:]} {c['tr']} {t}")
    if c["kind"] == "launch":
        return f"python -m torch.distributed.launch --use-env --nproc-per-node {c['n']} --master-port {port} {t}"
    if c["kind"] == "shell":
        pre = "PREFIX=awk " if c.get("prefix") == "awk" else ""
        return f"{pre}bash launch_by_hand.sh {c['n']} {port} {c['targs']}"
    raise ValueError(c["kind"])


def start(cmd, env, logpath):
    f = open(logpath, "wb")
    return subprocess.Popen(cmd, shell=True, cwd=WORK, env=env, stdout=f, stderr=subprocess.STDOUT,
                            start_new_session=True), f


def reap(procs, limit):
    """Wait for the launcher(s); kill their whole process groups (by pgid) at the end or on timeout."""
    end = time.time() + limit
    for p, f in procs:
        try:
            p.wait(max(1, end - time.time()))
        except subprocess.TimeoutExpired:
            print(f"  timeout: killing process group {p.pid}")
        f.close()
    for p, _ in procs:
        try:
            os.killpg(p.pid, signal.SIGKILL)  # leftovers (e.g. a hung rank after a shell-loop failure)
        except ProcessLookupError:
            pass
        p.wait()


def rewrite(path):
    with open(path, "rb") as fh:
        b = fh.read()
    b = b.replace(VENV.encode(), b"/opt/venv").replace(WORK.encode(), b"/home/user/job")
    with open(path, "wb") as fh:
        fh.write(b)


def read(path):
    with open(path, "rb") as fh:
        return fh.read().decode("utf-8", "replace")


def run_case(c):
    env = dict(os.environ)
    env.pop("TORCH_DISTRIBUTED_DEBUG", None)
    env.pop("LOGLEVEL", None)
    env["PATH"] = f"{VENV}/bin:" + env["PATH"]
    env.update(c["env"])
    for f in ("train.py", "launch_by_hand.sh"):
        shutil.copy(os.path.join(HERE, f), os.path.join(WORK, f))
    dest = os.path.join(OUT, c["id"])
    shutil.rmtree(dest, ignore_errors=True)
    os.makedirs(dest)
    port = free_port()
    envtxt = " ".join(f"{k}={v}" for k, v in c["env"].items())
    if c["kind"] == "twonode":
        os.makedirs(os.path.join(dest, "ranks"))
        procs = [start(command(c, port), env, os.path.join(dest, "ranks", "node0.log"))]
        cmds = [command(c, port)]
        if not c.get("no_node1"):
            time.sleep(1.5)  # node 0's agent first: it hosts the rendezvous store and sorts first
            procs.append(start(command(c, port), env, os.path.join(dest, "ranks", "node1.log")))
            cmds.append(command(c, port))
        reap(procs, 300)
        rc = procs[0][0].returncode
        files = [os.path.join(dest, "ranks", f) for f in sorted(os.listdir(os.path.join(dest, "ranks")))]
    else:
        shutil.rmtree(os.path.join(WORK, "logs", c["id"]), ignore_errors=True)
        cmds = [command(c, port)]
        p = start(cmds[0], env, os.path.join(dest, "log.txt"))
        reap([p], 300)
        rc = p[0].returncode
        files = [os.path.join(dest, "log.txt")]
        if c["kind"] == "logdir":
            base = os.path.join(WORK, "logs", c["id"])
            (sub,) = os.listdir(base)  # <rdzv_id>_<random>/attempt_N/<local_rank>/...
            shutil.copytree(os.path.join(base, sub), os.path.join(dest, "ranks"))
            for root, _, fs in os.walk(os.path.join(dest, "ranks")):
                files += [os.path.join(root, f) for f in sorted(fs)]
    for f in files:
        rewrite(f)
    return dest, rc, cmds, envtxt, files


def check_and_label(c, dest, rc, cmds, envtxt, files):
    texts = {os.path.relpath(f, dest): read(f) for f in files}
    alltext = "\n".join(texts.values())
    problems = [m for m in c["must"] if not re.search(m, alltext)]
    if c["kind"] == "twonode" and not c.get("no_node1"):
        if "rank 2/4" not in texts["ranks/node1.log"]:
            problems.append("node1 agent did not get global ranks 2,3")
    healthy = c["cat"] == "none"
    if healthy and rc != 0:
        problems.append(f"healthy case exited {rc}")
    if not healthy and rc == 0 and c["kind"] != "shell":  # the shell loop's `wait` exits 0 regardless
        problems.append("failure case exited 0")
    dl, dfile, also = None, None, []
    if not healthy:
        if c["dfile"]:
            order = ["ranks/" + c["dfile"]]
        elif c["kind"] == "twonode":
            order = ["ranks/node1.log", "ranks/node0.log"]
        else:
            order = ["log.txt"]
        for name in order:
            ms = list(re.finditer(c["pat"], texts.get(name, "")))
            if ms and dl is None:
                dl, dfile = ms[0].group(0), name
            for m in ms:
                if m.group(0) != dl and m.group(0) not in also:
                    also.append(m.group(0))
        if dl is None:
            problems.append(f"decisive regex not found: {c['pat']}")
        elif not any(dl in line for line in texts[dfile].splitlines()):
            problems.append("decisive line not on one line")
    if problems:
        return problems
    lab = describe(c)
    label = {
        "id": c["id"],
        "source": ("real run: tests/corpus/generators/launchers/round94a/run_cases.py " + c["id"] + " ("
                   + (envtxt + " " if envtxt else "") + " & ".join(cmds) + "), torch 2.13.0 CPU, gloo"),
        "category": c["cat"], "fatal": not healthy, "decisive_line": dl,
        "also_acceptable": also[:4] if c["cat"] in ("dist.collective_timeout", "dist.collective_mismatch") else [],
        "initiating_rank": c["rank"], "collateral": lab["collateral"], "operator": None,
        "root_cause": lab["root_cause"], "fix": lab["fix"],
        "launcher": {"launch": "torch.distributed.launch", "shell": "shell"}.get(c["kind"], "torchrun"),
        "framework": "plain", "genuine": False, "induced_how": lab["induced_how"],
        "confirmed_by": "induced", "confidence": "high",
    }
    if dfile and dfile != "log.txt":
        label["decisive_file"] = dfile[len("ranks/"):]
    with open(os.path.join(dest, "label.json"), "w") as fh:
        json.dump(label, fh, indent=2)
        fh.write("\n")
    return []


def describe(c):
    """Human-readable root cause / fix / collateral for the label."""
    a = dict(x.split(" ", 1) for x in re.findall(r"--([\w-]+ \S+)", c["targs"]))
    r, s = c["rank"], int(a.get("fail-step", 0)) + 1
    where = {"standalone": "torchrun", "logdir": "torchrun", "twonode": "two-node torchrun",
             "launch": "torch.distributed.launch", "shell": "shell-loop"}[c["kind"]]
    restarts = re.search(r"--max-restarts (\d)", c["tr"])
    coll = []
    fault = a.get("fault", "none")
    if c["cat"] == "none":
        what = {"raise": f"rank {a.get('fail-rank')} raised in data loading on attempt 0 only",
                "sigkill": f"rank {a.get('fail-rank')} was SIGKILLed on attempt 0 only"}.get(fault)
        if what:
            return dict(root_cause=f"No fatal failure: {what}; torchrun restarted the worker group "
                                   f"(--max-restarts {restarts.group(1)}) and attempt 1 finished all steps.",
                        fix="None needed; optionally find out why attempt 0 failed.",
                        collateral=["attempt 0's failure and its peer errors, recovered by the restart"],
                        induced_how=f"train.py {c['targs']} (fault only while TORCHELASTIC_RESTART_COUNT < 1)")
        return dict(root_cause="No failure: the job ran all steps and exited 0.", fix="None needed.",
                    collateral=[], induced_how=f"train.py {c['targs']} (no fault)")
    if fault == "raise" and a.get("raise-kind") == "value":
        rc = (f"Rank {r}'s data loading hit a non-numeric label field ('n/a') in step {s} and float() raised "
              f"ValueError, which killed that rank")
        fix = "Clean or validate the label file (handle missing values) before training."
    elif fault == "raise":
        rc = (f"Rank {r}'s data loading looked up a sample id that is not in its shard index in step {s} and "
              f"raised KeyError, which killed that rank")
        fix = "Rebuild the dataset index so every sampled id exists in the shard (or skip missing ids)."
    elif fault == "sigkill":
        rc = f"Rank {r} was SIGKILLed (signal 9, no traceback) in step {s}"
        fix = ("Find what killed the process (kernel OOM killer in dmesg, the scheduler) and give it memory "
               "headroom or cut its memory use.")
        if "kill-at-ckpt" in c["targs"]:
            rc += (" inside the checkpoint commit exchange on the TCPStore it hosted, so the other ranks lost the "
                   "store")
        elif r == 0:
            rc += "; rank 0 also hosted the TCPStore"
    elif fault == "hang":
        rc = (f"Rank {r} stalled before the gradient all_reduce of step {s} for longer than the "
              f"{a['pg-timeout']} s gloo process-group timeout, so the waiting ranks timed out")
        fix = ("Find why that rank stalls (slow I/O, deadlock, stuck data loader) or raise the process-group "
               "timeout if the wait is legitimate.")
    elif fault == "mismatch":
        rc = (f"Rank {r} all-reduced a gradient bucket of 609 elements while the other ranks all-reduced 577 in "
              f"step {s}, a collective size mismatch")
        fix = "Make every rank call the same collectives with the same tensor sizes (same bucket layout)."
    else:  # rendezvous timeout
        rc = ("The job was started with --nnodes 2 but only node 0's torchrun agent ever joined the c10d "
              "rendezvous (node 1's agent was never started), so node 0 hit the rendezvous join timeout")
        fix = ("Start the torchrun agent on every node with the same --rdzv-endpoint/--rdzv-id (or use an elastic "
               "--nnodes min:max range).")
        return dict(root_cause=rc + ".", fix=fix, collateral=["no worker ever started"],
                    induced_how="only one of the two torchrun agents was started (" + c["tr"] + ")")
    if restarts:
        rc += f"; it failed the same way on every one of the {int(restarts.group(1)) + 1} attempts"
    rc += "."
    if fault in ("raise", "sigkill", "mismatch") and not (r == 0 and c["kind"] == "shell"):
        coll.append("peer ranks' gloo 'Connection closed/reset by peer' errors in all_reduce")
    if fault == "sigkill" and c["kind"] == "shell" and "kill-at-ckpt" in c["targs"]:
        coll.append("other ranks' TCPStore 'recvValueWithTimeout failed ... Connection reset by peer' and "
                    "DistNetworkError in store.wait")
    elif fault == "sigkill" and c["kind"] == "shell":
        coll.append("other ranks' gloo 'Read error ... Connection reset by peer' in all_reduce")
    if fault == "hang":
        coll.append("timeout errors on the other ranks")
        if c["kind"] == "shell":
            coll.append("the hung rank's own error when it resumed after its peers had exited")
        else:
            coll.append("the hung rank SIGTERMed by the launcher (exitcode -15)")
    if c["kind"] != "shell":
        coll.append("launcher SIGTERM of the surviving workers and the ChildFailedError summary")
    if restarts:
        coll.append("the restarted attempts repeating the same failure")
    if c["kind"] == "twonode":
        coll.append("the other node's agent tearing down its workers")
    how = f"train.py {c['targs']} under {where}"
    return dict(root_cause=rc, fix=fix, collateral=coll, induced_how=how)


def main(argv):
    if "--list" in argv:
        for c in CASES:
            print(c["id"], c["kind"], c["cat"], c["rank"])
        return 0
    ids = [c["id"] for c in CASES] if argv in ([], ["all"]) else argv
    byid = {c["id"]: c for c in CASES}
    os.makedirs(WORK, exist_ok=True)
    os.makedirs(OUT, exist_ok=True)
    bad = []
    for i in ids:
        c = byid[i]
        for attempt in range(3):
            t0 = time.time()
            dest, rc, cmds, envtxt, files = run_case(c)
            problems = check_and_label(c, dest, rc, cmds, envtxt, files)
            print(f"{i}: rc={rc} {time.time() - t0:.0f}s {'OK' if not problems else problems}", flush=True)
            if not problems:
                break
        else:
            bad.append(i)
    if bad:
        print("FAILED:", bad)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
