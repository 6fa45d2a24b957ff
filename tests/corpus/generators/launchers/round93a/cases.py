"""Round 93a case table and runner: Ignite (own spawner and torchrun), torch.distributed.rpc, DCP.

  python cases.py run  [ID ...]   # run the cases (all if none given) into $OUT/<id>/log.txt (+ ranks/)
  python cases.py label [ID ...]  # write $OUT/<id>/label.json from each log (decisive line found by regex)
  python cases.py list

Environment: VENV (virtualenv with torch 2.13.0+cpu and pytorch-ignite), WORK (job dir the scripts are copied
to and run from), OUT (where the case folders go). Paths are rewritten afterwards: $VENV -> /opt/venv,
$WORK -> /home/user/job (nothing else).
"""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
VENV = os.environ.get("VENV", "/work/h93/venv")
WORK = os.environ.get("WORK", "/work/h93/work")
OUT = os.environ.get("OUT", "/work/h93/out")
CG_ROOT = "/sys/fs/cgroup/memory"
SCRIPTS = ["common.py", "ignite_job.py", "rpc_job.py", "dcp_job.py"]

# --------------------------------------------------------------------------------------------------------------
# regex helpers for decisive lines (matched per line; the match itself becomes decisive_line)
TR_EXIT9 = r"failed \(exitcode: -9\) local_rank: {r} \(pid: \d+\)"
SPAWN_KILL = r"process {r} terminated with signal SIGKILL"
GLOO_TIMEOUT = r"\[rank{w}\]:? .*Timed out waiting \d+ms for .*"

C = []


def case(id, launcher, framework, scenario, job, n, rank, step, category, decisive, root_cause, fix, induced_how,
         also=(), collateral=(), env=None, logdir=False, timeout=240, hostoom=False, fatal=True):
    C.append(dict(id=id, launcher=launcher, framework=framework, scenario=scenario, job=job, n=n, rank=rank,
                  step=step, category=category, decisive=decisive, also=list(also), collateral=list(collateral),
                  root_cause=root_cause, fix=fix, induced_how=induced_how, env=env or {}, logdir=logdir,
                  timeout=timeout, hostoom=hostoom, fatal=fatal))


# ---------------------------------------------------------------- Ignite, Ignite's own spawner (idist.Parallel)
case("run93-ignite-healthy", "ignite", "ignite", "healthy", "ignite", 3, None, None, "none", None,
     "Healthy run: 2 epochs on 3 ranks spawned by ignite.distributed.Parallel, all processes exit 0.",
     "Nothing to fix.", "nothing induced (SCENARIO=healthy)", fatal=False)
case("run93-ignite-raise", "ignite", "ignite", "raise", "ignite", 3, 1, 3, "user.code_error",
     r"\[rank1\] ERROR ignite\.engine\.engine\.Engine: Current run is terminating due to exception: 'horse'",
     "Rank 1's Ignite process function raised KeyError 'horse' (a label missing from the class map) at "
     "iteration 3; the other ranks then lost their gloo peer.",
     "Fix the label map / data shard of rank 1 so every label is known (or map unknown labels explicitly).",
     "SCENARIO=raise FAIL_RANK=1 FAIL_STEP=3: the process function looks up an unknown label on rank 1",
     also=[r"\[rank1\] ERROR ignite\.engine\.engine\.Engine: Engine run is terminating due to exception: 'horse'",
           r"^KeyError: 'horse'"],  # the spawner prints rank 1's traceback only when it reports rank 1 first
     collateral=[r"Connection closed by peer", r"ProcessRaisedException"])
case("run93-ignite-raise-handler", "ignite", "ignite", "raise_handler", "ignite", 4, 2, 4, "user.code_error",
     r"\[rank2\] ERROR ignite\.engine\.engine\.Engine: Current run is terminating due to exception: division by zero",
     "An ITERATION_COMPLETED throughput handler on rank 2 divided by a zero elapsed time (ZeroDivisionError) at "
     "iteration 4, killing that rank's Engine run.",
     "Guard the throughput handler against a zero time delta.",
     "SCENARIO=raise_handler FAIL_RANK=2 FAIL_STEP=4: the every-2-iterations handler uses dt=0 on rank 2",
     also=[r"ZeroDivisionError: division by zero"],
     collateral=[r"Connection closed by peer"])
