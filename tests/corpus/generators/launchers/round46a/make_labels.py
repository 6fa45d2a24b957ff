#!/usr/bin/env python3
"""Writes label.json for every round46a case folder in STAGE (argv[1]) and checks that each decisive_line
(and also_acceptable line) is an exact substring of a line of log.txt (or of ranks/<decisive_file>).
Labels come from what run_all.sh induced; the decisive lines were read off the real logs."""
import json
import pathlib
import re
import sys

HERE = pathlib.Path(__file__).resolve().parent
STAGE = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "/work/helpers/stage46")
SPECS = dict(re.findall(r'^\s*\[(run46a-[^\]]+)\]="\d+ (.*)"$', (HERE / "run_all.sh").read_text(), re.M))

SIGKILL_FIX = "Find out why the worker was killed (OOM killer, scheduler, operator) and restart the job; make callers tolerate a lost RPC peer if it must survive."
HANG_FIX = "Fix the deadlock in the served function (or raise rpc_timeout if the work is legitimately slow)."

# id: (category, decisive_line, also_acceptable, initiating_rank, collateral, root_cause, fix, induced_how, decisive_file)
L = {
    "run46a-torchrun-ps-healthy": ("none", None, [], None, [], None, None,
        "model-parallel parameter-server job (trainer + 3 ps shards, dist_autograd + DistributedOptimizer), 6 steps, exit 0", None),
    "run46a-mpirun-hub-healthy": ("none", None, [], None, [], None, None,
        "parameter-server hub (ps + 2 trainers, rpc_sync pull / rpc_async push), 6 steps each, exit 0", None),
    "run46a-spawn-obs-retry": ("none", None, [], None, [], None, None,
        "agent + 3 observers; observer2 raises a transient TimeoutError once in run_episode at episode 3; the agent catches the re-raised remote error, logs a WARNING, retries and finishes, exit 0", None),
    "run46a-torchrun-ps-raise": ("user.code_error", "[default2]:KeyError: 'shift'",
        ["KeyError('shift')"], 2,
        ["rank 0 (trainer): RuntimeError re-raising the remote KeyError; torchrun's Root Cause names rank 0",
         "ranks 1, 2: tensorpipe eof warnings, SIGTERMed by torchrun"],
        "Shard.forward served by worker ps2 (rank 2) looked up a missing 'shift' key in its normalisation config at step 3; the KeyError was shipped back to the trainer and re-raised there.",
        "Restore the 'shift' entry (or use .get with a default) in ps2's shard config.",
        "ps pattern, --fault raise --fault-rank 2: Shard.forward on rank 2 drops the 'shift' key at step 3", None),
    "run46a-spawn-obs-raise": ("user.code_error", "KeyError: 'reward_scale'",
        ["KeyError('reward_scale')"], 1,
        ["rank 0 (agent): ProcessRaisedException 'Process 0 terminated' with RuntimeError wrapping the remote KeyError",
         "observers 1-3: tensorpipe eof warnings"],
        "Observer.run_episode on worker observer1 (rank 1) read the missing 'reward_scale' key of its env config at episode 3; the agent's rpc_async future re-raised it and rank 0 died.",
        "Restore 'reward_scale' in observer1's env config (or default it).",
        "obs pattern, --fault raise --fault-rank 1: run_episode on rank 1 drops env_cfg['reward_scale'] at step 3", None),
    "run46a-mpirun-ps-raise": ("user.code_error", "[1,3]<stderr>:KeyError: 'shift'",
        ["KeyError('shift')"], 3,
        ["rank 0 (trainer): RuntimeError re-raising the remote KeyError, exits 1 (mpirun names rank 0 as first non-zero exit)",
         "ranks 1-3: tensorpipe eof warnings"],
        "Shard.forward served by worker ps3 (rank 3) looked up a missing 'shift' key at step 3; the trainer re-raised the remote KeyError and exited, and mpirun aborted the job.",
        "Restore the 'shift' entry (or use .get with a default) in ps3's shard config.",
        "ps pattern, 4 workers, --fault raise --fault-rank 3", None),
    "run46a-torchrun-obs-sigkill": ("mem.host_oom", "failed (exitcode: -9) local_rank: 2",
        [], 2,
        ["rank 0 (agent): RuntimeError: eof from the lost observer2 connection",
         "torchrun's Root Cause section names rank 0 (exitcode 1) although rank 2 was killed first"],
        "Worker observer2 (rank 2) was SIGKILLed inside run_episode at episode 3 (no traceback); the agent's pending RPC failed with eof.",
        SIGKILL_FIX, "obs pattern, 4 workers, --fault sigkill --fault-rank 2: os.kill(getpid(), SIGKILL) inside run_episode at step 3", None),
    "run46a-spawn-ps-sigkill": ("mem.host_oom", "process 2 terminated with signal SIGKILL",
        [], 2,
        ["trainer (rank 0) and ps1: tensorpipe eof warnings about ps2"],
        "Worker ps2 (rank 2) was SIGKILLed inside Shard.forward at step 3 (no traceback); mp.spawn reports the signal.",
        SIGKILL_FIX, "ps pattern, 3 workers, --fault sigkill --fault-rank 2", None),
    "run46a-mpirun-obs-sigkill": ("mem.host_oom", "mpirun noticed that process rank 1 with PID",
        ["exited on signal 9 (Killed)"], 1,
        ["rank 0 (agent): RuntimeError: eof from the lost observer1 connection (mpirun first reports 'Primary job terminated normally, but 1 process returned a non-zero exit code')",
         "observer2: tensorpipe eof warning"],
        "Worker observer1 (rank 1) was SIGKILLed inside run_episode at episode 3 (no traceback); the agent lost the connection.",
        SIGKILL_FIX, "obs pattern, 3 workers, --fault sigkill --fault-rank 1", None),
    "run46a-torchrun-ps-hang-logdir": ("dist.collective_timeout",
        "RPC ran for more than set timeout (15000 ms) and will now be marked with an error", [], 2,
        ["rank 0 (trainer): rpc_sync to ps2 times out and raises", "ranks 1, 2: eof warnings, SIGTERMed by torchrun"],
        "Worker ps2 (rank 2) deadlocked inside Shard.forward at step 3 (silent), so the trainer's rpc_sync hit the 15 s rpc_timeout.",
        HANG_FIX, "ps pattern, --fault hang --fault-rank 2 --rpc-timeout 15: a non-reentrant lock acquired twice in Shard.forward; torchrun --log-dir --redirects 3 --tee 3",
        "0/stderr.log"),
    "run46a-spawn-obs-hang": ("dist.collective_timeout",
        "RPC ran for more than set timeout (15000 ms) and will now be marked with an error", [], 2,
        ["rank 0 (agent): the rpc_async future for observer2 times out, ProcessRaisedException", "observers: eof warnings"],
        "Worker observer2 (rank 2) deadlocked inside run_episode at episode 3 (silent); the agent's future hit the 15 s rpc_timeout.",
        HANG_FIX, "obs pattern, --fault hang --fault-rank 2 --rpc-timeout 15", None),
    "run46a-mpirun-ps-hang": ("dist.collective_timeout",
        "RPC ran for more than set timeout (15000 ms) and will now be marked with an error", [], 1,
        ["rank 0 (trainer): rpc_sync to ps1 times out and raises; mpirun aborts the job", "ranks 1-3: eof warnings"],
        "Worker ps1 (rank 1) deadlocked inside Shard.forward at step 3 (silent); the trainer's rpc_sync hit the 15 s rpc_timeout.",
        HANG_FIX, "ps pattern, 4 workers, --fault hang --fault-rank 1 --rpc-timeout 15", None),
    "run46a-torchrun-obs-badname": ("user.code_error", "could not find destination name observer2",
        ["[default2]:[rank 2] rpc worker name=observer_2"], 2,
        ["rank 0 (agent) raises in rpc.remote; observers: eof warnings, SIGTERMed"],
        "Rank 2 registered with init_rpc as 'observer_2' instead of 'observer2', so the agent's rpc.remote('observer2', ...) found no such worker.",
        "Register rank 2 under the name the callers use ('observer2').",
        "obs pattern, --fault badname --fault-rank 2: rank 2 calls init_rpc with name observer_2", None),
    "run46a-spawn-hub-callbad": ("user.code_error",
        "RuntimeError: name:trainer2,rank:2 could not find destination name parameter_server", [], 2,
        ["other trainers finish their 6 steps; the ps and trainers are terminated by mp.spawn"],
        "Trainer2 (rank 2) called rpc_sync('parameter_server', ...) at step 3, but the parameter server is registered as 'ps'.",
        "Call the worker by its registered name ('ps').",
        "hub pattern, 4 workers, --fault callbad --fault-rank 2", None),
    "run46a-mpirun-hub-callbad": ("user.code_error",
        "RuntimeError: name:trainer1,rank:1 could not find destination name parameter_server", [], 1,
        ["trainer2 finishes its steps; ps: eof warning; mpirun aborts the job"],
        "Trainer1 (rank 1) called rpc_sync('parameter_server', ...) at step 3, but the parameter server is registered as 'ps'.",
        "Call the worker by its registered name ('ps').",
        "hub pattern, 3 workers, --fault callbad --fault-rank 1", None),
    "run46a-torchrun-obs-pickle-logdir": ("user.code_error", "TypeError: cannot pickle '_thread.lock' object",
        [], 2,
        ["rank 0 (agent) re-raises the serialization error (with a C++ frame dump) and exits 1", "observers: eof warnings, SIGTERMed"],
        "Observer.run_episode on observer2 (rank 2) returned a tuple holding a threading.Lock at episode 3; pickling the RPC response failed on rank 2 and the error was re-raised on the agent (the log does not name the worker).",
        "Return only picklable values (tensors, plain data) from RPC functions.",
        "obs pattern, --fault pickle --fault-rank 2; torchrun --log-dir --redirects 3 --tee 3", "0/stderr.log"),
    "run46a-mpirun-ps-pickle": ("user.code_error", "TypeError: cannot pickle '_thread.lock' object",
        [], 2,
        ["rank 0 (trainer) re-raises the serialization error and exits 1; mpirun aborts", "ps1, ps2: eof warnings"],
        "Shard.forward on ps2 (rank 2) returned a dict holding a threading.Lock at step 3; pickling the RPC response failed on rank 2 and the trainer re-raised it (the log does not name the worker).",
        "Return only picklable values (tensors, plain data) from RPC functions.",
        "ps pattern, 3 workers, --fault pickle --fault-rank 2", None),
    "run46a-torchrun-obs-shutdown": ("dist.peer_or_store_failure", "observer2: my work is done, shutting down rpc now",
        ["RPC agent for observer2 won't send response to request"], 2,
        ["rank 0 (agent): RuntimeError: eof on the pending run_episode to observer2",
         "rank 2 exits 0 (RRef leak warning); rank 1 SIGTERMed by torchrun"],
        "Worker observer2 (rank 2) called rpc.shutdown(graceful=False) right after episode 3 and exited 0 while the agent was still calling it, so the agent's RPC failed with eof.",
        "Use graceful rpc.shutdown() on every worker (it waits for all peers) instead of tearing one worker down early.",
        "obs pattern, --fault shutdown --fault-rank 2 --steps 10", None),
    "run46a-spawn-ps-shutdown": ("dist.peer_or_store_failure", "ps3: my work is done, shutting down rpc now",
        ["RPC agent for ps3 won't send response to request"], 3,
        ["rank 0 (trainer): 'RuntimeError: eof (this error originated at tensorpipe/...)', 'terminate called without an active exception', ProcessRaisedException for process 0",
         "ps1, ps2: eof warnings"],
        "Worker ps3 (rank 3) called rpc.shutdown(graceful=False) right after serving step 3 and exited 0 while the trainer still needed it, so the trainer's forward/backward failed with eof.",
        "Use graceful rpc.shutdown() on every worker instead of tearing one worker down early.",
        "ps pattern, 4 workers, --fault shutdown --fault-rank 3 --steps 10", None),
    "run46a-torchrun-hub-worldsize": ("dist.peer_or_store_failure", "[rank 2] rpc worker name=trainer2 (world_size=4",
        ["Received 15 death signal, shutting down workers"], 2,
        ["ranks 0, 1 wait silently in init_rpc; torchrun is stopped by the 60 s wall-time limit (SIGTERM, SignalException)"],
        "Rank 2 called init_rpc with world_size=4 while the job has 3 workers; the RPC group rendezvous never completes, the job hangs in init_rpc until the wall-time limit kills it.",
        "Pass the same world_size (the launcher's WORLD_SIZE) to init_rpc on every worker.",
        "hub pattern, --fault worldsize --fault-rank 2 (init_rpc world_size 4 of 3), launcher under timeout -s TERM 60", None),
    "run46a-mpirun-hub-worldsize-small": ("user.code_error", "rank < size. 2 vs 2",
        ["[1,2]<stdout>:[rank 2] rpc worker name=trainer2 (world_size=2"], 2,
        ["ranks 0, 1 are waiting in init_rpc when mpirun aborts the job"],
        "Rank 2 called init_rpc with world_size=2 in a 3-worker job, so the gloo group inside the TensorPipe agent refused rank 2 (rank < size).",
        "Pass the same world_size (the launcher's WORLD_SIZE) to init_rpc on every worker.",
        "hub pattern, --fault worldsize_small --fault-rank 2 (init_rpc world_size 2 of 3)", None),
}

