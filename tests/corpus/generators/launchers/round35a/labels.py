"""Write label.json for every round-35a case in OUT (argv[1], default /work/helpers/stage35).
Category / fatal / rank / node come from what run_all.sh and train.py induced (table below); the decisive line is
found in the recorded log.txt by a regex (first match) and must be an exact substring of one of its lines."""
import json
import re
import sys
from pathlib import Path

OUT = Path(sys.argv[1] if len(sys.argv) > 1 else "/work/helpers/stage35")
SRC = "real run: tests/corpus/generators/launchers/round35a/run_all.sh {id}, torch 2.13.0 CPU, gloo"
NOFIX = "Nothing to fix."
GLOO = "the surviving ranks: gloo 'Connection closed by peer' / 'Read error' in DDP backward or all_reduce"
STORE_GONE = "the other agent: TCPStore 'Failed to recv, got 0 bytes ... Did the remote server shutdown or crash?' then RendezvousConnectionError"
RDZV_FIX = "Start every node's torchrun with the same --nnodes, --rdzv-id and --rdzv-endpoint (host:port of the store node), within join_timeout of each other."
SP = "dist.peer_or_store_failure"
# id -> category, fatal, rank, node, decisive regex (None = none), also_acceptable regexes, collateral, root_cause, fix, how
H = ("none", False, None, None, None, [], [])
CASES = {
 "run35a-c10d-healthy-info": (*H, "Healthy 2-node x 2 c10d torchrun job with LOGLEVEL=INFO / TORCH_CPP_LOG_LEVEL=INFO agent and c10d chatter; all ranks finish.", NOFIX,
    "two torchrun agents (node-a is_host=1, node-b is_host=0), --nnodes 2 --nproc-per-node 2; exit 0"),
 "run35a-c10d-3nodes-healthy-info": (*H, "Healthy 3-node x 1 c10d torchrun job with INFO logging; per-agent copies in nodes/.", NOFIX,
    "three torchrun agents node-a/b/c, --nnodes 3 --nproc-per-node 1; exit 0"),
 "run35a-static-healthy-info": (*H, "Healthy 2-node static-rendezvous job (--master-addr/--master-port/--node-rank) with INFO logging and --tee 3 prefixes.", NOFIX,
    "two torchrun agents --node-rank 0/1 --nnodes 2 --nproc-per-node 2 --tee 3; exit 0"),
 "run35a-c10d-nproc-mismatch": (*H, "node-b's torchrun was started with --nproc-per-node 1 while node-a has 2; c10d rendezvous sums the local sizes, so the job runs with world_size=3 and finishes.", NOFIX,
    "node-a --nproc-per-node 2, node-b --nproc-per-node 1; exit 0 on both"),
 "run35a-c10d-nnodes-mismatch": (SP, True, None, "node-b", r"torch\.distributed\.elastic\.rendezvous\.api\.RendezvousTimeoutError",
    [r"min_nodes\s+: 3"], [STORE_GONE + " (node-b, after node-a's agent and its store exit)"],
    "node-b's torchrun was started with --nnodes 3 while node-a has --nnodes 2 (the INFO launch configs show min_nodes 3 vs 2); the c10d rendezvous never completes, node-a raises RendezvousTimeoutError after join_timeout=25 s and node-b then loses the store node-a hosted. No worker starts.",
    RDZV_FIX, "node-a --nnodes 2, node-b --nnodes 3 (LOGLEVEL=INFO), join_timeout=25"),
 "run35a-static-nnodes-mismatch": (*H, "node-b's torchrun (static rendezvous, node rank 1) was started with --nnodes 3 while node-a has 2 (INFO launch configs: min_nodes 3 vs 2); the static rendezvous only needs node rank 0's store and the world size is summed from the local sizes, so the job trains with world_size 4 and both agents pass the exit barrier and exit 0.", NOFIX,
    "node-a --nnodes 2, node-b --nnodes 3, static rendezvous, LOGLEVEL=INFO; exit 0 on both (an earlier run without INFO hung in the exit barrier, see README)"),
 "run35a-static-nnodes-mismatch-exit-hang": (SP, False, None, "node-b", r"Error waiting on exit barrier\. Elapsed: [\d.]+ seconds",
    [r"torch\.distributed\.DistStoreError: wait timeout after 300000ms, keys: \S+", r"min_nodes\s+: 3"],
    ["both agents stall 300 s after 'training finished' before exiting"],
    "node-b's torchrun (static rendezvous, node rank 1) was started with --nnodes 3 instead of 2 (launch config min_nodes 3 vs 2): training finishes, but both agents then wait 300 s in the exit barrier for a third node and log 'Error waiting on exit barrier' (DistStoreError on terminal_state/last_member); both still exit 0. In other runs of the same setup the barrier passed at once.",
    "Give every node the same --nnodes (2).", "node-a --nnodes 2, node-b --nnodes 3, static rendezvous, LOGLEVEL=INFO; both agents exit 0 after the 300 s barrier timeout (3rd attempt; the 2nd passed the barrier at once)"),
 "run35a-c10d-rdzv-id-mismatch": (SP, True, None, "node-b", r"torch\.distributed\.elastic\.rendezvous\.api\.RendezvousTimeoutError",
    [r"failed to shutdown the rendezvous 'job35-retry'"], [STORE_GONE + " (node-b)"],
    "node-b's torchrun was started with --rdzv-id job35-retry while node-a uses job35, so each waits alone in its own rendezvous on the same store; node-a raises RendezvousTimeoutError after join_timeout=25 s and node-b loses the store. No worker starts.",
    RDZV_FIX, "node-b --rdzv-id job35-retry (node-a job35), join_timeout=25; nodes/ has per-agent logs"),
 "run35a-c10d-late-join": (SP, True, None, "node-b", r"torch\.distributed\.elastic\.rendezvous\.api\.RendezvousTimeoutError",
    [r"The client socket has timed out after 60000ms while trying to connect to \(127\.0\.0\.1, \d+\)\."], ["node-b (started 40 s late): TCPStore client connect timeouts to the store node-a no longer hosts, then RendezvousConnectionError"],
    "node-b's torchrun was started 40 s after node-a, past node-a's join_timeout=20 s: node-a raises RendezvousTimeoutError and exits with its store, and node-b then cannot connect to the store (RendezvousConnectionError). No worker starts.",
    "Start all nodes within join_timeout of each other (or raise --rdzv-conf join_timeout).", "node-b started `sleep 40` after node-a, join_timeout=20"),
 "run35a-c10d-node-never-joins": (SP, True, None, "node-c", r"torch\.distributed\.elastic\.rendezvous\.api\.RendezvousTimeoutError",
    [], ["node-b: RendezvousClosedError after node-a closes the rendezvous"],
    "The job was launched with --nnodes 3 but the third node (node-c) never started its torchrun; node-a raises RendezvousTimeoutError after join_timeout=25 s and node-b gets RendezvousClosedError. No worker starts.",
    "Start torchrun on every node of the job (or launch with --nnodes 2 / an elastic range like 2:3).", "--nnodes 3 --nproc-per-node 1, only node-a and node-b started, join_timeout=25"),
 "run35a-c10d-eaddrinuse": (SP, True, None, "node-a", r"name: EADDRINUSE, message: address already in use",
    [], ["node-a: RendezvousConnectionError", "node-b: TCPStore 'Connection reset by peer' / connect timeouts against the foreign listener, then RendezvousConnectionError"],
    "Another process already listened on the rendezvous port on node-a (the store host), so node-a's agent cannot bind its c10d TCPStore (EADDRINUSE) and fails; node-b connects to the foreign listener, gets resets and times out. No worker starts.",
    "Free the port on the store node (stop the stale process) or pick another --rdzv-endpoint port.", "python socket bound to the --rdzv-endpoint port on 0.0.0.0 before the agents start"),
 "run35a-static-eaddrinuse": (SP, True, None, "node-a", r"name: EADDRINUSE, message: address already in use",
    [], ["node-b: TCPStore 'Connection reset by peer' from the foreign listener, DistNetworkError"],
    "Another process already listened on --master-port on node rank 0, so node-a's agent cannot bind the static-rendezvous TCPStore (EADDRINUSE); node-b's client is reset by the foreign listener. No worker starts.",
    "Free the port on the master node or pick another --master-port.", "python socket bound to --master-port before the agents start; static rendezvous"),
 "run35a-c10d-endpoint-unresolvable": (SP, True, None, "node-b", r"The IPv6 network addresses of \(trainer-0\.cluster\.invalid, \d+\) cannot be retrieved \(gai error: -2 - Name or service not known\)\.",
    [r"torch\.distributed\.elastic\.rendezvous\.api\.RendezvousTimeoutError"], ["node-a: RendezvousTimeoutError (waited alone)", "node-b: client connect timeout, RendezvousConnectionError"],
    "node-b's --rdzv-endpoint names host trainer-0.cluster.invalid, which does not resolve, so node-b never reaches the store node-a hosts; node-a times out waiting for it.",
    "Give node-b the store node's real address in --rdzv-endpoint.", "node-b --rdzv-endpoint trainer-0.cluster.invalid:PORT"),
 "run35a-static-master-addr-unresolvable": (SP, True, None, "node-b", r"The IPv6 network addresses of \(trainer-0\.cluster\.invalid, \d+\) cannot be retrieved \(gai error: -2 - Name or service not known\)\.",
    [], ["node-a: static rendezvous store wait times out", "node-b: client connect timeout"],
    "node-b's --master-addr trainer-0.cluster.invalid does not resolve, so node-b never reaches the static-rendezvous store on node-a and both sides time out.",
    "Give node-b the master node's real address in --master-addr.", "node-b --master-addr trainer-0.cluster.invalid, static rendezvous, timeout=25"),
 "run35a-c10d-endpoint-wrong-port": (SP, True, None, "node-b", r"The client socket has timed out after 20000ms while trying to connect to \(127\.0\.0\.1, \d+\)\.",
    [r"torch\.distributed\.elastic\.rendezvous\.api\.RendezvousTimeoutError"], ["node-a: RendezvousTimeoutError (waited alone)"],
    "node-b's --rdzv-endpoint uses port PORT+5 where nothing listens (and node-b is not a store host), so its TCPStore client times out connecting while node-a times out waiting for it.",
    "Use the same --rdzv-endpoint host:port on every node.", "node-b --rdzv-endpoint 127.0.0.1:PORT+5 with is_host=0, read_timeout=20"),
 "run35a-c10d-store-host-sigkill": (SP, True, None, "node-a", r"Failed to recv, got 0 bytes\. Connection was likely closed\. Did the remote server shutdown or crash\?",
    [r"torch\.distributed\.elastic\.rendezvous\.api\.RendezvousConnectionError: The connection to the C10d store has failed\."],
    ["node-b's agent: RendezvousConnectionError, it SIGTERMs its workers", "node-a's orphaned ranks 0-1: gloo 'Connection closed by peer' in backward"],
    "node-a's torchrun agent, which hosts the c10d rendezvous store, was SIGKILLed at step 3 (like a lost node); node-b's agent loses the store (RendezvousConnectionError) and kills its workers, and node-a's orphaned ranks then fail in gloo.",
    "Find why node-a's agent died (node lost, OOM killer, scheduler); the store host is a single point of failure.", "kill -KILL <node-a torchrun pid> after rank 0 logs step 3"),
 "run35a-static-store-host-sigkill": (SP, True, None, "node-a", r"sendBytes failed on SocketImpl\(fd=\d+, addr=\S+, remote=\S+\): Broken pipe",
    [r"torch\.distributed\.DistNetworkError: Broken pipe"],
    ["every rank's store progress write fails (DistNetworkError: Broken pipe)", "node-b's agent reports ChildFailedError with rank 3 exit 1 as 'root cause'"],
    "node-a's torchrun agent (node rank 0, hosting the static-rendezvous store the workers use) was SIGKILLed at step 3; every rank's next store write fails with Broken pipe and the job dies. No rank failed on its own.",
    "Find why node-a's agent died (node lost, OOM killer, scheduler); the store host is a single point of failure.", "kill -KILL <node-a torchrun pid> after step 3; train.py --store-heartbeat; nodes/ has per-agent logs"),
 "run35a-c10d-restart-kill-once": ("mem.host_oom", True, 3, "node-b", r"failed \(exitcode: -9\) local_rank: 1 \(pid: \d+\)",
    [], [GLOO, "the --max-restarts 1 restart (attempt=1 on every rank) fails in init_process_group: 'Gloo connectFullMesh failed ... timed out connecting: SO_ERROR: Connection refused'",
         "RendezvousClosedError / ChildFailedError from the agents"],
    "Rank 3 (node-b local rank 1) was SIGKILLed at step 3 of the first attempt (exit -9, no traceback); --max-restarts 1 re-rendezvouses both nodes, but the restarted group fails already in gloo connectFullMesh (Connection refused) and the job ends.",
    "Find what killed rank 3 (kernel log / OOM killer) and fix that; the failed multi-node restart is a consequence, not the cause.",
    "train.py --kill-rank 3 --kill-step 3 --kill-once (only when TORCHELASTIC_RESTART_COUNT=0), --max-restarts 1 on both agents; meant as a healthy recovered restart, but the restart failed in every run"),
 "run35a-c10d-restart-fail": ("mem.host_oom", True, 2, "node-b", r"failed \(exitcode: -9\) local_rank: 0 \(pid: \d+\)",
    [], [GLOO, "the --max-restarts 1 restart fails in init_process_group: 'Gloo connectFullMesh failed ... Connection refused'"],
    "Rank 2 (node-b local rank 0) was SIGKILLed at step 3 (exit -9, no traceback); the --max-restarts 1 restart fails already in gloo connectFullMesh (Connection refused), before rank 2 could be killed again, and the job ends.",
    "Find what killed rank 2 (kernel log / OOM killer) and lower its memory use or raise the limit.", "train.py --kill-rank 2 --kill-step 3 on every attempt, --max-restarts 1 on both agents"),
 "run35a-c10d-agent-sigterm": (SP, True, None, "node-b", r"torch\.distributed\.elastic\.multiprocessing\.api\.SignalException: Process \d+ got signal: 15",
    [r"Received 15 death signal, shutting down workers"], [GLOO, "node-a rank 1 'terminate called without an active exception' (-6) while torchrun tears it down"],
    "node-b's torchrun agent got SIGTERM at step 3 (a scheduler preempting the node), SIGTERMed its ranks 2-3 and exited; node-a's ranks lose their gloo peers and node-a's agent reports a -6 'root cause'.",
    "Nothing wrong in the job: node-b was preempted; resubmit (ideally resuming from a checkpoint).", "kill -TERM <node-b torchrun pid> after step 3; nodes/ has per-agent logs"),
 "run35a-static-store-host-sigterm": (SP, True, None, "node-a", r"torch\.distributed\.elastic\.multiprocessing\.api\.SignalException: Process \d+ got signal: 15",
    [r"Received 15 death signal, shutting down workers"], [GLOO, "node-b's agent: ChildFailedError naming rank 3 exit 1 as root cause"],
    "node-a's torchrun agent (node rank 0, store host) got SIGTERM at step 3 (preemption), stopped its ranks 0-1 and exited; node-b's ranks lose their gloo peers.",
    "Nothing wrong in the job: node-a was preempted; resubmit (ideally resuming from a checkpoint).", "kill -TERM <node-a torchrun pid> after step 3, static rendezvous"),
 "run35a-c10d-late-rank-pg-timeout": (SP, True, 3, "node-b", r"torch\.distributed\.DistStoreError: wait timeout after 15000ms, keys: \S+",
    [r"waiting 45s for the input shards to be staged before joining the process group"], ["the other ranks' init_process_group store waits time out"],
    "Rank 3 (node-b) slept 45 s before init_process_group(timeout=15 s), so the other ranks' store wait for the process group keys timed out.",
    "Make every rank reach init_process_group within its timeout (stage inputs before launch or raise the timeout).", "train.py --late-rank 3 --late-sec 45 --pg-timeout 15"),
 "run35a-static-late-rank-pg-timeout": (SP, True, 1, "node-a", r"torch\.distributed\.DistStoreError: wait timeout after 15000ms, keys: \S+",
    [r"waiting 40s for the input shards to be staged before joining the process group"], ["the other ranks' init_process_group store waits time out"],
    "Rank 1 (node-a) slept 40 s before init_process_group(timeout=15 s), so the other ranks' store wait for the process group keys timed out (TORCH_CPP_LOG_LEVEL=INFO c10d chatter).",
    "Make every rank reach init_process_group within its timeout (stage inputs before launch or raise the timeout).", "train.py --late-rank 1 --late-sec 40 --pg-timeout 15, static rendezvous, TORCH_CPP_LOG_LEVEL=INFO"),
 "run35a-c10d-hang": ("dist.collective_timeout", True, 2, "node-b", r"Timed out waiting \d+ms for \w+ operation to complete",
    [], ["the other ranks time out in all_reduce; agents tear the rest down"],
    "Rank 2 (node-b) stopped calling collectives at step 3 (stuck 60 s 'flushing metrics'), so the other ranks' gloo all_reduce timed out after 15 s.",
    "Find what rank 2 was blocked on (py-spy dump) and keep it out of the training loop's critical path.", "train.py --hang-rank 2 --hang-step 3 --hang-sec 60 --pg-timeout 15"),
}