case("run93-ignite-sigkill", "ignite", "ignite", "sigkill", "ignite", 3, 2, 5, "mem.host_oom",
     SPAWN_KILL.format(r=2),
     "Rank 2 was SIGKILLed (as by the kernel OOM killer) at iteration 5 without a traceback; Ignite's spawner "
     "(torch.multiprocessing) reported the signal and terminated the rest.",
     "Find what killed rank 2 (dmesg / container memory limit) and reduce its host memory use.",
     "SCENARIO=sigkill FAIL_RANK=2 FAIL_STEP=5: os.kill(os.getpid(), SIGKILL) in the process function",
     collateral=[r"Terminating process \d+ via signal SIGTERM"])
case("run93-ignite-hang", "ignite", "ignite", "hang", "ignite", 3, 1, 2, "dist.collective_timeout",
     GLOO_TIMEOUT.format(w=r"[02]"),
     "Rank 1 stalled (90 s sleep) after its step-2 backward, before the loss all_reduce; ranks 0 and 2 hit the "
     "20 s gloo timeout waiting for it.",
     "Find why rank 1 stalls (its feature-store refresh) or move that work out of the step; raise the timeout "
     "only if the stall is expected.",
     "SCENARIO=hang FAIL_RANK=1 FAIL_STEP=2: time.sleep(90) before idist.all_reduce, timeout=20s via Parallel",
     collateral=[r"Terminating process"])
case("run93-ignite-mismatch", "ignite", "ignite", "mismatch", "ignite", 3, 2, 3, "dist.collective_mismatch",
     None,  # filled from the run (see PATTERNS below)
     "At iteration 3 rank 2 all_reduced a 402-element metrics tensor (400-bin histogram from a stale config) while "
     "ranks 0 and 1 reduced 258 elements; gloo's size check aborted a receiving rank.",
     "Make every rank reduce tensors of the same shape (same metric set on all ranks).",
     "SCENARIO=mismatch FAIL_RANK=2 FAIL_STEP=3: idist.all_reduce of a 402-element tensor instead of 258 on rank 2",
     collateral=[r"process \d terminated with signal SIGABRT", r"terminate called after throwing an instance of 'gloo::EnforceNotMet'"])
case("run93-ignite-mismatch-detail", "ignite", "ignite", "mismatch", "ignite", 4, 1, 4, "dist.collective_mismatch",
     None,
     "At iteration 4 rank 1 all_reduced a 402-element metrics tensor while the other ranks reduced 258 elements; "
     "TORCH_DISTRIBUTED_DEBUG=DETAIL reports the collective fingerprint mismatch.",
     "Make every rank reduce tensors of the same shape (same metric set on all ranks).",
     "SCENARIO=mismatch FAIL_RANK=1 FAIL_STEP=4 TORCH_DISTRIBUTED_DEBUG=DETAIL USE_DDP=0 (DDP+DETAIL segfaults)",
     env={"TORCH_DISTRIBUTED_DEBUG": "DETAIL", "USE_DDP": "0"})
case("run93-ignite-hostoom", "ignite", "ignite", "hostoom", "ignite", 3, 1, 3, "mem.host_oom",
     SPAWN_KILL.format(r=1),
     "Rank 1 grew an in-memory prefetch cache inside a 1 GiB memory cgroup until the kernel OOM killer SIGKILLed "
     "it; Ignite's spawner reported the SIGKILL.",
     "Bound the prefetch cache (or raise the memory limit of rank 1's container).",
     "SCENARIO=hostoom FAIL_RANK=1 FAIL_STEP=3: rank 1 moves into a cgroup-v1 memory cgroup "
     "(limit 1 GiB) and allocates 256 MiB chunks until the OOM killer kills it", hostoom=True,
     collateral=[r"Terminating process"])

# ---------------------------------------------------------------- Ignite under torchrun (idist.Parallel("gloo"))
case("run93-torchrun-ignite-raise", "torchrun", "ignite", "raise", "ignite", 4, 3, 2, "user.code_error",
     r"\[rank3\]: KeyError: 'horse'",
     "Rank 3's Ignite process function raised KeyError 'horse' (label missing from the class map) at iteration 2.",
     "Fix the label map / data shard of rank 3 so every label is known.",
     "SCENARIO=raise FAIL_RANK=3 FAIL_STEP=2 under torchrun --nproc-per-node 4",
     also=[r"\[rank3\] ERROR ignite\.engine\.engine\.Engine: Current run is terminating due to exception: 'horse'",
           r"KeyError: 'horse'"],
     collateral=[r"Connection closed by peer"])
