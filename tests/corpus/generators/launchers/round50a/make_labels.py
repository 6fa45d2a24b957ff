"""Write label.json for every round50a case folder in POOL (default /tmp/h50a/pool).

Labels come from what each run induced (run_all.sh); the decisive line is the FIRST line of log.txt
(or of ranks/<decisive_file>) matching the case's regex, and is checked to be an exact substring.
"""
import json
import os
import re
import sys

POOL = sys.argv[1] if len(sys.argv) > 1 else "/tmp/h50a/pool"
GEN = "tests/corpus/generators/launchers/round50a/run_all.sh"

FIX = {
    "user.code_error": "Fix the data-loading code on the failing process (the shard/record schema lacks key 'x').",
    "mem.host_oom": "Find why that process was SIGKILLed (host memory/OOM killer or an external kill) and give it the memory it needs.",
    "dist.collective_timeout": "Find what stalled the silent process before the collective (it never joined the all_reduce) and fix or bound it.",
    "dist.collective_mismatch": "Make every process call the same collective with the same tensor shape (the metric reduction differs on one process).",
    "none": None,
}
RAISE = r"KeyError: 'x'$"
TIMEOUT = r"Timed out waiting \d+ms for (recv|send) operation"
MISMATCH = r"(Detected mismatch between collectives|op\.preamble\.length <= op\.nbytes|size mismatch|Sizes of tensors must match|tensor.*sizes)"

