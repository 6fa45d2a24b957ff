"""Writes label.json for every round60a case in POOL.  Labels come from the induced fault (FAULT in run_all.sh:
which rank, what kind, which step), not from any diagnosis tool; this script only checks that the decisive line
is a substring of a line of log.txt (or of ranks/<decisive_file> when it is only there)."""
import json, os, sys

POOL = sys.argv[1] if len(sys.argv) > 1 else "/tmp/h60a/pool"
SRC = "real run: tests/corpus/generators/launchers/round60a/run_all.sh {id} ({script} {fault}), torch 2.13.0 CPU, gloo, 4 ranks, torchrun"
MMV = "could not convert string to float: 'nan%'"
HFV = "ValueError: token id 32001 out of range for vocab of size 32000"
MIS = "op.preamble.length <= op.nbytes. 32 vs 16. Received data size doesn't match expected size. Is there a distributed collective mismatch in your code?"
def kill(r): return f"failed (exitcode: -9) local_rank: {r}"
def tmo(ms, op): return f"Timed out waiting {ms}ms for {op} operation to complete"
GLOO_RESET = "gloo Connection closed by peer / Connection reset by peer on the surviving ranks"
TR_FAIL = "torchrun ChildFailedError summary"

# id: (script, fault, category, rank, decisive, also_acceptable, decisive_file, collateral, root_cause, fix, how)
C = {
 "run-r60a-mm-dataset-valueerror": ("mm_job.py", "2:raise:5", "user.code_error", 2, "ValueError: " + MMV, [], None,
    [GLOO_RESET, TR_FAIL], "Rank 2's dataset __getitem__ raised ValueError on a corrupt sample at iteration 5; the other ranks lost their peer in DDP's all_reduce.",
    "Clean or skip the malformed record in shard part-00002.csv (validate samples in the dataset).",
    "ToyData.__getitem__ raises ValueError on rank 2 at iteration 5"),
 "run-r60a-mm-rank0-dataset-valueerror": ("mm_job.py", "0:raise:6", "user.code_error", 0, "ValueError: " + MMV, [], None,
    [GLOO_RESET, TR_FAIL], "Rank 0's dataset __getitem__ raised ValueError on a corrupt sample at iteration 6; the other ranks lost their peer.",
    "Clean or skip the malformed record in shard part-00000.csv.", "ToyData.__getitem__ raises ValueError on rank 0 at iteration 6"),
 "run-r60a-mm-loss-keyerror": ("mm_job.py", "1:keyerror:7", "user.code_error", 1, "KeyError: 'loss_weights'", [], "attempt_0/1/stderr.log",
    [GLOO_RESET, TR_FAIL], "Rank 1's model loss code looked up a missing 'loss_weights' key at iteration 7 (KeyError); the others lost their peer.",
    "Fix the loss code to not read a key the loss dict does not have.",
    "ToyModel.forward(mode='loss') indexes losses['loss_weights'] on rank 1 at iteration 7; torchrun --log-dir --tee 3"),
 "run-r60a-mm-sigkill": ("mm_job.py", "3:sigkill:6", "mem.host_oom", 3, kill(3), [], None,
    [GLOO_RESET, TR_FAIL], "Rank 3 was SIGKILLed (exit -9, no traceback) at iteration 6, as the kernel OOM killer does; the others lost their peer.",
    "Find what killed rank 3 (dmesg / host memory) and lower that rank's host memory use or raise the limit.",
    "os.kill(os.getpid(), SIGKILL) in ToyModel.forward on rank 3 at iteration 6"),
 "run-r60a-mm-sigkill-logdir": ("mm_job.py", "2:sigkill:9", "mem.host_oom", 2, kill(2), [], None,
    [GLOO_RESET, TR_FAIL], "Rank 2 was SIGKILLed (exit -9, no traceback) at iteration 9; the survivors' errors are only in ranks/ (torchrun --redirects 3).",
    "Find what killed rank 2 (dmesg / host memory) and lower its host memory use or raise the limit.",
    "os.kill(os.getpid(), SIGKILL) in ToyModel.forward on rank 2 at iteration 9; torchrun --log-dir --redirects 3"),
 "run-r60a-mm-hang": ("mm_job.py", "1:hang:5", "dist.collective_timeout", 1, tmo(20000, "recv"), [tmo(20000, "send")], None,
    ["gloo timeouts on ranks 0, 2, 3", TR_FAIL], "Rank 1 stalled 60 s in its forward at iteration 5 (silent); ranks 0, 2, 3 timed out after 20 s in DDP's gradient all_reduce.",
    "Find why rank 1 stalls (py-spy dump it); raise the process group timeout only if the stall is legitimate.",
    "time.sleep(60) in ToyModel.forward on rank 1 at iteration 5; gloo timeout 20 s"),
 "run-r60a-mm-hang-logdir": ("mm_job.py", "3:hang:12", "dist.collective_timeout", 3, tmo(25000, "send"), [tmo(25000, "recv")], "attempt_0/0/stderr.log",
    ["gloo timeouts on ranks 0, 1, 2", TR_FAIL], "Rank 3 stalled 60 s in its forward at iteration 12 (silent); ranks 0, 1, 2 timed out after 25 s in DDP's gradient all_reduce.",
    "Find why rank 3 stalls (py-spy dump it); raise the process group timeout only if the stall is legitimate.",
    "time.sleep(60) in ToyModel.forward on rank 3 at iteration 12; gloo timeout 25 s; torchrun --log-dir --tee 3"),
 "run-r60a-mm-hook-broadcast-size": ("mm_job.py", "2:mismatch:4", "dist.collective_mismatch", 2, MIS, [], None,
    ["terminate called after throwing an instance of 'gloo::EnforceNotMet' (SIGABRT) on receiving ranks", GLOO_RESET, TR_FAIL],
    "At iteration 4 a train hook on rank 2 broadcast (src=2) a tensor of 8 elements while the other ranks received into 4-element tensors; gloo aborted the receivers with a size-mismatch enforce.",
    "Make every rank call the broadcast with the same tensor size (derive the size identically on all ranks).",
    "FaultHook.before_train_iter: dist.broadcast(torch.ones(8 on rank 2 / 4 elsewhere), src=2) at iteration 4"),
 "run-r60a-mm-healthy": ("mm_job.py", "", "none", None, None, [], None, [], "Healthy mmengine run of 24 iterations with the framework's usual warnings.", "None needed.", "no fault"),
 "run-r60a-hf-dataset-valueerror": ("hf_job.py", "2:raise:5", "user.code_error", 2, HFV, [], None,
    [GLOO_RESET, TR_FAIL], "Rank 2's dataset __getitem__ raised ValueError (token id out of range) at step 5; the other ranks lost their peer.",
    "Fix the tokenization / filter the out-of-vocabulary record.", "TokenData.__getitem__ raises ValueError on rank 2 at step 5"),
 "run-r60a-hf-forward-keyerror-logdir": ("hf_job.py", "3:keyerror:6", "user.code_error", 3, "KeyError: 'loss_mask'", [], "attempt_0/3/stderr.log",
    [GLOO_RESET, TR_FAIL], "Rank 3's model forward read a 'loss_mask' input the collator does not send (KeyError) at step 6; the others lost their peer.",
    "Have the collator provide loss_mask or stop reading it in forward.",
    "TinyLM.forward indexes kw['loss_mask'] on rank 3 at step 6; torchrun --log-dir --tee 3"),
 "run-r60a-hf-sigkill": ("hf_job.py", "1:sigkill:7", "mem.host_oom", 1, kill(1), [], None,
    [GLOO_RESET, TR_FAIL], "Rank 1 was SIGKILLed (exit -9, no traceback) at step 7, as the kernel OOM killer does; the others lost their peer.",
    "Find what killed rank 1 (dmesg / host memory) and lower its host memory use or raise the limit.",
    "os.kill(os.getpid(), SIGKILL) in TinyLM.forward on rank 1 at step 7"),
 "run-r60a-hf-hang-replica-warning": ("hf_job.py", "2:hang:4", "dist.collective_timeout", 2, tmo(20000, "recv"), [tmo(20000, "send")], None,
    ["gloo timeouts on ranks 0, 1, 3", TR_FAIL], "Rank 2 stalled 60 s in its forward at step 4 (silent); the other ranks timed out after the 20 s gloo timeout in DDP's all_reduce.",
    "Find why rank 2 stalls (py-spy dump it); raise the timeout only if the stall is legitimate.",
    "time.sleep(60) in TinyLM.forward on rank 2 at step 4; gloo timeout 20 s (init_process_group in the script); log_level_replica=warning"),
 "run-r60a-hf-hang-logdir": ("hf_job.py", "3:hang:9", "dist.collective_timeout", 3, tmo(15000, "send"), [tmo(15000, "recv")], "attempt_0/0/stderr.log",
    ["gloo timeouts on ranks 0, 1, 2", TR_FAIL], "Rank 3 stalled 60 s in its forward at step 9 (silent); the other ranks timed out after the 15 s gloo timeout (their errors only in ranks/, --redirects 3).",
    "Find why rank 3 stalls (py-spy dump it); raise the timeout only if the stall is legitimate.",
    "time.sleep(60) in TinyLM.forward on rank 3 at step 9; gloo timeout 15 s; torchrun --log-dir --redirects 3"),
 "run-r60a-hf-callback-broadcast-size": ("hf_job.py", "1:mismatch:3", "dist.collective_mismatch", 1, MIS, [], None,
    ["terminate called after throwing an instance of 'gloo::EnforceNotMet' (SIGABRT) on receiving ranks", GLOO_RESET, TR_FAIL],
    "At step 3 a TrainerCallback on rank 1 broadcast (src=1) a tensor of 8 elements while the other ranks received into 4-element tensors; gloo aborted the receivers with a size-mismatch enforce.",
    "Make every rank call the broadcast with the same tensor size.",
    "StepCounter.on_step_begin: dist.broadcast(torch.ones(8 on rank 1 / 4 elsewhere), src=1) at step 3"),
 "run-r60a-hf-healthy": ("hf_job.py", "", "none", None, None, [], None, [], "Healthy Trainer run of 16 steps with per-rank info logging and the usual DDP warnings.", "None needed.", "no fault"),
 "run-r60a-hf-exit-teardown-abort-logdir": ("hf_job.py", "", "dist.teardown_abort", 1, "terminate called without an active exception", [], "attempt_0/1/stderr.log",
    ["torchrun: failed (exitcode: -6) local_rank: 1 and ChildFailedError after 'Training completed'"],
    "Training finished on every rank (16/16, 'Training completed'), then rank 1 aborted at interpreter exit (std::terminate, SIGABRT, exit -6) because the script exits without a barrier/destroy_process_group while rank 0 is still in gloo work; torchrun reports the job failed.",
    "Call dist.barrier() and dist.destroy_process_group() at the end of the script (CLEAN_EXIT=1).",
    "NOT induced (genuine, intermittent): no fault; the script ended without barrier/destroy_process_group (CLEAN_EXIT=0); torchrun --log-dir --tee 3"),
 "run-r60a-hf-healthy-logdir": ("hf_job.py", "", "none", None, None, [], None, [], "Healthy Trainer run of 16 steps (log_level_replica=warning), torchrun --log-dir --tee 3.", "None needed.", "no fault"),
}


