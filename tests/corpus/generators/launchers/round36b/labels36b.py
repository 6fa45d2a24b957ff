"""Writes label.json for every round-36b case folder: python labels36b.py STAGE_DIR
The decisive line is found with a regex in the stored file (first match; the substring runs from the match
to the end of that line, so ts/script prefixes and CRs stay out of it) and checked as an exact substring."""
import gzip
import json
import os
import re
import sys

STAGE = sys.argv[1]
SRC = "real run: tests/corpus/generators/launchers/round36b/run_all.sh {id} ({cmd}), torch 2.13.0 CPU, gloo"
TR = "torchrun --nnodes 1 --master-addr 127.0.0.1 --nproc-per-node {n} --master-port P job36b.py"
HEALTHY = dict(category="none", fatal=False, rx=None, rank=None, collateral=[],
               fix="Nothing to fix.")
GLOO_PEER = "other ranks: gloo 'Connection closed by peer' RuntimeError in the gradient all_reduce, then SIGTERM from torchrun (-15 in the failure summary)"
KEY = dict(category="user.code_error", fatal=True,
           root_cause="Rank {r}'s batch at step {k} had the key 'target' instead of 'targets', so batch[\"targets\"] raised KeyError in the training step.",
           fix="Fix the data pipeline so every batch carries the 'targets' key (or read the key the loader actually produces).")
SHAPE = dict(category="user.code_error", fatal=True,
             root_cause="Rank {r}'s batch at step {k} had 20 features instead of 16, so the first Linear(16, 32) raised a mat1/mat2 shape error in forward.",
             fix="Fix the data pipeline so every sample has 16 features (validate feature dims when loading).")
HANG = dict(category="dist.collective_timeout", fatal=True,
            root_cause="Rank {r} slept 60 s ('refreshing shard index ...') before the step-{k} all_reduce, so the other ranks' gloo all_reduce timed out after the 15 s process-group timeout.",
            fix="Remove the long blocking work from the training step of that rank (or do it on all ranks / raise the process-group timeout if it is legitimate).")
OOM = dict(category="mem.host_oom", fatal=True,
           root_cause="Rank {r} ran in a 1 GiB memory cgroup and kept allocating 64 MiB buffers at step {k}; the kernel OOM killer SIGKILLed it (exit -9, no traceback).",
           fix="Reduce that rank's host-memory use (it grows without bound) or give the job a larger memory limit.")

C = {}
def case(id, **kw):
    C[id] = kw

# ---- moreutils ts
case("run36b-ts-iso-keyerror", **KEY, r=1, k=3, rx=r"\[rank1\]: KeyError: 'targets'", launcher="torchrun",
     cmd=TR.format(n=3) + " --fault keyerror --fault-rank 1 --fault-step 3 2>&1 | ts '%Y-%m-%dT%H:%M:%.SZ' > log.txt",
     stored="moreutils ts '%Y-%m-%dT%H:%M:%.SZ' on every line (stdout+stderr piped through ts)",
     collateral=[GLOO_PEER.replace("then SIGTERM", "rank 2 then died of SIGABRT ('terminate called without an active exception'); torchrun SIGTERMed rank 0"),
                 "torchrun's 'Root Cause (first observed failure)' names rank 2 (exitcode -6 SIGABRT), a collateral rank, not rank 1"])
case("run36b-ts-hms-hang", **HANG, r=2, k=3, rx=r"\[rank\d\]: RuntimeError: .*Timed out waiting 15000ms", launcher="torchrun",
     cmd=TR.format(n=3) + " --fault hang --fault-rank 2 --fault-step 3 --hang-sec 60 --pg-timeout 15 2>&1 | ts '[%H:%M:%S]' > log.txt",
     stored="moreutils ts '[%H:%M:%S]' on every line",
     collateral=["ranks 0 and 1: gloo 'Timed out waiting 15000ms for recv operation to complete' in all_reduce",
                 "torchrun SIGTERMs rank 2 (silent, still sleeping); its Root Cause names rank 0 (exitcode 1)"])
case("run36b-ts-iso-healthy", **HEALTHY, launcher="torchrun", cmd=TR.format(n=2) + " --steps 8 2>&1 | ts '%Y-%m-%dT%H:%M:%.SZ' > log.txt",
     stored="moreutils ts '%Y-%m-%dT%H:%M:%.SZ' on every line",
     root_cause="Healthy run: both ranks trained 8 steps and logged 'training done'; no failure.")
