"""Write label.json for every round-38a case in OUT (argv[1], default /work/helpers/stage38).
Healthy cases (exit 0, every rank finished) are category none.  For failures, category and initiating rank come from
what run_all.sh induced; the decisive line is the first log.txt line matching the regex, kept whole, and checked to be
an exact substring of log.txt (later matches of the other regexes are also_acceptable)."""
import json, re, sys
from pathlib import Path

OUT = Path(sys.argv[1] if len(sys.argv) > 1 else "/work/helpers/stage38")
SRC = "real run: tests/corpus/generators/launchers/round38a/run_all.sh {id}, torch 2.13.0 CPU, gloo"
TERM = "torchrun SIGTERMs the surviving ranks (exitcode -15)"
PEER = "the other ranks fail in their next collective with gloo 'Connection closed by peer'"

H = {  # id: (launcher, framework, debug settings / what the log shows)
 "run38a-torchrun3-dynamo-debug": ("torchrun", "plain", "TORCH_LOGS=+dynamo with torch.compile(backend='eager') of a DDP model: thousands of V/I dynamo and symbolic_shapes lines"),
 "run38a-torchrun3-graphbreaks-recompiles": ("torchrun", "plain", "TORCH_LOGS=graph_breaks,recompiles: an explicit graph_break() and a data-dependent if cause non-fatal graph breaks with full user tracebacks; changing batch sizes trigger recompiles"),
 "run38a-torchrun4-distdebug-info": ("torchrun", "plain", "TORCH_DISTRIBUTED_DEBUG=INFO and TORCH_CPP_LOG_LEVEL=INFO: c10d socket/TCPStore, ProcessGroupGloo and DDP reducer INFO lines"),
 "run38a-torchrun3-agent-loglevel-debug": ("torchrun", "plain", "LOGLEVEL=DEBUG for the elastic agent, TORCH_CPP_LOG_LEVEL=INFO, Python logging at DEBUG for the job and torch loggers"),
 "run38a-torchrun3-faulthandler": ("torchrun", "plain", "faulthandler.dump_traceback_later(1.5, repeat=True): every rank prints 'Timeout (0:00:01.500000)!' and every thread's stack while training normally"),
 "run38a-spawn3-anomaly-warnings": ("mp.spawn", "plain", "torch.autograd.set_detect_anomaly(True) and warnings.simplefilter('always') in each rank (this build prints no anomaly warning; the log is ordinary step output)"),
 "run38a-spawn3-cppstack-retry": ("mp.spawn", "plain", "TORCH_SHOW_CPP_STACKTRACES=1; each rank's augmentation fails once with a RuntimeError (matmul shape mismatch) that is caught, logged with its Python and C++ traceback by logger.exception, and retried successfully"),
 "run38a-single-inductor-output-code": ("single process", "plain", "TORCH_LOGS=+inductor,output_code with torch.compile(backend='inductor'): inductor debug lines and the generated C++/Python code"),
 "run38a-single-dynamic": ("single process", "plain", "TORCH_LOGS=dynamic,recompiles: changing batch sizes recompile, then automatic dynamic shapes create symbols"),
 "run38a-torchrun3-ckpt-resume": ("torchrun", "plain", "resumes from a checkpoint written by a previous run (steps 0-3 -> continues at step 4), TORCH_DISTRIBUTED_DEBUG=INFO, Python logging at DEBUG, warnings always"),
 "run38a-accelerate3-debug": ("accelerate", "accelerate", "accelerate launch --debug (ACCELERATE_DEBUG_MODE), ACCELERATE_LOG_LEVEL=DEBUG, TORCH_DISTRIBUTED_DEBUG=INFO, DEBUG Python logging; MULTI_CPU gloo"),
 "run38a-lightning3-debug": ("lightning", "lightning", "Lightning Trainer DDP (gloo, 3 CPU devices) with lightning loggers at DEBUG and TORCH_DISTRIBUTED_DEBUG=INFO"),
 "run38a-single-recompile-limit": ("single process", "plain", "TORCH_LOGS=recompiles with recompile_limit=3 and automatic dynamic shapes off: dynamo warns it hit config.recompile_limit (3) and falls back to eager; training continues"),
 "run38a-torchrun3-detail-noddp": ("torchrun", "plain", "TORCH_DISTRIBUTED_DEBUG=DETAIL (no DDP; gradients all_reduced by hand) and TORCH_CPP_LOG_LEVEL=INFO"),
 "run38a-spawn4-pylog-debug": ("mp.spawn", "plain", "root and torch.* Python loggers at DEBUG, warnings always, TORCH_LOGS=recompiles, torch.compile(backend='eager') with changing batch sizes"),
 "run38a-torchrun3-kitchen-sink": ("torchrun", "plain", "TORCH_LOGS=graph_breaks,recompiles,dynamic + TORCH_DISTRIBUTED_DEBUG=INFO + TORCH_CPP_LOG_LEVEL=INFO + TORCH_SHOW_CPP_STACKTRACES=1 + LOGLEVEL=DEBUG + anomaly mode + warnings always + a caught and retried RuntimeError + graph breaks under aot_eager"),
}

