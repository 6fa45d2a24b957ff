import json, os, sys
ST = "/work/helpers/stage48"
SRC = "real run: tests/corpus/generators/launchers/round48a/run_all.sh (case {id}: {cmd}), torch 2.13.0 CPU, gloo, 2026-12-07"
D = dict
GLOO_CLOSED = "Connection closed by peer"
cases = [
 D(id="run48a-same-rank-raise-tee", cmd="torchrun --standalone --nproc-per-node 4 --max-restarts 2 --tee 3 elastic_job.py --plan '*:raise@2:4'",
   category="user.code_error", decisive_line="[rank2]: ValueError: corrupt record 3 in shard data/train-00002.bin: expected 32 features, got 0",
   rank=2, collateral=["ranks 0/1/3: gloo 'Connection closed by peer' in all_reduce, each attempt", "torchrun SIGTERMs the survivors and restarts 2 times; each attempt resumes from the step-3 checkpoint and hits the same record"],
   root_cause="Rank 2's data loader raises ValueError on corrupt record 3 of its shard; every restart resumes from the step-3 checkpoint and reads the same record, so all 3 attempts fail identically.",
   fix="Fix or skip the corrupt record in data/train-00002.bin (restarts cannot help a deterministic data error).",
   induced_how="rank 2 raises ValueError at step 4 in every attempt (--plan '*:raise@2:4'), --max-restarts 2",
   notes="The decisive line is identical in all three attempts (same record each time); the last attempt's is the one that ended the job."),
 D(id="run48a-same-rank-keyerror-logdir", cmd="USE_RECORD=1 torchrun --standalone --nproc-per-node 3 --max-restarts 1 --log-dir logs --redirects 3 elastic_job.py --plan '*:keyerror@1:5'",
   category="user.code_error", decisive_line="KeyError: 'label'", decisive_file="attempt_1/1/stderr.log", rank=1,
   collateral=["ranks 0/2: gloo 'Connection closed by peer' in all_reduce (ranks/attempt_N/{0,2}/stderr.log)", "ChildFailedError summary (with @record traceback) names rank 1 as root cause"],
   root_cause="Rank 1 looks up sample['label'] in a batch dict that has only 'input' at step 5; the restart resumes from step 4 and fails the same way.",
   fix="Build the batch with the 'label' key (or read the right key) in rank 1's data path.",
   induced_how="rank 1 indexes a missing dict key at step 5 in every attempt (--plan '*:keyerror@1:5'), --max-restarts 1, worker main wrapped with @record",
   notes="Worker output only in ranks/ (--redirects 3); the console log.txt carries the agent lines and the @record summary with the last attempt's KeyError."),
 D(id="run48a-sigkill-every-attempt-tee", cmd="torchrun --standalone --nproc-per-node 4 --max-restarts 2 --tee 3 elastic_job.py --plan '*:sigkill@3:4'",
   category="mem.host_oom", decisive_line="failed (exitcode: -9) local_rank: 3 (pid: ", rank=3,
   collateral=["ranks 0-2: gloo 'Connection closed by peer' / 'Connection reset by peer' in all_reduce", "torchrun restarts twice, rank 3 is SIGKILLed at step 4 each time"],
   root_cause="Rank 3 is SIGKILLed (exit -9, no traceback) at step 4 in every attempt, as the kernel OOM killer would do; restarts resume at step 3 and die again.",
   fix="Find what kills rank 3 (host memory use / OOM killer in dmesg) and reduce its memory or raise the limit.",
   induced_how="rank 3 calls os.kill(os.getpid(), SIGKILL) after backward at step 4 in every attempt, --max-restarts 2",
   notes="The -9 line appears once per attempt (3 times); all name local_rank 3."),
 D(id="run48a-flaky-shard-tee", cmd="torchrun --standalone --nproc-per-node 4 --max-restarts 2 --tee 3 elastic_job.py --plan '0:raise@1:3,1:raise@3:5,2:raise@2:7'",
   category="user.code_error", decisive_line="[rank2]: ValueError: corrupt record 6 in shard data/train-00002.bin: expected 32 features, got 0", rank=2,
   also_acceptable=[],
   collateral=["attempt 0: rank 1 ValueError on record 2 of its shard", "attempt 1: rank 3 ValueError on record 4 of its shard", "survivors: gloo 'Connection closed by peer' each attempt"],
   root_cause="A different rank hits a corrupt record in each attempt (rank 1, then 3, then 2); the last attempt's rank 2 ValueError on record 6 exhausts --max-restarts 2.",
   fix="Validate/repair the data shards (several are corrupt) rather than relying on restarts.",
   induced_how="--plan '0:raise@1:3,1:raise@3:5,2:raise@2:7': attempt 0 rank 1 step 3, attempt 1 rank 3 step 5, attempt 2 rank 2 step 7",
   notes="Label follows the failure that ended the job (attempt 2, rank 2); earlier attempts' errors are on ranks 1 and 3."),
 D(id="run48a-flaky-shard-logdir", cmd="USE_RECORD=1 torchrun --standalone --nproc-per-node 3 --max-restarts 3 --log-dir logs --redirects 3 elastic_job.py --plan '0:keyerror@2:2,1:raise@1:4,2:raise@2:6,3:raise@1:7'",
   category="user.code_error", decisive_line="ValueError: corrupt record 6 in shard data/train-00001.bin: expected 32 features, got 0", decisive_file="attempt_3/1/stderr.log", rank=1,
   collateral=["attempt 0: rank 2 KeyError 'label'", "attempt 1: rank 1 ValueError record 3", "attempt 2: rank 2 ValueError record 5", "survivors: gloo 'Connection closed by peer'"],
   root_cause="Each of 4 attempts fails on a different corrupt record (ranks 2, 1, 2, 1); the last attempt's rank 1 ValueError on record 6 exhausts --max-restarts 3.",
   fix="Validate/repair the data shards rather than relying on restarts.",
   induced_how="--plan '0:keyerror@2:2,1:raise@1:4,2:raise@2:6,3:raise@1:7', --max-restarts 3, --log-dir --redirects 3, @record",
   notes="Label follows the last attempt (attempt_3, rank 1); ranks/ holds attempt_0..attempt_3."),
 D(id="run48a-recover-tee", cmd="torchrun --standalone --nproc-per-node 4 --max-restarts 1 --tee 3 elastic_job.py --plan '0:raise@3:4'",
   category="none", fatal=False, decisive_line=None, rank=None,
   collateral=["attempt 0: rank 3 ValueError on record 3 and gloo 'Connection closed by peer' on the others (recovered)"],
   root_cause="Attempt 0 fails (rank 3 ValueError at step 4); torchrun restarts the group once, it resumes from the step-3 checkpoint and finishes all 8 steps (exit 0).",
   fix="None needed for the job to finish; the transient data error in attempt 0 may be worth checking.",
   induced_how="rank 3 raises ValueError at step 4 in attempt 0 only (--plan '0:raise@3:4'), --max-restarts 1",
   notes="NEGATIVE control: tracebacks of a failed attempt that torchrun recovered from; the job exits 0 ('training finished')."),
 D(id="run48a-recover-sigkill-logdir", cmd="torchrun --standalone --nproc-per-node 3 --max-restarts 3 --log-dir logs --redirects 3 elastic_job.py --plan '0:sigkill@1:3'",
   category="none", fatal=False, decisive_line=None, rank=None,
   collateral=["attempt 0: torchrun 'failed (exitcode: -9) local_rank: 1' (recovered)"],
   root_cause="Rank 1 is SIGKILLed in attempt 0; torchrun restarts the group, attempt 1 resumes from the checkpoint and completes (exit 0).",
   fix="None needed for the job to finish.",
   induced_how="rank 1 SIGKILLs itself at step 3 in attempt 0 only (--plan '0:sigkill@1:3'), --max-restarts 3",
   notes="NEGATIVE control: a -9 exit of attempt 0 followed by a successful attempt 1 (ranks/attempt_1/0/stdout.log ends with 'training finished')."),
 D(id="run48a-raise-then-hang-tee", cmd="torchrun --standalone --nproc-per-node 4 --max-restarts 1 --tee 3 elastic_job.py --plan '0:raise@1:3,1:hang@3:6' --pg-timeout 15 --hang-s 60",
   category="dist.collective_timeout", decisive_line="[rank2]: RuntimeError: [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:78] Timed out waiting 15000ms for recv operation to complete", rank=3,
   also_acceptable=["[rank0]: RuntimeError: [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:129] Timed out waiting 15000ms for send operation to complete"],
   collateral=["attempt 0: rank 1 ValueError (recovered by the restart)", "attempt 1: ranks 0/1/2 time out in all_reduce; torchrun's summary names rank 1 (first to exit) as root cause", "rank 3 is SIGTERMed while sleeping, printing nothing"],
   root_cause="In the last attempt rank 3 stalls (sleeps 60 s) before the step-6 all_reduce, so ranks 0-2 hit the 15 s gloo timeout; attempt 0 had failed differently (rank 1 ValueError).",
   fix="Find why rank 3 stalls before the collective (it never reached the all_reduce); the earlier ValueError is a separate data bug.",
   induced_how="attempt 0: rank 1 ValueError at step 3; attempt 1: rank 3 sleeps 60 s before all_reduce at step 6, pg timeout 15 s; --max-restarts 1",
   notes="Initiating rank 3 is the silent one; the launcher's 'Root Cause' rank 1 is just the first waiting rank to exit."),
 D(id="run48a-raise-then-sigkill-logdir", cmd="USE_RECORD=1 torchrun --standalone --nproc-per-node 4 --max-restarts 1 --log-dir logs --redirects 3 elastic_job.py --plan '0:raise@2:3,1:sigkill@1:5'",
   category="mem.host_oom", decisive_line="failed (exitcode: -9) local_rank: 1 (pid: ", rank=1,
   collateral=["attempt 0: rank 2 ValueError (ranks/attempt_0/2/stderr.log), torchrun 'failed (exitcode: 1) local_rank: 2'", "attempt 1: ranks 0/2/3 gloo connection errors; summary Root Cause rank 1 exitcode -9"],
   root_cause="In the last attempt rank 1 is SIGKILLed (exit -9, no traceback) at step 5; attempt 0 had failed with a rank 2 ValueError.",
   fix="Find what kills rank 1 (host memory / OOM killer) and reduce its memory or raise the limit.",
   induced_how="attempt 0: rank 2 raises ValueError at step 3; attempt 1: rank 1 os.kill(SIGKILL) at step 5; --max-restarts 1, --log-dir --redirects 3",
   notes="The -9 line is in the console log.txt (agent output); ranks/attempt_1/1/ has no error."),
 D(id="run48a-hang-then-raise-tee", cmd="torchrun --standalone --nproc-per-node 3 --max-restarts 1 --tee 3 elastic_job.py --plan '0:hang@2:3,1:raise@1:5' --pg-timeout 15 --hang-s 60",
   category="user.code_error", decisive_line="[rank1]: ValueError: corrupt record 4 in shard data/train-00001.bin: expected 32 features, got 0", rank=1,
   collateral=["attempt 0: rank 2 stalls, ranks 0/1 'Timed out waiting 15000ms' (recovered by the restart)", "attempt 1: ranks 0/2 gloo 'Connection closed by peer'"],
   root_cause="The last attempt fails on rank 1's ValueError (corrupt record 4); attempt 0 had failed differently, with rank 2 stalling into a gloo timeout.",
   fix="Fix or skip the corrupt record in rank 1's shard; the attempt-0 stall of rank 2 is a separate issue.",
   induced_how="attempt 0: rank 2 sleeps 60 s before all_reduce at step 3 (pg timeout 15 s); attempt 1: rank 1 ValueError at step 5; --max-restarts 1",
   notes="Label follows the last attempt; the earlier collective timeout is collateral history."),
 D(id="run48a-halfckpt-raise-tee", cmd="torchrun --standalone --nproc-per-node 4 --max-restarts 2 --tee 3 elastic_job.py --plan '0:badsave@2:4'",
   category="user.code_error", decisive_line="[rank2]: TypeError: cannot pickle 'generator' object", rank=2,
   collateral=["attempts 1 and 2: rank 2 'RuntimeError: PytorchStreamReader failed locating file data.pkl' loading its half-written shard_rank2.pt", "survivors: gloo 'Connection closed by peer'"],
   root_cause="In attempt 0 rank 2's torch.save of its shard state fails half-way (the state holds a generator), leaving a truncated shard_rank2.pt written in place; attempts 1 and 2 fail to resume from it.",
   fix="Do not put the live iterator in the saved state (save only its cursor), and write checkpoints atomically (temp file + os.replace).",
   induced_how="attempt 0: rank 2 adds its data generator to the dict passed to torch.save(shard_state, path) at step 4; no fault injected in later attempts",
   notes="The last attempts fail only because of the file attempt 0 left half-written, so the label is attempt 0's TypeError (rank 2), not the later PytorchStreamReader errors."),
 D(id="run48a-halfckpt-raise-logdir", cmd="USE_RECORD=1 torchrun --standalone --nproc-per-node 3 --max-restarts 1 --log-dir logs --redirects 3 elastic_job.py --plan '0:badsave@1:3'",
   category="user.code_error", decisive_line="[rank1]: TypeError: cannot pickle 'generator' object", decisive_file="attempt_0/1/stderr.log", rank=1,
   collateral=["attempt 1: rank 1 'PytorchStreamReader failed locating file data.pkl' (the console @record summary shows only this one)", "survivors: gloo 'Connection closed by peer'"],
   root_cause="In attempt 0 rank 1's torch.save of its shard state fails half-way (unpicklable generator), leaving a truncated shard_rank1.pt; attempt 1 fails to resume from it.",
   fix="Save only the data cursor and write checkpoints atomically (temp file + os.replace).",
   induced_how="attempt 0: rank 1 adds its data generator to the state passed to torch.save at step 3; --max-restarts 1, --log-dir --redirects 3, @record",
   notes="The console summary shows only the last attempt's PytorchStreamReader error; the cause is in ranks/attempt_0/1/stderr.log (earlier attempt's failure left the half-written file)."),
 D(id="run48a-stale-store-restart", cmd="TORCH_DISABLE_SHARE_RDZV_TCP_STORE=0 torchrun --standalone --nproc-per-node 4 --max-restarts 2 --tee 3 elastic_job.py --plan '*:raise@2:4'",
   category="user.code_error", decisive_line="[rank2]: ValueError: corrupt record 3 in shard data/train-00002.bin: expected 32 features, got 0", rank=2,
   collateral=["attempts 1 and 2: a rank fails in init_process_group with 'Gloo connectFullMesh failed ... Connection refused' to addresses of attempt 0's dead workers (torchrun's shared agent TCPStore is reused across restarts)"],
   root_cause="Rank 2 raises ValueError on a corrupt record in attempt 0; the restarts then cannot even form the gloo group because the reused agent store still holds attempt 0's worker addresses.",
   fix="Fix the corrupt record; for restarts to work with gloo on torch 2.13 set TORCH_DISABLE_SHARE_RDZV_TCP_STORE=1.",
   induced_how="rank 2 raises ValueError at step 4 (every attempt), --max-restarts 2, default shared agent store (the other cases of this round set TORCH_DISABLE_SHARE_RDZV_TCP_STORE=1)",
   notes="Later attempts fail only because of what attempt 0 left behind (stale gloo addresses in the shared store), (attempt 1: ranks 1/2 'Gloo connectFullMesh failed ... Connection refused'; attempt 2: only rank 3 prints, a 15 s recv timeout in all_reduce while the others stay silent), so the label is attempt 0's ValueError; confidence medium because the stale-store restart failure is a launcher problem of its own. Confirmed: same plan with TORCH_DISABLE_SHARE_RDZV_TCP_STORE=1 restarts cleanly (run48a-same-rank-raise-tee).",
   confidence="medium"),
]
extra = json.load(open("/tmp/h48a/pairs.json  ")) if os.path.exists("/tmp/h48a/pairs.json") else []
cases += extra
bad = 0
for c in cases:
    d = os.path.join(ST, c["id"])
    if not os.path.isdir(d):
        print("MISSING", c["id"]); bad += 1; continue
    lab = {"id": c["id"], "source": SRC.format(id=c["id"], cmd=c["cmd"]), "category": c["category"],
           "fatal": c.get("fatal", True), "decisive_line": c["decisive_line"], "also_acceptable": c.get("also_acceptable", []),
           "initiating_rank": c["rank"], "collateral": c["collateral"], "operator": None,
           "root_cause": c["root_cause"], "fix": c["fix"], "launcher": "torchrun", "framework": "plain",
           "torch_version": "2.13.0", "genuine": False, "induced_how": c["induced_how"], "confirmed_by": "induced",
           "confidence": c.get("confidence", "high"), "notes": c.get("notes", "")}
    if c.get("decisive_file"):
        lab["decisive_file"] = c["decisive_file"]
    # check decisive line and alternatives
    for s in [c["decisive_line"]] + c.get("also_acceptable", []):
        if s is None: continue
        f = os.path.join(d, "ranks", c["decisive_file"]) if c.get("decisive_file") and s == c["decisive_line"] else os.path.join(d, "log.txt")
        if not any(s in line for line in open(f, errors="replace")):
            print("NOT FOUND", c["id"], f, s); bad += 1
    json.dump(lab, open(os.path.join(d, "label.json"), "w"), indent=2)
    print("ok", c["id"], c["category"], c["rank"])
sys.exit(bad)
