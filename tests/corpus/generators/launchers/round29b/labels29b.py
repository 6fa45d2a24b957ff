# Label entries for round 29b (read by mk_label.py). Written after reading each log of a full pass; decisive lines are
# exact substrings of one log line; *_re entries are filled from the log (pids and ports differ per run).
CFE = "torchrun ChildFailedError summary (other ranks exitcode -15 SIGTERM)"
GLOO = "gloo 'Connection closed by peer' / 'Connection reset by peer' RuntimeError on the other ranks"
DEPR = "torch.distributed.launch FutureWarning: the module is deprecated, use torchrun (harmless)"
ABRT = ("sometimes 'terminate called without an active exception' at interpreter exit of a rank (exit -6 SIGABRT "
        "instead of 1): a torch 2.13 gloo shutdown abort, not the cause")
C = {}
_healthy = dict(category="none", rank=None, decisive=None,
                fix="Nothing to fix: the job completed on all ranks and the launcher exited 0.")
C["run29b-launch-healthy"] = dict(_healthy, collateral=[DEPR],
    root_cause="Healthy run: the deprecated torch.distributed.launch --use-env starts 3 gloo ranks that train 6 steps and finish; the FutureWarning about the deprecated launcher is harmless.",
    how="python -m torch.distributed.launch --nproc_per_node 3 --use-env train29.py --what healthy")
C["run29b-standalone-healthy"] = dict(_healthy, collateral=["OMP_NUM_THREADS banner (harmless)"],
    root_cause="Healthy run: python -m torch.distributed.run --standalone starts 3 gloo ranks that train 6 steps and finish.",
    how="python -m torch.distributed.run --standalone --nproc-per-node 3 train29.py --what healthy")

C["run29b-standalone-teardown-abort"] = dict(category="dist.teardown_abort", rank_re=r"failed \(exitcode: -6\) local_rank: (\d+)",
    rank_unique_re=r"exitcode  : -6 ",
    decisive="terminate called without an active exception",
    also_re=[r"failed \(exitcode: -6\) local_rank: \d+ \(pid: \d+\)"],
    collateral=["every rank logged 'training complete' first", "torch.distributed.run SIGTERMs the other ranks (-15)", CFE],
    root_cause="After all ranks finished training and called destroy_process_group(), one rank aborted at interpreter exit (C++ 'terminate called without an active exception', SIGABRT, exit -6), so the launcher reported a failed job although the work was done.",
    fix="The training work completed: treat it as a shutdown abort (a torch/gloo teardown race); make sure no collective or background thread is alive at exit, or upgrade torch; the results are usable.",
    notes="initiating_rank is the aborting rank when only one rank aborted, null when several did (the 'terminate called' lines carry no rank).",
    how="python -m torch.distributed.run --standalone --nproc-per-node 3 train29.py --what healthy, rerun until it exits non-zero (NOT induced: intermittent, the 3rd run in one pass and the 8th in another on this 2-core host)",
    genuine=True, confirmed_by="reproduced", confidence="medium")

C["run29b-launch-raise"] = dict(category="user.code_error", rank=1,
    decisive="[rank1]: KeyError: 'label'",
    collateral=[DEPR, GLOO, ABRT, "torch.distributed.launch ChildFailedError summary; it names rank 1 as root cause"],
    root_cause="Rank 1's data loading returned a record without the 'label' key at step 3 (KeyError); the other ranks lost their gloo peer and the launcher stopped the job.",
    fix="Validate the records of the data source (every record needs 'label') or skip/repair bad records in the loader.",
    how="python -m torch.distributed.launch --nproc_per_node 3 --use-env train29.py --what raise --bad-rank 1 --k 3")
C["run29b-launch-localrank-argparse"] = dict(category="user.code_error", rank=None,
    decisive="train29.py: error: unrecognized arguments: --local-rank=0",
    also=["train29.py: error: unrecognized arguments: --local-rank=1", "train29.py: error: unrecognized arguments: --local-rank=2"],
    collateral=[DEPR + "; it says --use-env is the default in torchrun and that scripts expecting --local-rank should read LOCAL_RANK",
                "argparse usage text on every rank", "all ranks exit 2 before init_process_group; summary: exitcode 2 on every rank, error_file <N/A>"],
    root_cause="Launched with torch.distributed.launch without --use-env, so the launcher appended --local-rank=N to every rank's command line; the script's argparse only knows the old --local_rank spelling and every rank exited with an argparse error (exit 2) before training.",
    fix="Read the local rank from os.environ['LOCAL_RANK'] (torchrun / launch --use-env), or accept both --local-rank and --local_rank in argparse.",
    how="python -m torch.distributed.launch --nproc_per_node 3 train29.py --argstyle old (argparse has only --local_rank)")
