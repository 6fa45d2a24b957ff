"""Write label.json for the plain-launcher cases produced by run_all.sh.

The labels come from what each run induced (see run_all.sh / ddp_faults.py). The few parts of
a decisive line that can differ between reruns (gloo's send/recv side of a timeout, the byte count
of gloo's size check, torchrun's run-id folder) are read back from the log; every decisive line
and also_acceptable substring is then checked to be a substring of a line of log.txt (and of
ranks/<decisive_file> where given). It does not diagnose anything else.

Usage: python labels.py [POOL]   (default /work/main/tests/blind/pool)
"""
import glob
import json
import os
import re
import sys

POOL = sys.argv[1] if len(sys.argv) > 1 else "/work/main/tests/blind/pool"
GEN = "tests/corpus/generators/launchers/plain"
SRC = "real run: " + GEN + "/run_all.sh {id} ({cmd}), torch 2.13.0 CPU, gloo"

LAUNCH = {
    "torchrun": "torchrun --nnodes 1 --nproc-per-node 4 --master-addr 127.0.0.1 --tee 3 "
                "--master-port P train_env.py",
    "torchrun-logdir": "torchrun --nnodes 1 --nproc-per-node 3 --master-addr 127.0.0.1 "
                       "--master-port P --log-dir D --redirects 3 --tee 3 train_env.py",
    "mpspawn": "python train_spawn.py --nprocs 3",
    "mpirun": "mpirun --allow-run-as-root --oversubscribe --tag-output -np 4 "
              "-x MASTER_ADDR=127.0.0.1 -x MASTER_PORT=P{x} python train_env.py",
}
LAUNCHER_NAME = {"torchrun": "torchrun", "torchrun-logdir": "torchrun", "mpspawn": "mp.spawn",
                 "mpirun": "mpirun"}

# (case id, launcher key, scenario, fault rank, train args, extra env / -x)
CASES = [
    ("run-torchrun-raise", "torchrun", "raise", 2, "--scenario raise --fault-rank 2", ""),
    ("run-torchrun-sigkill", "torchrun", "sigkill", 1, "--scenario sigkill --fault-rank 1", ""),
    ("run-torchrun-hang", "torchrun", "hang", 3, "--scenario hang --fault-rank 3 --pg-timeout 15", ""),
    ("run-torchrun-mismatch", "torchrun", "mismatch", 2, "--scenario mismatch --fault-rank 2", ""),
    ("run-torchrun-mismatch-detail", "torchrun", "mismatch-detail", 1,
     "--scenario mismatch --fault-rank 1 --grad-sync manual", "TORCH_DISTRIBUTED_DEBUG=DETAIL"),
    ("run-torchrun-compile", "torchrun", "compile-cxx", 3,
     "--scenario compile --compile-fault cxx --fault-rank 3", ""),
    ("run-torchrun-compile-fullgraph", "torchrun", "compile-fullgraph", 2,
     "--scenario compile --compile-fault fullgraph --fault-rank 2", ""),
    ("run-torchrun-hostoom", "torchrun", "hostoom", 2, "--scenario hostoom --fault-rank 2", ""),

    ("run-torchrun-logdir-raise", "torchrun-logdir", "raise", 1, "--scenario raise --fault-rank 1", ""),
    ("run-torchrun-logdir-sigkill", "torchrun-logdir", "sigkill", 2, "--scenario sigkill --fault-rank 2", ""),
    ("run-torchrun-logdir-hang", "torchrun-logdir", "hang", 1,
     "--scenario hang --fault-rank 1 --pg-timeout 20", ""),
    ("run-torchrun-logdir-mismatch", "torchrun-logdir", "mismatch", 1, "--scenario mismatch --fault-rank 1", ""),
    ("run-torchrun-logdir-mismatch-detail", "torchrun-logdir", "mismatch-detail", 2,
     "--scenario mismatch --fault-rank 2 --grad-sync manual", "TORCH_DISTRIBUTED_DEBUG=DETAIL"),
    ("run-torchrun-logdir-compile", "torchrun-logdir", "compile-fullgraph", 1,
     "--scenario compile --compile-fault fullgraph --fault-rank 1", ""),
    ("run-torchrun-logdir-hostoom", "torchrun-logdir", "hostoom", 2, "--scenario hostoom --fault-rank 2", ""),

    ("run-mpspawn-raise", "mpspawn", "raise", 2, "--scenario raise --fault-rank 2", ""),
    ("run-mpspawn-sigkill", "mpspawn", "sigkill", 1, "--scenario sigkill --fault-rank 1", ""),
    ("run-mpspawn-hang", "mpspawn", "hang", 2, "--scenario hang --fault-rank 2 --pg-timeout 15", ""),
    ("run-mpspawn-mismatch", "mpspawn", "mismatch", 2, "--scenario mismatch --fault-rank 2", ""),
    ("run-mpspawn-mismatch-detail", "mpspawn", "mismatch-detail", 1,
     "--scenario mismatch --fault-rank 1 --grad-sync manual", "TORCH_DISTRIBUTED_DEBUG=DETAIL"),
    ("run-mpspawn-compile", "mpspawn", "compile-cxx", 1,
     "--scenario compile --compile-fault cxx --fault-rank 1", ""),
    ("run-mpspawn-hostoom", "mpspawn", "hostoom", 1, "--scenario hostoom --fault-rank 1", ""),

    ("run-mpirun-raise", "mpirun", "raise", 3, "--scenario raise --fault-rank 3", ""),
    ("run-mpirun-sigkill", "mpirun", "sigkill", 2, "--scenario sigkill --fault-rank 2", ""),
    ("run-mpirun-hang", "mpirun", "hang", 1, "--scenario hang --fault-rank 1 --pg-timeout 15", ""),
    ("run-mpirun-mismatch", "mpirun", "mismatch", 3, "--scenario mismatch --fault-rank 3", ""),
    ("run-mpirun-mismatch-detail", "mpirun", "mismatch-detail", 2,
     "--scenario mismatch --fault-rank 2 --grad-sync manual", "-x TORCH_DISTRIBUTED_DEBUG=DETAIL"),
    ("run-mpirun-compile", "mpirun", "compile-cxx", 1,
     "--scenario compile --compile-fault cxx --fault-rank 1", ""),
    ("run-mpirun-compile-fullgraph", "mpirun", "compile-fullgraph", 3,
     "--scenario compile --compile-fault fullgraph --fault-rank 3", ""),
    ("run-mpirun-hostoom", "mpirun", "hostoom", 2, "--scenario hostoom --fault-rank 2",
     "-x FAULT_CGROUP=<1 GiB memory cgroup>"),
]