case("run93-torchrun-ignite-raise-handler-logdir", "torchrun", "ignite", "raise_handler", "ignite", 3, 1, 2,
     "user.code_error", r"ZeroDivisionError: division by zero",
     "An ITERATION_COMPLETED throughput handler on rank 1 divided by a zero elapsed time (ZeroDivisionError) at "
     "iteration 2.",
     "Guard the throughput handler against a zero time delta.",
     "SCENARIO=raise_handler FAIL_RANK=1 FAIL_STEP=2 under torchrun --log-dir D --redirects 3 --tee 3",
     also=[r"\[rank1\] ERROR ignite\.engine\.engine\.Engine: Current run is terminating due to exception: division by zero"],
     collateral=[r"Connection closed by peer"], logdir=True)
case("run93-torchrun-ignite-sigkill", "torchrun", "ignite", "sigkill", "ignite", 3, 1, 4, "mem.host_oom",
     TR_EXIT9.format(r=1),
     "Rank 1 was SIGKILLed (as by the kernel OOM killer) at iteration 4 without a traceback; torchrun reported "
     "exit code -9 for local_rank 1 and stopped the others.",
     "Find what killed rank 1 (dmesg / container memory limit) and reduce its host memory use.",
     "SCENARIO=sigkill FAIL_RANK=1 FAIL_STEP=4: os.kill(os.getpid(), SIGKILL) in the process function",
     also=[r"exitcode\s+: -9 \(pid: \d+\)\s+\(SIGKILL\)"],
     collateral=[r"Connection closed by peer", r"closing signal SIGTERM"])
case("run93-torchrun-ignite-hang", "torchrun", "ignite", "hang", "ignite", 3, 2, 3, "dist.collective_timeout",
     GLOO_TIMEOUT.format(w=r"[01]"),
     "Rank 2 stalled (90 s sleep) after its iteration-3 backward, before the loss all_reduce; ranks 0 and 1 hit "
     "the 20 s gloo timeout waiting for it.",
     "Find why rank 2 stalls (its feature-store refresh) or move that work out of the step.",
     "SCENARIO=hang FAIL_RANK=2 FAIL_STEP=3 under torchrun; idist.initialize('gloo', timeout=20s)")
case("run93-torchrun-ignite-mismatch-detail", "torchrun", "ignite", "mismatch", "ignite", 4, 3, 2,
     "dist.collective_mismatch", None,
     "At iteration 2 rank 3 all_reduced a 402-element metrics tensor while the other ranks reduced 258 elements; "
     "TORCH_DISTRIBUTED_DEBUG=DETAIL reports the fingerprint mismatch.",
     "Make every rank reduce tensors of the same shape.",
     "SCENARIO=mismatch FAIL_RANK=3 FAIL_STEP=2 TORCH_DISTRIBUTED_DEBUG=DETAIL USE_DDP=0 under torchrun "
     "--nproc-per-node 4",
     env={"TORCH_DISTRIBUTED_DEBUG": "DETAIL", "USE_DDP": "0"})
case("run93-torchrun-ignite-hostoom", "torchrun", "ignite", "hostoom", "ignite", 3, 2, 2, "mem.host_oom",
     TR_EXIT9.format(r=2),
     "Rank 2 grew an in-memory prefetch cache inside a 1 GiB memory cgroup until the kernel OOM killer SIGKILLed "
     "it (exit code -9 reported by torchrun).",
     "Bound the prefetch cache (or raise the memory limit of rank 2's container).",
     "SCENARIO=hostoom FAIL_RANK=2 FAIL_STEP=2: rank 2 joins a 1 GiB cgroup-v1 memory cgroup and allocates "
     "256 MiB chunks until the OOM killer kills it", hostoom=True,
     also=[r"exitcode\s+: -9 \(pid: \d+\)\s+\(SIGKILL\)"])

# ---------------------------------------------------------------- torch.distributed.rpc (TensorPipe)
case("run93-spawn-rpc-healthy", "mp.spawn", "rpc", "healthy", "rpc", 3, None, None, "none", None,
     "Healthy run: parameter server worker0 drives 6 RPC steps on worker1/worker2, rpc.shutdown() everywhere.",
     "Nothing to fix.", "nothing induced (SCENARIO=healthy)", fatal=False)
case("run93-spawn-rpc-raise", "mp.spawn", "rpc", "raise", "rpc", 3, 2, 3, "user.code_error",
     r"^ValueError: shard 2: feature row \d+ has 9 columns, expected 8 \(malformed record\)",
     "The remote function compute_grad raised ValueError on worker2 (malformed record in its shard) at step 3; "
     "rpc_sync re-raised it on worker0, which died.",
     "Fix or filter the malformed record in worker2's data shard.",
     "SCENARIO=raise FAIL_RANK=2 FAIL_STEP=3: compute_grad raises ValueError on worker2",
     also=[r"On WorkerInfo\(id=2, name=worker2\):"],
     collateral=[r"ProcessRaisedException", r"encountered error when reading incoming request from worker0: eof"])