F = {  # id: (cat, rank, [regex...], collateral, root_cause, fix, how, launcher, framework)
 "run38a-torchrun3-dynamo-debug-raise-r1": ("user.code_error", 1, [r"ValueError: bad record in shard 1"], [TERM],
    "At step 3 rank 1's data loader raises ValueError (a record with 15 instead of 16 features), buried in TORCH_LOGS=+dynamo output.",
    "Fix or skip the malformed record in the data loading code.", "job.py --compile eager --fault raise --bad-rank 1 --step 3, TORCH_LOGS=+dynamo", "torchrun", "plain"),
 "run38a-torchrun3-fullgraph-r2": ("compile.graph_break_data_dependent", 2, [r"torch._dynamo.exc.Unsupported: Data-dependent branching"], [PEER, TERM],
    "Only rank 2 gets a batch that reaches `if x.sum() > 0:` inside forward, which torch.compile(fullgraph=True) cannot trace (data-dependent branching), so rank 2 dies while other ranks show graph_breaks/recompiles output.",
    "Make the branch branchless (torch.where) or use torch.cond, or compile without fullgraph=True.", "job.py --compile eager --fullgraph --no-ddp --vary-shapes --fault fullgraph --bad-rank 2 --step 3", "torchrun", "plain"),
 "run38a-spawn3-faulthandler-sigkill-r1": ("mem.host_oom", 1, [r"process 1 terminated with signal SIGKILL"], ["mp.spawn terminates the other ranks"],
    "Rank 1 is SIGKILLed at step 4 (no traceback), among repeated faulthandler 'Timeout' stack dumps from every rank.",
    "Find what killed rank 1 (host OOM killer / dmesg) and give the job more host memory or reduce its footprint.", "job.py --launch spawn --faulthandler 1 --fault sigkill --bad-rank 1 --step 4 (os.kill(getpid(), SIGKILL))", "mp.spawn", "plain"),
 "run38a-torchrun4-distdebug-hang-r3": ("dist.collective_timeout", 3, [r"Timed out waiting 20000ms for (recv|send) operation to complete"], ["ranks 0-2 time out in DDP's gradient all_reduce after 20 s (gloo), rank aborts -6", TERM],
    "Rank 3 sleeps 90 s before its step-2 gradient all_reduce; the other ranks hit the 20 s gloo process-group timeout, amid TORCH_DISTRIBUTED_DEBUG=INFO / TORCH_CPP_LOG_LEVEL=INFO output.",
    "Find why rank 3 stalls before the collective (it is the silent rank) or raise the process-group timeout if the work is legitimately slow.", "job.py --fault hang --bad-rank 3 --step 2 --pg-timeout 20 --hang-s 90", "torchrun", "plain"),
 "run38a-torchrun3-inductor-cxx-r1": ("compile.cpp_toolchain_missing", 1, [r"InvalidCxxCompiler: No working C\+\+ compiler found"], [TERM],
    "Rank 1 alone sets torch._inductor.config.cpp.cxx to /nonexistent/g++, so its inductor compile fails with InvalidCxxCompiler, buried in TORCH_LOGS=+inductor debug output.",
    "Install a C++ compiler or point torch._inductor.config.cpp.cxx / CXX at a working one on every rank.", "job.py --compile inductor --fault cxx --bad-rank 1, TORCH_LOGS=+inductor", "torchrun", "plain"),
 "run38a-spawn3-detail-size-r2": ("dist.collective_mismatch", 2, [r"Detected mismatch between collectives on ranks"], ["mp.spawn terminates the other ranks"],
    "At step 2 rank 2 all_reduces a tensor of another size (numel+3, 1-D) than the others' [32, 16] gradient; TORCH_DISTRIBUTED_DEBUG=DETAIL's ProcessGroupWrapper reports a collective mismatch (its fingerprint for rank 2 reads GATHER/sequence 0), with a C++ stack from TORCH_SHOW_CPP_STACKTRACES=1.",
    "Make every rank all_reduce tensors of the same shape in the same order.", "job.py --launch spawn --no-ddp --fault size --bad-rank 2 --step 2, TORCH_DISTRIBUTED_DEBUG=DETAIL", "mp.spawn", "plain"),
 "run38a-lightning3-raise-r2": ("user.code_error", 2, [r"IndexError: list index out of range"], [PEER],
    "In training_step at batch 3 rank 2 indexes its shard list past the end and raises IndexError, amid Lightning DEBUG logging; ranks 0 and 1 then fail with gloo 'Connection closed by peer'.",
    "Fix the shard index computation in training_step.", "lit_job.py --fault raise --bad-rank 2 --step 3 (TORCH_DISTRIBUTED_DEBUG=INFO)", "lightning", "lightning"),
}


