"""Write label.json for every round-39a case in OUT (argv[1], default /work/helpers/stage39).
Healthy cases (exit 0, every rank finished) are category none.  For failures, category and initiating rank come from
what run_all.sh induced; the decisive line is the first log.txt line matching the first regex, kept whole, and checked
to be an exact substring of log.txt (first matches of the other regexes are also_acceptable)."""
import json, re, sys
from pathlib import Path

OUT = Path(sys.argv[1] if len(sys.argv) > 1 else "/work/helpers/stage39")
SRC = "real run: tests/corpus/generators/launchers/round39a/run_all.sh {id}, torch 2.13.0 CPU, gloo"
TERM = "torchrun SIGTERMs the surviving ranks (exitcode -15)"
SPAWN = "mp.spawn terminates the other ranks"
CXXFIX = "Point torch._inductor.config.cpp.cxx / CXX at a working g++ (or repair the compiler installation) on that rank."

H = {  # id: (launcher, what the log shows)
 "run39a-single-maxautotune-healthy": ("single process", "torch.compile(mode='max-autotune') on CPU with TORCH_LOGS=inductor,recompiles and changing batch sizes: inductor compile-step INFO lines, aten mm overview tables and recompile reasons (this build prints no AUTOTUNE tables for these tiny GEMMs), training finishes"),
 "run39a-torchrun3-recompiles-healthy": ("torchrun", "TORCH_LOGS=recompiles with changing batch sizes and compile_threads=2: recompile reasons on every rank, training finishes"),
 "run39a-spawn3-cppwrapper-healthy": ("mp.spawn", "cpp_wrapper=True with TORCH_LOGS=inductor: inductor INFO lines about compiling the C++ wrapper on every rank, training finishes"),
 "run39a-torchrun3-fxsubproc-healthy": ("torchrun", "TORCHINDUCTOR_FX_COMPILE_MODE=SUBPROCESS, compile_threads=2 and TORCH_LOGS=inductor: FX graphs compile in a compile-worker subprocess, inductor INFO chatter, training finishes"),
}

F = {}  # id: (cat, rank, [regex...], collateral, root_cause, fix, how, launcher, notes)
def f(id, cat, rank, rx, coll, rc, fix, how, launcher, notes=None):
    F[id] = (cat, rank, rx, coll, rc, fix, how, launcher, notes)

WK_NOTE = ("The compile worker was SIGKILLed by the job's own watcher thread (standing in for the OOM killer); the log "
           "only shows Inductor's BrokenProcessPool ('terminated abruptly') wrapped in InductorError, with no signal, "
           "OOM or dmesg evidence, so it is labelled as an Inductor compile-infrastructure failure.")
f("run39a-single-fxsubproc-workerkill", "compile.backend_internal_error", None, [r"InductorError: BrokenProcessPool"], [],
  "The Inductor compile-worker process that was compiling the FX graph (TORCHINDUCTOR_FX_COMPILE_MODE=SUBPROCESS) was killed mid-compile, so torch.compile fails with BrokenProcessPool.",
  "Find what kills the compile worker (memory limit / OOM killer) and give it room, or compile in-process (compile_threads=1, no FX subprocess mode).",
  "cjob.py --launch single --threads 2 --kill-worker, TORCHINDUCTOR_FX_COMPILE_MODE=SUBPROCESS (watcher SIGKILLs the worker running g++)", "single process", WK_NOTE)
f("run39a-single-threads-cxx-segv", "compile.cpp_compile_error", None, [r"CppCompileError: C\+\+ compile error"], [],
  "The C++ compiler Inductor calls crashes (SIGSEGV) on every kernel compile, so the compile in the compile thread pool fails with CppCompileError and empty compiler output.",
  CXXFIX, "cjob.py --launch single --threads 2 --cxx cxx/segv.sh (wrapper kills itself with SIGSEGV), no precompiled headers", "single process",
  "The compiler's crash leaves no output; only the CppCompileError line and its Command carry the failure.")