def lines_of(p):
    return open(p, encoding="utf-8", errors="replace").read().splitlines() if os.path.exists(p) else []


bad = 0
for cid, (script, fault, cat, rank, dec, also, dfile, coll, rc, fix, how) in C.items():
    d = os.path.join(POOL, cid)
    if not os.path.isdir(d):
        print("missing", cid); bad += 1; continue
    if dec:
        in_log = any(dec in l for l in lines_of(os.path.join(d, "log.txt")))
        in_file = dfile and any(dec in l for l in lines_of(os.path.join(d, "ranks", dfile)))
        if not (in_log or in_file):
            print("DECISIVE NOT FOUND", cid, dec); bad += 1
        for a in also:
            if not any(a in l for l in lines_of(os.path.join(d, "log.txt")) + (lines_of(os.path.join(d, "ranks", dfile)) if dfile else [])):
                print("also_acceptable not found", cid, a)
    lab = {"id": cid, "source": SRC.format(id=cid, script=script, fault=("FAULT=" + fault) if fault else "healthy"),
           "category": cat, "fatal": cat != "none", "decisive_line": dec, "also_acceptable": also,
           "initiating_rank": rank, "collateral": coll, "operator": None, "root_cause": rc, "fix": fix,
           "launcher": "torchrun", "framework": "mmengine" if script.startswith("mm") else "transformers",
           "genuine": "NOT induced" in how, "induced_how": how, "confirmed_by": "induced" if "NOT induced" not in how else "observed", "confidence": "high"}
    if dfile:
        lab["decisive_file"] = dfile
    json.dump(lab, open(os.path.join(d, "label.json"), "w"), indent=1, ensure_ascii=False)
    print("ok", cid, cat, rank)
sys.exit(1 if bad else 0)