RANK_RE = [re.compile(r"^\[default(\d+)\]:"), re.compile(r"^\[1,(\d+)\]<std"), re.compile(r"^\[rank(\d+)\]:")]


def line_rank(line):
    for r in RANK_RE:
        m = r.match(line)
        if m:
            return int(m.group(1))
    return None


def first_line(lines, needle):
    for ln in lines:
        if needle in ln:
            return ln
    raise SystemExit(f"not found: {needle!r}")


def label(case):
    cid, lk, scen, fr, targs, extra = case
    d = os.path.join(POOL, cid)
    with open(os.path.join(d, "log.txt"), encoding="utf-8") as f:
        lines = f.read().splitlines()
    launcher = LAUNCHER_NAME[lk]
    cmd = LAUNCH[lk].format(x=(" " + extra) if lk == "mpirun" and extra else "") + " " + targs
    if extra and lk != "mpirun":
        cmd = extra + " " + cmd
    lab = {"id": cid, "source": SRC.format(id=cid, cmd=cmd), "fatal": True, "also_acceptable": [],
           "initiating_rank": fr, "collateral": [], "operator": None}
    decisive_file_rank = None
    kill_line = {"torchrun": f"failed (exitcode: -9) local_rank: {fr}",
                 "mp.spawn": f"process {fr} terminated with signal SIGKILL",
                 "mpirun": None}
    if launcher == "mpirun":  # the node name is the host's; read it back
        m = re.search(rf"mpirun noticed that process rank {fr} with PID \d+ on node \S+ exited on "
                      r"signal 9 \(Killed\)", "\n".join(lines))
        kill_line["mpirun"] = m.group(0) if m else "<missing>"

    if scen == "raise":
        lab.update(category="user.code_error", decisive_line="KeyError: 'label'",
                   root_cause=f"Rank {fr}'s data loading hit a record without a 'label' key (a corrupt "
                              "sample in its shard) and raised KeyError in collate(); the other ranks then "
                              "lost their gloo peer.",
                   fix="Fix or filter the corrupt record (validate records / use r.get with a check) in "
                       "the data pipeline of that shard.",
                   induced_how=f"ddp_faults.load_records renames 'label' to 'lable' in one record of rank "
                               f"{fr} at step 3")
        lab["collateral"] = ["other ranks: gloo 'Connection closed by peer' / 'Connection reset by peer' "
                             "RuntimeError in DDP backward"]
        decisive_file_rank = fr
    elif scen in ("sigkill", "hostoom"):
        lab.update(category="mem.host_oom", decisive_line=kill_line[launcher])
        if scen == "sigkill":
            lab.update(root_cause=f"Rank {fr} was SIGKILLed (exit -9, no traceback) at step 3; the "
                                  "surviving ranks lost their gloo peer.",
                       fix="Find what killed the rank (most often the host OOM killer: check dmesg / the "
                           "job's memory limit) and reduce host memory use or raise the limit.",
                       induced_how=f"rank {fr} calls os.kill(os.getpid(), signal.SIGKILL) at step 3")
        else:
            lab.update(root_cause=f"Rank {fr} leaked host memory (256 MiB per step) inside a 1 GiB memory "
                                  "cgroup and was SIGKILLed by the kernel OOM killer; the surviving ranks "
                                  "lost their gloo peer.",
                       fix="Stop the host-memory growth on that rank (cached tensors kept per step) or "
                           "give the job more host memory.",
                       induced_how=f"rank {fr} writes its pid to a cgroup-v1 memory cgroup (limit 1 GiB, "
                                   "memsw 1 GiB) and appends 64 MiB tensors (4 per step) from step 3; the "
                                   "cgroup's oom_kill counter read 1 after the run")
        if launcher == "torchrun":
            lab["also_acceptable"] = [f"exitcode  : -9 (pid: "]
            lab["collateral"] = ["torchrun SIGTERMs the other ranks", "other ranks: gloo 'Connection closed "
                                 "by peer' / 'Connection reset by peer' RuntimeError in DDP backward"]
        elif launcher == "mp.spawn":
            lab["collateral"] = ["mp.spawn SIGTERMs the other processes"]
        else:
            lab["collateral"] = ["other ranks: gloo 'Connection closed by peer' / 'Connection reset by "
                                 "peer' RuntimeError", "mpirun 'Primary job terminated normally, but 1 "
                                 "process returned a non-zero exit code' banner"]
    elif scen == "hang":
        pg_timeout = re.search(r"--pg-timeout (\d+)", targs).group(1)
        ln = first_line(lines, "Timed out waiting")
        m = re.search(r"Timed out waiting \d+ms for (send|recv) operation to complete", ln)
        lab.update(category="dist.collective_timeout", decisive_line=m.group(0),
                   root_cause=f"Rank {fr} stalled (silent, no error of its own) before step 4, so the "
                              "other ranks' DDP gradient all_reduce timed out after the process-group "
                              "timeout.",
                   fix=f"Find why rank {fr} stalls (a py-spy dump of it while hung); raise the "
                       "process-group timeout only if the stall is legitimate.",
                   induced_how=f"rank {fr} sleeps 60 s at step 3 with init_process_group(timeout="
                               f"{pg_timeout} s)")
        first_rank = line_rank(ln)
        lab["collateral"] = [f"gloo timeout RuntimeErrors on the waiting ranks (first: rank "
                             f"{first_rank if first_rank is not None else 'unnamed (mp.spawn Process 0)'})",
                             "the hung rank itself prints nothing and is terminated by the launcher"]
        if launcher == "torchrun":
            lab["collateral"].append("ChildFailedError 'Root Cause' names a waiting rank, not the hung one")
        if launcher == "mpirun":
            lab["collateral"].append("mpirun summary names a waiting rank (signal 6, Aborted), not the hung one")
        decisive_file_rank = first_rank
    elif scen == "mismatch":
        ln = first_line(lines, "op.preamble.length <= op.nbytes")
        m = re.search(r"op\.preamble\.length <= op\.nbytes\. \d+ vs \d+\. Received data size doesn't "
                      r"match expected size", ln)
        rr = line_rank(ln)
        lab.update(category="dist.collective_mismatch", decisive_line=m.group(0),
                   also_acceptable=["Is there a distributed collective mismatch in your code?"],
                   root_cause=f"Rank {fr} all_reduced a 1024-element tensor where the other ranks reduced "
                              "a 1-element loss tensor; gloo's size check aborted "
                              + (f"its ring neighbour rank {rr}" if rr is not None else "a neighbouring "
                                 "process") + " (the log itself does not name the rank that sent more).",
                   fix="Make every rank call the same collectives with the same shapes (keep the "
                       "per-rank histogram out of the loss all_reduce); rerun with "
                       "TORCH_DISTRIBUTED_DEBUG=DETAIL to see which rank differs.",
                   induced_how=f"rank {fr} concatenates a 1023-bin label histogram to its loss metric "
                               "before dist.all_reduce at step 3 (DDP training, no debug mode)")
        lab["collateral"] = ["the reporting rank dies with SIGABRT (terminate called after throwing "
                             "gloo::EnforceNotMet)", "other ranks: gloo connection closed/reset errors"]
        lab["notes"] = ("initiating_rank is the rank that called the different-size "
                                  "collective (known from the induction); the mismatch is reported by "
                                  + (f"rank {rr}" if rr is not None else "an unnamed process")
                                  + ", and nothing in the log names the sender")
        decisive_file_rank = rr
    elif scen == "mismatch-detail":
        lab.update(category="dist.collective_mismatch",
                   decisive_line="Detected mismatch between collectives on ranks.",
                   also_acceptable=[a for a in ("Tensor Tensor shapes: 1vs 1024",
                                                "Tensor Tensor shapes: 1024vs 1")
                                    if any(a in ln for ln in lines)],
                   root_cause=f"Rank {fr} all_reduced a tensor of shape [1024] where the other ranks "
                              "reduced shape [1] (same sequence number); TORCH_DISTRIBUTED_DEBUG=DETAIL's "
                              "collective fingerprint check reported it on every rank.",
                   fix="Make every rank call the same collectives with the same shapes (keep the "
                       "per-rank histogram out of the loss all_reduce).",
                   induced_how=f"rank {fr} concatenates a 1023-bin label histogram to its loss metric "
                               "before dist.all_reduce at step 3; manual gradient all_reduce instead of "
                               "DDP (DDP construction segfaults under DETAIL in this build)")
        lab["collateral"] = ["every rank raises the same fingerprint RuntimeError naming the other rank"]
        decisive_file_rank = fr
    elif scen == "compile-cxx":
        lab.update(category="compile.cpp_toolchain_missing",
                   decisive_line="InvalidCxxCompiler: No working C++ compiler found in "
                                 "torch._inductor.config.cpp.cxx: (None, '/nonexistent/g++')",
                   root_cause=f"On rank {fr} Inductor is configured to use a C++ compiler that does not "
                              "exist (/nonexistent/g++), so torch.compile fails on the first forward.",
                   fix="Point torch._inductor.config.cpp.cxx / CXX at an installed g++ (or install one) "
                       "on that rank's environment.",
                   induced_how=f"rank {fr} alone sets torch._inductor.config.cpp.cxx = (None, "
                               "'/nonexistent/g++') before torch.compile(model)")
        lab["collateral"] = ["torch._inductor.exc.InductorError wrapper", "launcher terminates the other "
                             "ranks, which were still compiling"]
        decisive_file_rank = fr
    elif scen == "compile-fullgraph":
        lab.update(category="compile.graph_break_data_dependent",
                   decisive_line="Explanation: Detected data-dependent branching (e.g. `if "
                                 "my_tensor.sum() > 0:`). Dynamo does not support tracing dynamic "
                                 "control flow.",
                   also_acceptable=["torch._dynamo.exc.Unsupported: Data-dependent branching"],
                   root_cause=f"On rank {fr} the model's forward branches on a tensor value (if h.sum() > "
                              "0) and it is compiled with fullgraph=True, so Dynamo raises Unsupported.",
                   fix="Make the forward branchless (torch.where) or use torch.cond, or drop "
                       "fullgraph=True to allow the graph break.",
                   induced_how=f"rank {fr} alone builds the model with a data-dependent `if h.sum() > 0` "
                               "branch; every rank does torch.compile(net, fullgraph=True) and wraps it "
                               "in DDP")
        lab["collateral"] = ["launcher terminates the other ranks"]
        decisive_file_rank = fr
    else:
        raise SystemExit(scen)

    lab.update(launcher=launcher, framework="plain", torch_version="2.13.0", genuine=False,
               confirmed_by="induced", confidence="high")
    if scen == "mismatch":
        lab["confidence"] = "medium"

    # checks: each substring is inside some line of log.txt
    for s in [lab["decisive_line"]] + lab["also_acceptable"]:
        if not any(s in ln for ln in lines):
            raise SystemExit(f"{cid}: {s!r} not in log.txt")
    ranks_dir = os.path.join(d, "ranks")
    if os.path.isdir(ranks_dir) and decisive_file_rank is not None:
        hits = glob.glob(os.path.join(ranks_dir, "*", "attempt_0", str(decisive_file_rank), "stderr.log"))
        assert len(hits) == 1, hits
        rel = os.path.relpath(hits[0], ranks_dir)
        with open(hits[0], encoding="utf-8") as f:
            if lab["decisive_line"] not in f.read():
                raise SystemExit(f"{cid}: decisive line not in ranks/{rel}")
        lab["decisive_file"] = rel
    order = ["id", "source", "category", "fatal", "decisive_line", "decisive_file", "also_acceptable",
             "initiating_rank", "collateral", "operator", "root_cause", "fix", "launcher", "framework",
             "torch_version", "genuine", "induced_how", "confirmed_by", "confidence", "notes"]
    out = {k: lab[k] for k in order if k in lab}
    with open(os.path.join(d, "label.json"), "w", encoding="utf-8") as f:
        json.dump(out, f, indent=2, ensure_ascii=False)
        f.write("\n")
    dl = [ln for ln in lines if lab["decisive_line"] in ln]
    print(f"{cid:38s} {out['category']:34s} rank={fr}  first decisive line (rank prefix "
          f"{line_rank(dl[0])}): {dl[0][:110]}")


if __name__ == "__main__":
    sel = set(sys.argv[2:])
    for c in CASES:
        if not sel or c[0] in sel:
            label(c)
