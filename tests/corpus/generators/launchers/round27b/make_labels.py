"""Write label.json for each round-27b case from what was induced (run_all.sh arguments) and what
the produced log.txt shows. The decisive line is located in the log and checked to be a substring of
exactly the line it was taken from. usage: make_labels.py OUT_DIR STAGE_DIR"""
import json
import os
import re
import shutil
import sys

OUT, STAGE = sys.argv[1], sys.argv[2]
SRC = "real run: tests/corpus/generators/launchers/round27b/run_all.sh {id}, torch 2.13.0 CPU, gloo, two torchrun nodes on one host"
HOW = {
    "pdsh": "pdsh-style combined output ('node-a: '/'node-b: ' prefix per line, both nodes interleaved as read)",
    "cri": "Kubernetes CRI container log format, one pod per node; log.txt = pod node-a's file followed by pod node-b's file (cat a b), so node-b's lines come after all of node-a's",
    "kubectl-prefix": "kubectl logs -f --prefix style ([pod/job-worker-0/trainer] = node-a, [pod/job-worker-1/trainer] = node-b), interleaved as read",
    "journal": "journalctl -o short-iso style, both hosts' journals merged in arrival order (node-a / node-b host field, python[<torchrun pid>])",
    "docker-json": "Docker json-file driver lines, one container per node; log.txt = container node-a's file followed by container node-b's file",
    "plain": "plain: both nodes' raw output interleaved as it arrived (shared NFS log file)",
}


def content(raw, fmt):
    if fmt == "pdsh":
        return raw.split(": ", 1)[1] if ": " in raw else raw
    if fmt == "cri":
        return raw.split(" ", 3)[3] if raw.count(" ") >= 3 else ""
    if fmt == "kubectl-prefix":
        return raw.split("] ", 1)[1] if "] " in raw else raw
    if fmt == "journal":
        return raw.split("]: ", 1)[1] if "]: " in raw else raw
    if fmt == "docker-json":
        return json.loads(raw)["log"].rstrip("\n")
    return raw


def node_ranks(lines):
    """global ranks per fake node, from the program's own 'initialized process group' lines"""
    m = {}
    for c in lines:
        r = re.search(r"(node-[ab]) \[rank(\d)\] INFO train: initialized process group: world_size=4 local_rank=(\d)", c)
        if r:
            m[(r.group(1), int(r.group(3)))] = int(r.group(2))
    return m