C["run29b-launch-localrank-osexit"] = dict(category="user.code_error", rank=2,
    decisive_re=r"failed \(exitcode: 1\) local_rank: 2 \(pid: \d+\)",
    also=["  rank      : 2 (local_rank: 2)"],
    collateral=[DEPR, GLOO + " (ranks 1 and 3 print tracebacks, rank 0 is SIGTERMed)", "summary: rank 2 exitcode 1, error_file <N/A>, no traceback"],
    root_cause="Rank 2 called os._exit(1) after step 2 (no traceback, no Python cleanup); its peers lost the gloo connection and the launcher stopped the job, naming rank 2 (exit code 1) as the first failure.",
    fix="Find why rank 2 exits (an os._exit(1) in its code path, after step 2) and raise an exception there instead so the cause is logged.",
    how="python -m torch.distributed.launch --nproc_per_node 4 train29.py --argstyle both --what osexit --bad-rank 2 --k 2 (no --use-env: the script takes --local-rank=N, world size 4)")

C["run29b-torchrun-restarts-same-rank"] = dict(category="user.code_error", rank=2,
    decisive="[rank2]: KeyError: 'label'",
    collateral=[GLOO, "torchrun restarts the worker group twice (--max-restarts 2, attempts 0-2): rank 2 raises the same KeyError each time",
                "after the last attempt: ChildFailedError summary naming rank 2", ABRT],
    root_cause="Rank 2's data loading returned a record without 'label' at step 2 in every attempt (deterministic data bug), so torchrun's 2 restarts were exhausted and the job failed.",
    fix="Fix the data (records need 'label') or the loader; restarts cannot help a deterministic error.",
    how="torchrun --nnodes 1 --rdzv-backend c10d --max-restarts 2 --nproc-per-node 3 train29.py --what raise --bad-rank 2 --k 2")
C["run29b-torchrun-restarts-diff-rank"] = dict(category="user.code_error", rank=2,
    decisive="[rank2]: ValueError: corrupt shard index 1002 on rank 2: expected < 1000",
    also=["[rank1]: KeyError: 'label'"],
    collateral=[GLOO, "attempts 0 and 1: rank 1 KeyError 'label'; attempt 2 (last): rank 2 ValueError",
                "the final ChildFailedError summary names rank 2 (the last attempt)", ABRT],
    root_cause="The job failed in each of 3 attempts (--max-restarts 2): rank 1 with KeyError 'label' in attempts 0 and 1, rank 2 with a ValueError (corrupt shard index) in the last attempt, which is the failure torchrun reports when restarts are exhausted.",
    fix="Fix the data shards (rank 1's record without 'label', rank 2's out-of-range shard index) rather than relying on restarts.",
    how="torchrun --nnodes 1 --rdzv-backend c10d --max-restarts 2 --nproc-per-node 3 train29.py --what raise-attempt --bad-rank 1 --last-bad-rank 2 --last-attempt 2 --k 2",
    notes="The initiating rank is that of the last attempt (2), whose failure ends the job and is named by torchrun's summary; the first attempt's KeyError on rank 1 is also acceptable as the decisive line.")

C["run29b-torchrun-record-logdir"] = dict(category="user.code_error", rank=1,
    decisive="[rank1]: KeyError: 'label'",
    also=["  KeyError: 'label'"],
    collateral=[GLOO, "@record writes error.json for every rank (ranks/<run-id>/attempt_0/<rank>/error.json); the summary shows each rank's traceback",
                "'no error file defined for parent, to copy child error file' (torchrun has no TORCHELASTIC_ERROR_FILE itself)"],
    root_cause="Rank 1's data loading returned a record without 'label' at step 3 (KeyError); main is wrapped in @record, so the error file carries the traceback and torchrun's summary names rank 1 with it.",
    fix="Validate the records (every record needs 'label') or skip bad ones in the loader.",
    how="torchrun --nproc-per-node 3 --log-dir logs_... train29.py --record --what raise --bad-rank 1 --k 3 (main wrapped with torch.distributed.elastic.multiprocessing.errors.record)")
