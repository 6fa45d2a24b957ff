# Label entries for round 30b (read by mk_label.py). keys: category, decisive, also, rank, rc (expected launcher exit
# code), collateral, root_cause, fix, how.
OMP = "torchrun's OMP_NUM_THREADS=1 banner (harmless)"
NOFIX = "Nothing required: the job finished normally; the diagnostic output is informational."

def H(collateral, what, how):
    return dict(category="none", collateral=collateral + [OMP] if "torchrun" in how else collateral,
                root_cause="Healthy outcome: " + what, fix=NOFIX, how=how)

C = {
    "run30b-torchrun-healthy-cpplog": H(
        ["c10d INFO lines from TCPStore.cpp/socket.cpp/TCPStoreLibUvBackend.cpp (server started, client socket connects)",
         "'[c10d - debug] Remote peer closed the connection.' at shutdown (normal)",
         "'[c10d] The debug level is set to INFO.'"],
        "all 3 ranks trained 20 steps and exited 0; the c10d INFO/debug lines come from TORCH_CPP_LOG_LEVEL=INFO and "
        "TORCH_DISTRIBUTED_DEBUG=INFO.",
        "TORCH_CPP_LOG_LEVEL=INFO TORCH_DISTRIBUTED_DEBUG=INFO torchrun --nproc-per-node 3 diag30b.py --diag cpplog"),
    "run30b-torchrun-healthy-usr1dump": H(
        ["faulthandler 'Current thread 0x... (most recent call first):' stack dump of rank 2 (SIGUSR1 sent by rank 0 "
         "at step 9 on purpose; the rank carries on)"],
        "after step 8 (0-based) rank 0 sent SIGUSR1 to rank 2, whose faulthandler.register(SIGUSR1) printed a stack dump; training continued "
        "and all ranks exited 0.",
        "torchrun --nproc-per-node 3 --tee 3 diag30b.py --diag usr1: faulthandler.register(SIGUSR1) on every rank, "
        "rank 0 os.kill(rank-2 pid, SIGUSR1) after step 8 (0-based)"),
    "run30b-spawn-healthy-watchdog": H(
        ["'watchdog: step N still running after 2.4s (> 2.0s threshold)' warnings on every rank",
         "'step took 2.5s > 2.0s threshold, possible straggler rank 1' warnings on rank 0"],
        "rank 1 was slow (2.5 s) at steps 5, 11 and 17 (0-based), which the job's own watchdog reported as straggler warnings; "
        "the job finished all 24 steps and exited 0.",
        "python diag30b.py --spawn --diag watchdog (mp.spawn nprocs 3): rank 1 sleeps 2.5 s at steps 5, 11, 17"),
    "run30b-torchrun-healthy-profiler": H(
        ["torch.profiler key_averages() tables (gloo:all_reduce, c10d::allreduce_ ...) printed by every rank"],
        "the profiler tables printed at the end are requested output; every rank finished and torchrun exited 0.",
        "torchrun --nproc-per-node 3 diag30b.py --diag profiler: torch.profiler over steps 2-5, table at the end"),
    "run30b-spawn-healthy-tracemalloc": H(
        ["tracemalloc 'top 10 allocations' listing printed by rank 0 at the end"],
        "the tracemalloc allocation listing is requested diagnostic output; all ranks finished and exited 0.",
        "python diag30b.py --spawn --diag tracemalloc: tracemalloc.start() before the loop, top-10 at the end"),
    "run30b-torchrun-healthy-warnings": H(
        ["DeprecationWarning 'DataConfig.legacy_shuffle is deprecated' on every step of every rank",
         "UserWarning 'To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone()' every step"],
        "PYTHONWARNINGS=always makes every repeated warning print; they are harmless and the job exited 0.",
        "PYTHONWARNINGS=always torchrun --nproc-per-node 3 diag30b.py --diag warnings"),
    "run30b-spawn-healthy-retry": H(
        ["rank 0 'metrics push ... failed (attempt 1/4), retrying' warning with a ConnectionResetError traceback",
         "'metrics push failed (attempt 2/4): TimeoutError: timed out' and attempt 3/4 (caught and retried)"],
        "the fake metrics endpoint reset and then stalled the first connections; the job caught and retried them, "
        "the push succeeded and training finished with exit 0.",
        "python diag30b.py --spawn --diag retry: rank 0 runs a local metrics endpoint that resets the 1st and stalls "
        "the 2nd connection; push_metrics catches ConnectionResetError/TimeoutError and retries"),
    "run30b-torchrun-healthy-anomaly": H(
        ["'Anomaly Detection has been enabled. This mode will increase the runtime and should only be enabled for "
         "debugging.' UserWarning on every rank"],
        "autograd anomaly detection was enabled (warning only) and no NaN occurred; the job exited 0.",
        "torchrun --nproc-per-node 3 diag30b.py --diag anomaly: every step's forward+backward inside torch.autograd.detect_anomaly()"),
    "run30b-spawn-healthy-gradskip": H(
        ["'grad norm inf, skipping step 6' warning on every rank (a handled overflow: the optimizer step is skipped once)"],
        "rank 1's gradient overflowed once (inf), the job's clipping logic skipped that step on all ranks and training "
        "continued to the end with exit 0.",
        "python diag30b.py --spawn --diag gradskip: rank 1 sets one gradient element to inf at step 6 before the "
        "gradient all_reduce; clip_grad_norm_ returns inf on every rank and the step is skipped"),
    "run30b-torchrun-healthy-memmon": H(
        ["rank 2 'OOM risk: 9x% RSS of limit' warnings from the job's own memory monitor (cache capped, no OOM)"],
        "rank 2's bounded cache kept its RSS near the job's configured 800 MiB budget, so its monitor warned each step, "
        "but nothing was killed and the job exited 0.",
        "torchrun --nproc-per-node 3 --tee 3 diag30b.py --diag memmon --cache-cap-mb 448: rank 2 caches 32 MiB "
        "tensors up to 448 MiB; monitor limit 800 MiB, warns above 80%"),
    "run30b-torchrun-healthy-recompiles": H(
        ["TORCH_LOGS=recompiles '[__recompiles] Recompiling function inner' lines on every rank, twice, with guard failures "
         "'size mismatch at index 0. expected 16, actual 24' and 'expected 24, actual 32'"],
        "torch.compile recompiled the model twice for new batch sizes (dynamic=False) and the job finished with exit 0.",
        "TORCH_LOGS=recompiles torchrun --nproc-per-node 3 diag30b.py --diag compile: torch.compile(backend='aot_eager', "
        "dynamic=False), batch size 16 -> 24 at step 8 -> 32 at step 16"),
}

