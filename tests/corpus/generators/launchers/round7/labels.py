"""Write label.json for the round-7 cases produced by run_all.sh.

Labels come from what each run induced (see job7.py / acc7.py / pl7.py / run_all.sh), not from diagnosing the
log. The parts of a decisive line that change between reruns (pids, Open MPI job ids, which waiting rank's
timeout is printed first) are read back from log.txt with a regex; then every decisive_line /
also_acceptable substring is checked to occur in a line of log.txt (or of ranks/<decisive_file>), and a few
facts the collateral text states (which rank the launcher names, which node holds rank 3) are checked too.

Usage: python labels.py [POOL]   (default /work/main/tests/blind/pool7)
"""
import json
import os
import re
import sys

POOL = sys.argv[1] if len(sys.argv) > 1 else "/work/main/tests/blind/pool7"
GEN = "tests/corpus/generators/launchers/round7"
TR = "torchrun --nnodes 1 --nproc-per-node {n} --master-addr 127.0.0.1 --master-port P"
MPI = "mpirun --allow-run-as-root --oversubscribe --tag-output -np {n} -x MASTER_ADDR=127.0.0.1 -x MASTER_PORT=P"
SPAWN = "MASTER_ADDR=127.0.0.1 MASTER_PORT=P python job7.py --spawn {n}"
TWO_NODE = ("2 x torchrun --nnodes 2 --nproc-per-node 2 --node-rank 0/1 --rdzv-backend c10d --rdzv-endpoint "
            "127.0.0.1:P --rdzv-conf is_host=1/0")
NO_DAC = "setpriv --bounding-set -dac_override,-dac_read_search "

PEER = "gloo 'Connection closed by peer' / 'Connection reset by peer' RuntimeError in their next collective"
TR_TERM = "torchrun SIGTERMs the remaining ranks (exitcode -15 in its failure summary)"
MPI_ABORT = "mpirun aborts the job after the first non-zero exit"
SPAWN_TERM = "mp.spawn SIGTERMs the other processes before they print anything"
TIMEOUT_RE = r"(\[rank\d\]: RuntimeError: \[[^\]]*unbound_buffer\.cc:\d+\] Timed out waiting 15000ms for \w+ operation to complete)"


def R(pattern, nth=0):
    """A decisive substring read back from the log by regex (group 1 if any): the nth match."""
    return ("re", pattern, nth)


def CHECK(pattern, what):
    """A fact the label states; must match somewhere in the log (or decisive file)."""
    return (pattern, what)