C["run29b-torchrun-norecord"] = dict(category="user.code_error", rank=1,
    decisive="[rank1]: KeyError: 'label'",
    collateral=[GLOO, "summary: rank 1 exitcode 1, error_file: <N/A>, 'To enable traceback see ...' (no @record)"],
    root_cause="Rank 1's data loading returned a record without 'label' at step 3 (KeyError); without @record torchrun's summary has no traceback (error_file <N/A>), the KeyError is only in rank 1's console output.",
    fix="Validate the records (every record needs 'label'); wrap main with @record to get the traceback into torchrun's summary.",
    how="torchrun --nproc-per-node 3 train29.py --what raise --bad-rank 1 --k 3 (no @record)")
C["run29b-torchrun-sysexit3"] = dict(category="user.code_error", rank=2,
    decisive_re=r"failed \(exitcode: 3\) local_rank: 2 \(pid: \d+\)",
    also=["INFO [train] rank 2: shard list exhausted, stopping", "  exitcode  : 3 (pid: "],
    collateral=[GLOO, CFE + "; rank 2 exitcode 3, no traceback"],
    root_cause="Rank 2 decided its shard list was exhausted after step 2 and called sys.exit(3) while the other ranks kept training; no traceback, torchrun reports exit code 3 on rank 2 and the others lose their gloo peer.",
    fix="Give every rank the same number of steps (balanced shards, or drop_last / a shared step count) instead of exiting one rank early with sys.exit.",
    how="torchrun --nproc-per-node 4 train29.py --what sysexit --bad-rank 2 --k 2 (sys.exit(3) after step 2)")
C["run29b-torchrun-osexit"] = dict(category="user.code_error", rank=1,
    decisive_re=r"failed \(exitcode: 1\) local_rank: 1 \(pid: \d+\)",
    collateral=[GLOO, CFE + "; rank 1 exitcode 1, error_file <N/A>, no traceback"],
    root_cause="Rank 1 called os._exit(1) after step 3, with no traceback and no Python cleanup; its peers lost the gloo connection and torchrun named rank 1 (exit code 1) as the first failure.",
    fix="Find the os._exit(1) in rank 1's code path (after step 3) and raise an exception there instead so the cause is logged.",
    how="torchrun --nproc-per-node 3 train29.py --what osexit --bad-rank 1 --k 3")
C["run29b-torchrun-early-exit"] = dict(category="dist.peer_or_store_failure", rank=2,
    decisive="INFO [train] rank 2: reached its own step budget, leaving the training loop",
    also_re=[r"\[rank0\]: RuntimeError: \[[^\]]*\] Connection closed by peer \[127\.0\.0\.1\]:\d+"],
    collateral=["ranks 0 and 1: gloo 'Connection closed by peer' in the next all_reduce",
                "rank 2 exits 0 and is not in torchrun's summary; the summary's 'Root Cause' names rank 0, a victim"],
    root_cause="Rank 2 left the training loop after step 2 and exited 0 while ranks 0 and 1 went on; their next all_reduce lost the peer (gloo 'Connection closed by peer'), so the job failed. torchrun's summary blames rank 0, a victim.",
    fix="Run the same number of steps (and collectives) on every rank: a shared step budget, or an all_reduce'd stop flag, and destroy_process_group() on all ranks together.",
    how="torchrun --nproc-per-node 3 --monitor-interval 0.1 train29.py --what early-exit --bad-rank 2 --k 2 --steps 8",
    notes="No single category names 'a rank left early'; dist.peer_or_store_failure (a peer vanished from the collective) is what the log shows, initiating rank 2 (the rank that left).")

C["run29b-torchrun-sigint-rank"] = dict(category="user.code_error", rank=1,
    decisive="[rank1]: KeyboardInterrupt",
    also_re=[r"failed \(exitcode: -2\) local_rank: 1 \(pid: \d+\)"],
    collateral=["the other ranks may print gloo 'Connection closed by peer' before torchrun SIGTERMs them", CFE + "; rank 1 exitcode -2 (SIGINT)"],
    root_cause="Rank 1 received SIGINT mid-training (KeyboardInterrupt traceback, exit -2); its peers lost the gloo connection and torchrun stopped the job, naming rank 1 (SIGINT) as the first failure.",
    fix="Nothing in the training code: someone or something sent SIGINT (Ctrl-C) to rank 1's process; do not signal single ranks, stop the job through the launcher.",
    how="torchrun --nproc-per-node 3 train29.py --what wait-signal; run_all.sh sends kill -INT to rank 1's pid once rank 1 logged step 4",
    notes="Category: no category for an interrupt; user.code_error is the closest (the KeyboardInterrupt traceback on rank 1 is the job's own Python exception), rank 1.")