f("run39a-single-fxsubproc-cxx-exit1", "compile.cpp_compile_error", None,
  [r"cxx wrapper: compiler license check failed", r"InductorError: SubprocException", r"exc.CppCompileError: C\+\+ compile error"], [],
  "The C++ compiler exits 1 ('compiler license check failed') on every kernel compile inside the FX-compile subprocess worker; the CppCompileError comes back wrapped in SubprocException/InductorError.",
  CXXFIX, "cjob.py --launch single --threads 2 --cxx cxx/exit1.sh, TORCHINDUCTOR_FX_COMPILE_MODE=SUBPROCESS", "single process")
f("run39a-single-nostdinc", "compile.cpp_compile_error", None, [r"fatal error: algorithm: No such file or directory"], [],
  "The compiler is run with -nostdinc++, so the C++ standard headers (<algorithm>) are missing and Inductor's cpp_prefix.h fails to compile.",
  "Install/repair the C++ standard library headers (libstdc++-dev) or use a compiler that has them.",
  "cjob.py --launch single --cxx cxx/nostdinc.sh (g++ -nostdinc++)", "single process")
f("run39a-single-cppwrapper-nolink", "compile.cpp_compile_error", None, [r"cannot find -lcuda_stub_missing", r"ld returned 1 exit status"], [],
  "With cpp_wrapper=True the shared-object link step needs a library that is not installed, so ld fails and Inductor raises CppCompileError.",
  "Install the missing library or remove it from the link flags.",
  "cjob.py --launch single --cpp-wrapper --cxx cxx/nolink.sh (adds -lcuda_stub_missing when linking -shared)", "single process")
f("run39a-single-cache-truncated-so", "compile.cache_corruption", None, [r"error: ‘at::vec’ has not been declared"], [],
  "After a first run, the .so files in TORCHINDUCTOR_CACHE_DIR were truncated; on the rerun the FX graph cache hit (cache_hit_post_compile) reuses a corrupt ISA-probe object, Inductor picks no vector ISA and the cached vectorized kernel no longer compiles.",
  "Delete the corrupted TORCHINDUCTOR_CACHE_DIR (or set TORCHINDUCTOR_FORCE_DISABLE_CACHES=1) and rerun.",
  "first run, then `truncate -s 1000` every *.so under the cache dir, then rerun cjob.py --launch single", "single process",
  "The error text is a C++ compile error; the evidence for a cache problem is the traceback through codecache.py cache_hit_post_compile.")
f("run39a-torchrun3-fxsubproc-workerkill-r1", "compile.backend_internal_error", 1, [r"InductorError: BrokenProcessPool"], [TERM],
  "Rank 1's Inductor compile-worker process (FX compile in a subprocess) was killed mid-compile, so rank 1's torch.compile fails with BrokenProcessPool.",
  "Find what kills the compile worker (memory limit / OOM killer) and give it room, or compile in-process.",
  "cjob.py --threads 2 --kill-worker --bad-rank 1, TORCHINDUCTOR_FX_COMPILE_MODE=SUBPROCESS", "torchrun", WK_NOTE)
f("run39a-torchrun3-cxx-exit1-r2", "compile.cpp_compile_error", 2, [r"cxx wrapper: compiler license check failed", r"CppCompileError: C\+\+ compile error"], [TERM],
  "Rank 2's C++ compiler exits 1 on every kernel compile (compile thread pool, compile_threads=2), so rank 2 dies with CppCompileError.",
  CXXFIX, "cjob.py --threads 2 --cxx cxx/exit1.sh --bad-rank 2 (no precompiled headers)", "torchrun")