CASES = [
    # ------------------------------------------------------------------ 1. rank 0 is the culprit
    dict(id="run7-torchrun-rank0-sigkill", launcher="torchrun",
         cmd=TR.format(n=4) + " --tee 3 job7.py --scenario sigkill --fault-rank 0 --fault-step 3",
         category="mem.host_oom", rank=0,
         decisive=R(r"(failed \(exitcode: -9\) local_rank: 0 \(pid: \d+\))"),
         also=[R(r"(exitcode  : -9 \(pid: \d+\)  \(SIGKILL\))")],
         checks=[CHECK(r"Root Cause \(first observed failure\):\n\[0\]:\n.*\n.*\n  rank      : 0 \(local_rank: 0\)",
                       "torchrun's root cause is rank 0")],
         collateral=["ranks 1 and 3: gloo 'Connection reset by peer' RuntimeError in the gradient all_reduce of "
                     "step 4, printed after rank 0 died (rank 2 is SIGTERMed before it prints)",
                     TR_TERM + "; the summary's root cause is rank 0 (exitcode -9, SIGKILL)"],
         root_cause="Rank 0 was SIGKILLed at step 4 (exit -9, no traceback, as the kernel OOM killer does); the other "
                    "ranks then lost their peer in the gradient all_reduce.",
         fix="Check the host's kernel log (dmesg) / memory limits for the OOM kill of rank 0 and reduce its host "
             "memory use (rank 0 often holds extra state: logging, eval, checkpoint gathering) or raise the limit.",
         induced_how="rank 0 does os.kill(os.getpid(), SIGKILL) after its step-4 backward (0-based step 3)"),
    dict(id="run7-mpirun-rank0-raise", launcher="mpirun",
         cmd=MPI.format(n=4) + " python job7.py --scenario raise-metric --fault-rank 0 --fault-step 3 "
                               "--log-style asctime --destroy-on-error",
         category="user.code_error", rank=0,
         decisive="KeyError: 'val_accuracy'",
         checks=[CHECK(r"Process name: \[\[\d+,1\],0\]", "mpirun names rank 0 as the first non-zero exit")],
         collateral=["ranks 1-3: " + PEER + " (rank 0 destroys its process group in a finally block), printed "
                     "after rank 0's logged KeyError",
                     MPI_ABORT + " and names rank 0 ([[job,1],0]) as the first process to exit non-zero"],
         root_cause="Rank 0's best-checkpoint tracking read metrics['val_accuracy'], a key its metrics dict (val_loss, "
                    "step) does not have, so rank 0 raised KeyError at step 4 and the other ranks lost their peer.",
         fix="Track a metric the eval hook actually produces (e.g. 'val_loss'), or check the key and fail with a clear "
             "message before training starts.",
         induced_how="rank 0 looks up metrics['val_accuracy'] after its step-4 backward (logger.exception, then "
                     "re-raise; the job runs inside try/finally: dist.destroy_process_group())"),
    dict(id="run7-accelerate-rank0-hang", launcher="accelerate", framework="accelerate",
         cmd="accelerate launch --multi_gpu --num_processes 3 --num_machines 1 --mixed_precision no --dynamo_backend no "
             "--num_cpu_threads_per_process 1 --main_process_port P acc7.py --fault-step 3 --hang-seconds 60 "
             "--pg-timeout 15",
         category="dist.collective_timeout", rank=0,
         decisive=R(TIMEOUT_RE, 0), also=[R(TIMEOUT_RE, 1)],
         checks=[CHECK(r"failed \(exitcode: 1\) local_rank: [12] ", "the launcher blames a waiting rank, not rank 0")],
         collateral=["ranks 1 and 2 time out after 15 s in DDP's gradient all_reduce (acc.backward) while rank 0 "
                     "is silent",
                     "the launcher (torchrun under accelerate launch) then SIGTERMs rank 0 and names a waiting rank "
                     "(exit 1) as 'Root Cause (first observed failure)'"],
         root_cause="At step 4 rank 0 (the main process) blocked ~60 s in a synchronous checkpoint upload before its "
                    "backward, printing nothing; ranks 1 and 2 waited in DDP's gradient all_reduce until gloo's 15 s "
                    "timeout fired.",
         fix="Move the main-process upload out of the training step (background thread/process, or after "
             "accelerator.wait_for_everyone() at a checkpoint boundary) or make the process group timeout cover it.",
         induced_how="acc7.py: Accelerator(cpu=True) with InitProcessGroupKwargs(timeout=15 s); the main process sleeps "
                     "60 s before acc.backward at step 4 (0-based 3)"),
    # ------------------------------------------------------------------ 2. world size 8 / 6
    dict(id="run7-torchrun-ws8-raise", launcher="torchrun",
         cmd=TR.format(n=8) + " --tee 3 job7.py --scenario raise-parse --fault-rank 5 --fault-step 2",
         category="user.code_error", rank=5,
         decisive="ValueError: invalid literal for int() with base 10: 'label_7'",
         checks=[CHECK(r"failed \(exitcode: 1\) local_rank: 5 ", "torchrun names local_rank 5")],
         collateral=["ranks 4 and 6: " + PEER + " (gradient all_reduce of step 3); the other five are "
                     "SIGTERMed before they print", TR_TERM + "; the summary's root cause is rank 5"],
         root_cause="Rank 5 parsed a label string 'label_7' (an un-mapped label file in its shard) with int() at "
                    "step 3 and raised ValueError; the other seven ranks lost their peer.",
         fix="Map string labels to class ids (label map) for rank 5's shard, or clean the label file; validate "
             "labels when building the dataset.",
         induced_how="8 ranks; rank 5 builds its labels with int() over a list containing 'label_7' at step 3 "
                     "(0-based 2)"),
    dict(id="run7-mpspawn-ws6-sigkill", launcher="mp.spawn",
         cmd=SPAWN.format(n=6) + " --scenario sigkill --fault-rank 3 --fault-step 4 --log-style asctime",
         category="mem.host_oom", rank=3,
         decisive="process 3 terminated with signal SIGKILL",
         collateral=[SPAWN_TERM + " (5 'Terminating process ... via signal SIGTERM' lines)"],
         root_cause="Rank 3 of 6 was SIGKILLed at step 5 (no traceback, as the kernel OOM killer does); mp.spawn then "
                    "terminated the other five processes.",
         fix="Check the kernel log (dmesg) for the OOM kill and reduce that rank's host memory use or raise the limit.",
         induced_how="6 ranks under mp.spawn; rank 3 does os.kill(os.getpid(), SIGKILL) after its step-5 backward"),
    # ------------------------------------------------------------------ 3. two ranks fail at different times
    dict(id="run7-mpirun-twofail-timed", launcher="mpirun",
         cmd=MPI.format(n=4) + " python job7.py --scenario twofail --accum 8 --step-seconds 0.5 --log-style asctime "
                               "--linger-ranks 3",
         category="user.code_error", rank=3,
         decisive="RuntimeError: shape '[8, 16]' is invalid for input of size 120",
         checks=[CHECK(r"Process name: \[\[\d+,1\],1\]", "mpirun names rank 1 as the first non-zero exit"),
                 CHECK(r"ERROR trainer: rank 3: training step 2 failed(.|\n)*ERROR trainer: rank 1: training step 4 failed",
                       "rank 3's error is logged before rank 1's")],
         collateral=["rank 1 fails independently about 1 s later by the timestamps: FileNotFoundError for "
                     "data/shard-00041.bin at its micro-step 5, while rank 3 is still writing its emergency "
                     "checkpoint",
                     "rank 1 exits first, so mpirun names rank 1 ([[job,1],1]) as the first process to exit non-zero",
                     "ranks 0 and 2: " + PEER + " (the gradient all_reduce after micro-step 8)"],
         root_cause="Rank 3 failed first (timestamps): at micro-step 3 the last packed sequence of its shard was short "
                    "(120 values), so view(8, 16) raised RuntimeError; rank 1's FileNotFoundError came ~1 s later and "
                    "independently, and it exited first only because rank 3 spent 3 s writing an emergency checkpoint.",
         fix="Pad or drop the short final sequence when packing rank 3's shard (and restore rank 1's missing "
             "shard-00041.bin).",
         induced_how="gradient accumulation over 8 micro-steps (no collective before micro-step 8), 0.5 s each; rank 3 "
                     "views a 120-element tensor as (8, 16) at step index 2, logs it (logger.exception) and sleeps 3 s "
                     "writing an emergency checkpoint before re-raising; rank 1 opens a missing shard at step index 4 "
                     "and re-raises at once"),
    dict(id="run7-torchrun-twofail-untimed", launcher="torchrun",
         cmd=TR.format(n=4) + " --tee 3 job7.py --scenario twofail --accum 8 --step-seconds 0.5 --log-style plain "
                              "--linger-ranks 3,1",
         category="user.code_error", rank=3,
         decisive="RuntimeError: shape '[8, 16]' is invalid for input of size 120",
         checks=[CHECK(r"failed \(exitcode: 1\) local_rank: 3 ", "torchrun names local_rank 3")],
         collateral=["rank 1 fails independently two micro-steps later (FileNotFoundError for data/shard-00041.bin) "
                     "while rank 3 is still writing its emergency checkpoint; no timestamps, only the order of the "
                     "lines and the step numbers show which came first",
                     "ranks 0 and 2: " + PEER + " (the gradient all_reduce after micro-step 8)", TR_TERM],
         root_cause="Rank 3 failed first: at micro-step 3 the last packed sequence of its shard was short (120 values), "
                    "so view(8, 16) raised RuntimeError; rank 1's FileNotFoundError at micro-step 5 came later and "
                    "independently.",
         fix="Pad or drop the short final sequence when packing rank 3's shard (and restore rank 1's missing "
             "shard-00041.bin).",
         induced_how="as run7-mpirun-twofail-timed but print() lines without timestamps, and both failing ranks spend "
                     "3 s writing an emergency checkpoint before re-raising (so rank 3 also exits first)"),
    # ------------------------------------------------------------------ 4. two nodes on localhost
    dict(id="run7-torchrun-2node-cat", launcher="torchrun",
         cmd=TWO_NODE + " job7.py --scenario raise-shape --fault-rank 3 --fault-step 3 --log-style asctime; each "
                        "agent's console to its own file, log.txt = cat node0.log node1.log",
         category="user.code_error", rank=3,
         decisive="RuntimeError: mat1 and mat2 shapes cannot be multiplied (8x12 and 16x32)",
         checks=[CHECK(r"rank 3: init_process_group\(gloo, world_size=4\) pid=\d+ host=node1 local_rank=1 group_rank=1",
                       "global rank 3 runs on node1 (second half of log.txt)")],
         collateral=["ranks 0, 1 (node 0, first half of log.txt) and 2 (node 1): " + PEER,
                     "each agent prints its own failure summary: node 0's names its rank 0 (local_rank 0, exit 1), "
                     "node 1's names rank 3 (local_rank 1); node 0's part comes first in the file"],
         root_cause="On node 1, global rank 3's feature extractor emitted 12 features for a 16-input model, so the first "
                    "Linear raised 'mat1 and mat2 shapes cannot be multiplied' at step 4; all other ranks lost their peer.",
         fix="Use the same feature-extractor version on every node (node 1 emits 12 features), or check the input "
             "width at load time.",
         induced_how="two torchrun agents on one machine (--nnodes 2, c10d rendezvous on 127.0.0.1; NODE_NAME=node0/1 "
                     "in the env); global rank 3 (node 1, local rank 1) slices its batch to 12 features at step 4"),
    dict(id="run7-torchrun-2node-ranks", launcher="torchrun", decisive_file="node1.log",
         cmd=TWO_NODE + " --tee 3 job7.py --scenario raise-missing --fault-rank 3 --fault-step 2; both agents append "
                        "to log.txt, each also writes ranks/node<N>.log (tee)",
         category="user.code_error", rank=3,
         decisive="FileNotFoundError: [Errno 2] No such file or directory: '/home/user/job/data/shard-00003.bin'",
         checks=[CHECK(r"rank 3: init_process_group\(gloo, world_size=4\) pid=\d+ host=node1 local_rank=1 group_rank=1",
                       "global rank 3 runs on node1")],
         collateral=["ranks 0, 1 (node 0) and 2 (node 1): " + PEER,
                     "node 1's agent SIGTERMs rank 2 and names its local_rank 1 (rank 3); node 0's agent then names its "
                     "own local_rank 0 (exit 1) as its root cause",
                     "the --tee prefixes are local ([default0]/[default1] on both nodes); only [rankN]: is global"],
         root_cause="On node 1, global rank 3 could not open its data shard data/shard-00003.bin (missing on that node) "
                    "at step 3 and raised FileNotFoundError; the ranks on both nodes then lost their peer.",
         fix="Stage shard-00003.bin on node 1 (or point rank 3 at the shared data path) and check that every rank's "
             "shard exists before training.",
         induced_how="two torchrun agents on one machine (--nnodes 2, c10d rendezvous on 127.0.0.1); global rank 3 "
                     "(node 1, local rank 1) opens a shard file that does not exist at step 3 (0-based 2)"),
    # ------------------------------------------------------------------ 5. rank in a logging field, no launcher prefix
    dict(id="run7-torchrun-rankfield-logexc", launcher="torchrun",
         cmd=TR.format(n=4) + " job7.py --scenario raise-none --fault-rank 2 --fault-step 3 --log-style rankfield",
         category="user.code_error", rank=2,
         decisive="AttributeError: 'NoneType' object has no attribute 'float'",
         collateral=["the exception is logged first by logger.exception under '[ERROR] [RANK 2]' (format "
                     "'%(asctime)s [%(levelname)s] [RANK %(rank)s] %(message)s', no launcher prefix: torchrun without "
                     "--tee), then re-raised; torch's own excepthook prefixes the uncaught traceback with [rank2]:",
                     "ranks 1 and 3: " + PEER + " (rank 0 is SIGTERMed before it prints)", TR_TERM],
         root_cause="Rank 2's prefetch queue handed back None instead of a batch at step 4, so None.float() raised "
                    "AttributeError; the other ranks lost their peer.",
         fix="Handle a prefetch timeout in rank 2's loader (retry or raise a clear error) instead of queueing None.",
         induced_how="rank 2 calls .float() on None at step index 3; logger.exception, then re-raise"),
    dict(id="run7-mpspawn-adapter-logexc", launcher="mp.spawn",
         cmd=SPAWN.format(n=4) + " --scenario raise-index --fault-rank 1 --fault-step 4 --log-style adapter",
         category="user.code_error", rank=1,
         decisive="IndexError: index 8 is out of bounds for dimension 0 with size 8",
         collateral=["logged by logger.exception as 'ERROR trainer: rank=1 ...' (a LoggerAdapter puts rank=N in the "
                     "message; no launcher prefix), then shown again in mp.spawn's 'Process 1 terminated with the "
                     "following error'", SPAWN_TERM],
         root_cause="Rank 1 wrote its padding sample one row past the end of its 8-row batch (x[x.shape[0]]) at step 5 "
                    "and raised IndexError.",
         fix="Write the padding sample into row x.shape[0] - 1 (or allocate a padded batch of n + 1 rows).",
         induced_how="rank 1 indexes x[8] of an (8, 16) batch at step index 4; logger.exception via a LoggerAdapter "
                     "('rank=%d ' prefix), then re-raise"),
    # ------------------------------------------------------------------ 6. checkpoint save, PermissionError
    dict(id="run7-lightning-ckpt-permission", launcher="lightning", framework="lightning",
         cmd=NO_DAC + "MASTER_PORT=P python pl7.py --scenario ckpt-perm --fault-rank 2 --pg-timeout 20 "
                      "(checkpoints/rank_2 mode 555)",
         category="user.code_error", rank=2,
         decisive="PermissionError: [Errno 13] Permission denied: '/home/user/job/checkpoints/rank_2/local_state.pt'",
         collateral=["ranks 0 and 1 saved their local state, went on to the next step and got gloo "
                     "'Connection closed by peer' in the barrier of Lightning's self.log(sync_dist=True)"],
         root_cause="Rank 2 could not write its local-state checkpoint: its directory checkpoints/rank_2 is read-only "
                    "(PermissionError: [Errno 13] at the step-3 save in a Lightning callback); the other ranks lost "
                    "their peer.",
         fix="Make the checkpoint directory writable for the job user (or save to a writable path) and check write "
             "access before training.",
         induced_how="Lightning DDP on CPU (3 processes, gloo); a callback saves each rank's state every 3 steps with "
                     "open(path, 'wb') + torch.save; checkpoints/rank_2 is mode 555 and the job runs without "
                     "CAP_DAC_OVERRIDE (setpriv), so the open fails"),
    dict(id="run7-torchrun-ckpt-rank0-permission", launcher="torchrun",
         cmd=NO_DAC + TR.format(n=3) + " --tee 3 job7.py --scenario ckpt-perm --fault-rank 0 --fault-step 3 "
                                       "--log-style asctime --pg-timeout 20 (checkpoints/ mode 555)",
         category="user.code_error", rank=0,
         decisive="PermissionError: [Errno 13] Permission denied: '/home/user/job/checkpoints/step_000004'",
         checks=[CHECK(r"failed \(exitcode: 1\) local_rank: 0 ", "torchrun names local_rank 0")],
         collateral=["ranks 1 and 2 wait in the barrier after the save and get gloo 'Connection closed by peer'",
                     TR_TERM + "; the summary's root cause is rank 0"],
         root_cause="Rank 0 (the rank that saves checkpoints) could not create checkpoints/step_000004 because "
                    "checkpoints/ is read-only (PermissionError: [Errno 13]); ranks 1 and 2, waiting in the "
                    "barrier after the save, lost their peer.",
         fix="Make the checkpoint directory writable for the job user (or save elsewhere) and check write access "
             "before training.",
         induced_how="checkpoints/ mode 555, job without CAP_DAC_OVERRIDE (setpriv); at step 4 rank 0 saves with "
                     "os.makedirs + open(path, 'wb') + torch.save, the others call dist.barrier()"),
    # ------------------------------------------------------------------ 7. DataLoader worker raises
    dict(id="run7-lightning-dataloader-worker", launcher="lightning", framework="lightning",
         cmd="MASTER_PORT=P python pl7.py --scenario dl-worker --fault-rank 1",
         category="user.code_error", rank=1,
         decisive="ValueError: record 88: expected 16 float32 features, got 61 bytes (corrupt or truncated record)",
         also=["ValueError: Caught ValueError in DataLoader worker process 1."],
         collateral=["rank 1 re-raises in its main process as 'Caught ValueError in DataLoader worker process 1.'",
                     "ranks 0 and 2: gloo 'Connection closed by peer' in the barrier of Lightning's "
                     "self.log(sync_dist=True)"],
         root_cause="Record 88 of rank 1's data is corrupt, so the dataset's __getitem__ raised ValueError in DataLoader "
                    "worker 1 of rank 1, which re-raised it; the other ranks lost their peer.",
         fix="Repair or skip record 88 (validate records when building the dataset).",
         induced_how="Lightning DDP on CPU (3 processes), DataLoader(num_workers=2, shuffle=False); Records.__getitem__ "
                     "raises ValueError for index 88 on rank 1 only"),
    # ------------------------------------------------------------------ 8. mpirun --tag-output, 4 ranks
    dict(id="run7-mpirun-sigkill", launcher="mpirun",
         cmd=MPI.format(n=4) + " python job7.py --scenario sigkill --fault-rank 2 --fault-step 3 --log-style asctime",
         category="mem.host_oom", rank=2,
         decisive=R(r"(mpirun noticed that process rank 2 with PID \d+ on node \S+ exited on signal 9 \(Killed\))"),
         collateral=["ranks 1 and 3: gloo 'Connection reset by peer' RuntimeError in the gradient all_reduce",
                     "mpirun reports rank 2's signal 9 and aborts the job"],
         root_cause="Rank 2 was SIGKILLed at step 4 (signal 9, no traceback, as the kernel OOM killer does); the other "
                    "ranks lost their peer and mpirun aborted the job.",
         fix="Check the kernel log (dmesg) for the OOM kill and reduce rank 2's host memory use or raise the limit.",
         induced_how="rank 2 does os.kill(os.getpid(), SIGKILL) after its step-4 backward (0-based 3)"),
    dict(id="run7-mpirun-barrier-hang", launcher="mpirun",
         cmd=MPI.format(n=4) + " python job7.py --scenario hang --hang-barrier --fault-rank 1 --fault-step 2 "
                               "--hang-seconds 60 --pg-timeout 15",
         category="dist.collective_timeout", rank=1,
         decisive=R(TIMEOUT_RE, 0), also=[R(TIMEOUT_RE, 1), R(TIMEOUT_RE, 2)],
         checks=[CHECK(r"Process name: \[\[\d+,1\],[023]\]", "mpirun names a waiting rank, not rank 1")],
         collateral=["ranks 0, 2, 3 time out after 15 s in dist.barrier() ('sync before eval') while rank 1 is silent",
                     MPI_ABORT + " and names a waiting rank as the first non-zero exit; rank 1 is killed"],
         root_cause="After step 3 rank 1 stalled for 60 s before the 'sync before eval' barrier, printing nothing; ranks "
                    "0, 2 and 3 waited in dist.barrier() until gloo's 15 s timeout fired.",
         fix="Find what rank 1 blocks on before the barrier (py-spy dump of that rank); keep per-rank work before "
             "collectives bounded, or raise the process group timeout if the wait is legitimate.",
         induced_how="at step index 2 every rank calls dist.barrier(); rank 1 first sleeps 60 s (process group "
                     "timeout 15 s)"),
]


