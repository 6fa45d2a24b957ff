"""Write label.json for every round-11 case from what run_all.sh induced.

The category, initiating rank and story of each case are fixed by how the fault
was induced (see run_all.sh).  Only the text of the decisive line is looked up in
the case's log.txt, because some of it changes from run to run (pids, Open MPI
job ids, which waiting rank reports first): each case gives a regex, and the
first line of log.txt that matches supplies decisive_line (the matched text).
Every decisive / also_acceptable string is then checked to be a substring of a
line of log.txt (and of the decisive_file, when there is one).

    python3 labels11.py [POOL]
"""
import json
import os
import re
import sys

POOL = sys.argv[1] if len(sys.argv) > 1 else "/work/main/tests/blind/pool11"
GEN = "tests/corpus/generators/launchers/round11"
TIMEOUT_RE = r"\[rank\d+\]: RuntimeError: \[[^\]]*\] Timed out waiting \d+ms for \w+ operation to complete"
MISMATCH_RE = (r"Detected mismatch between collectives on ranks\. Rank \d+ is running collective: .*?, "
               r"but Rank \d+ is running collective: CollectiveFingerPrint\(SequenceNumber=\d+, OpType=\w+, "
               r"TensorShape=\[\d+\]")

TWO = ("2 x torchrun --nnodes 2 --node-rank 0/1 --nproc-per-node 2 --rdzv-backend c10d "
       "--rdzv-endpoint 127.0.0.1:P train_plain.py (fault args only on node 1's agent); "
       "log.txt = node0.log then node1.log")
ACC = ("accelerate launch --cpu --num_processes N --mpirun_hostfile hostfile train_accelerate.py "
       "(accelerate runs mpirun --bind-to socket; HWLOC_SYNTHETIC 8-core topology so Open MPI "
       "accepts >2 ranks on the 2-core VM)")
LIT = "python train_lightning.py --devices N (Trainer(accelerator='cpu', strategy=DDPStrategy(gloo, timeout)))"
SPAWN = "python train_spawn.py --nprocs N (torch.multiprocessing.spawn)"
LOGDIR = "torchrun --nproc-per-node N --log-dir D --redirects 3 --tee 3 train_plain.py (ranks/ = D)"
MPI = "mpirun -n N --oversubscribe --bind-to none --tag-output -x MASTER_ADDR -x MASTER_PORT python train_plain.py"

SIGKILL_FIX = ("Find what killed the rank (most often the host OOM killer: check dmesg / the job's "
               "memory limit) and reduce that rank's host memory use or raise the limit.")
HANG_FIX = ("Find why that rank stalls before its collective (py-spy dump it while it hangs) and fix "
            "it; raise the process-group timeout only if the stall is legitimate.")