def first(path, rx):
    for line in Path(path).read_text(errors="replace").splitlines():
        if re.search(rx, line):
            return line
    return None


for id, (launcher, fw, what) in H.items():
    d = OUT / id
    if not d.exists():
        print("missing", id); continue
    lab = {"id": id, "source": SRC.format(id=id), "category": "none", "fatal": False, "decisive_line": None,
           "also_acceptable": [], "initiating_rank": None, "collateral": [], "operator": None,
           "root_cause": f"Healthy job (exit 0, every rank finished) run with debug output on: {what}.",
           "fix": "None needed.", "launcher": launcher, "framework": fw, "genuine": False,
           "induced_how": f"debug settings only: {what}", "confirmed_by": "induced", "confidence": "high"}
    (d / "label.json").write_text(json.dumps(lab, indent=2) + "\n")
    print(id, "none")

for id, (cat, rank, rxs, coll, rc, fix, how, launcher, fw) in F.items():
    d = OUT / id
    if not d.exists():
        print("missing", id); continue
    log = d / "log.txt"
    dec = first(log, rxs[0])
    assert dec, (id, rxs[0])
    lines = [l for l in log.read_text(errors="replace").splitlines() if re.search(rxs[0], l) and l != dec]
    also = sorted(set(lines))[:4]
    assert all(x in log.read_text(errors="replace") for x in [dec] + also)
    lab = {"id": id, "source": SRC.format(id=id), "category": cat, "fatal": True, "decisive_line": dec,
           "also_acceptable": also, "initiating_rank": rank, "collateral": coll, "operator": None,
           "root_cause": rc, "fix": fix, "launcher": launcher, "framework": fw, "genuine": False,
           "induced_how": how, "confirmed_by": "induced", "confidence": "high"}
    (d / "label.json").write_text(json.dumps(lab, indent=2) + "\n")
    print(id, cat, rank, "|", dec[:110])