case("run93-torchrun-rpc-raise-async", "torchrun", "rpc", "raise", "rpc", 4, 1, 4, "user.code_error",
     r"ValueError: shard 1: feature row \d+ has 9 columns, expected 8 \(malformed record\)",
     "The remote function compute_grad raised ValueError on worker1 at step 4; torch.futures.wait_all re-raised "
     "it on worker0.",
     "Fix or filter the malformed record in worker1's data shard.",
     "SCENARIO=raise_async FAIL_RANK=1 FAIL_STEP=4 under torchrun --nproc-per-node 4 (rpc_async + wait_all)",
     also=[r"On WorkerInfo\(id=1, name=worker1\):"],
     collateral=[r"closing signal SIGTERM"])
case("run93-torchrun-rpc-raise-logdir", "torchrun", "rpc", "raise", "rpc", 4, 3, 2, "user.code_error",
     r"ValueError: shard 3: feature row \d+ has 9 columns, expected 8 \(malformed record\)",
     "The remote function compute_grad raised ValueError on worker3 at step 2; rpc_sync re-raised it on worker0.",
     "Fix or filter the malformed record in worker3's data shard.",
     "SCENARIO=raise FAIL_RANK=3 FAIL_STEP=2 under torchrun --log-dir D --redirects 3 --tee 3",
     also=[r"On WorkerInfo\(id=3, name=worker3\):"], logdir=True)
case("run93-spawn-rpc-deadworker", "mp.spawn", "rpc", "deadworker", "rpc", 3, 1, 3, "mem.host_oom",
     SPAWN_KILL.format(r=1),
     "worker1 was SIGKILLed (as by the OOM killer) while serving worker0's step-3 RPC; the RPC agent saw EOF "
     "from worker1 and mp.spawn reported the SIGKILL.",
     "Find what killed worker1 (dmesg / memory limit) and reduce its host memory use.",
     "SCENARIO=deadworker FAIL_RANK=1 FAIL_STEP=3: compute_grad SIGKILLs its own process on worker1",
     collateral=[r"encountered error when reading incoming \w+ from worker1: eof"])
case("run93-torchrun-rpc-deadworker", "torchrun", "rpc", "deadworker", "rpc", 3, 2, 4, "mem.host_oom",
     TR_EXIT9.format(r=2),
     "worker2 was SIGKILLed (as by the OOM killer) while serving worker0's step-4 RPC; rpc_sync on worker0 failed "
     "with EOF and torchrun reported exit code -9 for local_rank 2.",
     "Find what killed worker2 (dmesg / memory limit) and reduce its host memory use.",
     "SCENARIO=deadworker FAIL_RANK=2 FAIL_STEP=4: compute_grad SIGKILLs its own process on worker2",
     also=[r"exitcode\s+: -9 \(pid: \d+\)\s+\(SIGKILL\)"],
     collateral=[r"RuntimeError: eof \(this error originated at .*\)"])
case("run93-spawn-rpc-timeout", "mp.spawn", "rpc", "timeout", "rpc", 3, 2, 3, "dist.collective_timeout",
     r"RuntimeError: RPCErr:1:RPC ran for more than set timeout \(10000 ms\) and will now be marked with an error",
     "worker2's compute_grad hung (60 s sleep) at step 3; worker0's rpc_sync(timeout=10) expired and worker0 died.",
     "Find why worker2 stalls reading its shard; raise the RPC timeout only if the stall is expected.",
     "SCENARIO=timeout FAIL_RANK=2 FAIL_STEP=3: compute_grad sleeps 60 s on worker2, caller timeout 10 s")
case("run93-torchrun-rpc-timeout", "torchrun", "rpc", "timeout", "rpc", 4, 1, 2, "dist.collective_timeout",
     r"RuntimeError: RPCErr:1:RPC ran for more than set timeout \(10000 ms\) and will now be marked with an error",
     "worker1's compute_grad hung (60 s sleep) at step 2; worker0's rpc_sync(timeout=10) expired.",
     "Find why worker1 stalls reading its shard; raise the RPC timeout only if the stall is expected.",
     "SCENARIO=timeout FAIL_RANK=1 FAIL_STEP=2 under torchrun --nproc-per-node 4")
