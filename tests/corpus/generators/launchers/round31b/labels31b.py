# Labels for round 31b (read by mk_label.py). rc: expected launcher exit code. rank: initiating rank (None: every
# rank / single process). decisive: exact substring of one log line.
TRC = "torchrun --nproc-per-node 3"
C["run31b-oldapi-localrank"] = dict(launcher="torchrun", category="user.code_error", rc=1, rank=None,
    decisive="old31b.py: error: the following arguments are required: --local_rank",
    collateral=["torchrun's ChildFailedError summary listing all three ranks with exitcode 2"],
    root_cause="The training script was written for python -m torch.distributed.launch and declares --local_rank as a required argument; torchrun passes LOCAL_RANK only in the environment, so argparse exits with code 2 on every rank.",
    fix="Read the local rank from os.environ['LOCAL_RANK'] (or make --local_rank optional with that default) when launching with torchrun.",
    how=f"{TRC} old31b.py --case localrank: argparse with --local_rank required=True; torchrun passes no such argument")
C["run31b-oldapi-six"] = dict(launcher="python", category="user.code_error", rc=1, rank=None,
    decisive="ModuleNotFoundError: No module named 'torch._six'",
    collateral=[],
    root_cause="The script imports inf from the private module torch._six, which was removed in PyTorch 2.0, so it fails at import on torch 2.13.",
    fix="Use math.inf / torch.inf (and str / collections.abc instead of the other torch._six aliases), or pin the old torch the code was written for.",
    how="python old31b.py --case six: 'from torch._six import inf' in a single process")
C["run31b-oldapi-cudaamp"] = dict(launcher="torchrun", category="none", rc=0,
    collateral=["FutureWarning: `torch.cuda.amp.GradScaler(args...)` is deprecated on every rank",
                "UserWarning: torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling.",
                "FutureWarning for torch.cuda.amp.autocast and 'CUDA is not available or torch_xla is imported. Disabling autocast.'"],
    root_cause="Healthy outcome: the old torch.cuda.amp GradScaler/autocast recipe only emits deprecation and 'CUDA is not available, disabling' warnings on a CPU machine; training runs in fp32 and finishes with exit 0.",
    fix="Nothing required; optionally switch to torch.amp.GradScaler('cuda')/torch.amp.autocast(device_type) to silence the warnings.",
    how=f"{TRC} old31b.py --case cudaamp: torch.cuda.amp.GradScaler() and torch.cuda.amp.autocast() on a CPU-only machine")
C["run31b-oldapi-oldckpt"] = dict(launcher="python", category="user.code_error", rc=1, rank=None,
    decisive="WeightsUnpickler error: Unsupported global: GLOBAL __main__.TrainState was not an allowed global by default.",
    also=["_pickle.UnpicklingError: Weights only load failed."],
    collateral=[],
    root_cause="The resume code calls torch.load on a checkpoint that pickles a whole custom TrainState object; since PyTorch 2.6 torch.load defaults to weights_only=True, which refuses the non-allowlisted global __main__.TrainState.",
    fix="Load with torch.load(path, weights_only=False) for a trusted file, or allowlist the class with torch.serialization.add_safe_globals, or save plain state_dicts.",
    how="python old31b.py --case oldckpt: torch.save(TrainState()) then torch.load(path) with the default weights_only")
C["run31b-oldapi-dynconf"] = dict(launcher="torchrun", category="none", rc=0,
    collateral=[],
    root_cause="Healthy outcome: the script sets the old torch._dynamo.config.dynamic_shapes / suppress_errors options before torch.compile(backend='eager'); torch 2.13 accepts them silently and training finishes with exit 0.",
    fix="Nothing required; pass dynamic=True to torch.compile instead of the old config flag.",
    how=f"{TRC} old31b.py --case dynconf: torch._dynamo.config.dynamic_shapes = True, suppress_errors = True, DDP + torch.compile(backend='eager')")
C["run31b-oldapi-nccl"] = dict(launcher="torchrun", category="dist.nccl_error", rc=1, rank=None,
    decisive="RuntimeError: Distributed package doesn't have NCCL built in",
    collateral=["torchrun SIGTERMs the remaining rank(s) and prints ChildFailedError"],
    root_cause="The script hard-codes dist.init_process_group(backend='nccl') but runs on a CPU-only torch build, which has no NCCL, so every rank fails at process-group init.",
    fix="Use backend='gloo' on CPU (or choose 'nccl' only when torch.cuda.is_available()).",
    how=f"{TRC} old31b.py --case nccl: init_process_group(backend='nccl') with torch 2.13.0+cpu")
C["run31b-oldapi-unused"] = dict(launcher="torchrun", category="dist.collective_mismatch", rc=1, rank=None,
    decisive="RuntimeError: Expected to have finished reduction in the prior iteration before starting a new one.",
    collateral=["torchrun SIGTERMs ranks 1 and 2 after rank 0 exits"],
    root_cause="The model keeps an aux_head that forward never uses while DDP is created with find_unused_parameters=False, so its gradients are never reduced and the second iteration fails on every rank.",
    fix="Remove the unused submodule or create DDP with find_unused_parameters=True.",
    how=f"{TRC} old31b.py --case unused: Net with an unused aux_head wrapped in DDP(find_unused_parameters=False)")