LAUNCHER = {"torchrun": "torchrun", "spawn": "mp.spawn", "mpirun": "mpirun"}
bad = 0
for cid, (cat, dec, also, rank, coll, rc, fix, how, dfile) in sorted(L.items()):
    d = STAGE / cid
    if not (d / "log.txt").exists():
        print("MISSING", cid); bad += 1; continue
    args = re.split(r"\$JT? ", SPECS[cid], maxsplit=1)[1].strip()
    lab = {"id": cid,
           "source": f"real run: tests/corpus/generators/launchers/round46a/run_all.sh {cid} (rpc_job.py "
                     f"{args}), torch 2.13.0 CPU, torch.distributed.rpc TensorPipe",
           "category": cat, "fatal": cat != "none", "decisive_line": dec, "also_acceptable": also,
           "initiating_rank": rank, "collateral": coll, "operator": None, "root_cause": rc, "fix": fix,
           "launcher": LAUNCHER[cid.split("-")[1]], "framework": "plain", "genuine": False,
           "induced_how": how, "confirmed_by": "induced", "confidence": "high"}
    target = d / "log.txt"
    if dfile:  # torchrun --log-dir tree: ranks/<run_id>/attempt_0/<rank>/stderr.log
        hits = sorted((d / "ranks").glob(f"*/attempt_0/{dfile}"))
        assert len(hits) == 1, (cid, hits)
        lab["decisive_file"] = str(hits[0].relative_to(d / "ranks"))
        target = hits[0]
    checks = [(s, d / "log.txt") for s in ([dec] if dec else []) + also]
    if dfile:
        checks.append((dec, target))
    for s, f in checks:
        if not any(s in ln for ln in f.read_text(errors="replace").splitlines()):
            print("NOT FOUND", cid, f.name, repr(s)); bad += 1
    (d / "label.json").write_text(json.dumps(lab, indent=2) + "\n")
print("labels written:", len(L), "problems:", bad)
sys.exit(1 if bad else 0)