# id: (launcher, framework, category, initiating_rank, decisive regex, decisive_file, confidence, what the log shows, how induced)
CASES = {
    "run-r50a-fabric-raise-n1l1": ("lightning", "lightning-fabric", "user.code_error", 3, r"\[rank3\]: KeyError: 'x'", None, "high",
        "node_rank 1 / local_rank 1 (global rank 3, printed as [rank3]) raised KeyError: 'x' in data loading at step 3",
        "FAULT=raise BAD_NODE=1 BAD_LOCAL=1: node 1's second process looks up a missing field"),
    "run-r50a-fabric-sigkill-n1l0": ("lightning", "lightning-fabric", "mem.host_oom", 2, r"node 1 \(pid \d+\) terminated by signal 9", None, "high",
        "node 1's main process (node_rank 1, local_rank 0 = global rank 2) was SIGKILLed at step 3; only the node wrapper's exit line names it",
        "FAULT=sigkill BAD_NODE=1 BAD_LOCAL=0: os.kill(getpid(), SIGKILL)"),
    "run-r50a-fabric-hang-n0l1": ("lightning", "lightning-fabric", "dist.collective_timeout", 1, TIMEOUT, None, "high",
        "node_rank 0 / local_rank 1 (global rank 1) slept before the step-3 loss all_reduce; ranks 0, 2, 3 timed out after 20 s",
        "FAULT=hang BAD_NODE=0 BAD_LOCAL=1: time.sleep(50) > 20 s process group timeout"),
    "run-r50a-fabric-mismatch-n1l0": ("lightning", "lightning-fabric", "dist.collective_mismatch", 2, MISMATCH, None, "high",
        "node_rank 1 / local_rank 0 (global rank 2) all_reduced a 4-element tensor where the others reduce 1 element",
        "FAULT=mismatch BAD_NODE=1 BAD_LOCAL=0"),
    "run-r50a-fabric-healthy": ("lightning", "lightning-fabric", "none", None, None, None, "high", "healthy 2x2 run", "FAULT=none"),
    "run-r50a-trainer-raise-n1l0": ("lightning", "lightning-trainer", "user.code_error", 2, r"\[rank2\]: KeyError: 'x'", None, "high",
        "node 1 / local 0 (global rank 2) raised KeyError: 'x' in training_step's data loading",
        "FAULT=raise BAD_NODE=1 BAD_LOCAL=0"),
    "run-r50a-trainer-hang-n1l1": ("lightning", "lightning-trainer", "dist.collective_timeout", 3, TIMEOUT, None, "high",
        "node 1 / local 1 (global rank 3) slept in training_step before the loss all_reduce; the others timed out",
        "FAULT=hang BAD_NODE=1 BAD_LOCAL=1"),
    "run-r50a-trainer-mismatch-n0l1": ("lightning", "lightning-trainer", "dist.collective_mismatch", 1, MISMATCH, None, "high",
        "node 0 / local 1 (global rank 1) all_reduced a 1000-element tensor where the others reduce 1; a peer aborts on gloo's size check",
        "FAULT=mismatch BAD_NODE=0 BAD_LOCAL=1"),
    "run-r50a-accel-2m-sigkill-p3": ("accelerate", "accelerate", "mem.host_oom", 3, r"failed \(exitcode: -9\) local_rank: 1", None, "high",
        "machine_rank 1's local process 1 (process_index 3) was SIGKILLed; its torchrun says local_rank: 1 / rank 3, machine 0's summary blames rank 0",
        "FAULT=sigkill BAD_INDEX=3"),
    "run-r50a-accel-2m-raise-p2": ("accelerate", "accelerate", "user.code_error", 2, r"\[rank2\]: KeyError: 'x'", None, "high",
        "process_index 2 (machine 1, local_process_index 0) raised KeyError: 'x'",
        "FAULT=raise BAD_INDEX=2"),
    "run-r50a-accel-2m-hang-p1": ("accelerate", "accelerate", "dist.collective_timeout", 1, TIMEOUT, None, "high",
        "process_index 1 (machine 0, local_process_index 1) slept before the loss all_reduce; the others timed out after 20 s",
        "FAULT=hang BAD_INDEX=1"),
    "run-r50a-accel-1m-mismatch-p3": ("accelerate", "accelerate", "dist.collective_mismatch", 3, MISMATCH, None, "high",
        "process_index 3 all_reduced a 4-element tensor where the others reduce 1 element",
        "FAULT=mismatch BAD_INDEX=3"),
    "run-r50a-accel-2m-healthy": ("accelerate", "accelerate", "none", None, None, None, "high", "healthy 2-machine run", "FAULT=none"),
    "run-r50a-ds-hostfile-raise-r2": ("deepspeed", "deepspeed", "user.code_error", 2, r"\[rank2\]: KeyError: 'x'", None, "high",
        "global rank 2 (deepspeed --local_rank=2) raised KeyError: 'x'; the launcher's exit line names another process",
        "FAULT=raise BAD_RANK=2, hostfile 'localhost slots=4'"),
    "run-r50a-ds-2node-sigkill-r3": ("deepspeed", "deepspeed", "mem.host_oom", 3, r"SIGKILL|exits with return code = -9|signal 9", None, "high",
        "two deepspeed launchers (--no_ssh, --node_rank 0/1, hostfile node0/node1 slots=2); node 1's local rank 1 = global rank 3 was SIGKILLed",
        "FAULT=sigkill BAD_RANK=3"),
    "run-r50a-ds-include-hang-r2": ("deepspeed", "deepspeed", "dist.collective_timeout", 2, TIMEOUT, None, "high",
        "--include localhost:1,2,4,5 (4 processes); global rank 2 slept before the loss all_reduce; the others timed out",
        "FAULT=hang BAD_RANK=2"),
    "run-r50a-ds-eachlog-mismatch-r1": ("deepspeed", "deepspeed", "dist.collective_mismatch", 1, MISMATCH, "@each", "high",
        "--enable_each_rank_log: per-process output only in ranks/; global rank 1 all_reduced a tensor of another size",
        "FAULT=mismatch BAD_RANK=1 ZERO_STAGE=0"),
    "run-r50a-ds-numgpus-raise-r3": ("deepspeed", "deepspeed", "user.code_error", 3, r"\[rank3\]: KeyError: 'x'", None, "high",
        "deepspeed --num_nodes 1 --num_gpus 4; global rank 3 raised KeyError: 'x'",
        "FAULT=raise BAD_RANK=3"),
    "run-r50a-ds-hostfile-healthy": ("deepspeed", "deepspeed", "none", None, None, None, "high", "healthy run", "FAULT=none"),
    "run-r50a-torchrun-roles-sigkill-r2": ("torchrun", "plain", "mem.host_oom", 2, r"failed \(exitcode: -9\) local_rank: 0", None, "high",
        "two torchrun agents (--node-rank 0/1, --role trainer); node 1's local_rank 0 (global rank 2) was SIGKILLed; the job's own logger prints host+pid only",
        "FAULT=sigkill BAD_RANK=2"),
    "run-r50a-torchrun-filter-raise-r3": ("torchrun", "plain", "user.code_error", 3, RAISE, None, "high",
        "--local-ranks-filter 0 hides rank 3's own output; its KeyError appears only in torchrun's failure summary (rank: 3) and in ranks/",
        "FAULT=raise BAD_RANK=3"),
    "run-r50a-torchrun-rdzv-hang-r3": ("torchrun", "plain", "dist.collective_timeout", 3, TIMEOUT, None, "high",
        "two torchrun agents with c10d rendezvous (--rdzv-id job-r50a-7, --role learner); global rank 3 slept before the loss all_reduce",
        "FAULT=hang BAD_RANK=3"),
    "run-r50a-torchrun-6p-mismatch-r5": ("torchrun", "plain", "dist.collective_mismatch", 5, MISMATCH, None, "high",
        "6 processes; global rank 5 all_reduced a 4-element tensor where the others reduce 1 element; the job logs pids only",
        "FAULT=mismatch BAD_RANK=5"),
    "run-r50a-torchrun-roles-healthy": ("torchrun", "plain", "none", None, None, None, "high", "healthy run", "FAULT=none"),
    "run-r50a-ray-raise-r2": ("ray", "ray-train", "user.code_error", 2, RAISE, None, "high",
        "Ray Train worker world_rank 2 raised KeyError: 'x' (RayTrainWorker pid lines; '[Rank 2 Error Snippet]')",
        "FAULT=raise BAD_RANK=2"),
    "run-r50a-ray-sigkill-r3": ("ray", "ray-train", "mem.host_oom", 3, r"SIGKILL|killed|died", None, "high",
        "Ray Train worker world_rank 3 was SIGKILLed at step 3",
        "FAULT=sigkill BAD_RANK=3"),
    "run-r50a-ray-hang-r1": ("ray", "ray-train", "dist.collective_timeout", 1, TIMEOUT, None, "high",
        "Ray Train worker world_rank 1 slept before the loss all_reduce; the other workers timed out after 20 s",
        "FAULT=hang BAD_RANK=1"),
    "run-r50a-ray-mismatch-r2": ("ray", "ray-train", "dist.collective_mismatch", 2, MISMATCH, None, "high",
        "Ray Train worker world_rank 2 all_reduced a tensor of another size (RAY_DEDUP_LOGS=0)",
        "FAULT=mismatch BAD_RANK=2 RAY_DEDUP_LOGS=0"),
}
OVERRIDE = json.load(open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "overrides.json"))) \
    if os.path.exists(os.path.join(os.path.dirname(os.path.abspath(__file__)), "overrides.json")) else {}