def main():
    bad = 0
    for cid, (cat, fatal, rank, node, rx, also, coll, cause, fix, how) in CASES.items():
        d = OUT / cid
        if not (d / "log.txt").exists():
            print("MISSING", cid); bad += 1; continue
        lines = (d / "log.txt").read_text(errors="replace").splitlines()
        dec = None
        if rx:
            for ln in lines:
                m = re.search(rx, ln)
                if m:
                    dec = m.group(0).strip(); break
            if dec is None:
                print("NO DECISIVE", cid, rx); bad += 1; continue
        acc = []
        for a in also:
            for ln in lines:
                m = re.search(a, ln)
                if m:
                    acc.append(m.group(0).strip()); break
            else:
                print("also_acceptable not found", cid, a)
        lab = {"id": cid, "source": SRC.format(id=cid), "category": cat, "fatal": fatal, "decisive_line": dec,
               "also_acceptable": acc, "initiating_rank": rank, "collateral": coll, "operator": None,
               "root_cause": cause, "fix": fix, "launcher": "torchrun", "framework": "plain",
               "genuine": False, "induced_how": how, "confirmed_by": "induced", "confidence": "high"}
        if node:
            lab["node"] = node
        assert dec is None or any(dec in ln for ln in lines)
        (d / "label.json").write_text(json.dumps(lab, indent=1) + "\n")
        print("ok", cid, cat, rank, node, "|", dec)
    sys.exit(1 if bad else 0)


main()