case("run93-spawn-rpc-shutdown-sigkill", "mp.spawn", "rpc", "shutdown_sigkill", "rpc", 3, 2, None, "mem.host_oom",
     SPAWN_KILL.format(r=2),
     "After training, worker2 was SIGKILLed (as by the OOM killer) before reaching rpc.shutdown(); worker0's "
     "graceful shutdown lost worker2 and mp.spawn reported the SIGKILL.",
     "Find what killed worker2 during its post-processing (memory limit) and reduce its host memory use.",
     "SCENARIO=shutdown_sigkill FAIL_RANK=2: worker2 SIGKILLs itself after the last step, before rpc.shutdown()")
case("run93-torchrun-rpc-shutdown-raise", "torchrun", "rpc", "shutdown_raise", "rpc", 3, 1, None,
     "user.code_error", r"^KeyError: 'steps'",
     "After training, worker1 raised KeyError 'steps' in its own post-processing before rpc.shutdown(), so the "
     "graceful RPC shutdown of the others failed.",
     "Fix the statistics code of worker1 (the 'steps' key is never set).",
     "SCENARIO=shutdown_raise FAIL_RANK=1: worker1 looks up a missing dict key before rpc.shutdown()",
     also=[r"failed \(exitcode: 1\) local_rank: 1 \(pid: \d+\)"],
     collateral=[r"encountered error when reading incoming request from worker1: eof"])

# ---------------------------------------------------------------- torch.distributed.checkpoint (DCP)
DCP_FIX_SHARD = "Restore the checkpoint from a complete copy (every __<rank>_0.distcp present and intact) " \
                "before resuming; do not let node-local cleaners touch checkpoint dirs."
case("run93-torchrun-dcp-healthy", "torchrun", "dcp", "healthy", "dcp", 3, None, None, "none", None,
     "Healthy run: dcp.save of a DTensor-sharded model, dcp.load into a fresh model, 2 more steps, exit 0.",
     "Nothing to fix.", "nothing induced (SCENARIO=healthy)", fatal=False)
case("run93-torchrun-dcp-missingshard", "torchrun", "dcp", "missingshard", "dcp", 3, 2, None, "user.code_error",
     r"FileNotFoundError: \[Errno 2\] No such file or directory: '\S+/__2_0\.distcp'",
     "Rank 2's shard file __2_0.distcp was deleted between dcp.save and dcp.load, so reading the checkpoint "
     "failed (CheckpointException) on the ranks that need data from it.",
     DCP_FIX_SHARD, "SCENARIO=missingshard FAIL_RANK=2: rank 2 removes __2_0.distcp after the save")
case("run93-torchrun-dcp-truncated", "torchrun", "dcp", "truncated", "dcp", 4, 1, None, "user.code_error",
     r"RuntimeError: PytorchStreamReader failed reading zip archive: failed finding central directory.*",
     "Rank 1's shard file __1_0.distcp was truncated (interrupted copy) before dcp.load; torch.load of its items "
     "fails (PytorchStreamReader / EOFError) inside DCP's read step.",
     DCP_FIX_SHARD, "SCENARIO=truncated FAIL_RANK=1: rank 1 truncates __1_0.distcp to 40% after the save",
     also=[r"EOFError"])
case("run93-torchrun-dcp-shape-logdir", "torchrun", "dcp", "shape", "dcp", 4, 3, None, "user.code_error",
     r"ValueError: Size mismatch between saved torch\.Size\(\[4, 48\]\) and current: torch\.Size\(\[6, 48\]\) for model\.fc2\.weight",
     "At resume rank 3 built its head with 6 outputs instead of 4 (stale config), so DCP's load planner on rank 3 "
     "found a shape mismatch with the checkpoint.",
     "Build the same model on every rank (same num_classes as the checkpoint) before dcp.load.",
     "SCENARIO=shape FAIL_RANK=3 under torchrun --log-dir D --redirects 3 --tee 3", logdir=True,
     also=[r"CheckpointException ranks:dict_keys\(\[3\]\)"])
case("run93-torchrun-dcp-missingkey", "torchrun", "dcp", "missingkey", "dcp", 3, 1, None, "user.code_error",
     r"RuntimeError: Missing key in checkpoint state_dict: model\.ema_fc2_weight\.",
     "At resume rank 1's model has an extra EMA buffer that the checkpoint does not contain; DCP's default load "
     "planner on rank 1 rejects the missing key.",
     "Build the same state_dict on every rank, or load with DefaultLoadPlanner(allow_partial_load=True).",
     "SCENARIO=missingkey FAIL_RANK=1: rank 1 registers an extra buffer before dcp.load",
     also=[r"CheckpointException ranks:dict_keys\(\[1\]\)"])