C["run29b-torchrun-agent-sigterm"] = dict(category="dist.peer_or_store_failure", rank=None,
    decisive_re=r"torch\.distributed\.elastic\.multiprocessing\.api\.SignalException: Process \d+ got signal: 15",
    also=["Received 15 death signal, shutting down workers"],
    collateral=["the agent SIGTERMs every worker ('Sending process N closing signal SIGTERM')", "no worker traceback, no ChildFailedError summary"],
    root_cause="The torchrun agent itself received SIGTERM mid-training (from outside: a scheduler, preemption or an operator); it shut down all workers and exited with SignalException. No rank failed.",
    fix="Find who sent SIGTERM to the launcher (scheduler preemption, job time limit, an operator) and resubmit / resume from a checkpoint; the training code is not at fault.",
    how="torchrun --nproc-per-node 3 train29.py --what wait-signal; run_all.sh sends kill -TERM to the torchrun agent's pid once rank 2 logged step 4",
    notes="Category: no category for an external termination of the launcher; dist.peer_or_store_failure is the nearest (the failure is in torchelastic's agent/launcher layer, not in any rank's code: user.code_error would blame the script, mem.host_oom would claim a memory kill). initiating_rank null: no rank started it.",
    confidence="medium")
C["run29b-elastic-node-lost"] = dict(category="dist.peer_or_store_failure", rank=None,
    decisive_re=r"\[rank\d\]: RuntimeError: \[[^\]]*\] (Connection closed by peer|Read error)[^\n]*?(crashing|hanging)",
    collateral=["agent B (started 8 s after A, inside the 30 s last-call window) joins the first rendezvous: world size 4, ranks 0-1 on agent A",
                "both of A's ranks: gloo 'Connection closed by peer' once B's ranks 2-3 are gone",
                "torchrun ChildFailedError summary on agent A (--max-restarts 0); its 'Root Cause' names rank 1, a victim"],
    root_cause="A second node (agent B, ranks 2-3) joined the elastic job (--nnodes 1:2) and was then lost (agent and workers SIGKILLed); ranks 0-1 on agent A lost their gloo peers and, with --max-restarts 0, agent A failed the job.",
    fix="Find why the second node died (its agent and workers were killed); allow restarts (--max-restarts > 0) so the elastic job re-rendezvouses with the remaining node.",
    how="agent A: torchrun --nnodes 1:2 --nproc-per-node 2 --rdzv-backend c10d --rdzv-conf last_call_timeout=30 --max-restarts 0 train29.py --what elastic; agent B (same command, same host) started 8 s after A, both rendezvous together (world size 4); agent B and its 2 workers SIGKILLed 5 s after its workers started; log.txt is agent A's output",
    notes="initiating_rank null: the lost ranks (2 and 3, on agent B) are not in this log; the decisive line is the first gloo peer-lost error on agent A's ranks.",
    launcher="elastic", confidence="medium")
C["run29b-elastic-rejoin-store-timeout"] = dict(category="dist.peer_or_store_failure", rank=None,
    decisive_re=r"torch\.distributed\.DistStoreError: wait timeout after \d+ms, keys: [^\n]*role_info[^\n]*",
    also_re=[r"\[c10d\] waitForInput: socket SocketImpl\([^\n]*timed out after \d+ms"],
    collateral=["agent A trained alone with world size 2 and SIGTERMed its workers for the membership change ('Sending process N closing signal SIGTERM')",
                "agent B (same host) printed only its banner; its workers never started (its log is not part of the case)"],
    root_cause="When a second agent joined the running elastic job (--nnodes 1:2), agent A stopped its workers to re-rendezvous, but the new round never completed: A waited 60 s for the agents' role_info keys in the rendezvous store and died with DistStoreError; no worker failed.",
    fix="Check the rendezvous store and the joining node (agent B hung before writing its role info); raise the rendezvous/store timeouts or restart the job with a fixed node count.",
    how="agent A: torchrun --nnodes 1:2 --nproc-per-node 2 --rdzv-backend c10d --rdzv-conf last_call_timeout=2 --max-restarts 0 train29.py --what elastic; agent B started 12 s later on the same host (NOT induced: meant as a membership-change case; B is SIGKILLed after A exits)",
    launcher="elastic", genuine=True, confirmed_by="reproduced", confidence="medium")