GLOO_CLOSED = "gloo 'Connection closed by peer ... This is typically caused by a remote worker crashing' RuntimeError"
C.update({
    "run30b-torchrun-cpplog-raise": dict(
        category="user.code_error",
        decisive="RuntimeError: label buffer exhausted on rank 1 at step 7: expected 16 targets, got 0",
        also=["failed (exitcode: 1) local_rank: 1"], rank=1, rc=1,
        collateral=[GLOO_CLOSED + " on ranks 0 and 2", "torchrun SIGTERMs ranks 0 and 2 (exitcode -15 in the summary)",
                    "c10d INFO/debug lines (TCPStore, socket connects, 'Remote peer closed the connection.')", OMP],
        root_cause="Rank 1's own data code raised RuntimeError (label buffer exhausted) at step 7; ranks 0 and 2 then "
                   "lost their gloo peer and torchrun tore the job down. The c10d INFO output is only debug logging.",
        fix="Fix the label buffer handling in the data pipeline on rank 1 (refill or guard against an empty buffer).",
        how="TORCH_CPP_LOG_LEVEL=INFO TORCH_DISTRIBUTED_DEBUG=INFO torchrun --nproc-per-node 3 diag30b.py --diag cpplog "
            "--fault raise --bad-rank 1 --fault-step 7"),
    "run30b-torchrun-memmon-hostoom": dict(
        category="mem.host_oom", decisive="failed (exitcode: -9) local_rank: 2",
        also=["Signal 9 (SIGKILL) received by PID"], rank=2, rc=1,
        collateral=[GLOO_CLOSED + " on ranks 0 and 1", "torchrun SIGTERMs ranks 0 and 1",
                    "rank 2's own 'OOM risk: N% RSS of limit' warnings (above 100%: its RSS also counts pages charged "
                    "before it joined the cgroup)", OMP],
        root_cause="Rank 2 kept growing an in-RAM cache (32 MiB per step from step 5) inside a 1 GiB memory cgroup and "
                   "was SIGKILLed by the kernel OOM killer (no Python traceback); torchrun reported exitcode -9.",
        fix="Bound rank 2's cache (its memory monitor was already warning) or raise the host memory limit.",
        how="torchrun --nproc-per-node 3 diag30b.py --diag memmon --cache-cap-mb 256 --fault hostoom --bad-rank 2 "
            "--fault-step 5: rank 2 writes its pid to a cgroup v1 memory cgroup (memory.limit_in_bytes 1 GiB, memsw too) "
            "and from step 5 appends 32 MiB tensors until the OOM killer SIGKILLs it (memory.oom_control oom_kill 1)"),
})
C.update({
    "run30b-spawn-watchdog-hang": dict(
        category="dist.collective_timeout",
        # which waiting rank reports first (rank 0 recv / rank 2 send) varies between runs: the common part
        decisive="Timed out waiting 15000ms for", also=["terminated with the following error:"], rank=1, rc=1,
        collateral=["'watchdog: step N still running after 2.4s (> 2.0s threshold)' warnings on every rank",
                    "'step took 2.5s > 2.0s threshold, possible straggler rank 1' at step 5 (a harmless slow step before the hang)",
                    "mp.spawn 'Terminating process ... via signal SIGTERM' for the two other ranks"],
        root_cause="Rank 1 stalled (slept 60 s) before the gradient all_reduce at step 6 (0-based) and never entered it; a waiting rank "
                   "timed out after the 15 s gloo process-group timeout and mp.spawn terminated the others.",
        fix="Find why rank 1 stalls before the gradient all_reduce (it is silent: dump its stacks, e.g. with py-spy) and "
            "remove the stall; raise the process-group timeout only if such a pause is expected.",
        how="python diag30b.py --spawn --diag watchdog --fault hang --bad-rank 1 --fault-step 6 --hang-s 60 --timeout-s 15 "
            "(mp.spawn nprocs 3, init_process_group timeout 15 s; rank 1 also slow 2.5 s at step 5 from --diag watchdog)"),
})
C.update({
    "run30b-torchrun-warnings-mismatch": dict(
        category="dist.collective_mismatch",
        decisive="RuntimeError: Detected mismatch between collectives on ranks. Rank 2 is running collective: "
                 "CollectiveFingerPrint(SequenceNumber=40, OpType=ALLREDUCE, TensorShape=[4096]",
        also=["failed (exitcode: 1) local_rank: 0"], rank=2, rc=1,
        collateral=["DeprecationWarning 'DataConfig.legacy_shuffle is deprecated' and the torch.tensor copy-construct "
                    "UserWarning on every step (PYTHONWARNINGS=always, harmless)",
                    "ranks 0 and 1 raise the same 'Detected mismatch between collectives' error naming rank 2",
                    "torchrun SIGTERMs the remaining rank", OMP],
        root_cause="At step 5 (0-based) rank 2 all_reduced a 4096-element metrics tensor while ranks 0 and 1 all_reduced 4 "
                   "elements; TORCH_DISTRIBUTED_DEBUG=DETAIL's collective fingerprint check reported the mismatch.",
        fix="Make every rank all_reduce a metrics tensor of the same shape (rank 2 builds a wrong-sized buffer).",
        how="PYTHONWARNINGS=always TORCH_DISTRIBUTED_DEBUG=DETAIL torchrun --nproc-per-node 3 diag30b.py --diag warnings "
            "--fault mismatch --bad-rank 2 --fault-step 5: rank 2 all_reduces torch.zeros(4096) instead of the 4-value "
            "metrics tensor"),
    "run30b-torchrun-usr1-segv": dict(
        category="user.code_error", decisive="Fatal Python error: Segmentation fault",
        also=["failed (exitcode: -11) local_rank: 2"], rank=2, rc=1,
        collateral=["faulthandler 'Current thread 0x... (most recent call first):' dump of rank 1 after step 3 (0-based) "
                    "(SIGUSR1 sent by rank 0 on purpose; rank 1 carried on)",
                    "gloo RuntimeErrors on ranks 0 and 1 after rank 2 died ('Read error ... Connection reset by peer' / "
                    "'Connection closed by peer', which one varies)", "torchrun SIGTERMs ranks 0 and 1", OMP],
        root_cause="Rank 2's own code read address 0 through ctypes.string_at(0) at step 9 (0-based) and died with SIGSEGV "
                   "(faulthandler printed its Python stack); the other ranks lost their gloo peer.",
        fix="Fix the ctypes access in rank 2's feature-table reader (it dereferences a NULL pointer).",
        how="torchrun --nproc-per-node 3 --tee 3 diag30b.py --fault segv --bad-rank 2 --fault-step 9: faulthandler.enable() "
            "and register(SIGUSR1) on every rank, rank 0 sends SIGUSR1 to rank 1 after step 3, rank 2 calls "
            "ctypes.string_at(0) at step 9 (0-based)"),
})
