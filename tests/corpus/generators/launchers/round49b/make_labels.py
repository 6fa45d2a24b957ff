"""Write label.json for every round-49b case from what was INDUCED (culprit GLOBAL rank, fault, category fixed
below), taking the decisive line from the log (first line matching the case's pattern), and CHECK that
decisive_line / also_acceptable / collateral are exact substrings of a line of log.txt (and of
ranks/<decisive_file> for --log-dir cases). Exits 1 if any check fails.

usage: python make_labels.py [--pool DIR] [--job DIR] [case-id ...]
"""
import argparse, json, os, re, sys

SRC = "tests/corpus/generators/launchers/round49b/"
PEER = r"(?:Connection closed by peer|Read error) \[[^\]]+\]:\d+"
TMO = r"Timed out waiting 15000ms for (?:send|recv) operation to complete"
SIGTERM = r"Sending process \d+ closing signal SIGTERM"
DET = r"Detected mismatch between collectives on ranks\. Rank \d is running collective: CollectiveFingerPrint\(SequenceNumber=\d+, OpType=ALLREDUCE, TensorShape=\[\d+\]"
TR2N = "two torchrun agents as two nodes on one host (two_nodes.sh"
EXC = {"key": "KeyError: 'input_ids'", "value": "ValueError: invalid literal for int() with base 10: 'n/a'",
       "index": "IndexError: list index out of range"}
FIX = {"user.code_error": "Fix the data loader / the broken record on that rank (validate records before use).",
       "mem.host_oom": "Find what killed that process (kernel OOM killer / scheduler: check dmesg and its memory use) "
                       "and give it more host memory or reduce its footprint.",
       "dist.collective_timeout": "Find why that rank stalled before the collective (here a sleep in its own code) "
                                  "and remove the stall; raise the process-group timeout only if the wait is legitimate.",
       "dist.collective_mismatch": "Make every rank of the group issue the same collective with the same tensor "
                                   "shape (the culprit all_reduces a tensor of another size)."}
FAULT = {"raise": "user.code_error", "sigkill": "mem.host_oom", "hang": "dist.collective_timeout",
         "mismatch": "dist.collective_mismatch"}


def c(launcher, fault, rank, world, dec, how, root, coll=(), also=(), dfile=None, conf="high", args=""):
    return dict(launcher=launcher, fault=fault, rank=rank, world=world, dec=dec, how=how, root=root,
                coll=list(coll), also=list(also), dfile=dfile, conf=conf, args=args)


def agent_kill(lr):
    return rf"failed \(exitcode: -9\) local_rank: {lr} \(pid: \d+\) of binary: \S+"