CASES = {
    "run11-torchrun2n-raise": dict(
        how=TWO, launcher="torchrun", framework="plain", category="user.code_error", rank=3,
        decisive=r"\[rank3\]: KeyError: 'shard-00015'", file="node1.log",
        collateral=["ranks 0, 1 (node 0) and 2 (node 1): gloo 'Connection closed by peer' in DDP backward",
                    "each agent SIGTERMs its other rank; node 1's agent names rank 3 (exit 1) as root cause, "
                    "node 0's agent names one of its own ranks"],
        root_cause="Global rank 3 (node 1, local rank 1) raised KeyError at step 4 because its shard index "
                   "lacks 'shard-00015'; the ranks on both nodes then lost their gloo peer.",
        fix="Make the data index of that rank complete (or skip/handle missing shards) before training.",
        induced="node 1's agent only: --fault raise --fault-local-rank 1 --fault-step 3; the rank's ShardedData "
                "drops the step-3 shard, so the lookup raises KeyError"),
    "run11-torchrun2n-sigkill": dict(
        how=TWO, launcher="torchrun", framework="plain", category="mem.host_oom", rank=2,
        decisive=r"failed \(exitcode: -9\) local_rank: 0", file="node1.log",
        also=[r"exitcode  : -9 \(pid: "],
        collateral=["ranks 0, 1 (node 0) and 3 (node 1): gloo 'Connection reset/closed by peer' in DDP backward",
                    "node 1's agent SIGTERMs rank 3 and reports rank 2 (SIGKILL) as root cause; node 0's agent "
                    "reports one of its own ranks (exit 1)"],
        root_cause="Global rank 2 (node 1, local rank 0) was SIGKILLed at step 5 (exit -9, no traceback), and "
                   "the ranks of both nodes lost their peer.",
        fix=SIGKILL_FIX,
        induced="node 1's agent only: --fault sigkill --fault-local-rank 0 --fault-step 4; the rank calls "
                "os.kill(os.getpid(), SIGKILL)"),
    "run11-torchrun2n-hang": dict(
        how=TWO, launcher="torchrun", framework="plain", category="dist.collective_timeout", rank=2,
        decisive=TIMEOUT_RE, also_all=TIMEOUT_RE, file="auto-node",
        collateral=["ranks 0, 1 (node 0) and 3 (node 1) time out after 20000 ms in the DDP gradient all_reduce",
                    "the agents SIGTERM the silent rank 2; node 1's agent also fails to shut the c10d "
                    "rendezvous down (store on node 0 already gone)"],
        root_cause="Global rank 2 (node 1, local rank 0) stalled silently before its step-3 collective, so "
                   "every other rank timed out (20 s gloo timeout) waiting for it.",
        fix=HANG_FIX,
        induced="node 1's agent only: --fault hang --fault-local-rank 0 --fault-step 2 --timeout-s 20; the rank "
                "sleeps 160 s before the step"),
    "run11-accelerate-hang": dict(
        how=ACC, launcher="accelerate", framework="accelerate", category="dist.collective_timeout", rank=2,
        decisive=TIMEOUT_RE, also_all=TIMEOUT_RE,
        collateral=["ranks 0, 1, 3 time out after 20000 ms in the DDP gradient all_reduce",
                    "mpirun aborts the job; accelerate re-raises mpirun's stderr as RuntimeError + CalledProcessError"],
        root_cause="Rank 2 stalled silently before its step-3 collective, so the other ranks timed out "
                   "(InitProcessGroupKwargs timeout 20 s) waiting for it.",
        fix=HANG_FIX,
        induced="--fault hang --fault-rank 2 --fault-step 2 --timeout-s 20: rank 2 sleeps 160 s before the step"),
    "run11-accelerate-sigkill": dict(
        how=ACC, launcher="accelerate", framework="accelerate", category="mem.host_oom", rank=1,
        decisive=r"mpirun noticed that process rank 1 with PID \d+ on node \S+ exited on signal 9 \(Killed\)\.",
        collateral=["ranks 0 and 2: gloo 'Connection reset by peer' in DDP backward",
                    "accelerate re-raises mpirun's output (exit status 137)"],
        root_cause="Rank 1 was SIGKILLed at step 4 (signal 9, no traceback); the surviving ranks lost their peer.",
        fix=SIGKILL_FIX,
        induced="--fault sigkill --fault-rank 1 --fault-step 3: os.kill(os.getpid(), SIGKILL)"),
    "run11-accelerate-raise": dict(
        how=ACC, launcher="accelerate", framework="accelerate", category="user.code_error", rank=3,
        decisive=r"\[rank3\]: KeyError: 'shard-00013'",
        also=[r"Process name: \[\[\d+,1\],3\]"],
        collateral=["ranks 0, 1, 2, 4: gloo 'Connection closed by peer' in DDP backward",
                    "mpirun aborts the job naming rank 3 (exit 1); accelerate re-raises mpirun's stderr"],
        root_cause="Rank 3 raised KeyError at step 3 in its DataLoader because its shard index lacks "
                   "'shard-00013'; the other ranks lost their peer.",
        fix="Make the data index of that rank complete (or handle missing shards) before training.",
        induced="--fault raise --fault-rank 3 --fault-step 2: rank 3's ShardedData drops the step-2 shard"),
    "run11-lightning-sigkill": dict(
        how=LIT, launcher="python", framework="lightning", category="mem.host_oom", rank=2,
        decisive=r"\[rank: 2\] Child process with PID \d+ terminated with code -9\.",
        collateral=["Lightning's child-process observer (in rank 0) SIGKILLs ranks 0 and 1, which were in "
                    "local work ('refreshing local shard cache'); the script exits 137"],
        root_cause="Rank 2 was SIGKILLed at step 4 (exit -9, no traceback); Lightning's observer then killed "
                   "the whole job.",
        fix=SIGKILL_FIX,
        induced="--fault sigkill --fault-rank 2 --fault-step 3 --others-busy-s 8: rank 2 SIGKILLs itself in "
                "training_step of batch 3 (4th step) while the others spend 8 s in local work, so the "
                "observer (5 s poll) reports it before any gloo error"),
    "run11-lightning-hang": dict(
        how=LIT, launcher="python", framework="lightning", category="dist.collective_timeout", rank=1,
        decisive=TIMEOUT_RE, also_all=TIMEOUT_RE,
        collateral=["ranks 0, 2, 3 time out after 20000 ms in the DDP gradient all_reduce (backward)",
                    "the main process (rank 0) exits; the hung rank 1 is left running (killed by run_all.sh)"],
        root_cause="Rank 1 stalled silently in training_step before its step-3 backward, so the other ranks "
                   "timed out (DDPStrategy timeout 20 s) waiting for it.",
        fix=HANG_FIX,
        induced="--fault hang --fault-rank 1 --fault-step 2 --timeout-s 20: rank 1 sleeps 160 s in "
                "training_step of batch 2"),
    "run11-lightning-raise": dict(
        how=LIT, launcher="python", framework="lightning", category="user.code_error", rank=2,
        decisive=r"\[rank2\]: ValueError: corrupt record in shard-00022: expected 16 features, got 15",
        collateral=["ranks 0, 1, 3, 4: gloo 'Connection closed by peer' in DDP backward"],
        root_cause="Rank 2 raised ValueError in training_step at step 5: its shard-00022 is corrupt "
                   "(15 features instead of 16); the other ranks lost their peer.",
        fix="Repair or skip the corrupt shard (validate records when the data set is built).",
        induced="--fault raise --raise-kind value --fault-rank 2 --fault-step 4: rank 2's step-4 shard "
                "has a feature column removed; training_step's fetch raises ValueError"),
    "run11-spawn-sigkill": dict(
        how=SPAWN, launcher="mp.spawn", framework="plain", category="mem.host_oom", rank=4,
        decisive=r"process 4 terminated with signal SIGKILL",
        collateral=["mp.spawn SIGTERMs processes 0-3 and 5 before they report anything"],
        root_cause="Process (rank) 4 was SIGKILLed at step 4 (no traceback); mp.spawn terminated the others.",
        fix=SIGKILL_FIX,
        induced="--nprocs 6 --fault sigkill --fault-rank 4 --fault-step 3: os.kill(os.getpid(), SIGKILL)"),
    "run11-spawn-mismatch-shape": dict(
        how=SPAWN + " with TORCH_DISTRIBUTED_DEBUG=DETAIL --grad-sync manual", launcher="mp.spawn",
        framework="plain", category="dist.collective_mismatch", rank=1,
        decisive=MISMATCH_RE, also=[r"Collectives differ in the following aspects:   Tensor Tensor shapes: \d+vs \d+"],
        collateral=["mp.spawn SIGTERMs the other processes after the first one raises"],
        root_cause="At step 4 rank 1 all_reduced a 3-element metrics tensor while the others all_reduced a "
                   "2-element one; the DETAIL collective check caught the shape mismatch.",
        fix="Make every rank build the metrics tensor with the same shape (same metric keys) before the all_reduce.",
        induced="--nprocs 3 --fault mismatch_shape --fault-rank 1 --fault-step 3 under TORCH_DISTRIBUTED_DEBUG=DETAIL"),
    "run11-spawn-mismatch-bcast": dict(
        how=SPAWN + " with TORCH_DISTRIBUTED_DEBUG=DETAIL --grad-sync manual", launcher="mp.spawn",
        framework="plain", category="dist.collective_mismatch", rank=3,
        decisive=MISMATCH_RE, also=[r"Collectives differ in the following aspects:   Op type: \w+vs \w+"],
        collateral=["mp.spawn SIGTERMs the other processes after the first one raises"],
        root_cause="At step 3 rank 3 called broadcast(src=0) where the other ranks called all_reduce; the "
                   "DETAIL collective check caught the op-type mismatch.",
        fix="Make every rank issue the same collective (all_reduce) in the same order.",
        induced="--nprocs 4 --fault mismatch_bcast --fault-rank 3 --fault-step 2 under TORCH_DISTRIBUTED_DEBUG=DETAIL"),
    "run11-torchrun-logdir-hang": dict(
        how=LOGDIR, launcher="torchrun", framework="plain", category="dist.collective_timeout", rank=3,
        decisive=TIMEOUT_RE, also_all=TIMEOUT_RE, file="auto-rank",
        collateral=["ranks 0, 1, 2, 4 time out after 20000 ms in the DDP gradient all_reduce",
                    "torchrun SIGTERMs the remaining ranks, including the silent rank 3"],
        root_cause="Rank 3 stalled silently before its step-4 collective, so the other ranks timed out "
                   "(20 s gloo timeout) waiting for it.",
        fix=HANG_FIX,
        induced="--nproc-per-node 5 --fault hang --fault-rank 3 --fault-step 3 --timeout-s 20: rank 3 sleeps 160 s"),
    "run11-torchrun-logdir-raise": dict(
        how=LOGDIR, launcher="torchrun", framework="plain", category="user.code_error", rank=2,
        decisive=r"\[rank2\]: ValueError: corrupt record in shard-00018: expected 16 features, got 15",
        also=[r"failed \(exitcode: 1\) local_rank: 2"], file="auto-rank",
        collateral=["ranks 1, 3: gloo 'Connection closed by peer' in DDP backward; torchrun SIGTERMs the rest"],
        root_cause="Rank 2 raised ValueError at step 5: its shard-00018 is corrupt (15 features instead of 16); "
                   "the other ranks lost their peer.",
        fix="Repair or skip the corrupt shard (validate records when the data set is built).",
        induced="--nproc-per-node 4 --fault raise --raise-kind value --fault-rank 2 --fault-step 4"),
    "run11-mpirun-barrier-skip": dict(
        how=MPI, launcher="mpirun", framework="plain", category="dist.collective_mismatch", rank=1,
        decisive=TIMEOUT_RE, also_all=TIMEOUT_RE,
        collateral=["ranks 0, 2, 3 time out in their loss all_reduce, rank 1 in its extra barrier (20000 ms)",
                    "mpirun aborts the job naming the first rank to exit (a waiting rank)"],
        root_cause="At step 4 rank 1 called dist.barrier() that the other ranks skip (they go on to the loss "
                   "all_reduce), so the collectives no longer match and all ranks time out.",
        fix="Call the barrier on every rank (or on none): keep collectives outside rank-dependent branches.",
        induced="--fault barrier_skip --fault-rank 1 --fault-step 3 --timeout-s 20"),
    "run11-mpirun-exit3": dict(
        how=MPI, launcher="mpirun", framework="plain", category="user.code_error", rank=3,
        decisive=r"Exit code:    3", also=[r"Process name: \[\[\d+,1\],3\]"],
        collateral=["ranks 0, 1, 2, 4: gloo 'Connection closed by peer' in DDP backward",
                    "mpirun aborts the job"],
        root_cause="Rank 3 left the job with sys.exit(3) at step 4 without printing anything; the other ranks "
                   "lost their gloo peer.",
        fix="Find the code path that exits with status 3 on that rank (an early sys.exit) and raise/handle "
            "the condition instead.",
        induced="--fault exit3 --fault-rank 3 --fault-step 3: sys.exit(3), no output"),
    "run11-mpirun-raise": dict(
        how=MPI, launcher="mpirun", framework="plain", category="user.code_error", rank=5,
        decisive=r"\[rank5\]: KeyError: 'shard-00017'", also=[r"Process name: \[\[\d+,1\],5\]"],
        collateral=["ranks 0-4: gloo 'Connection closed by peer' in DDP backward", "mpirun aborts the job"],
        root_cause="Rank 5 raised KeyError at step 3 because its shard index lacks 'shard-00017'; the other "
                   "ranks lost their peer.",
        fix="Make the data index of that rank complete (or handle missing shards) before training.",
        induced="--fault raise --fault-rank 5 --fault-step 2 (world size 6)"),
    "run11-torchrun-lateinit": dict(
        how="torchrun --nproc-per-node 5 train_plain.py", launcher="torchrun", framework="plain",
        category="dist.peer_or_store_failure", rank=1,
        decisive=r"torch\.distributed\.DistStoreError: wait timeout after \d+ms, keys: \S+",
        also=[r"waitForInput: socket SocketImpl\(fd=\d+, addr=\S+, remote=\S+\) timed out after \d+ms"],
        collateral=["ranks 0, 2, 3, 4 fail in init_process_group (gloo full-mesh store wait, 20000 ms)",
                    "torchrun SIGTERMs the rest, including rank 1 still sleeping before init"],
        root_cause="Rank 1 never called init_process_group within the 20 s timeout (it slept 60 s first), so "
                   "the other ranks' store wait for its key timed out.",
        fix="Find why that rank is late to init (slow setup before init_process_group) and move the work "
            "after init or raise the init timeout.",
        induced="--fault late_init --late-init-s 60 --fault-rank 1 --timeout-s 20"),
}