case("run36b-ts-hms-cxx", category="compile.cpp_toolchain_missing", fatal=True, r=1, k=1,
     rx=r"\[rank1\]: torch._inductor.exc.InductorError: InvalidCxxCompiler", launcher="torchrun",
     cmd="CXX=/nonexistent/g++ set by rank 1 only; " + TR.format(n=2) + " --fault cxx --fault-rank 1 2>&1 | ts '[%H:%M:%S]' > log.txt",
     stored="moreutils ts '[%H:%M:%S]' on every line",
     root_cause="Rank 1 ran with CXX=/nonexistent/g++, so torch.compile's inductor backend found no working C++ compiler on the first forward.",
     fix="Install a C++ compiler (g++) on that node or point CXX / torch._inductor.config.cpp.cxx at a working one.",
     collateral=["rank 0: gloo 'Connection closed by peer' RuntimeError, SIGTERMed by torchrun"])
# ---- script(1)
case("run36b-script-fullgraph", category="compile.graph_break_data_dependent", fatal=True, r=0, k=1,
     rx=r"torch._dynamo.exc.Unsupported: Data-dependent branching", launcher="python", world=1,
     cmd="script -q -c 'python job36b.py --fault fullgraph --fault-rank 0' log.txt",
     stored="script(1) typescript: 'Script started/done' header and footer, CRLF line ends",
     root_cause="torch.compile(model, fullgraph=True) over a forward with `if h.sum() > 0:` (a branch on a tensor value) cannot be traced as one graph, so dynamo raised Unsupported: Data-dependent branching.",
     fix="Make the branch tensor-only (torch.where / torch.cond) or drop fullgraph=True to allow a graph break.", collateral=[])
case("run36b-script-shape", **SHAPE, r=1, k=4, rx=r"\[rank1\]: RuntimeError: mat1 and mat2 shapes cannot be multiplied", launcher="torchrun",
     cmd="script -q -c '" + TR.format(n=2) + " --fault shape --fault-rank 1 --fault-step 4' log.txt",
     stored="script(1) typescript: header/footer, CRLF line ends", collateral=[GLOO_PEER])
case("run36b-script-healthy", **HEALTHY, launcher="torchrun", cmd="script -q -c '" + TR.format(n=2) + " --compile --steps 6' log.txt",
     stored="script(1) typescript: header/footer, CRLF line ends",
     root_cause="Healthy run: both ranks torch.compiled the DDP model, trained 6 steps and logged 'training done'.")
# ---- >> appends
case("run36b-append-ok-then-keyerror", **KEY, r=1, k=2, rx=r"\[rank1\]: KeyError: 'targets'", launcher="torchrun",
     cmd=TR.format(n=2) + " --steps 5 >> log.txt 2>&1; " + TR.format(n=2) + " --steps 5 --fault keyerror --fault-rank 1 --fault-step 2 >> log.txt 2>&1",
     stored="one log file appended (>>) by two runs: first a healthy run ('training done' x2), then the failing run; the label is about the LAST run",
     collateral=[GLOO_PEER])
case("run36b-append-shape-then-ok", **HEALTHY, launcher="torchrun",
     cmd=TR.format(n=2) + " --steps 5 --fault shape --fault-rank 1 --fault-step 2 >> log.txt 2>&1; " + TR.format(n=2) + " --steps 5 >> log.txt 2>&1",
     stored="one log file appended (>>) by two runs: first a failing run (rank 1 shape error at step 2, torchrun ChildFailedError), then a successful retry; the label is about the LAST run, which was healthy",
     root_cause="Healthy in the end: the log holds an earlier failed run (rank 1 RuntimeError mat1 and mat2 shapes cannot be multiplied (8x20 and 16x32) at step 2) followed by a retry in which both ranks trained 5 steps and logged 'training done'. Label = the last run.",
     notes="Earlier run in the same file failed with user.code_error on rank 1 (mat1/mat2 shape error); the last run succeeded.")
# ---- tail / head
case("run36b-tail60-keyerror", **KEY, r=1, k=150, rx=r"\[rank1\]: KeyError: 'targets'", launcher="torchrun",
     cmd=TR.format(n=2) + " --verbose --steps 200 --fault keyerror --fault-rank 1 --fault-step 150 > full.log 2>&1; tail -n 60 full.log > log.txt",
     stored="only the last 60 lines of the full output (tail -n 60)", collateral=[GLOO_PEER])
case("run36b-tail60-hostoom", **OOM, r=1, k=40, rx=None, launcher="torchrun", collateral=["rank 0: gloo 'Connection closed by peer' RuntimeError, then SIGTERM from torchrun"],
     cmd="memory cgroup v1 limit 1 GiB for rank 1 only; " + TR.format(n=2) + " --verbose --steps 60 --fault hostoom --fault-rank 1 --fault-step 40 > full.log 2>&1; tail -n 60 full.log > log.txt",
     stored="only the last 60 lines of the full output (tail -n 60)")