CASES = {
    # 1. two torchrun agents = two nodes
    "run-r49b-tr2n-raise-both": c("torchrun", "raise", 3, 4, r"\[default1\]:\[rank3\]: " + re.escape(EXC["key"]),
        "node 1 (c10d rendezvous), local rank 1 = global rank 3 raises KeyError in its data loader at step 3; job prints '[node1 local1 global3]'",
        "Global rank 3 (node 1, local rank 1; torchrun prefix [default1]) raised KeyError: 'input_ids' in its data loader; the other ranks lost their gloo peer.",
        coll=[r"\[default0\]:\[rank0\]: RuntimeError: .*" + PEER, SIGTERM]),
    "run-r49b-tr2n-raise-local-w6": c("torchrun", "raise", 4, 6, r"\[default1\]:\[rank4\]: " + re.escape(EXC["value"]),
        "static rendezvous, --node-rank 1, local rank 1 = global rank 4 raises ValueError at step 3; job prints '[local_rank L]' only",
        "Global rank 4 (node 1, local rank 1, printed by the job as '[local_rank 1]' like global rank 1) raised ValueError in its data loader.",
        coll=[SIGTERM]),
    "run-r49b-tr2n-sigkill-local": c("torchrun", "sigkill", 5, 6, agent_kill(2),
        "node 1 (c10d), local rank 2 = global rank 5 SIGKILLs itself at step 3; job prints '[local_rank L]'",
        "Global rank 5 (node 1's local rank 2) was SIGKILLed (exit -9, no traceback); node 1's agent reports local_rank: 2, the job's lines only show local ranks.",
        coll=[PEER, SIGTERM]),
    "run-r49b-tr2n-sigkill-global": c("torchrun", "sigkill", 2, 4, agent_kill(0),
        "static rendezvous, node 1 local rank 0 = global rank 2 SIGKILLs itself at step 2; job prints '[rank G]'",
        "Global rank 2 (node 1's local rank 0, reported by its agent as local_rank: 0) was SIGKILLed (exit -9, no traceback).",
        coll=[PEER, SIGTERM]),
    "run-r49b-tr2n-hang-global": c("torchrun", "hang", 3, 4, TMO,
        "node 1 (c10d), local rank 1 = global rank 3 sleeps 27 s before the step-2 all_reduce (timeout 15 s)",
        "Global rank 3 (node 1, local rank 1) stalled before the gradient all_reduce; the waiting ranks' gloo all_reduce timed out after 15000 ms.",
        coll=[SIGTERM]),
    "run-r49b-tr2n-hang-both-w6": c("torchrun", "hang", 4, 6, TMO,
        "static rendezvous, node 1 local rank 1 = global rank 4 sleeps 27 s before the step-3 all_reduce (timeout 15 s); job prints '[nodeN localL globalG]'",
        "Global rank 4 ([node1 local1 global4]) stalled before the gradient all_reduce; the other ranks timed out after 15000 ms.",
        coll=[SIGTERM]),
    "run-r49b-tr2n-mismatch-both": c("torchrun", "mismatch", 3, 4, None,
        "node 1 (c10d), local rank 1 = global rank 3 all_reduces 80 floats instead of 68 at step 3",
        "Global rank 3 ([node1 local1 global3]) all_reduced a tensor of another size; gloo reports the size mismatch."),
    "run-r49b-tr2n-mismatch-detail-local": c("torchrun", "mismatch", 4, 6, DET,
        "TORCH_DISTRIBUTED_DEBUG=DETAIL; static rendezvous, node 1 local rank 1 = global rank 4 all_reduces 80 floats instead of 68 at step 2; job prints local ranks",
        "Global rank 4 (node 1, local rank 1) all_reduced a tensor of shape [80] while the others used [68]; the DETAIL fingerprint check reports it."),
    "run-r49b-tr2n-logdir-raise": c("torchrun", "raise", 3, 4, r"\[rank3\]: " + re.escape(EXC["index"]),
        "per-node --log-dir trees (ranks/node0, ranks/node1, dirs named by LOCAL rank); node 1 local rank 1 = global rank 3 raises IndexError at step 4",
        "Global rank 3 (node 1, local rank 1: file node1/attempt_0/1/stderr.log) raised IndexError in its data loader.",
        dfile="node1/attempt_0/1/stderr.log", coll=[SIGTERM]),
    "run-r49b-tr2n-logdir-sigkill": c("torchrun", "sigkill", 2, 4, agent_kill(0),
        "per-node --log-dir trees; static rendezvous, node 1 local rank 0 = global rank 2 SIGKILLs itself at step 3",
        "Global rank 2 (node 1, local rank 0) was SIGKILLed (exit -9, empty stderr.log); the others lost their gloo peer.",
        coll=[PEER, SIGTERM]),
    "run-r49b-tr2n-logdir-hang": c("torchrun", "hang", 5, 6, TMO,
        "per-node --log-dir trees; node 1 (c10d) local rank 2 = global rank 5 sleeps 27 s before the step-2 all_reduce (timeout 15 s)",
        "Global rank 5 (node 1, local rank 2) stalled before the gradient all_reduce; the other ranks timed out after 15000 ms.",
        coll=[SIGTERM]),
    # 2. LOCAL_RANK printed as the rank
    "run-r49b-tr2n-localonly-raise": c("torchrun", "raise", 3, 4,
        r"\[default1\]:\S+ ERROR \[rank 1\] training failed: " + re.escape(EXC["key"]),
        "job prints LOCAL_RANK as '[rank L]' and catches its exception (no torch traceback); node 1 local rank 1 = global rank 3 raises KeyError at step 3",
        "The process printing '[rank 1]' on node 1 (global rank 3, local rank 1; torchrun's summary says rank: 3 (local_rank: 1)) failed with KeyError: 'input_ids'; the job's '[rank N]' is the local rank.",
        coll=[SIGTERM]),
    "run-r49b-tr2n-localonly-sigkill": c("torchrun", "sigkill", 2, 4, agent_kill(0),
        "job prints LOCAL_RANK as '[rank L]'; static rendezvous, node 1 local rank 0 = global rank 2 SIGKILLs itself at step 3",
        "Global rank 2 (node 1, local rank 0, printed by the job as '[rank 0]' like global rank 0) was SIGKILLed (exit -9).",
        coll=[PEER, SIGTERM]),
    "run-r49b-tr2n-localonly-hang": c("torchrun", "hang", 4, 6, TMO,
        "job prints LOCAL_RANK as '[rank L]' and catches exceptions; node 1 (c10d) local rank 1 = global rank 4 sleeps 27 s before the step-2 all_reduce",
        "Global rank 4 (node 1, local rank 1) stalled before the all_reduce; the job prints only local ranks, so the log shows it only by elimination (the one process without a timeout report; node 1's agent lists rank 4 as SIGTERMed).",
        coll=[SIGTERM], conf="medium"),
    "run-r49b-slurm-localonly-raise": c("slurm-loop", "raise", 2, 4,
        r"^\d+: \S+ ERROR \[rank 1\] training failed: " + re.escape(EXC["value"]),
        "fake SLURM loop 2 nodes x 2, cyclic: loop index 1 (node0, SLURM_LOCALID 1) has SLURM_PROCID 2; the job prints SLURM_LOCALID as '[rank 1]', catches and exits",
        "The task with SLURM_PROCID 2 (loop index 1, local id 1, printed as '[rank 1]' like PROCID 3) failed with ValueError in its data loader; the log never prints its global rank.",
        conf="medium"),
    # 3. sub-groups
    "run-r49b-torchrun-pairs-mismatch": c("torchrun", "mismatch", 3, 4, None,
        "dist.new_group pairs [0,1],[2,3]; global rank 3 (group rank 1 of [2,3]) all_reduces 9 floats instead of 4 in the group collective at step 3",
        "Global rank 3 (group rank 1 in group [2, 3]) issued the group all_reduce with a tensor of another size; gloo reports the size mismatch."),
    "run-r49b-torchrun-pairs-mismatch-detail-w6": c("torchrun", "mismatch", 3, 6, DET,
        "TORCH_DISTRIBUTED_DEBUG=DETAIL; new_group pairs; global rank 3 (group rank 1 of [2,3]) all_reduces 9 floats instead of 4 in the group at step 2",
        "Global rank 3 is 'Rank 1' of group [2, 3] in the DETAIL fingerprint message (TensorShape=[9] vs [4]); ranks 0's monitoredBarrier failures are collateral.",
        coll=[r"Ranks 2, 3 failed to pass monitoredBarrier in 20000 ms"]),
    "run-r49b-torchrun-subgroups-hang": c("torchrun", "hang", 3, 4, TMO,
        "dist.new_subgroups(group_size=2); global rank 3 (group rank 1 of [2,3]) sleeps 27 s before the group all_reduce at step 2",
        "Global rank 3 (group rank 1 of sub-group [2, 3]) stalled before the sub-group all_reduce; its partner rank 2 timed out first, then ranks 0-1 in the next world all_reduce.",
        coll=[SIGTERM]),
    "run-r49b-torchrun-subgroups-hang-grpdefault": c("torchrun", "hang", 3, 4, TMO,
        "dist.new_subgroups(group_size=2) WITHOUT a timeout (default 30 min); global rank 3 (group rank 1 of [2,3]) sleeps 27 s before the group all_reduce at step 2 (world timeout 15 s)",
        "Global rank 3 (group rank 1 of sub-group [2, 3]) stalled before the sub-group all_reduce; its partner rank 2 waits silently (group timeout 30 min) while ranks 0-1 time out in the next world all_reduce after 15000 ms.",
        coll=[SIGTERM]),
    "run-r49b-tr2n-nodegroup-hang": c("torchrun", "hang", 3, 4, TMO,
        "two nodes (static), one new_group per node; node 1 local rank 1 = global rank 3 (group rank 1 of [2,3]) sleeps 27 s before the group all_reduce at step 3",
        "Global rank 3 ([node1 local1 global3], group rank 1 of [2, 3]) stalled before the node-group all_reduce; the other ranks timed out after 15000 ms.",
        coll=[SIGTERM]),
    "run-r49b-mpirun-rev-subgroups-mismatch-detail": c("mpirun", "mismatch", 2, 4, DET,
        "mpirun -np 4, torch rank = 3 - OMPI rank, TORCH_DISTRIBUTED_DEBUG=DETAIL, new_subgroups(2); torch rank 2 (OMPI rank 1, group rank 0 of [2,3]) all_reduces 9 floats instead of 4 in the group at step 2",
        "Torch rank 2 (mpirun tag [1,1], group rank 0 of [2, 3]) issued the group all_reduce with TensorShape=[9] vs [4]; the DETAIL fingerprint check reports it."),
    # 4. mpirun, torch rank = permutation of the OMPI rank
    "run-r49b-mpirun-rev-raise": c("mpirun", "raise", 1, 4, r"\[1,2\]<stderr>:\[rank1\]: " + re.escape(EXC["key"]),
        "mpirun -np 4, torch rank = 3 - OMPI rank; torch rank 1 (tag [1,2]) raises KeyError at step 3",
        "Torch rank 1 (mpirun tag [1,2]) raised KeyError: 'input_ids' in its data loader; mpirun aborted the job."),
    "run-r49b-mpirun-rev-sigkill": c("mpirun", "sigkill", 2, 4,
        r"mpirun noticed that process rank 1 with PID \d+ on node \S+ exited on signal 9 \(Killed\)\.",
        "mpirun -np 4, torch rank = 3 - OMPI rank; torch rank 2 (OMPI rank 1) SIGKILLs itself at step 3",
        "Torch rank 2 = OMPI rank 1 (mpirun: 'process rank 1 ... exited on signal 9') was SIGKILLed; its peers lost the gloo connection.",
        coll=[PEER]),
    "run-r49b-mpirun-rev-hang": c("mpirun", "hang", 3, 4, TMO,
        "mpirun -np 4, torch rank = 3 - OMPI rank; torch rank 3 (OMPI rank 0, tag [1,0]) sleeps 27 s before the step-2 all_reduce",
        "Torch rank 3 (mpirun tag [1,0]) stalled before the all_reduce; the other ranks timed out after 15000 ms."),
    "run-r49b-mpirun-rev-mismatch-w5": c("mpirun", "mismatch", 1, 5, None,
        "mpirun -np 5, torch rank = 4 - OMPI rank; torch rank 1 (OMPI rank 3) all_reduces 80 floats instead of 68 at step 3",
        "Torch rank 1 (mpirun tag [1,3]) all_reduced a tensor of another size; gloo reports the size mismatch."),
    "run-r49b-mpirun-rot-sigkill": c("mpirun", "sigkill", 3, 4,
        r"mpirun noticed that process rank 2 with PID \d+ on node \S+ exited on signal 9 \(Killed\)\.",
        "mpirun -np 4, torch rank = (OMPI rank + 1) mod 4; torch rank 3 (OMPI rank 2) SIGKILLs itself at step 2",
        "Torch rank 3 = OMPI rank 2 (mpirun: 'process rank 2 ... exited on signal 9') was SIGKILLed; its peers lost the gloo connection.",
        coll=[PEER]),
    # 5. mp.spawn with node offset
    "run-r49b-spawn-offset-raise-logfilter": c("mp.spawn", "raise", 3, 4, r"^" + re.escape(EXC["value"]),
        "two mp.spawn nodes x 2 (global = node_rank*2 + i); node 1 i=1 = global rank 3 (SpawnProcess-2, logged rank=3) raises ValueError at step 3",
        "Global rank 3 (node 1's spawn process index 1: 'Process 1 terminated with the following error') raised ValueError in its data loader.",
        coll=[PEER]),
    "run-r49b-spawn-offset-sigkill-logextra": c("mp.spawn", "sigkill", 2, 4, r"process 0 terminated with signal SIGKILL",
        "two mp.spawn nodes x 2; node 1 i=0 = global rank 2 (SpawnProcess-1, logged rank=2) SIGKILLs itself at step 3",
        "Global rank 2 (node 1's spawn index 0: 'process 0 terminated with signal SIGKILL') was SIGKILLed; node 0's processes lost the gloo peer.",
        coll=[PEER]),
    "run-r49b-spawn-offset-hang-logfilter": c("mp.spawn", "hang", 4, 6, TMO,
        "two mp.spawn nodes x 3; node 1 i=1 = global rank 4 sleeps 27 s before the step-2 all_reduce (timeout 15 s)",
        "Global rank 4 (node 1, spawn index 1, SpawnProcess-2) stalled before the all_reduce; the other ranks timed out after 15000 ms."),
    "run-r49b-spawn-offset-mismatch-logextra": c("mp.spawn", "mismatch", 1, 4, None,
        "two mp.spawn nodes x 2; node 0 i=1 = global rank 1 all_reduces 80 floats instead of 68 at step 3",
        "Global rank 1 (node 0, spawn index 1) all_reduced a tensor of another size; gloo reports the size mismatch."),
    # 6. fake SLURM loop, cyclic
    "run-r49b-slurm-cyclic-raise": c("slurm-loop", "raise", 1, 4, r"^2: \[rank1\]: " + re.escape(EXC["index"]),
        "fake SLURM loop 2 nodes x 2, cyclic; loop index 2 (prefix '2: ', node1 localid 0) has SLURM_PROCID 1 and raises IndexError at step 3",
        "Rank 1 (SLURM_PROCID 1, loop prefix '2:', task 2) raised IndexError in its data loader."),
    "run-r49b-slurm-cyclic-sigkill-w6": c("slurm-loop", "sigkill", 3, 6,
        r"fake-srun: error: node1: task 4: Killed by signal KILL \(exit code 137\)",
        "fake SLURM loop 2 nodes x 3, cyclic; loop index 4 (node1 localid 1) has SLURM_PROCID 3 and SIGKILLs itself at step 3",
        "Rank 3 (SLURM_PROCID 3 = the loop's task 4 on node1) was SIGKILLed (exit 137, no traceback); the others lost their gloo peer.",
        also=[r"slurm_loop\.sh: line \d+: +\d+ Killed +SLURM_PROCID"], coll=[PEER]),
    "run-r49b-slurm-cyclic-hang": c("slurm-loop", "hang", 2, 4, TMO,
        "fake SLURM loop 2 nodes x 2, cyclic; loop index 1 (node0 localid 1) has SLURM_PROCID 2 and sleeps 27 s before the step-2 all_reduce; job prints local ranks",
        "Rank 2 (SLURM_PROCID 2, loop task 1, printed as '[local_rank 1]') stalled before the all_reduce; the others timed out after 15000 ms."),
    "run-r49b-slurm-cyclic-mismatch-detail-w6": c("slurm-loop", "mismatch", 4, 6, DET,
        "TORCH_DISTRIBUTED_DEBUG=DETAIL; fake SLURM loop 2 x 3, cyclic; loop index 2 (node0 localid 2) has SLURM_PROCID 4 and all_reduces 80 floats instead of 68 at step 2",
        "Rank 4 (SLURM_PROCID 4, loop prefix '2:') all_reduced TensorShape=[80] vs [68]; the DETAIL fingerprint check reports it."),
}
HEALTHY = {
    "run-r49b-tr2n-healthy-noisy": ("torchrun", "two torchrun nodes x 2, per-node groups, noisy warnings, no fault"),
    "run-r49b-mpirun-rev-healthy-noisy": ("mpirun", "mpirun -np 4, reversed torch ranks, sub-groups, noisy warnings, no fault"),
    "run-r49b-spawn-offset-healthy-noisy": ("mp.spawn", "two mp.spawn nodes x 2, logging filter, noisy warnings, no fault"),
    "run-r49b-slurm-cyclic-healthy-noisy": ("slurm-loop", "fake SLURM loop 2 x 3, LOCAL_RANK printed, noisy warnings, no fault"),
}
# gloo size-mismatch report (non-DETAIL mismatch cases): the enforce line
GLOO_MM = (r"op\.preamble\.length <= op\.nbytes\. \d+ vs \d+\. Received data size doesn't match expected size\. "
           r"Is there a distributed collective mismatch in your code\?")