def case(cid):
    fmt = next(f for f in HOW if cid.startswith(f"run27b-{f}-"))
    scen = cid[len(f"run27b-{fmt}-"):]
    raws = open(os.path.join(OUT, cid, "log.txt"), encoding="utf-8").read().split("\n")[:-1]
    cs = [content(r, fmt) for r in raws]
    meta = json.load(open(os.path.join(OUT, cid, "log.txt.meta.json")))
    ex = meta["exit_codes"]
    nr = node_ranks(cs)
    args = dict(re.findall(r"\[(run27b-[\w-]+)\]=\"([^\"]*)\"", open(os.path.join(os.path.dirname(__file__), "run_all.sh")).read()))[cid]
    flr = int(re.search(r"--fault-local-rank (\d)", args).group(1)) if "--fault-local-rank" in args else None
    step = re.search(r"--fault-step (\d+)", args).group(1) if "--fault-step" in args else None
    static = "--rdzv static" in args
    rdzv = "static rendezvous (--master-addr/--master-port, --node-rank 0/1)" if static else "c10d rendezvous (--rdzv-endpoint 127.0.0.1:<port>; --node-rank ignored, ranks by join order)"
    L = dict(id=cid, source=SRC.format(id=cid), category=None, fatal=True, decisive_line=None, also_acceptable=[],
             initiating_rank=None, collateral=[], operator=None, root_cause="", fix="", launcher="torchrun",
             framework="plain", log_format=fmt, torch_version="2.13.0", genuine=False, induced_how="",
             confirmed_by="induced", confidence="high",
             exit_codes={"torchrun node-a": ex["node-a"], "torchrun node-b": ex["node-b"]})
    base = (f"collector.py {args}: two torchrun agents (--nnodes 2 --nproc-per-node 2, {rdzv}) started together on one host, "
            f"gloo, PG timeout 20s; output combined as {HOW[fmt]}")

    def first(pat, start=0, pred=lambda c: True):
        for i in range(start, len(cs)):
            m = re.search(pat, cs[i])
            if m and pred(cs[i]):
                return i, m
        raise SystemExit(f"{cid}: pattern not found: {pat}")

    if scen.startswith("raise"):
        r = nr[("node-b", flr)]
        i, m = first(rf"\[rank{r}\]: KeyError: 'labels'")
        L.update(category="user.code_error", decisive_line=m.group(0), initiating_rank=r,
                 collateral=["the other ranks: gloo 'Connection closed by peer' RuntimeErrors in all_reduce",
                             "each torchrun prints ChildFailedError; node-a's 'Root Cause' names a node-a rank that only died of the lost peer"],
                 root_cause=f"Rank {r} (node-b, local rank {flr}) raised KeyError: 'labels' in its own data code at step {step}; the other ranks then failed in all_reduce because that peer closed its connections.",
                 fix="Fix the data code so the batch dict has the 'labels' key (or read the right key) on every rank.",
                 induced_how=base + f"; train.py on node-b local rank {flr} indexes a dict without 'labels' at step {step}")
    elif scen == "sigkill":
        i, m = first(r"failed \(exitcode: -9\) local_rank: (\d) \(pid: (\d+)\)")
        assert int(m.group(1)) == flr
        r = nr[("node-b", flr)]
        pid = m.group(2)
        j, m2 = first(rf"exitcode  : -9 \(pid: {pid}\)  \(SIGKILL\)")
        assert re.search(rf"rank      : {r} \(local_rank: {flr}\)", cs[j - 1])
        L.update(category="mem.host_oom", decisive_line=m.group(0), initiating_rank=r,
                 also_acceptable=[m2.group(0)],
                 collateral=["gloo 'Connection reset by peer' / 'Connection closed by peer' RuntimeErrors on the other ranks",
                             "node-b agent SIGTERMs its other rank; node-a's ChildFailedError names a node-a rank as root cause"],
                 root_cause=f"Rank {r} (node-b, local rank {flr}) was SIGKILLed at step {step} with no traceback (as the kernel OOM killer does); node-b's torchrun reports its exitcode -9 and the peers fail in all_reduce.",
                 fix="Find why the process was killed (kernel log / cgroup memory limit) and reduce host memory use or raise the limit.",
                 induced_how=base + f"; train.py on node-b local rank {flr} calls os.kill(os.getpid(), SIGKILL) at step {step}")
    elif scen == "hang":
        r = nr[("node-b", flr)]
        i, m = first(r"\[rank(\d)\]: RuntimeError: .*Timed out waiting 20000ms for \w+ operation to complete")
        assert int(m.group(1)) != r
        others = [cs[k] for k in range(len(cs)) if k != i and "Timed out waiting 20000ms" in cs[k] and "RuntimeError" in cs[k]]
        L.update(category="dist.collective_timeout", decisive_line=m.group(0), initiating_rank=r,
                 also_acceptable=[re.search(r"\[rank\d\]: RuntimeError: .*", o).group(0) for o in others],
                 collateral=["the other waiting ranks' gloo timeouts", "ChildFailedError on both nodes; the silent rank is only SIGTERMed by its agent"],
                 root_cause=f"Rank {r} (node-b, local rank {flr}) went silent (sleep) before the step-{step} all_reduce; the waiting ranks hit the 20 s gloo timeout and the silent rank never printed an error.",
                 fix="Find what blocks the silent rank (stuck I/O, deadlock, slow data) before the collective; raise the timeout only if the work is legitimately slow.",
                 induced_how=base + f"; train.py on node-b local rank {flr} sleeps 80 s at step {step} before its all_reduce")
    elif scen.startswith("mismatch"):
        r = nr[("node-b", flr)]
        if "broadcast" in args:
            i, m = first(r"op\.preamble\.length <= op\.nbytes\. 20 vs 16\. Received data size doesn't match expected size\. Is there a distributed collective mismatch in your code\?")
            how = f"train.py on node-b local rank {flr} (the broadcast src, rank world//2) broadcasts 5 floats where the other ranks expect 4 at step {step}"
            rc = f"Rank {r} (node-b, local rank {flr}), the src of a per-step broadcast, sent a 5-element tensor at step {step} while the receivers expected 4 elements; a receiver's gloo aborted on the size mismatch."
        else:
            i, m = first(rf"\[rank(\d)\]: RuntimeError: Detected mismatch between collectives on ranks\. Rank \d is running collective: CollectiveFingerPrint\(SequenceNumber=\d+, OpType=ALLREDUCE, TensorShape=\[\d\]")
            assert f"Rank {r} is running collective: CollectiveFingerPrint(SequenceNumber" in cs[i] and "TensorShape=[5]" in cs[i]
            m = re.search(r"\[rank\d\]: RuntimeError: Detected mismatch between collectives on ranks\..*", cs[i])  # whole line
            how = f"TORCH_DISTRIBUTED_DEBUG=DETAIL on both nodes; train.py on node-b local rank {flr} all_reduces a 5-element metrics tensor (others 4) at step {step}"
            rc = f"Rank {r} (node-b, local rank {flr}) called all_reduce with a tensor of shape [5] at step {step} while the other ranks used [4]; the DETAIL fingerprint check reports the mismatch."
        L.update(category="dist.collective_mismatch", decisive_line=m.group(0), initiating_rank=r,
                 collateral=["other ranks' errors (fingerprint mismatch reports / lost-peer errors)", "ChildFailedError on both nodes"],
                 root_cause=rc, fix="Make every rank call the same collectives with the same tensor shapes (the metric/loss-scale tensor size must not depend on the rank).",
                 induced_how=base + "; " + how)
    elif scen == "nodekill":
        a_ranks = {v for (n, _), v in nr.items() if n == "node-a"}
        b_ranks = sorted(v for (n, _), v in nr.items() if n == "node-b")
        i, m = first(r"\[rank(\d)\]: RuntimeError: .*(Connection closed by peer|Connection reset by peer).*",
                     pred=lambda c: int(re.search(r"\[rank(\d)\]", c).group(1)) in a_ranks)
        assert ex["node-b"] == -9
        L.update(category="dist.peer_or_store_failure", decisive_line=m.group(0), initiating_rank=None,
                 collateral=["the other node-a rank's lost-peer error", "node-a's torchrun ChildFailedError (and, when node-b hosted the c10d rendezvous store, TCPStore/RendezvousConnectionError messages)",
                             "node-b's output simply stops after its last step line"],
                 root_cause=f"The whole node-b (its torchrun agent and ranks {b_ranks}) was SIGKILLed after step {step}, like a lost host; node-a's ranks report the lost peer in all_reduce. No rank failed on its own, so initiating_rank is null (node-b's lowest rank would be {b_ranks[0]}).",
                 fix="Find why node-b vanished (host crash, preemption, OOM of the whole node, network partition) from that host's system logs; use torchrun --max-restarts / elastic restarts to survive node loss.",
                 induced_how=base + f"; collector.py SIGKILLs node-b's torchrun pid and all its descendants when node-b prints 'step {step}/'")
    elif scen.startswith("rdzv"):
        i, m, also = RDZV(cs, cid)
        L.update(category="dist.peer_or_store_failure", decisive_line=m, initiating_rank=None, also_acceptable=also,
                 collateral=["the other node's agent also gives up (rendezvous/store timeout)", "no rank ever started"],
                 root_cause=("node-b's torchrun was given a wrong --master-port, so its TCPStore client timed out connecting while node-a's store timed out waiting for the second node; no training process ran." if static else
                             "node-b's torchrun was given a different --rdzv-endpoint port than node-a, so each agent waited alone and both raised RendezvousTimeoutError after join_timeout=30s; no training process ran."),
                 fix="Give every node the same --rdzv-endpoint / --master-addr:--master-port (and reachable), then relaunch.",
                 induced_how=base + "; node-b gets a free port nobody listens on instead of node-a's port")
    elif scen == "healthy":
        assert ex == {"node-a": 0, "node-b": 0}
        L.update(category="none", fatal=False, initiating_rank=None,
                 collateral=["torchrun OMP_NUM_THREADS banner" + ("" if static else " and 'node_rank is only used for static rdzv_backend' warning"),
                             "UserWarnings (lr_scheduler.step order, tensor copy-construct) on every rank",
                             "WARNING 'grad norm 7.31 above threshold, clipping (step 3)' on odd ranks"],
                 root_cause="Healthy run: all 4 ranks on both nodes ran 10 steps and finished; only harmless warnings were printed and both torchruns exited 0.",
                 fix="Nothing required.", induced_how=base + "; no fault")
    if L["decisive_line"] is not None:
        d = L["decisive_line"]
        hits = [r for r in raws if d in r]
        assert d in raws[i], (cid, d)
        assert len(hits) >= 1
        L["decisive_line_hits"] = len(hits)
    return L