case("run36b-head20k-keyerror-restarts", **KEY, r=1, k=3, rx=r"\[rank1\]: KeyError: 'targets'", launcher="torchrun",
     cmd=TR.format(n=3).replace("--master-port P", "--rdzv-backend c10d --rdzv-endpoint 127.0.0.1:P --max-restarts 4") + " --verbose --fault keyerror --fault-rank 1 --fault-step 3 > full.log 2>&1; head -c 20000 full.log > log.txt",
     stored="only the first 20000 bytes of the full output (head -c 20000); the end (later restarts and the final summary) is cut off",
     collateral=[GLOO_PEER, "torchrun restarts the worker group (--max-restarts 4, c10d rendezvous); in every restarted attempt the new workers fail in init_process_group with 'Gloo connectFullMesh failed ... timed out connecting: SO_ERROR: Connection refused' / 'Connect timeout' before reaching step 3 (a consequence of the restart, not the cause); the head cut drops the final ChildFailedError summary"])
case("run36b-head20k-healthy", **HEALTHY, launcher="torchrun", cmd=TR.format(n=2) + " --verbose --steps 150 > full.log 2>&1; head -c 20000 full.log > log.txt",
     stored="only the first 20000 bytes of the full output (head -c 20000): ends mid-training, the end of the run is cut off",
     root_cause="Healthy run (it trained all 150 steps and finished), but the stored head shows only the first steps; nothing in it indicates a failure.")
# ---- split stdout / stderr
case("run36b-split-keyerror", **KEY, r=1, k=4, rx=r"\[rank1\]: KeyError: 'targets'", launcher="torchrun",
     cmd=TR.format(n=2) + " --fault keyerror --fault-rank 1 --fault-step 4 > stdout.txt 2> log.txt",
     stored="stdout and stderr in two files: log.txt = stderr (logger, tracebacks, torchrun), stdout.txt = stdout (empty, 0 bytes: nothing in this job prints to stdout)",
     collateral=[GLOO_PEER])
case("run36b-split-shape-stdout", **SHAPE, r=1, k=3, rx=r"RuntimeError: mat1 and mat2 shapes cannot be multiplied", dfile="stdout.txt",
     launcher="torchrun", cmd=TR.format(n=2) + " --log-stdout --catch --fault shape --fault-rank 1 --fault-step 3 > stdout.txt 2> log.txt",
     stored="stdout and stderr in two files: log.txt = stderr (torchrun's ChildFailedError summary, gloo errors), stdout.txt = stdout (the logger, incl. rank 1's logger.exception traceback)",
     collateral=[GLOO_PEER])
case("run36b-split-healthy", **HEALTHY, launcher="torchrun", cmd=TR.format(n=2) + " --log-stdout --steps 8 > stdout.txt 2> log.txt",
     stored="stdout and stderr in two files: log.txt = stderr (torchrun warnings), stdout.txt = stdout (logger)",
     root_cause="Healthy run: both ranks trained 8 steps and logged 'training done'.")
# ---- nbconvert / IPython
NB = "python mk_nb36b.py {k} train_{k}.ipynb; jupyter nbconvert --to notebook --execute --allow-errors --output train_{k}.executed.ipynb train_{k}.ipynb; jupyter nbconvert --to markdown train_{k}.executed.ipynb"
case("run36b-nbconvert-keyerror-md", category="user.code_error", fatal=True, r=0, k=4, rx=r"KeyError: 'labels'", launcher="jupyter nbconvert", world=1,
     cmd=NB.format(k="keyerror"), stored="executed notebook (nbconvert --execute --allow-errors) converted to markdown: code cells, outputs indented, the failing cell's traceback as stored; later cells still ran",
     root_cause="In the notebook's training-loop cell, get_batch(4) returned a dict with the key 'label' instead of 'labels', so batch['labels'] raised KeyError at step 4.",
     fix="Make get_batch return the 'labels' key for every shard (or read the key it actually produces).", collateral=[])
case("run36b-nbconvert-fullgraph-md", category="compile.graph_break_data_dependent", fatal=True, r=0, k=1,
     rx=r"Unsupported: Data-dependent branching", launcher="jupyter nbconvert", world=1,
     cmd=NB.format(k="fullgraph"), stored="executed notebook converted to markdown; the training-loop cell's traceback as stored",
     root_cause="The notebook compiles the model with torch.compile(fullgraph=True) but forward branches on `h.sum() > 0`, so dynamo raised Unsupported: Data-dependent branching on the first forward.",
     fix="Make the branch tensor-only (torch.where / torch.cond) or drop fullgraph=True.", collateral=[])
