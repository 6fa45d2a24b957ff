"""Write label.json for the round-2 cases produced by run_all.sh.

Labels come from what each run induced (see faults2.py / run_all.sh), not from diagnosing the log.
The parts of a decisive line that change between reruns (pids, Open MPI job ids, the store key a
rank waits on) are read back from log.txt with a regex; then every decisive_line / also_acceptable
substring is checked to occur in a line of log.txt (and of ranks/<decisive_file> where given).

Usage: python labels.py [POOL]   (default /work/main/tests/blind/pool2)
"""
import json
import os
import re
import sys

POOL = sys.argv[1] if len(sys.argv) > 1 else "/work/main/tests/blind/pool2"
GEN = "tests/corpus/generators/launchers/round2"
TR = "torchrun --nnodes 1 --nproc-per-node {n} --master-addr 127.0.0.1 --master-port P --tee 3 job_env.py"
MPI = "mpirun --allow-run-as-root --oversubscribe --tag-output -np 3 -x MASTER_ADDR=127.0.0.1 -x MASTER_PORT=P python job_env.py"
SPAWN = "python job_spawn.py --nprocs 3"

GLOO_PEER = "other ranks: gloo 'Connection closed by peer' / 'Connection reset by peer' RuntimeError"
SIGTERM = "torchrun SIGTERMs the remaining ranks (exitcode -15 in the failure summary)"
SPAWN_TERM = "mp.spawn terminates the other processes with SIGTERM"
MPI_ABORT = "mpirun aborts the job after the first non-zero exit"


def R(pattern):
    """A decisive substring read back from the log by regex (for pids / job ids)."""
    return ("re", pattern)


