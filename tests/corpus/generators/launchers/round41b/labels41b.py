"""Writes label.json for each round-41b case (from what was induced) and checks decisive lines are in log.txt."""
import json, os, sys
STAGE = sys.argv[1] if len(sys.argv) > 1 else "/work/helpers/stage41"
UC = "user.code_error"
SIG_FIX = "Find who sent the signal (an operator, a watchdog or the scheduler's preemption) and stop it, or handle it by checkpointing before exit."
C = {  # id: (launcher, category, rank, decisive, also_acceptable, root_cause, fix, induced_how, operator)
 "run41b-py-recursion": ("python", UC, None, "RecursionError: maximum recursion depth exceeded", [],
   "resolve() follows a config's 'parent' link and the config is its own parent, so the recursion never ends (RecursionError, traceback folded as [Previous line repeated 994 more times]).",
   "Detect cycles in the config inheritance (track visited nodes) or remove the self-reference.", "--fault recursion: cfg['parent'] = cfg at step 3", None),
 "run41b-py-tensor-dump": ("python", UC, None, "ValueError: rank 0 step 3: batch features contain non-finite values", [],
   "The input check found a NaN in the step-3 batch and raised ValueError whose message prints the whole 60x12 tensor (over 100 lines), with a tqdm bar running.",
   "Find where the NaN enters the features (data source or preprocessing) and clean or skip the sample.", "--fault tensor --tqdm: x[37,5]=nan, torch.set_printoptions(profile='full'), raise ValueError(f'...{x}')", None),
 "run41b-py-statedict": ("python", UC, None, "RuntimeError: Error(s) in loading state_dict for Net:", ["size mismatch for emb.weight: copying a param with shape torch.Size([50, 24]) from checkpoint"],
   "load_state_dict was given a checkpoint written with width 24 for a width-16 model, so every parameter has a size mismatch.",
   "Load the checkpoint into a model built with the same config (width 24) or use the checkpoint of this config.", "--fault statedict: model.load_state_dict(Net(width=24).state_dict()) at step 3", None),
 "run41b-py-weakref": ("python", UC, None, "ValueError: shard 0: record 3 has 13 fields, expected 12", [],
   "The data loader raised ValueError on a malformed record (13 fields instead of 12); during teardown a weakref.finalize callback raised a secondary RuntimeError.",
   "Fix or skip the malformed record in shard 0; make the finalize callback not raise.", "--fault weakref --fmt colorlog: raise ValueError at step 3 after registering weakref.finalize(loader, cb) whose cb raises; colorlog force_color, log.exception then re-raise", None),
 "run41b-py-loguru-cppstack": ("python", UC, None, "index out of range in self", [],
   "Token ids 50 are past the 50-entry embedding vocabulary, so nn.Embedding raised IndexError (logged by loguru with diagnose annotations, C++ stack shown by TORCH_SHOW_CPP_STACKTRACES=1).",
   "Clamp/validate token ids against the vocabulary size or enlarge the embedding.", "--fault cppstack --fmt loguru: model(torch.full((8,6), 50)) with TORCH_SHOW_CPP_STACKTRACES=1; loguru colorize=True backtrace=True diagnose=True, logger.exception then re-raise", "aten.embedding"),
 "run41b-py-terminate": ("python", UC, None, "what():  shard record count must be even, got 1001", ["terminate called after throwing an instance of 'c10::Error'"],
   "A C++ extension's TORCH_CHECK failed inside a std::thread, where nothing catches the c10::Error, so std::terminate aborted the process (SIGABRT, exit 134).",
   "Catch exceptions inside the thread and pass them to the caller (e.g. std::exception_ptr), and fix the odd record count.", "--fault terminate: load_inline extension runs TORCH_CHECK(n % 2 == 0) in a std::thread with n=1001; TORCH_SHOW_CPP_STACKTRACES=1", None),
 "run41b-py-sigint-tqdm": ("python", UC, None, "KeyboardInterrupt", [],
   "The job was interrupted from outside with SIGINT (kill -INT) while training with a tqdm bar; no error of its own.",
   SIG_FIX, "run_all.sh sends kill -INT to the python process after its 'step 2 loss' line (--steps 40 --step-sleep 1 --tqdm)", None),
 "run41b-torchrun-recursion": ("torchrun", UC, 1, "[rank1]: RecursionError: maximum recursion depth exceeded", [],
   "Rank 1's resolve() recursed forever on a self-parented config (RecursionError); ranks 0 and 2 then lost their gloo peer.",
   "Detect cycles in the config inheritance or remove the self-reference.", "--fault recursion --fault-rank 1 at step 3", None),
 "run41b-torchrun-tensor-dump": ("torchrun", UC, 2, "[rank2]: ValueError: rank 2 step 3: batch features contain non-finite values", [],
   "Rank 2's input check found a NaN and raised ValueError printing the whole 60x12 tensor (hundreds of [rank2]: lines); the other ranks lost their gloo peer.",
   "Find where the NaN enters rank 2's features and clean or skip the sample.", "--fault tensor --fault-rank 2 at step 3 (profile='full' tensor in the message)", None),
 "run41b-torchrun-statedict": ("torchrun", UC, 2, "[rank2]: RuntimeError: Error(s) in loading state_dict for Net:", ["size mismatch for emb.weight: copying a param with shape torch.Size([50, 24]) from checkpoint"],
   "Rank 2 loaded a checkpoint of a width-24 model into its width-16 model: multi-line size-mismatch RuntimeError; the others lost their gloo peer.",
   "Build the model with the checkpoint's config before loading it.", "--fault statedict --fault-rank 2 at step 3", None),
 "run41b-torchrun-del": ("torchrun", UC, 1, "[rank1]: ValueError: shard 1: record 3 has 13 fields, expected 12", [],
   "Rank 1's loader raised ValueError on a malformed record; while unwinding, a Prefetcher.__del__ raised too ('Exception ignored in', ValueError: read of closed file).",
   "Fix or skip the malformed record in shard 1; make __del__ tolerate a closed file.", "--fault del --fault-rank 1 at step 3: raise ValueError with a Prefetcher whose __del__ reads a closed file", None),
 "run41b-torchrun-tqdm": ("torchrun", UC, 2, "label 'target' missing from sample 00003 of shard 2", [],
   "Rank 2's sample lacks the 'target' label; the KeyError message embeds the 400-entry sample dict (one line of ~9000 characters) while tqdm bars of all ranks are running.",
   "Fix shard 2's records (add the label) or skip unlabelled samples.", "--fault bigdict --fault-rank 2 --tqdm at step 3", None),
 "run41b-torchrun-loguru": ("torchrun", UC, 1, "label 'target' missing from sample 00003 of shard 1", [],
   "Rank 1's sample lacks the 'target' label; loguru logs the KeyError (coloured, diagnose annotations, ~9000-char line) and it is re-raised; the others lost their gloo peer.",
   "Fix shard 1's records (add the label) or skip unlabelled samples.", "--fault bigdict --fault-rank 1 --fmt loguru at step 3; logger.exception then re-raise", None),
 "run41b-torchrun-sigint": ("torchrun", UC, None, "Received 2 death signal, shutting down workers", ["SignalException: Process"],
   "The torchrun job was interrupted from outside with SIGINT (Ctrl-C) while ranks 0 and 1 waited in all_reduce for rank 2 (sleeping); torchrun forwarded SIGINT, every rank printed KeyboardInterrupt.",
   SIG_FIX, "--fault sleep --fault-rank 2 (rank 2 sleeps 600 s at step 3, no timeout reached); run_all.sh sends kill -INT to the torchrun agent after rank 2's 'waiting for shard refresh' line", None),
 "run41b-torchrun-sigterm": ("torchrun", UC, None, "Received 15 death signal, shutting down workers", ["SignalException: Process"],
   "The torchrun agent was sent SIGTERM from outside (as a scheduler's preemption does) mid-training; it forwarded SIGTERM to all ranks; no error of the job's own.",
   SIG_FIX, "run_all.sh sends kill -TERM to the torchrun agent after the 'step 3 loss' line (--steps 40 --step-sleep 1 --fmt colorlog)", None),
 "run41b-spawn-bigdict": ("mp.spawn", UC, 1, "label 'target' missing from sample 00003 of shard 1", [],
   "Rank 1's sample lacks the 'target' label; the KeyError message embeds the 400-entry sample dict on one ~9000-char line.",
   "Fix shard 1's records (add the label) or skip unlabelled samples.", "--spawn 3 --fault bigdict --fault-rank 1 at step 3", None),
 "run41b-spawn-cppstack": ("mp.spawn", UC, 2, "index out of range in self", [],
   "Rank 2 fed token ids 64 into a 50-entry nn.Embedding: IndexError with the C++ stack (TORCH_SHOW_CPP_STACKTRACES=1), logged by colorlog and re-raised.",
   "Clamp/validate token ids against the vocabulary size or enlarge the embedding.", "--spawn 3 --fault cppstack --fault-rank 2 --fmt colorlog with TORCH_SHOW_CPP_STACKTRACES=1", "aten.embedding"),
 "run41b-spawn-sigterm-rank": ("mp.spawn", UC, 1, "process 1 terminated with signal SIGTERM", [],
   "Rank 1's process was terminated by an external SIGTERM after step 4; no error of its own; mp.spawn then terminated the others.",
   SIG_FIX, "run_all.sh sends kill -TERM to rank 1's pid (from PIDDIR) after its 'step 3 loss' line", None),
}
HEALTHY = {
 "run41b-py-healthy-recursion": ("python", "Healthy: a RecursionError from a self-parented config is caught and its traceback logged as a warning ([Previous line repeated ...]); the job falls back to a flat config and finishes (exit 0).", "--fault caught-recursion --tqdm"),
 "run41b-torchrun-healthy-loguru": ("torchrun", "Healthy: rank 1 logs a ConnectionResetError with loguru's logger.exception (coloured, diagnose annotations), retries and succeeds; all ranks finish (exit 0).", "--fault caught-exception --fault-rank 1 --fmt loguru"),
 "run41b-torchrun-healthy-tqdm": ("torchrun", "Healthy: 3 ranks train with tqdm bars (\\r updates) to the end (exit 0).", "--tqdm"),
 "run41b-spawn-healthy-colorlog": ("mp.spawn", "Healthy: rank 2 logs a ConnectionResetError with colorlog's log.exception (forced colours), retries and succeeds; all ranks finish (exit 0).", "--spawn 3 --fault caught-exception --fault-rank 2 --fmt colorlog"),
}
def write(cid, d):
    p = os.path.join(STAGE, cid)
    d["source"] = f"real run: tests/corpus/generators/launchers/round41b/run_all.sh {cid}, torch 2.13.0 CPU, gloo"
    json.dump(d, open(os.path.join(p, "label.json"), "w"), indent=1)
    lines = open(os.path.join(p, "log.txt"), encoding="utf-8", errors="replace").read().split("\n")
    for s in ([d["decisive_line"]] if d["decisive_line"] else []) + d["also_acceptable"]:
        n = sum(s in l for l in lines)
        print(("OK  " if n else "MISSING ") + cid, repr(s[:60]), n)
for cid, (la, cat, rank, dec, also, rc, fix, how, op) in C.items():
    write(cid, {"id": cid, "source": "", "category": cat, "fatal": True, "decisive_line": dec, "also_acceptable": also,
                "initiating_rank": rank, "collateral": [], "operator": op, "root_cause": rc, "fix": fix, "launcher": la,
                "framework": "plain", "genuine": False, "induced_how": how, "confirmed_by": "induced", "confidence": "high",
                "torch_version": "2.13.0"})
for cid, (la, rc, how) in HEALTHY.items():
    write(cid, {"id": cid, "source": "", "category": "none", "fatal": False, "decisive_line": None, "also_acceptable": [],
                "initiating_rank": None, "collateral": [], "operator": None, "root_cause": rc, "fix": "none needed",
                "launcher": la, "framework": "plain", "genuine": False, "induced_how": how, "confirmed_by": "induced",
                "confidence": "high", "torch_version": "2.13.0"})