case("run36b-nbconvert-healthy-md", **HEALTHY, launcher="jupyter nbconvert", world=1, cmd=NB.format(k="healthy"),
     stored="executed notebook converted to markdown",
     root_cause="Healthy notebook: 6 training steps logged and the checkpoint saved.")
case("run36b-ipython-shape", **SHAPE, r=0, k=3, rx=r"\x1b\[31mRuntimeError\x1b\[39m: mat1 and mat2 shapes cannot be multiplied", launcher="python -m IPython", world=1,
     cmd="python -m IPython job36b.py -- --fault shape --fault-rank 0 --fault-step 3 > log.txt 2>&1",
     stored="python -m IPython script.py: IPython's verbose coloured traceback (ANSI colour codes kept)", collateral=[])
case("run36b-ipython-healthy", **HEALTHY, launcher="python -m IPython", world=1, cmd="python -m IPython job36b.py -- --steps 6 > log.txt 2>&1",
     stored="python -m IPython script.py", root_cause="Healthy single-process run: 6 steps and 'training done'.")
# ---- gzip
case("run36b-gzip-hostoom", **OOM, r=1, k=3, rx=None, launcher="torchrun",
     cmd="memory cgroup v1 limit 1 GiB for rank 1 only; " + TR.format(n=2) + " --fault hostoom --fault-rank 1 --fault-step 3 > full.log 2>&1; gzip -c full.log > log.txt.gz",
     stored="gzip -c of the full output: log.txt.gz only", dfile="log.txt.gz",
     collateral=["rank 0: gloo 'Connection closed by peer' RuntimeError, then SIGTERM from torchrun"])
case("run36b-gzip-hang", **HANG, r=1, k=2, rx=r"\[rank0\]: RuntimeError: .*Timed out waiting 15000ms", launcher="torchrun",
     cmd=TR.format(n=2) + " --fault hang --fault-rank 1 --fault-step 2 --hang-sec 50 --pg-timeout 15 > full.log 2>&1; gzip -c full.log > log.txt.gz",
     stored="gzip -c of the full output: log.txt.gz only", dfile="log.txt.gz",
     collateral=["torchrun SIGTERMs rank 1 (silent, still sleeping)"])

OOM_RX = r"failed \(exitcode: -9\) local_rank: 1"


def read(path):
    if path.endswith(".gz"):
        return gzip.open(path, "rt", errors="replace").read()
    return open(path, errors="replace").read()


for cid, s in sorted(C.items()):
    d = os.path.join(STAGE, cid)
    if not os.path.isdir(d):
        print("MISSING", cid)
        continue
    dfile = s.get("dfile", "log.txt")
    text = read(os.path.join(d, dfile))
    dec = None
    rx = s.get("rx") or (OOM_RX if s["category"] == "mem.host_oom" else None)
    if rx:
        m = re.search(rx, text)
        if not m:
            print("NO MATCH", cid, rx)
            continue
        end = text.find("\n", m.start())
        dec = text[m.start(): end if end >= 0 else None].rstrip("\r").rstrip()
        if rx == OOM_RX:
            dec = m.group(0)  # the launcher's -9 line without the pid
        assert any(dec in line for line in text.splitlines()), cid
    if s["category"] == "none":
        allt = text + (read(os.path.join(d, "stdout.txt")) if os.path.exists(os.path.join(d, "stdout.txt")) else "")
        assert "training done" in allt or "saved checkpoint" in allt or "head20k" in cid, cid
    r, k = s.get("r"), s.get("k")
    lab = {
        "id": cid,
        "source": SRC.format(id=cid, cmd=s["cmd"]),
        "category": s["category"], "fatal": s["fatal"], "decisive_line": dec, "also_acceptable": [],
        "initiating_rank": r, "collateral": s["collateral"], "operator": None,
        "root_cause": s["root_cause"].format(r=r, k=k), "fix": s["fix"],
        "launcher": s["launcher"], "framework": "jupyter" if "nbconvert" in s["launcher"] else "plain",
        "torch_version": "2.13.0", "genuine": False,
        "induced_how": "%s (world size %d)" % (s["cmd"], s.get("world") or int(re.search(r"--nproc-per-node (\d)", s["cmd"]).group(1))),
        "stored_how": s["stored"],
        "confirmed_by": "induced", "confidence": "high",
    }
    if dfile != "log.txt" and dec is not None:
        lab["decisive_file"] = dfile
    if s.get("notes"):
        lab["notes"] = s["notes"]
    json.dump(lab, open(os.path.join(d, "label.json"), "w"), indent=2)
    print("ok", cid, s["category"], r, repr(dec)[:90])