case("run93-torchrun-dcp-planner", "torchrun", "dcp", "planner", "dcp", 3, 2, None, "user.code_error",
     r"TypeError: 'NoneType' object is not iterable",
     "Rank 2 saved with DefaultSavePlanner(flatten_state_dict=False) while the other ranks flattened; the "
     "coordinator's global plan could not merge the inconsistent local plans (TypeError in create_global_plan).",
     "Use the same save planner configuration on every rank.",
     "SCENARIO=planner FAIL_RANK=2: rank 2 passes DefaultSavePlanner(flatten_state_dict=False) to dcp.save",
     also=[r"\[rank2\] INFO dcp_job: saving checkpoint at step 3 \(planner=DefaultSavePlanner flatten_state_dict=False\)"])
case("run93-torchrun-dcp-readonly", "torchrun", "dcp", "readonly", "dcp", 3, 2, None, "user.code_error",
     r"PermissionError: \[Errno 13\] Permission denied: '\S+'",
     "Rank 2 runs as another uid (65534) and cannot write its shard into the root-owned checkpoint directory; "
     "dcp.save fails with PermissionError on rank 2.",
     "Run all ranks as the same user or make the checkpoint directory writable for every rank.",
     "SCENARIO=readonly FAIL_RANK=2 DCP_WRITER=explicit: rank 2 setuid(65534) before dcp.save(FileSystemWriter)")
case("run93-torchrun-dcp-readonly-autodetect", "torchrun", "dcp", "readonly", "dcp", 3, 1, None,
     "user.code_error",
     r"\[rank1\]: RuntimeError: Cannot detect which StorageReader or StorageWriter to use\. Please specify the storage_reader/storage_writer\.",
     "Rank 1 runs as another uid (65534) and cannot write into the checkpoint directory, so dcp.save(checkpoint_id=...) "
     "finds no usable StorageWriter on rank 1 and raises; the other ranks lose their gloo peer.",
     "Run all ranks as the same user or make the checkpoint directory writable for every rank.",
     "SCENARIO=readonly FAIL_RANK=1 DCP_WRITER=auto: rank 1 setuid(65534) before dcp.save(checkpoint_id=ckpt)",
     env={"DCP_WRITER": "auto"}, collateral=[r"Connection closed by peer"])
case("run93-torchrun-dcp-hang", "torchrun", "dcp", "hang", "dcp", 3, 1, None, "dist.collective_timeout",
     GLOO_TIMEOUT.format(w=r"[02]"),
     "Rank 1 stalled 90 s before dcp.save; ranks 0 and 2 timed out (20 s gloo timeout) in DCP's planning "
     "collective waiting for it.",
     "Find why rank 1 stalls before checkpointing (object-store flush); raise the timeout only if expected.",
     "SCENARIO=hang FAIL_RANK=1: time.sleep(90) before dcp.save, init_process_group timeout 20 s")
case("run93-torchrun-dcp-sigkill", "torchrun", "dcp", "sigkill", "dcp", 4, 2, None, "mem.host_oom",
     TR_EXIT9.format(r=2),
     "Rank 2 was SIGKILLed (as by the OOM killer) as dcp.save started; the other ranks lost it in DCP's collective "
     "and torchrun reported exit code -9 for local_rank 2.",
     "Find what killed rank 2 (dmesg / memory limit) and reduce host memory use around checkpointing.",
     "SCENARIO=sigkill FAIL_RANK=2: os.kill(os.getpid(), SIGKILL) just before dcp.save",
     also=[r"exitcode\s+: -9 \(pid: \d+\)\s+\(SIGKILL\)"])
case("run93-spawn-dcp-missingshard", "mp.spawn", "dcp", "missingshard", "dcp", 3, 1, None, "user.code_error",
     r"FileNotFoundError: \[Errno 2\] No such file or directory: '\S+/__1_0\.distcp'",
     "Rank 1's shard file __1_0.distcp was deleted between dcp.save and dcp.load, so reading the checkpoint failed "
     "(CheckpointException).",
     DCP_FIX_SHARD, "SCENARIO=missingshard FAIL_RANK=1 under mp.spawn: rank 1 removes __1_0.distcp after the save")
case("run93-spawn-dcp-shape", "mp.spawn", "dcp", "shape", "dcp", 3, 2, None, "user.code_error",
     r"ValueError: Size mismatch between saved torch\.Size\(\[4, 48\]\) and current: torch\.Size\(\[6, 48\]\) for model\.fc2\.weight",
     "At resume rank 2 built its head with 6 outputs instead of 4, so DCP's load planner on rank 2 found a shape "
     "mismatch with the checkpoint.",
     "Build the same model on every rank before dcp.load.",
     "SCENARIO=shape FAIL_RANK=2 under mp.spawn", also=[r"CheckpointException ranks:dict_keys\(\[2\]\)"])