def lines_of(path):
    with open(path, errors="replace") as f:
        return f.read()


def resolve(spec, text):
    if isinstance(spec, str):
        return spec
    _, pat, nth = spec
    ms = list(re.finditer(pat, text))
    if len(ms) <= nth:
        raise SystemExit(f"pattern {pat!r} (match {nth}) not found")
    m = ms[nth]
    return m.group(1) if m.groups() else m.group(0)


def in_a_line(sub, text):
    return any(sub in ln for ln in text.splitlines())


def main():
    bad = 0
    for c in CASES:
        d = os.path.join(POOL, c["id"])
        if not os.path.isfile(os.path.join(d, "log.txt")):
            print(f"MISSING {c['id']}")
            bad += 1
            continue
        log = lines_of(os.path.join(d, "log.txt"))
        dtext = lines_of(os.path.join(d, "ranks", c["decisive_file"])) if c.get("decisive_file") else log
        decisive = resolve(c["decisive"], dtext)
        also = [resolve(a, log) for a in c.get("also", [])]
        ok = in_a_line(decisive, dtext) and all(in_a_line(a, log) for a in also)
        if c.get("decisive_file"):
            ok = ok and in_a_line(decisive, log)  # also on the shared console
        for pat, what in c.get("checks", []):
            if not re.search(pat, log):
                print(f"  CHECK FAILED {c['id']}: {what}")
                ok = False
        label = {
            "id": c["id"],
            "source": f"real run: {GEN}/run_all.sh {c['id']} ({c['cmd']}), torch 2.13.0 CPU, gloo",
            "category": c["category"], "fatal": True,
            "decisive_line": decisive, "also_acceptable": also,
            "initiating_rank": c["rank"], "collateral": c["collateral"], "operator": None,
            "root_cause": c["root_cause"], "fix": c["fix"],
            "launcher": c["launcher"], "framework": c.get("framework", "plain"),
            "genuine": False, "induced_how": c["induced_how"],
            "confirmed_by": "induced", "confidence": "high",
        }
        if c.get("decisive_file"):
            label["decisive_file"] = c["decisive_file"]
        with open(os.path.join(d, "label.json"), "w") as f:
            json.dump(label, f, indent=2, ensure_ascii=False)
            f.write("\n")
        print(f"{'ok  ' if ok else 'FAIL'} {c['id']}: {c['category']} rank {c['rank']} | {decisive[:90]}")
        bad += 0 if ok else 1
    print(f"{len(CASES) - bad}/{len(CASES)} cases labelled and checked")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