def first_line(lines, pat, from_match=False):
    """First line matching pat: from the start of the line (launcher prefix included) to the end of the match,
    or only the match itself (from_match: the --log-dir cases, whose rank files carry no torchrun prefix)."""
    rx = re.compile(pat)
    for ln in lines:
        m = rx.search(ln)
        if m:
            return ln[m.start() if from_match else 0:m.end()]
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pool", default="/tmp/h49b/pool")
    ap.add_argument("--job", default="/tmp/h49b/job")
    ap.add_argument("ids", nargs="*")
    a = ap.parse_args()
    bad = 0
    for cid in list(CASES) + list(HEALTHY):
        if a.ids and cid not in a.ids:
            continue
        d = os.path.join(a.pool, cid)
        if not os.path.isfile(os.path.join(d, "log.txt")):
            print("MISSING", cid); bad += 1; continue
        lines = open(os.path.join(d, "log.txt"), encoding="utf-8", errors="replace").read().splitlines()
        cmd = open(os.path.join(a.job, "out", cid + ".cmd")).read().strip().replace(a.job, "<JOB>")
        cmd = re.sub(r"\S*/venv49b/bin/", "", cmd)
        if cid in HEALTHY:
            lau, how = HEALTHY[cid]
            lab = {"id": cid, "source": f"real run: {SRC}run_all.sh ({cmd}), torch 2.13.0 CPU, gloo",
                   "category": "none", "fatal": False, "decisive_line": None, "also_acceptable": [],
                   "initiating_rank": None, "collateral": [], "operator": None,
                   "root_cause": "Healthy run: all ranks finished training (noisy benign warnings only).",
                   "fix": "Nothing to fix.", "launcher": lau, "framework": "plain", "genuine": False,
                   "induced_how": how, "confirmed_by": "induced", "confidence": "high"}
            ok = any("training finished" in ln for ln in lines) and not any("Traceback" in ln for ln in lines)
            if not ok:
                print("HEALTHY CHECK FAILED", cid); bad += 1
        else:
            k = CASES[cid]
            cat = FAULT[k["fault"]]
            dec_pat = k["dec"] or GLOO_MM
            dec = first_line(lines, dec_pat, from_match=bool(k["dfile"]))
            if dec is None:
                print("NO DECISIVE", cid, dec_pat); bad += 1; continue
            also = [x for x in (first_line(lines, p) for p in k["also"]) if x]
            if k["fault"] in ("hang", "mismatch"):   # the other waiting ranks' reports of the same event
                rx = re.compile(dec_pat)
                also += [ln for ln in lines if rx.search(ln) and ln != dec and dec not in ln][:3]
            coll = [x for x in (first_line(lines, p) for p in k["coll"]) if x]
            lab = {"id": cid, "source": f"real run: {SRC}run_all.sh ({cmd}), torch 2.13.0 CPU, gloo",
                   "category": cat, "fatal": True, "decisive_line": dec, "also_acceptable": also,
                   "initiating_rank": k["rank"], "collateral": coll, "operator": None,
                   "root_cause": k["root"], "fix": FIX[cat], "launcher": k["launcher"], "framework": "plain",
                   "genuine": False, "induced_how": k["how"] + f" (world size {k['world']})",
                   "confirmed_by": "induced", "confidence": k["conf"]}
            if k["dfile"]:
                lab["decisive_file"] = k["dfile"]
                fl = open(os.path.join(d, "ranks", k["dfile"]), encoding="utf-8").read().splitlines()
                if not any(dec in ln for ln in fl):
                    print("DECISIVE NOT IN FILE", cid); bad += 1
            for s in [dec] + also + coll:
                if not any(s in ln for ln in lines):
                    print("NOT SUBSTRING", cid, s); bad += 1
        json.dump(lab, open(os.path.join(d, "label.json"), "w"), indent=1, ensure_ascii=False)
        print("ok", cid, lab["category"], lab["initiating_rank"], "|", lab["decisive_line"])
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
