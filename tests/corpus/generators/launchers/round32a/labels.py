"""Write label.json for every round-32a case folder in OUT (argv[1], default /work/helpers/stage32) and check
that each decisive_line (and every also_acceptable line) is an exact substring of one line of that case's
log.txt. Labels come from what each case induces (run_all.sh + job.py) and what the recorded log shows.
Global ranks: static rendezvous -> node-a/node-1 = ranks 0,1, node-b/node-2 = ranks 2,3; with c10d
rendezvous the agents' order is decided at run time, so the rank is read from the log (training log lines)."""
import json
import sys
from pathlib import Path

OUT = Path(sys.argv[1] if len(sys.argv) > 1 else "/work/helpers/stage32")
SRC = "real run: tests/corpus/generators/launchers/round32a/run_all.sh {id}, torch 2.13.0 CPU, gloo"
LAUNCH = {"pdsh": "pdsh+torchrun", "clush": "clush+torchrun", "parallel": "gnu-parallel+torchrun"}
TERM = "SIGTERMed by their torchrun agent after a local worker failed"
HEALTHY_FIX = "Nothing to fix."
RAISE_FIX = "Fix the data index / loader so the requested shard key exists (rebuild the index, drop stale .tmp entries)."
KILL_FIX = "Find what killed the rank (kernel log / scheduler); if memory, lower its host memory use or raise the limit."
OOM_FIX = "Reduce that rank's host memory use (bounded cache) or raise the memory cgroup limit of the job."
HANG_FIX = "Find why that rank stalls before the collective (py-spy dump on it); fix the stall or raise the PG timeout only if the work is legitimately slow."
MM_FIX = "Make every rank all_reduce the same-sized gradient bucket (build it from the same parameter list on all ranks)."
C = {  # id: dict(category, rank, node, decisive, also, collateral, root_cause, fix, induced_how, confidence)
 "run32a-pdsh-healthy-cppinfo": dict(category="none", rank=None, node=None, decisive=None, also=[], collateral=[],
    root_cause="Healthy 2-node run: only a UserWarning, a caught and logged ModuleNotFoundError (tensorboard) and c10d INFO lines from TORCH_CPP_LOG_LEVEL=INFO.",
    fix=HEALTHY_FIX, induced="no fault; TORCH_CPP_LOG_LEVEL=INFO, node name in the program's log format", confidence="high"),
 "run32a-pdsh-range-healthy": dict(category="none", rank=None, node=None, decisive=None, also=[], collateral=[],
    root_cause="Healthy 2-node run (pdsh -w node-[1-2]): only a UserWarning and a caught, logged ModuleNotFoundError for the optional tensorboard import.",
    fix=HEALTHY_FIX, induced="no fault; node name in the program's log format", confidence="high"),
 "run32a-clush-b-healthy-c10d": dict(category="none", rank=None, node=None, decisive=None, also=[], collateral=[],
    root_cause="Healthy 2-node run with c10d rendezvous under clush -b: stderr (warnings, torchrun banner, a caught and logged ModuleNotFoundError) shows live, stdout is gathered per node at the end.",
    fix=HEALTHY_FIX, induced="no fault; c10d rendezvous", confidence="high"),
 "run32a-parallel-tag-healthy-cppinfo": dict(category="none", rank=None, node=None, decisive=None, also=[], collateral=[],
    root_cause="Healthy 2-node run under GNU parallel --tag: UserWarning, a caught and logged ModuleNotFoundError and c10d INFO lines (TORCH_CPP_LOG_LEVEL=INFO) only.",
    fix=HEALTHY_FIX, induced="no fault; TORCH_CPP_LOG_LEVEL=INFO", confidence="high"),
 "run32a-pdsh-raise-nodeb": dict(category="user.code_error", rank=3, node="node-b", decisive="KeyError: 'shard-3-3.tmp'", also=[],
    collateral=["ranks 0, 1 (node-a) and 2 (node-b): gloo 'Connection closed by peer' in all_reduce", "rank 2 " + TERM],
    root_cause="Rank 3 on node-b raises KeyError in load_batch at step 4 (a stale '.tmp' shard key missing from its index); the other ranks then lose their gloo peer.",
    fix=RAISE_FIX, induced="FAULT_NODE=node-b FAULT_LOCAL=1: that rank looks up key 'shard-3-3.tmp' at step index 3", confidence="high"),
 "run32a-pdsh-S-raise-nodea": dict(category="user.code_error", rank=1, node="node-a", decisive="KeyError: 'shard-1-3.tmp'", also=[],
    collateral=["ranks 0, 2, 3: gloo 'Connection closed by peer' / 'Connection reset by peer' in all_reduce", "survivors " + TERM],
    root_cause="Rank 1 on node-a raises KeyError in load_batch at step 4 (stale '.tmp' shard key); ranks on both nodes then fail in all_reduce.",
    fix=RAISE_FIX, induced="FAULT_NODE=node-a FAULT_LOCAL=1 under pdsh -S (pdsh returns the largest remote exit code)", confidence="high"),
 "run32a-pdsh-range-sigkill": dict(category="mem.host_oom", rank=2, node="node-2",
    decisive="failed (exitcode: -9) local_rank: 0 (pid: 20446)", also=["exitcode  : -9 (pid: 20446)  (SIGKILL)"],
    collateral=["ranks 0, 1 (node-1) and 3 (node-2): gloo 'Read error ... Connection reset by peer' / 'Connection closed by peer' in all_reduce", "rank 3 " + TERM],
    root_cause="Rank 2 (node-2, local rank 0) was SIGKILLed (exit -9, no traceback) at step 4; the other ranks then fail in gloo all_reduce.",
    fix=KILL_FIX, induced="FAULT_NODE=node-2 FAULT_LOCAL=0: os.kill(os.getpid(), SIGKILL) at step index 3", confidence="high"),
 "run32a-pdsh-hang": dict(category="dist.collective_timeout", rank=3, node="node-b",
    decisive="Timed out waiting 20000ms for send operation to complete", also=["Timed out waiting 20000ms for recv operation to complete"],
    collateral=["ranks 0, 1, 2 time out in all_reduce after 20 s", "rank 3 (the hung one, silent) SIGTERMed by the node-b agent"],
    root_cause="Rank 3 on node-b stalls (sleeps 80 s) before the step-4 all_reduce, so ranks 0-2 hit the 20 s gloo timeout; rank 3 prints nothing and is SIGTERMed.",
    fix=HANG_FIX, induced="FAULT_NODE=node-b FAULT_LOCAL=1: time.sleep(PG_TIMEOUT+60) before the step-index-3 all_reduce; init_process_group(timeout=20 s)", confidence="high"),
 "run32a-pdsh-mismatch-detail": dict(category="dist.collective_mismatch", rank=2, node="node-b",
    decisive="Rank 2 is running collective: CollectiveFingerPrint(SequenceNumber=10, OpType=ALLREDUCE, TensorShape=[672]",
    also=["Tensor Tensor shapes: 676vs 672"],
    collateral=["all four ranks raise the fingerprint RuntimeError (TORCH_DISTRIBUTED_DEBUG=DETAIL)"],
    root_cause="Rank 2 on node-b all_reduces a 672-element gradient bucket while ranks 0, 1, 3 all_reduce 676 elements; DETAIL's fingerprint check reports the shape mismatch.",
    fix=MM_FIX, induced="FAULT_NODE=node-b FAULT_LOCAL=0: drops the last 4 elements of its flat gradient at step index 3; TORCH_DISTRIBUTED_DEBUG=DETAIL", confidence="high"),
 "run32a-pdsh-wrong-nnodes": dict(category="dist.peer_or_store_failure", rank=None, node="node-a",
    decisive="Timed out after 41 seconds waiting for clients. 2/3 clients joined.",
    also=["wait timeout after 40000ms, keys: /none/torchelastic/assigned_ranks/1"],
    collateral=["node-b agent: DistStoreError wait timeout for its assigned ranks (it waited on the store hosted by node-a)"],
    root_cause="node-a's torchrun (node rank 0, hosting the static rendezvous store) was started with --nnodes 3 instead of 2, so it waits for a third node that never comes and the static rendezvous times out on both nodes; no worker starts.",
    fix="Start every node's torchrun with the same, correct --nnodes (2).", induced="WRONG_NNODES_NODE=node-a: node-a passes --nnodes 3, node-b --nnodes 2; static rendezvous, --rdzv-conf timeout=40", confidence="high"),
 "run32a-clush-raise-c10d": dict(category="user.code_error", rank=0, node="node-b", decisive="KeyError: 'shard-0-3.tmp'", also=[],
    collateral=["ranks 1 (node-b), 2 and 3 (node-a): gloo 'Connection closed by peer' in all_reduce", "survivors " + TERM],
    root_cause="The rank on node-b local rank 0 (global rank 0: c10d rendezvous gave node-b ranks 0-1) raises KeyError in load_batch at step 4 (stale '.tmp' shard key).",
    fix=RAISE_FIX, induced="FAULT_NODE=node-b FAULT_LOCAL=0 with c10d rendezvous (global rank decided at run time: 0 here, see the training log)", confidence="high"),
 "run32a-clush-b-sigkill-nodea": dict(category="mem.host_oom", rank=1, node="node-a",
    decisive="failed (exitcode: -9) local_rank: 1 (pid: 20711)", also=["exitcode  : -9 (pid: 20711)  (SIGKILL)"],
    collateral=["ranks 0 (node-a), 2, 3 (node-b): gloo 'Connection closed by peer' in all_reduce", "survivors " + TERM],
    root_cause="Rank 1 on node-a was SIGKILLed (exit -9, no traceback) at step 4; the others then fail in gloo all_reduce.",
    fix=KILL_FIX, induced="FAULT_NODE=node-a FAULT_LOCAL=1: os.kill(os.getpid(), SIGKILL) at step index 3; clush -b (stdout gathered at the end, stderr live)", confidence="high"),
 "run32a-clush-mismatch": dict(category="dist.collective_mismatch", rank=3, node="node-b",
    decisive="op.preamble.length <= op.nbytes. 340 vs 336. Received data size doesn't match expected size.", also=[],
    collateral=["rank 3 aborts (SIGABRT, exit -6) on gloo::EnforceNotMet", "ranks 0, 1, 2: gloo 'Read error ... Connection reset by peer' / 'Connection closed by peer'", "rank 2 " + TERM],
    root_cause="Rank 3 on node-b all_reduces a gradient bucket 4 elements shorter than the other ranks', so gloo's size check fails on it and it aborts.",
    fix=MM_FIX, induced="FAULT_NODE=node-b FAULT_LOCAL=1: drops the last 4 elements of its flat gradient at step index 3 (no DETAIL)", confidence="high"),
 "run32a-clush-b-hang-c10d": dict(category="dist.collective_timeout", rank=2, node="node-b",
    decisive="Timed out waiting 20000ms for recv operation to complete", also=["Timed out waiting 20000ms for send operation to complete"],
    collateral=["ranks 0, 1, 3 time out in all_reduce after 20 s", "rank 2 (hung, silent) SIGTERMed by the node-b agent"],
    root_cause="Rank 2 on node-b (local rank 0) stalls before the step-4 all_reduce, so the other ranks hit the 20 s gloo timeout; it prints nothing itself.",
    fix=HANG_FIX, induced="FAULT_NODE=node-b FAULT_LOCAL=0 with c10d rendezvous (node-b got ranks 2-3 here): time.sleep(80) before the all_reduce; PG timeout 20 s", confidence="high"),
 "run32a-clush-hostoom": dict(category="mem.host_oom", rank=3, node="node-b",
    decisive="failed (exitcode: -9) local_rank: 1 (pid: 20847)", also=["exitcode  : -9 (pid: 20847)  (SIGKILL)"],
    collateral=["ranks 0, 1, 2: gloo 'Connection closed by peer' in all_reduce", "rank 2 " + TERM],
    root_cause="Rank 3 on node-b grows an in-memory cache past its 1 GiB memory cgroup limit and is SIGKILLed by the kernel OOM killer (exit -9); its last lines log the cache growing.",
    fix=OOM_FIX, induced="rank 3 joins a cgroup-v1 memory cgroup (limit 1G, memsw 1G) and allocates 128 MiB tensors at step index 3; kernel log confirmed 'Memory cgroup out of memory: Killed process 20847'", confidence="high"),
 "run32a-clush-b-wrong-port": dict(category="dist.peer_or_store_failure", rank=None, node="node-b",
    decisive="torch.distributed.DistNetworkError: The client socket has timed out after 40000ms while trying to connect to (127.0.0.1, 29707).",
    also=["The client socket has timed out after 40000ms while trying to connect to (127.0.0.1, 29707).", "Timed out after 41 seconds waiting for clients. 1/2 clients joined."],
    collateral=["node-a agent (store host): DistStoreError 'Timed out after 41 seconds waiting for clients. 1/2 clients joined.'"],
    root_cause="node-b's torchrun was started with the wrong --master-port (29707, nobody listens there), so it never reaches the store node-a hosts; both static rendezvous sides time out and no worker starts.",
    fix="Give every node the same --master-port / --master-addr as node rank 0.", induced="WRONG_PORT_NODE=node-b: node-b uses PORT+7 (29707) while node-a listens on 29700; static rendezvous timeout 40 s; clush -b", confidence="high"),
 "run32a-parallel-tag-raise": dict(category="user.code_error", rank=2, node="node-b", decisive="KeyError: 'shard-2-3.tmp'", also=[],
    collateral=["ranks 0, 1 (node-a) and 3 (node-b): gloo 'Connection closed by peer' in all_reduce", "survivors " + TERM],
    root_cause="Rank 2 on node-b raises KeyError in load_batch at step 4 (stale '.tmp' shard key); the other ranks then lose their gloo peer.",
    fix=RAISE_FIX, induced="FAULT_NODE=node-b FAULT_LOCAL=0 under GNU parallel --tag", confidence="high"),
 "run32a-parallel-tagstring-hostoom-nodea": dict(category="mem.host_oom", rank=1, node="node-a",
    decisive="failed (exitcode: -9) local_rank: 1 (pid: 21673)", also=["exitcode  : -9 (pid: 21673)  (SIGKILL)"],
    collateral=["ranks 0, 2, 3: gloo 'Connection closed by peer' in all_reduce", "rank 0 " + TERM],
    root_cause="Rank 1 on node-a grows an in-memory cache past its 1 GiB memory cgroup limit and is SIGKILLed by the kernel OOM killer (exit -9).",
    fix=OOM_FIX, induced="rank 1 joins a cgroup-v1 memory cgroup (limit 1G, memsw 1G) and allocates 128 MiB tensors at step index 3; kernel log confirmed 'Memory cgroup out of memory: Killed process 21673'", confidence="high"),
 "run32a-parallel-tag-mismatch-nodea": dict(category="dist.collective_mismatch", rank=1, node="node-a",
    decisive="op.preamble.length <= op.nbytes. 340 vs 336. Received data size doesn't match expected size.", also=[],
    collateral=["rank 1 aborts (SIGABRT, exit -6) on gloo::EnforceNotMet", "ranks 0, 2, 3: gloo 'Read error' / 'Connection closed by peer' in all_reduce", "rank 0 " + TERM],
    root_cause="Rank 1 on node-a all_reduces a gradient bucket 4 elements shorter than the other ranks', so gloo's received-size check fails on it and it aborts.",
    fix=MM_FIX, induced="FAULT_NODE=node-a FAULT_LOCAL=1: drops the last 4 elements of its flat gradient at step index 3", confidence="high"),
 "run32a-parallel-tagstring-hang-c10d": dict(category="dist.collective_timeout", rank=1, node="node-a",
    decisive="Timed out waiting 20000ms for recv operation to complete", also=["Timed out waiting 20000ms for send operation to complete"],
    collateral=["ranks 0, 2, 3 time out in all_reduce after 20 s", "rank 1 (hung, silent) SIGTERMed by the node-a agent"],
    root_cause="Rank 1 on node-a stalls before the step-4 all_reduce, so the other ranks hit the 20 s gloo timeout; it prints nothing itself.",
    fix=HANG_FIX, induced="FAULT_NODE=node-a FAULT_LOCAL=1 with c10d rendezvous (node-a got ranks 0-1 here): time.sleep(80) before the all_reduce; PG timeout 20 s", confidence="high"),
 "run32a-parallel-tag-sigkill-c10d": dict(category="mem.host_oom", rank=3, node="node-b",
    decisive="failed (exitcode: -9) local_rank: 1 (pid: 21878)", also=["exitcode  : -9 (pid: 21878)  (SIGKILL)"],
    collateral=["ranks 0, 1, 2: gloo 'Read error' / 'Connection closed by peer' in all_reduce", "rank 2 " + TERM],
    root_cause="Rank 3 on node-b was SIGKILLed (exit -9, no traceback) at step 4; the others then fail in gloo all_reduce.",
    fix=KILL_FIX, induced="FAULT_NODE=node-b FAULT_LOCAL=1 with c10d rendezvous (node-b got ranks 2-3 here): os.kill(os.getpid(), SIGKILL)", confidence="high"),
 "run32a-parallel-tag-wrong-port-c10d": dict(category="dist.peer_or_store_failure", rank=None, node="node-b",
    decisive="rdzv_endpoint            : 127.0.0.1:29767", also=["torch.distributed.elastic.rendezvous.api.RendezvousTimeoutError"],
    collateral=["node-a: RendezvousTimeoutError as well (it waited for a second node that joined another endpoint)"],
    root_cause="node-b's torchrun was given the wrong c10d --rdzv-endpoint port (PORT+7), so it hosts its own rendezvous there (the agents' INFO launch configs show node-b 127.0.0.1:29767 vs node-a 127.0.0.1:29760); each node waits alone for 2 nodes and both raise RendezvousTimeoutError after join_timeout; no worker starts.",
    fix="Give every node the same --rdzv-endpoint (host:port).", induced="WRONG_PORT_NODE=node-b with RDZV=c10d, join_timeout=40, LOGLEVEL=INFO so the agents log their rendezvous endpoint", confidence="medium"),
}


def main():
    bad = 0
    for cid, d in C.items():
        case = OUT / cid
        log = case / "log.txt"
        if not log.exists():
            print("MISSING", cid); bad += 1; continue
        lines = log.read_text(errors="replace").splitlines()
        dec = d["decisive"]
        for s in ([dec] if dec else []) + d["also"]:
            if not any(s in ln for ln in lines):
                print("NOT IN LOG", cid, repr(s)); bad += 1
        launcher = cid.split("-")[1]
        lab = {"id": cid, "source": SRC.format(id=cid), "category": d["category"], "fatal": d["category"] != "none",
               "decisive_line": dec, "also_acceptable": d["also"], "initiating_rank": d["rank"],
               "collateral": d["collateral"], "operator": None, "root_cause": d["root_cause"], "fix": d["fix"],
               "launcher": LAUNCH[launcher], "framework": "plain", "genuine": False, "induced_how": d["induced"],
               "confirmed_by": "induced", "confidence": d["confidence"]}
        if d["node"]:
            lab["node"] = d["node"]
        (case / "label.json").write_text(json.dumps(lab, indent=1) + "\n")
    print("labels written;", bad, "problems")
    return bad


if __name__ == "__main__":
    sys.exit(1 if main() else 0)