def lines_of(path):
    with open(path, errors="replace") as f:
        return f.read().splitlines()


def first_match(regex, lines):
    for ln in lines:
        m = re.search(regex, ln)
        if m:
            return m.group(0)
    return None


def main():
    bad = 0
    for cid, c in CASES.items():
        d = os.path.join(POOL, cid)
        if not os.path.isdir(d):
            print(f"MISSING {cid}")
            bad += 1
            continue
        log = lines_of(os.path.join(d, "log.txt"))
        dec = first_match(c["decisive"], log)
        if dec is None:
            print(f"NO DECISIVE LINE {cid}: {c['decisive']}")
            bad += 1
            continue
        also = [first_match(a, log) for a in c.get("also", [])]
        if "also_all" in c:
            for ln in log:
                m = re.search(c["also_all"], ln)
                if m and m.group(0) not in also:
                    also.append(m.group(0))
        also = [a for a in also if a and a != dec]
        label = {
            "id": cid,
            "source": f"real run: {GEN}/run_all.sh {cid} ({c['how']}), torch 2.13.0 CPU, gloo",
            "category": c["category"], "fatal": True, "decisive_line": dec, "also_acceptable": also,
            "initiating_rank": c["rank"], "collateral": c["collateral"], "operator": None,
            "root_cause": c["root_cause"], "fix": c["fix"], "launcher": c["launcher"],
            "framework": c["framework"], "torch_version": "2.13.0", "genuine": False,
            "induced_how": c["induced"], "confirmed_by": "induced", "confidence": "high",
        }
        f = c.get("file")
        if f:
            rdir = os.path.join(d, "ranks")
            if f.startswith("auto"):
                cands = []
                for root, _, files in os.walk(rdir):
                    for fn in sorted(files):
                        p = os.path.join(root, fn)
                        if any(dec in ln for ln in lines_of(p)):
                            cands.append(os.path.relpath(p, rdir))
                f = sorted(cands)[0] if cands else None
            if not f or not any(dec in ln for ln in lines_of(os.path.join(rdir, f))):
                print(f"DECISIVE NOT IN FILE {cid}: {f}")
                bad += 1
            label["decisive_file"] = f
        for s in [dec] + also:
            if not any(s in ln for ln in log):
                print(f"NOT A SUBSTRING {cid}: {s}")
                bad += 1
        with open(os.path.join(d, "label.json"), "w") as fh:
            json.dump(label, fh, indent=2, ensure_ascii=False)
            fh.write("\n")
        n = sum(dec in ln for ln in log)
        print(f"{cid:32s} {c['category']:28s} rank {c['rank']}  ({n} line(s)) {dec[:90]}")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