CASES = [
    dict(id="run-torchrun-restart-raise", launcher="torchrun",
         cmd="torchrun --nnodes 1 --nproc-per-node 4 --master-addr 127.0.0.1 --master-port P --max-restarts 1 "
             "--log-dir D --redirects 3 --tee 3 job_env.py --scenario restart-raise --fault-rank 2 --fault-step 2",
         category="user.code_error", fatal=True, rank=2, decisive_file="attempt_0/2/stderr.log",
         decisive="ValueError: shard 7 of epoch 0 has 0 samples after filtering (min_len=128, attempt 0)",
         collateral=["attempt 0: " + GLOO_PEER + "; torchrun SIGTERMs them and restarts the group",
                     "attempt 1 (restart): init_process_group fails on the restarted ranks with 'Gloo connectFullMesh "
                     "failed' (connection refused / closed by peer), so the ValueError is not reached again",
                     "torchrun's final 'Root Cause' names a rank of attempt 1 that failed in init_process_group"],
         root_cause="Rank 2 raised ValueError (an empty data shard) at step 2; torchrun restarted the group once "
                    "(--max-restarts 1), the restart failed while re-forming the gloo group, and the job stopped.",
         fix="Fix or filter the empty data shard 7 (lower min_len or skip empty shards); restarts cannot help a "
             "deterministic data error.",
         induced_how="rank 2 raises ValueError at step 2 on every attempt (TORCHELASTIC_RESTART_COUNT logged); "
                     "torchrun --max-restarts 1 --log-dir (per-rank tree copied to ranks/)"),
    dict(id="run-torchrun-restart-raise-early", launcher="torchrun",
         cmd="torchrun --nnodes 1 --nproc-per-node 3 --master-addr 127.0.0.1 --master-port P --max-restarts 1 "
             "--log-dir D --redirects 3 --tee 3 job_env.py --scenario restart-raise-early --fault-rank 1",
         category="user.code_error", fatal=True, rank=1, decisive_file="attempt_0/1/stderr.log",
         decisive="ValueError: shard 7 of epoch 0 has 0 samples after filtering (min_len=128, attempt 0)",
         also=["ValueError: shard 7 of epoch 0 has 0 samples after filtering (min_len=128, attempt 1)"],
         collateral=["the other ranks, blocked in init_process_group, are SIGTERMed on each attempt",
                     "torchrun restarts the group once (attempt_1) and the same ValueError repeats"],
         root_cause="Rank 1 raised ValueError (an empty data shard) while validating its data index, before "
                    "joining the process group, on both attempts; torchrun gave up after 1 restart.",
         fix="Fix or filter the empty data shard 7 (lower min_len or skip empty shards).",
         induced_how="rank 1 raises ValueError before init_process_group on every attempt; torchrun --max-restarts 1 "
                     "--log-dir (per-rank tree copied to ranks/)"),
    dict(id="run-torchrun-restart-recover", launcher="torchrun",
         cmd="torchrun --nnodes 1 --nproc-per-node 3 --master-addr 127.0.0.1 --master-port P --max-restarts 2 "
             "--tee 3 job_env.py --scenario restart-recover --fault-rank 1 --fault-step 2",
         category="user.code_error", fatal=False, rank=1,
         decisive="ValueError: shard 7 of epoch 0 has 0 samples after filtering (min_len=128, attempt 0)",
         collateral=["attempt 0: " + GLOO_PEER + "; torchrun SIGTERMs them and restarts the group",
                     "attempt 1 trains to the end ('training finished', exit 0)"],
         root_cause="Rank 1 raised ValueError at step 2 of attempt 0; torchrun (--max-restarts 2) restarted the "
                    "group and attempt 1 trained to the end.",
         fix="Fix or skip the empty data shard so the job does not depend on a restart (here the error was "
             "transient, only on attempt 0).",
         induced_how="rank 1 raises ValueError at step 2 only when TORCHELASTIC_RESTART_COUNT is 0; --max-restarts 2; "
                     "each attempt joins through its own PrefixStore namespace of the agent's store"),
    dict(id="run-torchrun-rdzv-timeout", launcher="torchrun",
         cmd="torchrun --nnodes 2 --nproc-per-node 2 --rdzv-backend c10d --rdzv-endpoint 127.0.0.1:P "
             "--rdzv-id job-7f3a --rdzv-conf join_timeout=20 job_env.py --scenario none (second node never started)",
         category="dist.peer_or_store_failure", fatal=True, rank=None,
         decisive="torch.distributed.elastic.rendezvous.api.RendezvousTimeoutError",
         collateral=[],
         root_cause="The c10d rendezvous needed 2 nodes (--nnodes 2) but only one agent ever joined, so it timed "
                    "out after join_timeout=20 s before any worker started.",
         fix="Start torchrun on every node with the same --rdzv-id/--rdzv-endpoint (or lower --nnodes / use "
             "--nnodes MIN:MAX), and check the other node can reach the endpoint.",
         induced_how="torchrun --nnodes 2 run on one node only, join_timeout=20"),
    dict(id="run-torchrun-rdzv-timeout-info", launcher="torchrun",
         cmd="LOGLEVEL=INFO torchrun --nnodes 2 --nproc-per-node 2 --rdzv-backend c10d --rdzv-endpoint 127.0.0.1:P "
             "--rdzv-id job-7f3a --rdzv-conf join_timeout=20 job_env.py --scenario none (second node never started)",
         category="dist.peer_or_store_failure", fatal=True, rank=None,
         decisive="torch.distributed.elastic.rendezvous.api.RendezvousTimeoutError",
         collateral=[],
         root_cause="The c10d rendezvous needed 2 nodes (min_nodes=max_nodes=2) but only one agent joined; it "
                    "timed out after join_timeout=20 s before any worker started.",
         fix="Start torchrun on every node with the same --rdzv-id/--rdzv-endpoint (or allow --nnodes 1:2).",
         induced_how="torchrun --nnodes 2 run on one node only, join_timeout=20, LOGLEVEL=INFO"),
    dict(id="run-torchrun-monitored-barrier", launcher="torchrun",
         cmd=TR.format(n=4) + " --scenario monitored-barrier --fault-rank 2 --barrier-timeout 10 --hang-seconds 60 "
                              "--pg-timeout 40",
         category="dist.collective_timeout", fatal=True, rank=2,
         decisive="[Rank 0]: Rank 2 failed to pass monitoredBarrier in 10000 ms",
         also=["[Rank 0]: Ranks 2 failed to pass monitoredBarrier in 10000 ms"],
         collateral=["ranks 1 and 3: 'successfully reached monitoredBarrier, but received errors while waiting for "
                     "send/recv from rank 0'", SIGTERM],
         root_cause="Rank 2 was stuck (sleeping in its checkpoint write) and never reached the end-of-epoch "
                    "monitored_barrier; rank 0 reported it after the 10 s barrier timeout.",
         fix="Find why rank 2 stalls (stack dump of that rank, e.g. py-spy; check its filesystem), or raise the "
             "barrier timeout if the checkpoint write is legitimately slow.",
         induced_how="rank 2 sleeps 60 s before dist.monitored_barrier(timeout=10 s, wait_all_ranks=True)"),
    dict(id="run-mpirun-monitored-barrier", launcher="mpirun",
         cmd=MPI + " --scenario monitored-barrier --fault-rank 1 --barrier-timeout 12 --hang-seconds 60 --pg-timeout 40",
         category="dist.collective_timeout", fatal=True, rank=1,
         decisive="[Rank 0]: Rank 1 failed to pass monitoredBarrier in 12000 ms",
         also=["[Rank 0]: Ranks 1 failed to pass monitoredBarrier in 12000 ms"],
         collateral=["rank 2: 'successfully reached monitoredBarrier, but received errors while waiting for "
                     "send/recv from rank 0'", MPI_ABORT + " (it names rank 2 as the first process to exit)"],
         root_cause="Rank 1 was stuck (sleeping in its checkpoint write) and never reached the monitored_barrier; "
                    "rank 0 reported it after the 12 s barrier timeout.",
         fix="Find why rank 1 stalls (stack dump of that rank; check its filesystem), or raise the barrier timeout.",
         induced_how="rank 1 sleeps 60 s before dist.monitored_barrier(timeout=12 s, wait_all_ranks=True)"),
    dict(id="run-mpspawn-worldsize", launcher="mp.spawn",
         cmd=SPAWN + " --scenario worldsize --world-size-override 4 --pg-timeout 20",
         category="dist.peer_or_store_failure", fatal=True, rank=None,
         decisive=R(r"DistStoreError: wait timeout after \d+ms, keys: \S+"),
         collateral=["c10d socket.cpp 'waitForInput ... timed out after 20000ms' warnings", SPAWN_TERM],
         root_cause="init_process_group was called with world_size=4 but mp.spawn started only 3 processes, so "
                    "the store waited for a 4th rank until the 20 s timeout.",
         fix="Pass the same number to mp.spawn(nprocs=...) and init_process_group(world_size=...).",
         induced_how="job_spawn.py --nprocs 3 with init_process_group(world_size=4)"),
    dict(id="run-torchrun-worldsize", launcher="torchrun",
         cmd=TR.format(n=3) + " --scenario worldsize --world-size-override 4 --pg-timeout 20",
         category="dist.peer_or_store_failure", fatal=True, rank=None,
         decisive=R(r"DistStoreError: wait timeout after \d+ms, keys: \S+"),
         collateral=["the same DistStoreError on every rank"],
         root_cause="init_process_group was called with world_size=4 while torchrun started 3 ranks, so every "
                    "rank waited for rank 3's store key until the 20 s timeout.",
         fix="Do not override world_size: use the WORLD_SIZE torchrun sets (or launch --nproc-per-node 4).",
         induced_how="torchrun --nproc-per-node 3, init_process_group(world_size=4)"),
    dict(id="run-torchrun-fsdp-raise", launcher="torchrun",
         cmd=TR.format(n=4) + " --scenario fsdp-raise --fault-rank 1",
         category="user.code_error", fatal=True, rank=1,
         decisive="RuntimeError: mat1 and mat2 shapes cannot be multiplied (8x15 and 16x32)",
         collateral=[GLOO_PEER + " in the FSDP collectives", SIGTERM],
         root_cause="Rank 1's batch at step 3 had 15 features instead of 16, so the first Linear of its "
                    "FSDP2 (fully_shard) model raised a shape error in forward.",
         fix="Fix rank 1's data pipeline so every sample has 16 features (validate feature dims when loading).",
         induced_how="FSDP2 fully_shard on a CPU DeviceMesh; rank 1 feeds an 8x15 batch at step 3"),
    dict(id="run-torchrun-dtensor-mixed", launcher="torchrun",
         cmd=TR.format(n=4) + " --scenario dtensor-mixed --fault-rank 2",
         category="user.code_error", fatal=True, rank=2,
         decisive="aten.add.Tensor got mixed torch.Tensor and DTensor",
         collateral=[GLOO_PEER, SIGTERM],
         root_cause="Rank 2 added a plain torch.Tensor bias to a DTensor activation at step 3; DTensor refuses "
                    "mixed torch.Tensor/DTensor operands.",
         fix="Make the bias a DTensor (distribute_tensor(bias, mesh, [Replicate()])) or add it to the local tensor.",
         induced_how="column-sharded DTensor weight on a CPU DeviceMesh; rank 2 does `h + bias` with a plain tensor"),
    dict(id="run-torchrun-dataloader-raise", launcher="torchrun",
         cmd=TR.format(n=3) + " --scenario dl-raise --fault-rank 1",
         category="user.code_error", fatal=True, rank=1,
         decisive="KeyError: 'label'",
         also=["KeyError: Caught KeyError in DataLoader worker process"],
         collateral=[GLOO_PEER, SIGTERM],
         root_cause="A record in rank 1's dataset lacks its 'label' key (typo 'lable'), so __getitem__ raised "
                    "KeyError inside a DataLoader worker and the main process re-raised it.",
         fix="Repair the corrupt record (or validate records when building the dataset).",
         induced_how="DataLoader(num_workers=2); rank 1's dataset returns a record with 'lable' for one index"),
    dict(id="run-mpspawn-dataloader-kill", launcher="mp.spawn",
         cmd=SPAWN + " --scenario dl-kill --fault-rank 2",
         category="mem.host_oom", fatal=True, rank=2,
         decisive=R(r"DataLoader worker \(pid \d+\) is killed by signal: Killed\."),
         collateral=[SPAWN_TERM],
         root_cause="A DataLoader worker of rank 2 was SIGKILLed (as the OOM killer would), so rank 2's loader "
                    "raised and mp.spawn stopped the job.",
         fix="Check dmesg/the memory limit for the OOM kill; reduce per-worker memory (fewer workers, smaller "
             "prefetch_factor, no large objects copied into workers) or raise the limit.",
         induced_how="DataLoader(num_workers=2); rank 2's __getitem__ calls os.kill(os.getpid(), SIGKILL) in the worker"),
    dict(id="run-torchrun-dataloader-kill", launcher="torchrun",
         cmd=TR.format(n=4) + " --scenario dl-kill --fault-rank 3",
         category="mem.host_oom", fatal=True, rank=3,
         decisive=R(r"DataLoader worker \(pid \d+\) is killed by signal: Killed\."),
         collateral=[GLOO_PEER, SIGTERM],
         root_cause="A DataLoader worker of rank 3 was SIGKILLed (as the OOM killer would), so rank 3's loader "
                    "raised and the job stopped.",
         fix="Check dmesg/the memory limit for the OOM kill; reduce per-worker memory or raise the limit.",
         induced_how="DataLoader(num_workers=2); rank 3's __getitem__ calls os.kill(os.getpid(), SIGKILL) in the worker"),
    dict(id="run-torchrun-anomaly-nan", launcher="torchrun",
         cmd=TR.format(n=4) + " --scenario anomaly-nan --fault-rank 3",
         category="user.code_error", fatal=True, rank=3,
         decisive="RuntimeError: Function 'SqrtBackward0' returned nan values in its 0th output.",
         also=["UserWarning: Error detected in SqrtBackward0."],
         collateral=[GLOO_PEER, SIGTERM],
         root_cause="Two samples of rank 3's batch carried the sentinel -1 in a feature the model feeds to "
                    "where(d > 0, sqrt(d), 0); sqrt's backward produced NaN, which anomaly mode turned into an error.",
         fix="Clean the -1 sentinels from the data and compute sqrt on a clamped input (sqrt(d.clamp_min(eps))) "
             "so the masked branch has a finite gradient.",
         induced_how="set_detect_anomaly(True) on all ranks; rank 3's batch at step 3 has x[6:, 0] = -1"),
    dict(id="run-torchrun-compile-cpperror", launcher="torchrun",
         cmd=TR.format(n=3) + " --scenario compile-cpperror --fault-rank 2",
         category="compile.cpp_compile_error", fatal=True, rank=2,
         decisive="error: ‘omp_get_thread_num’ was not declared in this scope",
         also=["torch._inductor.exc.InductorError: CppCompileError: C++ compile error"],
         collateral=[GLOO_PEER, SIGTERM],
         root_cause="On rank 2 g++ failed on the Inductor-generated C++ kernel ('omp_get_thread_num' undeclared) "
                    "because a stale, empty omp.h on CPATH shadowed the compiler's OpenMP header.",
         fix="Remove the stale omp.h / fix CPATH on that node so the compiler's own omp.h is used, then clear the "
             "Inductor cache.",
         induced_how="rank 2 sets CPATH to a dir holding an empty omp.h before torch.compile (per-rank Inductor cache)"),
    dict(id="run-torchrun-compile-graphbreak", launcher="torchrun",
         cmd="TORCH_LOGS=graph_breaks " + TR.format(n=3) + " --scenario compile-graphbreak --fault-rank 1",
         category="compile.graph_break_data_dependent", fatal=False, rank=1,
         decisive="Graph break from `Tensor.item()`, consider setting:",
         also=["Unsupported Tensor.item() call with capture_scalar_outputs=False",
               "Explanation: Dynamo does not support tracing `Tensor.item()` with config.capture_scalar_outputs=False."],
         collateral=[],
         root_cause="Rank 1's model computes a debug statistic with .item() in forward, so Dynamo graph-breaks "
                    "there (logged via TORCH_LOGS=graph_breaks); training continues and finishes.",
         fix="Drop the .item() from forward (log the statistic outside the compiled region) or set "
             "torch._dynamo.config.capture_scalar_outputs = True.",
         induced_how="torch.compile (not fullgraph) on all ranks; only rank 1's forward calls .item()"),
    dict(id="run-mpirun-compile-unsupported", launcher="mpirun",
         cmd=MPI + " --scenario compile-unsupported --fault-rank 2",
         category="compile.dynamo_unsupported", fatal=True, rank=2,
         decisive="Explanation: Dynamo does not know how to trace the builtin `_hashlib.openssl_md5.`",
         also=["torch._dynamo.exc.Unsupported: Attempted to call function marked as skipped"],
         collateral=[GLOO_PEER, MPI_ABORT],
         root_cause="Rank 2's forward calls hashlib.md5 (a C builtin Dynamo cannot trace) under "
                    "torch.compile(fullgraph=True), so compilation raised Unsupported.",
         fix="Move the hashing out of forward (or wrap it with torch.compiler.disable) or drop fullgraph=True.",
         induced_how="torch.compile(fullgraph=True) on all ranks; only rank 2's forward hashes its config"),
    dict(id="run-torchrun-compile-recompiles", launcher="torchrun",
         cmd="TORCH_LOGS=recompiles " + TR.format(n=3) + " --scenario compile-recompiles",
         category="none", fatal=False, rank=None, decisive=None,
         collateral=["each rank logs one recompile (tensor 'x' size mismatch 8 -> 9), then trains to the end"],
         root_cause="Healthy run: a batch size change triggers one (automatic-dynamic) recompile per rank, shown "
                    "by TORCH_LOGS=recompiles; nothing failed.",
         fix="None needed.",
         induced_how="batch sizes 8 then 8/9 alternating, TORCH_LOGS=recompiles; nothing induced"),
    dict(id="run-torchrun-compile-recompile-limit", launcher="torchrun",
         cmd=TR.format(n=3) + " --scenario compile-recompile-limit --fault-rank 1",
         category="compile.recompile_limit", fatal=False, rank=1,
         decisive="torch._dynamo hit config.recompile_limit (3)",
         collateral=[],
         root_cause="Rank 1 compiled with dynamic=False and recompile_limit=3 while its batch size changed every "
                    "step, so Dynamo hit the recompile limit and fell back to eager; training finished.",
         fix="Keep batch shapes fixed (drop_last / padding) or allow dynamic shapes (dynamic=None/True).",
         induced_how="rank 1: torch._dynamo.config.recompile_limit = 3, dynamic=False, batch size 8+step from step 3"),
    # Not induced: this log came from `run_all.sh` running run-torchrun-compile-recompile-limit once; that
    # time rank 2 (a healthy rank) aborted at interpreter exit after training had finished. Kept as found.
    dict(id="run-torchrun-teardown-abort", run_id="run-torchrun-compile-recompile-limit", launcher="torchrun", genuine=True, confirmed_by="log text",
         cmd=TR.format(n=3) + " --scenario compile-recompile-limit --fault-rank 1; observed once, not reproducible "
                              "on demand",
         category="dist.teardown_abort", fatal=True, rank=2,
         decisive="terminate called without an active exception",
         also=["failed (exitcode: -6) local_rank: 2"],
         collateral=["rank 1: non-fatal 'torch._dynamo hit config.recompile_limit (3)' warning earlier",
                     "torchrun SIGTERMs ranks 0 and 1 after rank 2's exit -6 (SIGABRT)"],
         root_cause="After 'training finished' rank 2 aborted at process exit (std::terminate: 'terminate called "
                    "without an active exception', SIGABRT) while gloo threads were being torn down, so torchrun "
                    "reported the job as failed.",
         fix="Make sure destroy_process_group() completes on every rank before exit (and no collective or "
             "background thread is still running); the training work itself completed.",
         induced_how="not induced: seen once when rerunning the recompile-limit case (a healthy rank aborted at "
                     "shutdown)"),
    dict(id="run-torchrun-logadapter-raise", launcher="torchrun",
         cmd="torchrun --nnodes 1 --nproc-per-node 4 --master-addr 127.0.0.1 --master-port P job_env.py "
             "--scenario logadapter-raise --fault-rank 2",
         category="user.code_error", fatal=True, rank=2,
         decisive="FileNotFoundError: [Errno 2] No such file or directory: '/home/user/job/data/shard-00002.pt'",
         collateral=[GLOO_PEER, SIGTERM],
         root_cause="Rank 2 tried to load its data shard /home/user/job/data/shard-00002.pt, which does not exist.",
         fix="Create/stage the missing shard (or fix the data path) before launching.",
         induced_how="rank 2 torch.load()s a shard file that does not exist at step 3; logging via a LoggerAdapter "
                     "with rank=%(rank)s in the format; torchrun without --tee"),
    dict(id="run-torchrun-healthy-chatty", launcher="torchrun",
         cmd=TR.format(n=4) + " --scenario chatty",
         category="none", fatal=False, rank=None, decisive=None,
         collateral=["benign UserWarnings on every rank: lr_scheduler.step() before optimizer.step(), "
                     "torch.tensor(tensor) copy-construct"],
         root_cause="Healthy run: 4 ranks log every step and finish; only benign warnings.",
         fix="None needed.", induced_how="nothing induced (benign warnings on purpose)"),
    dict(id="run-lightning-healthy-progressbar", launcher="python", framework="lightning",
         cmd="python pl_progress.py (Trainer devices=3, strategy DDP gloo, TQDM progress bar)",
         category="none", fatal=False, rank=None, decisive=None,
         collateral=["Lightning's LeafSpec deprecation message per rank (benign)"],
         root_cause="Healthy Lightning run with the default progress bar: 2 epochs with validation, finished.",
         fix="None needed.", induced_how="nothing induced"),
    dict(id="run-torchrun-segfault", launcher="torchrun",
         cmd=TR.format(n=4) + " --scenario segfault --fault-rank 1",
         category="user.code_error", fatal=True, rank=1,
         decisive="failed (exitcode: -11) local_rank: 1",
         also=[R(r"exitcode  : -11 \(pid: \d+\)  \(SIGSEGV\)")],
         collateral=[SIGTERM, GLOO_PEER],
         root_cause="Rank 1 segfaulted (SIGSEGV, no traceback) in its own ctypes call reading address 0.",
         fix="Fix the native/ctypes code on that path (a NULL pointer dereference); run with PYTHONFAULTHANDLER=1 "
             "to get the Python stack of the crash.",
         induced_how="rank 1 calls ctypes.string_at(0) at step 3"),
    dict(id="run-mpspawn-segfault-faulthandler", launcher="mp.spawn",
         cmd="PYTHONFAULTHANDLER=1 " + SPAWN + " --scenario segfault --fault-rank 2",
         category="user.code_error", fatal=True, rank=2,
         decisive="process 2 terminated with signal SIGSEGV",
         also=["Fatal Python error: Segmentation fault"],
         collateral=[SPAWN_TERM],
         root_cause="Rank 2 segfaulted in its own ctypes call reading address 0 (faulthandler printed the stack).",
         fix="Fix the native/ctypes code on that path (a NULL pointer dereference).",
         induced_how="rank 2 calls ctypes.string_at(0) at step 3; PYTHONFAULTHANDLER=1"),
    dict(id="run-torchrun-sysexit", launcher="torchrun",
         cmd=TR.format(n=4) + " --scenario sysexit --fault-rank 2",
         category="user.code_error", fatal=True, rank=2,
         decisive="failed (exitcode: 3) local_rank: 2",
         also=[R(r"exitcode  : 3 \(pid: \d+\)")],
         collateral=[GLOO_PEER, SIGTERM],
         root_cause="Rank 2's own code called sys.exit(3) at step 3 (no traceback); the others lost their peer.",
         fix="Find the code path in the training script that exits with status 3 on that rank and handle its condition.",
         induced_how="rank 2 calls sys.exit(3) at step 3"),
    dict(id="run-mpirun-sysexit", launcher="mpirun",
         cmd=MPI + " --scenario sysexit --fault-rank 1",
         category="user.code_error", fatal=True, rank=1,
         decisive="Exit code:    3",
         also=[R(r"Process name: \[\[\d+,1\],1\]")],
         collateral=[GLOO_PEER, MPI_ABORT],
         root_cause="Rank 1's own code called sys.exit(3) at step 3 (no traceback); mpirun aborted the job.",
         fix="Find the code path in the training script that exits with status 3 on that rank and handle its condition.",
         induced_how="rank 1 calls sys.exit(3) at step 3"),
]