f("run39a-torchrun3-nomarch-r1", "compile.cpp_compile_error", 1, [r"unrecognized command-line option '-march=native'"], [TERM],
  "Rank 1's compiler rejects the -march=native flag Inductor passes, so its kernel compile fails with CppCompileError.",
  "Use a compiler that accepts -march=native, or one matching the host (the flag comes from Inductor's ISA detection).",
  "cjob.py --cxx cxx/nomarch.sh --bad-rank 1 (wrapper rejects -march=native)", "torchrun")
f("run39a-torchrun3-noomp-r2", "compile.cpp_toolchain_missing", 2, [r"unsupported option '-fopenmp'"], [TERM],
  "Rank 2's compiler has no OpenMP support and rejects -fopenmp, so Inductor's CPU kernel compile fails.",
  "Install a compiler with OpenMP (libgomp/libomp) on that node, or point CXX at one.",
  "cjob.py --cxx cxx/noomp.sh --bad-rank 2 (wrapper fails on -fopenmp)", "torchrun",
  "Labelled toolchain (OpenMP support missing from the compiler), not a source error; the line is the CppCompileError's compiler output.")
f("run39a-torchrun3-cache-readonly-r1", "compile.cache_corruption", 1, [r"Read-only file system"], [TERM],
  "Rank 1's TORCHINDUCTOR_CACHE_DIR is on a read-only mount, so Inductor cannot write its cache entries and rank 1's compile fails.",
  "Point TORCHINDUCTOR_CACHE_DIR at a writable directory on every rank.",
  "mount --bind + remount,ro of rank 1's cache dir (as root); cjob.py --cache-dir <ro> --bad-rank 1", "torchrun")
f("run39a-torchrun3-cache-full-r2", "compile.cache_corruption", 2, [r"No space left on device"], [TERM],
  "Rank 2's TORCHINDUCTOR_CACHE_DIR is a 1 MB tmpfs that fills up while Inductor writes its cache, so rank 2's compile fails with ENOSPC.",
  "Free space or point TORCHINDUCTOR_CACHE_DIR at a filesystem with room.",
  "mount -t tmpfs -o size=1m for rank 2's cache dir; cjob.py --cache-dir <tmpfs> --bad-rank 2", "torchrun")
f("run39a-torchrun3-maxautotune-exit1-r1", "compile.cpp_compile_error", 1, [r"cxx wrapper: compiler license check failed", r"CppCompileError: C\+\+ compile error"], [TERM],
  "Under mode='max-autotune', rank 1's C++ compiler exits 1 on every compile, so rank 1's torch.compile fails with CppCompileError.",
  CXXFIX, "cjob.py --mode max-autotune --threads 2 --cxx cxx/exit1.sh --bad-rank 1", "torchrun")
f("run39a-spawn3-cppwrapper-nostdinc-r2", "compile.cpp_compile_error", 2, [r"fatal error: \w+: No such file or directory"], [SPAWN],
  "With cpp_wrapper=True, rank 2's compiler runs with -nostdinc++ so the C++ standard headers (<array>) are missing and the compile fails.",
  "Install/repair the C++ standard library headers on that node or use a compiler that has them.",
  "cjob.py --launch spawn --cpp-wrapper --cxx cxx/nostdinc.sh --bad-rank 2", "mp.spawn")
f("run39a-spawn3-threads-segv-r1", "compile.cpp_compile_error", 1, [r"CppCompileError: C\+\+ compile error"], [SPAWN],
  "Rank 1's C++ compiler crashes (SIGSEGV) on every kernel compile in the compile thread pool; CppCompileError with empty output.",
  CXXFIX, "cjob.py --launch spawn --threads 2 --cxx cxx/segv.sh --bad-rank 1 (no precompiled headers)", "mp.spawn",
  "The compiler's crash leaves no output; only the CppCompileError line and its Command carry the failure.")