def RDZV(cs, cid):
    """static: node-b's TCPStore client cannot connect to the (wrong) master port; node-a's store gives up
    waiting for clients. c10d: both agents raise RendezvousTimeoutError (no message)."""
    also = []
    for c in cs:
        m = re.search(r"torch\.distributed\.DistStoreError: Timed out after \d+ seconds waiting for clients\. 1/2 clients joined\.", c)
        if m:
            also.append(m.group(0))
    for i, c in enumerate(cs):
        m = re.search(r"\[c10d\] The client socket has timed out after \d+ms while trying to connect to \(127\.0\.0\.1, \d+\)\.", c)
        if m:
            return i, m.group(0), also
    for i, c in enumerate(cs):
        m = re.search(r"torch\.distributed\.elastic\.rendezvous\.api\.RendezvousTimeoutError", c)
        if m:
            return i, m.group(0), also
    raise SystemExit(f"{cid}: no rendezvous error")


for cid in sorted(os.listdir(OUT)):
    if not os.path.exists(os.path.join(OUT, cid, "log.txt")):
        continue
    L = case(cid)
    hits = L.pop("decisive_line_hits", None)
    dst = os.path.join(STAGE, cid)
    os.makedirs(dst, exist_ok=True)
    shutil.copy(os.path.join(OUT, cid, "log.txt"), os.path.join(dst, "log.txt"))
    json.dump(L, open(os.path.join(dst, "label.json"), "w"), indent=2, ensure_ascii=False)
    print(cid, L["category"], L["initiating_rank"], L["exit_codes"], "hits", hits, "|", (L["decisive_line"] or "")[:110])