# decisive patterns for the mismatch cases (what gloo's size check / DETAIL's fingerprint check print)
GLOO_SIZE = (r"\[enforce fail at \S+pair\.cc:\d+\] op\.preamble\.length <= op\.nbytes\. \d+ vs \d+\. Received data "
             r"size doesn't match expected size\. Is there a distributed collective mismatch in your code\?")
DETAIL_FP = (r"Detected mismatch between collectives on ranks\. Rank {r} is running collective: "
             r"CollectiveFingerPrint\(SequenceNumber=\d+, OpType=ALLREDUCE, TensorShape=\[402\]")
DETAIL_FP_OTHER = r"but Rank {r} is running collective: CollectiveFingerPrint\(SequenceNumber=\d+, OpType=ALLREDUCE, TensorShape=\[402\]"
PATTERNS = {
    "run93-ignite-mismatch": GLOO_SIZE,
    "run93-ignite-mismatch-detail": DETAIL_FP.format(r=1),
    "run93-torchrun-ignite-mismatch-detail": DETAIL_FP.format(r=3),
}
ALSO = {
    "run93-ignite-mismatch-detail": [DETAIL_FP_OTHER.format(r=1)],
    "run93-torchrun-ignite-mismatch-detail": [DETAIL_FP_OTHER.format(r=3)],
}

JOBS = {"ignite": "ignite_job.py", "rpc": "rpc_job.py", "dcp": "dcp_job.py"}


def command(c, port):
    script = JOBS[c["job"]]
    extra = " --ckpt ckpt/" + c["id"] if c["job"] == "dcp" else ""
    if c["launcher"] == "torchrun":
        ld = f" --log-dir {WORK}/logs/{c['id']} --redirects 3 --tee 3" if c["logdir"] else ""
        return f"torchrun --nproc-per-node {c['n']} --master-port {port}{ld} {script}{extra}"
    return f"python {script} --spawn {c['n']} --port {port}{extra}"


def my_pids(marker):
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit() or int(d) == os.getpid():
            continue
        try:
            with open(f"/proc/{d}/environ", "rb") as f:
                if marker.encode() in f.read():
                    out.append(int(d))
        except OSError:
            pass
    return out


def make_cgroup(cid):
    cg = os.path.join(CG_ROOT, "h93_" + cid.replace("-", "_"))
    os.makedirs(cg, exist_ok=True)
    lim = str(1 << 30)
    with open(os.path.join(cg, "memory.limit_in_bytes"), "w") as f:
        f.write(lim)
    sw = os.path.join(cg, "memory.memsw.limit_in_bytes")
    if os.path.exists(sw):
        with open(sw, "w") as f:
            f.write(lim)
    return cg


def remove_cgroup(cg):
    for _ in range(50):
        try:
            os.rmdir(cg)
            return
        except OSError:
            time.sleep(0.2)
    print("WARNING: could not remove cgroup", cg)


def rewrite(path):
    with open(path, "rb") as f:
        b = f.read()
    b = b.replace(VENV.encode(), b"/opt/venv").replace(WORK.encode(), b"/home/user/job")
    with open(path, "wb") as f:
        f.write(b)


def run_case(c, port):
    dst = os.path.join(OUT, c["id"])
    shutil.rmtree(dst, ignore_errors=True)
    os.makedirs(dst)
    shutil.rmtree(os.path.join(WORK, "ckpt", c["id"]), ignore_errors=True)
    shutil.rmtree(os.path.join(WORK, "logs", c["id"]), ignore_errors=True)
    env = dict(os.environ)
    env.update(PATH=f"{VENV}/bin:" + env["PATH"], SCENARIO=c["scenario"], PYTHONUNBUFFERED="1",
               H93_CASE="h93case=" + c["id"])
    for k in ("OOM_CGROUP", "TORCH_DISTRIBUTED_DEBUG", "DCP_WRITER", "USE_DDP"):
        env.pop(k, None)
    if c["rank"] is not None:
        env["FAIL_RANK"] = str(c["rank"])
    if c["step"] is not None:
        env["FAIL_STEP"] = str(c["step"])
    env.update(c["env"])
    cg = None
    if c["hostoom"]:
        cg = make_cgroup(c["id"])
        env["OOM_CGROUP"] = cg
    cmd = command(c, port)
    c["cmd"] = cmd
    t0 = time.time()
    with open(os.path.join(dst, "log.txt"), "wb") as log:
        p = subprocess.Popen(cmd, shell=True, cwd=WORK, env=env, stdout=log, stderr=subprocess.STDOUT,
                             start_new_session=True)
        try:
            rc = p.wait(timeout=c["timeout"])
        except subprocess.TimeoutExpired:
            rc = "timeout"
    for pid in my_pids("h93case=" + c["id"]):  # no orphan ranks: end what this case started, by pid
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    if cg:
        if os.path.exists(os.path.join(cg, "memory.oom_control")):
            with open(os.path.join(cg, "memory.oom_control")) as f:
                print("   cgroup oom_control:", f.read().replace("\n", " "))
        remove_cgroup(cg)
    print(f"{c['id']}: rc={rc} {time.time() - t0:.0f}s  ({cmd})", flush=True)
    if c["logdir"]:
        base = os.path.join(WORK, "logs", c["id"])
        inner = [r for r, ds, _ in os.walk(base) if "attempt_0" in ds]
        if inner:
            shutil.copytree(inner[0], os.path.join(dst, "ranks"))
            for r, _, fs in os.walk(os.path.join(dst, "ranks")):
                for f in fs:
                    rewrite(os.path.join(r, f))
    rewrite(os.path.join(dst, "log.txt"))
    with open(os.path.join(dst, ".cmd"), "w") as f:
        f.write(cmd + "\n")