# ---- part 2: inductor C++ backend on one rank
TRC2 = "torchrun --nproc-per-node 3 cpp31b.py"
C["run31b-cpp-healthy"] = dict(launcher="torchrun", category="none", rc=0, collateral=[],
    root_cause="Healthy outcome: every rank compiles the model with the default inductor backend (C++ kernels, per-rank cache dir) and training finishes with exit 0.",
    fix="Nothing required.", how=f"{TRC2} --fault none")
C["run31b-cpp-cxxmissing"] = dict(launcher="torchrun", category="compile.cpp_toolchain_missing", rc=1, rank=1,
    decisive="InvalidCxxCompiler: No working C++ compiler found in torch._inductor.config.cpp.cxx: (None, '/nonexistent/g++')",
    collateral=["torchrun SIGTERMs ranks 0 and 2 (exitcode -15)"],
    root_cause="Rank 1 alone runs with CXX=/nonexistent/g++, which inductor reads into config.cpp.cxx, so compiling its C++ kernels finds no working compiler and torch.compile raises InductorError.",
    fix="Unset CXX or point it at an installed C++ compiler on that node/rank.",
    how=f"{TRC2} --fault cxxmissing --bad-rank 1: rank 1 sets os.environ['CXX']='/nonexistent/g++' before importing torch")
C["run31b-cpp-cxxconfig"] = dict(launcher="torchrun", category="compile.cpp_toolchain_missing", rc=1, rank=2,
    decisive="InvalidCxxCompiler: No working C++ compiler found in torch._inductor.config.cpp.cxx: (None, '/opt/toolchain/bin/g++-12')",
    collateral=["torchrun SIGTERMs ranks 0 and 1 (exitcode -15)"],
    root_cause="Rank 2 sets torch._inductor.config.cpp.cxx to a compiler path that does not exist on this machine, so inductor finds no working C++ compiler when compiling that rank's kernels.",
    fix="Point torch._inductor.config.cpp.cxx at an installed compiler (or leave the default g++).",
    how=f"{TRC2} --fault cxxconfig --bad-rank 2: rank 2 sets torch._inductor.config.cpp.cxx = (None, '/opt/toolchain/bin/g++-12')")
C["run31b-cpp-march"] = dict(launcher="torchrun", category="compile.cpp_compile_error", rc=1, rank=2,
    decisive="cc1plus: error: bad value ‘does-not-exist’ for ‘-march=’ switch",
    also=["torch._inductor.exc.InductorError: CppCompileError: C++ compile error"],
    collateral=["torchrun SIGTERMs ranks 0 and 1 (exitcode -15)"],
    root_cause="Rank 2 sets torch._inductor.config.cpp.march to an invalid value, so g++ rejects -march=does-not-exist and inductor's C++ kernel compile fails with CppCompileError.",
    fix="Use a valid -march value (or leave config.cpp.march / TORCHINDUCTOR_CPP_MARCH unset for -march=native).",
    how=f"{TRC2} --fault march --bad-rank 2: rank 2 sets torch._inductor.config.cpp.march = 'does-not-exist'")
C["run31b-cpp-rocache"] = dict(launcher="torchrun", category="compile.cache_corruption", rc=1, rank=1,
    decisive="OSError: [Errno 30] Read-only file system:",
    collateral=["torchrun SIGTERMs ranks 0 and 2 (exitcode -15)"],
    root_cause="Rank 1's TORCHINDUCTOR_CACHE_DIR is on a read-only mount, so inductor cannot write its compiled C++ kernels/cache entries and torch.compile fails with EROFS on that rank.",
    fix="Point TORCHINDUCTOR_CACHE_DIR at a writable directory for every rank.",
    how=f"{TRC2} --fault rocache --bad-rank 1: rank 1 uses TORCHINDUCTOR_CACHE_DIR=/tmp/r31b_ro, a read-only bind mount made by run_all.sh")
C["run31b-cpp-filecache"] = dict(launcher="torchrun", category="compile.cache_corruption", rc=1, rank=1,
    decisive="FileExistsError: [Errno 17] File exists:",
    collateral=["torchrun SIGTERMs ranks 0 and 2 (exitcode -15)"],
    root_cause="Rank 1's TORCHINDUCTOR_CACHE_DIR points at an existing regular file, so os.makedirs of the inductor cache dir fails with FileExistsError while importing torch._inductor on that rank.",
    fix="Point TORCHINDUCTOR_CACHE_DIR at a directory (remove the stale file).",
    how=f"{TRC2} --fault filecache --bad-rank 1: rank 1 sets TORCHINDUCTOR_CACHE_DIR to a regular file before importing torch")