def first_match(path, rx):
    for line in open(path, errors="replace"):
        line = line.rstrip("\n")
        m = re.search(rx, line)
        if m:
            return line
    return None


for cid, (launcher, fw, cat, rank, rx, dfile, conf, shows, how) in sorted(CASES.items()):
    d = os.path.join(POOL, cid)
    if not os.path.isdir(d):
        print("MISSING", cid)
        continue
    ov = OVERRIDE.get(cid, {})
    rx = ov.get("rx", rx)
    dfile = ov.get("decisive_file", dfile)
    lab = {"id": cid, "source": f"real run: {GEN} '{cid}', torch 2.13.0 CPU, gloo",
           "category": cat, "fatal": cat != "none", "decisive_line": None, "also_acceptable": [],
           "initiating_rank": rank, "collateral": [], "operator": None,
           "root_cause": ov.get("root_cause", shows), "fix": FIX[cat], "launcher": launcher, "framework": fw,
           "genuine": False, "induced_how": how, "confirmed_by": "induced", "confidence": ov.get("confidence", conf)}
    if dfile == "@each":  # --enable_each_rank_log tree: the first per-rank file that has the line
        dfile = next(f for f in sorted(os.listdir(os.path.join(d, "ranks")))
                     if first_match(os.path.join(d, "ranks", f), rx))
    if cat != "none":
        src = os.path.join(d, "log.txt") if not dfile else os.path.join(d, "ranks", dfile)
        line = first_match(src, rx)
        if line is None:
            print("NO DECISIVE", cid, rx)
            continue
        sub = line.strip()
        if "\x1b" in sub:  # Ray's colored prefixes: keep the text from the match on
            m = re.search(rx, line)
            sub = line[m.start(): m.start() + 200].strip()
        if len(sub) > 240:  # keep a distinctive, exact substring
            m = re.search(rx, line)
            sub = line[max(0, m.start() - 60): m.start() + 180].strip()
        assert sub in open(src, errors="replace").read()
        lab["decisive_line"] = sub
        if dfile:
            lab["decisive_file"] = dfile
        lab["collateral"] = ov.get("collateral", ["ranks other than %d fail as a consequence" % rank])
        lab["also_acceptable"] = ov.get("also_acceptable", [])
    json.dump(lab, open(os.path.join(d, "label.json"), "w"), indent=1)
    print("ok", cid, cat, rank, repr(lab["decisive_line"])[:150])