def find(lines, pat):
    rx = re.compile(pat)
    for ln in lines:
        m = rx.search(ln)
        if m:
            return m.group(0)
    return None


def label_case(c):
    dst = os.path.join(OUT, c["id"])
    with open(os.path.join(dst, "log.txt"), encoding="utf-8", errors="replace") as f:
        lines = f.read().splitlines()
    cmd = open(os.path.join(dst, ".cmd")).read().strip()
    pat = PATTERNS.get(c["id"], c["decisive"])
    problems = []
    decisive, dfile = None, None
    if c["category"] != "none":
        search = lines
        if c["logdir"]:
            rdir = os.path.join(dst, "ranks")
            cands = []
            for r, _, fs in os.walk(rdir):
                for fn in sorted(fs):
                    rel = os.path.relpath(os.path.join(r, fn), rdir)
                    txt = open(os.path.join(r, fn), encoding="utf-8", errors="replace").read().splitlines()
                    hit = find(txt, pat) if pat else None
                    if hit:
                        own = rel.startswith(f"attempt_0/{c['rank']}/")
                        cands.append((not own, "stdout" in rel, rel, hit))
            if cands:
                cands.sort()
                _, _, dfile, decisive = cands[0]
        else:
            decisive = find(search, pat) if pat else None
        if not decisive:
            problems.append(f"decisive pattern not found: {pat}")
    also = [h for h in (find(lines, p) for p in c["also"] + ALSO.get(c["id"], [])) if h]
    coll = [h for h in (find(lines, p) for p in c["collateral"]) if h]
    lab = {
        "id": c["id"],
        "source": f"real run: tests/corpus/generators/launchers/round93a/run_all.sh {c['id']} "
                  f"({cmd.replace(WORK, '/home/user/job')}), torch 2.13.0 CPU, gloo",
        "category": c["category"], "fatal": c["fatal"], "decisive_line": decisive,
        "also_acceptable": [a for a in also if a != decisive], "initiating_rank": c["rank"],
        "collateral": coll, "operator": None, "root_cause": c["root_cause"], "fix": c["fix"],
        "launcher": c["launcher"], "framework": c["framework"], "genuine": False,
        "induced_how": c["induced_how"], "confirmed_by": "induced", "confidence": "high",
    }
    if dfile:
        lab["decisive_file"] = dfile
    with open(os.path.join(dst, "label.json"), "w") as f:
        json.dump(lab, f, indent=1)
        f.write("\n")
    return problems


def main():
    op = sys.argv[1] if len(sys.argv) > 1 else "list"
    ids = sys.argv[2:]
    sel = [c for c in C if not ids or c["id"] in ids]
    if ids and len(sel) != len(ids):
        sys.exit(f"unknown ids: {set(ids) - {c['id'] for c in C}}")
    if op == "list":
        for c in C:
            print(c["id"], c["launcher"], c["scenario"], c["category"], c["rank"])
    elif op == "run":
        os.makedirs(WORK, exist_ok=True)
        for s in SCRIPTS:
            shutil.copy(os.path.join(HERE, s), os.path.join(WORK, s))
        for c in sel:
            run_case(c, 29700 + 10 * C.index(c))
    elif op == "label":
        bad = 0
        for c in sel:
            pr = label_case(c)
            if pr:
                bad += 1
                print(c["id"], "PROBLEM:", *pr)
        print(f"labelled {len(sel)} cases, {bad} with problems")
        sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