f("run39a-torchrun3-cache-truncated-py-r1", "compile.cache_corruption", 1, [r"SyntaxError: invalid syntax", r"RuntimeError: Failed to import"], [TERM],
  "After a first run, rank 1's cached Inductor output-code .py files were truncated; on the rerun rank 1's FX graph cache hit loads the truncated module and fails with SyntaxError.",
  "Delete rank 1's corrupted TORCHINDUCTOR_CACHE_DIR (or set TORCHINDUCTOR_FORCE_DISABLE_CACHES=1) and rerun.",
  "per-rank cache dirs (--rank-cache); first run, then `truncate -s 300` rank 1's output-code *.py; rerun", "torchrun")
f("run39a-torchrun3-shared-cache-rm-r1", "compile.cache_corruption", 1, [r"FileNotFoundError: \[Errno 2\] No such file or directory: .*/locks/"], [TERM],
  "All ranks share one TORCHINDUCTOR_CACHE_DIR and rank 1 deletes it repeatedly while compiling; rank 1's own compile then fails because its cache lock file vanished (FileNotFoundError).",
  "Do not delete the Inductor cache directory while jobs use it; give each job (or rank) its own TORCHINDUCTOR_CACHE_DIR.",
  "cjob.py --rm-cache --bad-rank 1 --vary-shapes (thread doing shutil.rmtree(cache dir) every 20 ms)", "torchrun")

f("run39a-spawn3-memcg-cc1plus-r1", "mem.host_oom", 1, [r"Killed signal terminated program cc1plus"], [SPAWN],
  "Rank 1's C++ compiles run inside a 48 MB memory cgroup; the kernel OOM killer kills cc1plus mid-compile, so rank 1's Inductor compile fails with CppCompileError.",
  "Give the compile more memory (raise the container/cgroup memory limit) or lower compile parallelism.",
  "cjob.py --launch spawn --cxx cxx/memcg.sh --bad-rank 1; the wrapper moves itself into /sys/fs/cgroup/memory/w39a_cc (memory.limit_in_bytes and memsw = 48M) before exec g++", "mp.spawn",
  "The log shows g++'s 'Killed signal terminated program cc1plus' inside a CppCompileError: the compiler was OOM-killed, not a source error, hence mem.host_oom.")


def first(path, rx):
    for line in Path(path).read_text(errors="replace").splitlines():
        if re.search(rx, line):
            return line
    return None


EXTRA = {}  # filled by run-specific additions below (cases whose outcome is decided after looking at the log)
if Path(__file__).with_name("labels_extra.py").exists():
    exec(Path(__file__).with_name("labels_extra.py").read_text())

for d in sorted(OUT.glob("run39a-*")):
    cid = d.name
    log = d / "log.txt"
    if not log.exists():
        continue
    base = {"id": cid, "source": SRC.format(id=cid), "framework": "plain", "genuine": False, "operator": None,
            "confirmed_by": "induced", "confidence": "high"}
    if cid in H:
        launcher, shows = H[cid]
        lab = dict(base, category="none", fatal=False, decisive_line=None, also_acceptable=[], initiating_rank=None,
                   collateral=[], root_cause=None, fix=None, launcher=launcher, genuine=True,
                   induced_how="healthy run: " + shows)
    elif cid in F:
        cat, rank, rxs, coll, rc, fix, how, launcher, notes = F[cid]
        dl = first(log, rxs[0])
        assert dl is not None, (cid, rxs[0])
        also = [x for x in (first(log, r) for r in rxs[1:]) if x and x != dl]
        lab = dict(base, category=cat, fatal=True, decisive_line=dl, also_acceptable=also, initiating_rank=rank,
                   collateral=coll, root_cause=rc, fix=fix, launcher=launcher, induced_how=how)
        if notes:
            lab["notes"] = notes
    else:
        print("no label for", cid); continue
    text = log.read_text(errors="replace")
    for s in [lab["decisive_line"]] + lab["also_acceptable"]:
        assert s is None or s in text, (cid, s)
    (d / "label.json").write_text(json.dumps(lab, indent=1, ensure_ascii=False) + "\n")
    print(cid, lab["category"], lab["initiating_rank"])