def resolve(spec, text):
    if isinstance(spec, tuple):
        m = re.search(spec[1], text)
        if not m:
            raise SystemExit(f"pattern {spec[1]!r} not found")
        return m.group(0)
    return spec


def check(sub, text, where):
    if not any(sub in line for line in text.splitlines()):
        raise SystemExit(f"{where}: {sub!r} is not a substring of any line")


def main():
    n = 0
    for c in CASES:
        d = os.path.join(POOL, c["id"])
        log_path = os.path.join(d, "log.txt")
        if not os.path.exists(log_path):
            print("skip (no log):", c["id"])
            continue
        text = open(log_path, encoding="utf-8", errors="replace").read()
        decisive = resolve(c["decisive"], text) if c["decisive"] is not None else None
        also = [resolve(a, text) for a in c.get("also", [])]
        for s in ([decisive] if decisive else []) + also:
            check(s, text, c["id"] + "/log.txt")
        label = {
            "id": c["id"],
            "source": f"real run: {GEN}/run_all.sh {c.get('run_id', c['id'])} ({c['cmd']}), torch 2.13.0 CPU, gloo",
            "category": c["category"], "fatal": c["fatal"], "decisive_line": decisive,
            "also_acceptable": also, "initiating_rank": c["rank"], "collateral": c["collateral"],
            "operator": None, "root_cause": c["root_cause"], "fix": c["fix"], "launcher": c["launcher"],
            "framework": c.get("framework", "plain"), "torch_version": "2.13.0", "genuine": c.get("genuine", False),
            "induced_how": c["induced_how"], "confirmed_by": c.get("confirmed_by", "induced"), "confidence": c.get("confidence", "high"),
        }
        if c.get("decisive_file"):
            rp = os.path.join(d, "ranks", c["decisive_file"])
            check(decisive, open(rp, encoding="utf-8", errors="replace").read(), rp)
            label["decisive_file"] = c["decisive_file"]
        with open(os.path.join(d, "label.json"), "w", encoding="utf-8") as f:
            json.dump(label, f, indent=2, ensure_ascii=False)
            f.write("\n")
        n += 1
    print(f"wrote {n} labels")


if __name__ == "__main__":
    main()
