# Labels of round 28b, read by mk_label.py (exec'd; fills dict C). One entry per case id of run_all.sh.
# decisive: the line stating the ROOT exception (for chains the first cause; for rich boxes the final
# "ExcType: message" line as rich prints it, ANSI codes included where the log has them).
E = "\x1b"
PEER = "the other ranks fail with gloo 'Connection closed by peer' RuntimeErrors and/or are SIGTERMed by the launcher"
FIX_KEY = "make the shard cache/manifest complete (or handle a missing key) before training"
FIX_W = "fix the data pipeline so every batch has the model's 8 input features (or validate shards before training)"
FIX_FILE = "make the shard file exist (check data_dir / the shard list) before training"
FIX_CMP = "make forward branchless (torch.where / torch.cond) or compile without fullgraph=True"
C = {
 "run28b-rich-single-keyerror": dict(category="user.code_error", decisive="KeyError: 'shard-00003'", rank=0,
   launcher="python", renderer="rich", how="single process; rich.traceback.install(show_locals=False); the shard "
   "cache lacks shard-00003, KeyError at step 3, printed as a boxed rich traceback",
   root_cause="the training loop looked up a shard key that is missing from the shard cache (KeyError)", fix=FIX_KEY),
 "run28b-rich-torchrun-valueerror": dict(category="user.code_error",
   decisive="ValueError: shard-00003: expected 8 features per sample, got 12", rank=1, collateral=[PEER],
   launcher="torchrun", renderer="rich", how="torchrun 3 ranks, rich tracebacks; rank 1 gets a 12-feature batch at "
   "step 3 and raises ValueError (rich box with [rank1]: prefixes)",
   root_cause="rank 1's data loading produced a batch with 12 features instead of 8 and raised ValueError", fix=FIX_W),
 "run28b-rich-single-compile": dict(category="compile.graph_break_data_dependent",
   decisive="Unsupported: Data-dependent branching", rank=0, launcher="python", renderer="rich",
   how="single process; torch.compile(model, fullgraph=True) of a forward with `if h.mean() > 0.0:`; dynamo's "
   "Unsupported error printed in a rich box (rich prints the bare class name)",
   root_cause="fullgraph=True compilation hit a data-dependent Python branch on a tensor value", fix=FIX_CMP),
 "run28b-rich-torchrun-forcecolor": dict(category="user.code_error",
   decisive=f"KeyError: {E}[0m{E}[32m'shard-00003'", rank=2, collateral=[PEER], launcher="torchrun",
   renderer="rich (FORCE_COLOR=1, ANSI colour codes in the log)", how="torchrun 3 ranks with FORCE_COLOR=1 so rich "
   "colours its output although stderr is a file; rank 2's shard cache lacks shard-00003 -> KeyError at step 3",
   root_cause="rank 2 looked up a shard key missing from its shard cache (KeyError)", fix=FIX_KEY),
 "run28b-rich-torchrun-exceptiongroup": dict(category="user.code_error",
   decisive="ValueError: corrupt record in shard-00003 part 2", rank=2, collateral=[PEER], launcher="torchrun",
   renderer="rich", how="torchrun 3 ranks, rich tracebacks; rank 2's asyncio.TaskGroup prefetcher: one fetch task "
   "raises ValueError at step 3 -> ExceptionGroup('unhandled errors in a TaskGroup') rendered by rich",
   root_cause="a prefetch task on rank 2 read a corrupt record (ValueError), surfaced as a TaskGroup ExceptionGroup",
   fix="repair or skip the corrupt shard part; handle prefetch errors inside the task"),
 "run28b-loguru-torchrun-keyerror": dict(category="user.code_error", decisive="KeyError: 'shard-00003'", rank=2,
   collateral=["ranks 0 and 1 log loguru 'An error has been caught' with gloo 'Connection closed by peer' RuntimeErrors"],
   launcher="torchrun", renderer="loguru", how="torchrun 3 ranks; train() wrapped in loguru @logger.catch(onerror=exit 1); "
   "rank 2's shard cache lacks shard-00003 -> KeyError at step 3 in loguru's annotated (diagnose) format",
   root_cause="rank 2 looked up a shard key missing from its shard cache (KeyError)", fix=FIX_KEY),
 "run28b-loguru-torchrun-compile": dict(category="compile.graph_break_data_dependent",
   decisive="torch._dynamo.exc.Unsupported: Data-dependent branching", rank=1,
   collateral=["ranks 0 and 2 log gloo 'Connection closed by peer' RuntimeErrors via loguru"], launcher="torchrun",
   renderer="loguru", how="torchrun 3 ranks, loguru @logger.catch; only rank 1 compiles its model with "
   "torch.compile(fullgraph=True); the forward has a data-dependent `if` -> Unsupported on the first step",
   root_cause="rank 1's fullgraph=True compilation hit a data-dependent Python branch", fix=FIX_CMP),
 "run28b-loguru-script-ansi": dict(category="user.code_error",
   decisive=f"{E}[31m{E}[1mValueError{E}[0m:{E}[1m shard-00003: expected 8 features per sample, got 12", rank=1,
   collateral=[PEER], launcher="torchrun", renderer="loguru (colours, under script -q: pty, CRLF line endings)",
   how="the whole torchrun job run under `script -q -e -c ... /dev/null` (a pty), so loguru colours its output and "
   "the tty turns \\n into \\r\\n; rank 1 gets a 12-feature batch at step 3 -> ValueError",
   root_cause="rank 1's data loading produced a 12-feature batch and raised ValueError", fix=FIX_W),
 "run28b-structlog-torchrun-cause": dict(category="user.code_error",
   decisive=f"FileNotFoundError: {E}[0m{E}[1m[{E}[0mErrno", rank=1, collateral=[PEER], launcher="torchrun",
   renderer="structlog ConsoleRenderer (exception via rich, colours)", how="torchrun 3 ranks, structlog "
   "log.exception('training failed') then exit 1; rank 1: torch.load of /data/train/shard-00003.pt -> "
   "FileNotFoundError, re-raised as RuntimeError('could not load shard 3 ...') from e",
   root_cause="rank 1's shard file /data/train/shard-00003.pt does not exist (FileNotFoundError, re-raised as "
   "RuntimeError 'could not load shard')", fix=FIX_FILE),
 "run28b-structjson-spawn-valueerror": dict(category="user.code_error",
   decisive='"exc_type": "ValueError", "exc_value": "shard-00003: expected 8 features per sample, got 12"', rank=2,
   collateral=["ranks 0 and 1 log JSON exceptions with gloo 'Connection closed by peer'", "mp.spawn: "
   "ProcessExitedException: process 2 terminated with exit code 1"], launcher="mp.spawn",
   renderer="structlog JSONRenderer + dict_tracebacks", how="mp.spawn 3 ranks; structlog JSON logs, "
   "log.exception then sys.exit(1); rank 2 gets a 12-feature batch at step 3 -> ValueError as a JSON exception",
   root_cause="rank 2's data loading produced a 12-feature batch and raised ValueError", fix=FIX_W),
 "run28b-hydra-single-error": dict(category="user.code_error",
   decisive="FileNotFoundError: [Errno 2] No such file or directory: '/data/train/shard-00003.pt'", rank=0,
   launcher="python", framework="hydra", renderer="hydra (Error executing job with overrides, trimmed traceback)",
   how="@hydra.main app; the task torch.loads cfg.data_dir/shard-00003.pt at step 3, which does not exist",
   root_cause="the shard file /data/train/shard-00003.pt under cfg.data_dir does not exist", fix=FIX_FILE),
 "run28b-hydra-single-fullerror": dict(category="user.code_error",
   decisive="ValueError: model expects 8 input features, got 12 (batch shape (16, 12))", rank=0, launcher="python",
   framework="hydra", renderer="hydra with HYDRA_FULL_ERROR=1 (full traceback)",
   how="@hydra.main app with HYDRA_FULL_ERROR=1; fault=bad_width: step 3's batch has 12 features -> ValueError",
   root_cause="the batch at step 3 has 12 features but the model expects 8 (ValueError in the input check)", fix=FIX_W),
 "run28b-plain-torchrun-chain-cause": dict(category="user.code_error",
   decisive="FileNotFoundError: [Errno 2] No such file or directory: '/data/train/shard-00003.pt'", rank=2,
   collateral=[PEER], launcher="torchrun", renderer="plain (chained: direct cause)",
   how="torchrun 3 ranks; rank 2: torch.load of a missing shard -> FileNotFoundError, re-raised as "
   "RuntimeError('could not load shard 3 ...') from e ('The above exception was the direct cause ...')",
   root_cause="rank 2's shard file /data/train/shard-00003.pt does not exist", fix=FIX_FILE),
 "run28b-plain-spawn-chain-context": dict(category="user.code_error",
   decisive="FileNotFoundError: [Errno 2] No such file or directory: '/data/train/shard-00003.pt'", rank=1,
   collateral=["mp.spawn ProcessRaisedException wrapping rank 1's traceback; other ranks SIGTERMed"], launcher="mp.spawn",
   renderer="plain (chained: 'During handling of the above exception')",
   how="mp.spawn 3 ranks; rank 1: torch.load of a missing shard -> FileNotFoundError, and the except block raises "
   "RuntimeError('data loader failed at step 3') (implicit context)",
   root_cause="rank 1's shard file /data/train/shard-00003.pt does not exist", fix=FIX_FILE),
 "run28b-plain-torchrun-exceptiongroup": dict(category="user.code_error",
   decisive="ValueError: corrupt record in shard-00003 part 2: bad magic number 0x00000000", rank=1,
   collateral=[PEER], launcher="torchrun", renderer="plain (ExceptionGroup from asyncio.TaskGroup)",
   how="torchrun 3 ranks; rank 1's asyncio.TaskGroup prefetcher: one fetch task raises ValueError at step 3 -> "
   "'ExceptionGroup: unhandled errors in a TaskGroup (1 sub-exception)'",
   root_cause="a prefetch task on rank 1 read a corrupt record (ValueError), surfaced as a TaskGroup ExceptionGroup",
   fix="repair or skip the corrupt shard part; handle prefetch errors inside the task"),
 "run28b-pytest-spawn-keyerror": dict(category="user.code_error", decisive="KeyError: 'shard-00003'", rank=1,
   collateral=["pytest reports ProcessRaisedException in test_ddp_allreduce_step; ranks 0 and 2 SIGTERMed"],
   launcher="mp.spawn", framework="pytest", renderer="pytest (E lines, short test summary)",
   how="pytest -k 'ddp or loss' on test_dist28b.py: a test mp.spawns 3 gloo ranks; rank 1's shard cache lacks "
   "shard-00003 -> KeyError at step 3; test_loss_decreases passes",
   root_cause="rank 1 looked up a shard key missing from its shard cache (KeyError) inside the DDP test", fix=FIX_KEY),
 "run28b-pytest-compile-fullgraph": dict(category="compile.graph_break_data_dependent",
   decisive="torch._dynamo.exc.Unsupported: Data-dependent branching", rank=0, launcher="python", framework="pytest",
   renderer="pytest (E lines, short test summary)", how="pytest -k 'compiled or loss': torch.compile(fullgraph=True) "
   "of a module whose forward branches on h.sum() > 0; test_loss_decreases passes",
   root_cause="fullgraph=True compilation hit a data-dependent Python branch", fix=FIX_CMP),
 "run28b-tqdm-torchrun-midbar": dict(category="user.code_error", decisive="KeyError: 'shard-00004'", rank=1,
   collateral=[PEER], launcher="torchrun", renderer="plain + tqdm bars on every rank",
   how="torchrun 3 ranks each with a tqdm bar (\\r updates, mininterval=0); rank 1's shard cache lacks shard-00004 -> "
   "KeyError at step 4, mid-bar", root_cause="rank 1 looked up a shard key missing from its shard cache (KeyError)",
   fix=FIX_KEY),
 "run28b-tqdm-torchrun-noleave": dict(category="user.code_error",
   decisive="ValueError: shard-00005: expected 8 features per sample, got 12", rank=2, collateral=[PEER],
   launcher="torchrun", renderer="plain + tqdm bars (leave=False)", how="torchrun 3 ranks with tqdm bars, leave=False "
   "(closed bars blanked with \\r, no newline); rank 2 gets a 12-feature batch at step 5 -> ValueError",
   root_cause="rank 2's data loading produced a 12-feature batch and raised ValueError", fix=FIX_W),
 "run28b-crlf-torchrun-valueerror": dict(category="user.code_error",
   decisive="ValueError: shard-00003: expected 8 features per sample, got 12", rank=2, collateral=[PEER],
   launcher="torchrun", renderer="plain, CRLF line endings", how="torchrun 3 ranks, combined output piped through "
   "sed 's/$/\\r/' (a real line-ending transformation, as unix2dos / a Windows-side collector does): every line ends "
   "with \\r\\n; rank 2 gets a 12-feature batch at step 3 -> ValueError",
   root_cause="rank 2's data loading produced a 12-feature batch and raised ValueError", fix=FIX_W),
 "run28b-faulthandler-torchrun-segv": dict(category="user.code_error", decisive="Fatal Python error: Segmentation fault",
   also=["failed (exitcode: -11) local_rank: 1"], rank=1, collateral=["ranks 0 and 2 fail with gloo 'Connection reset "
   "by peer' RuntimeErrors"], launcher="torchrun", renderer="faulthandler", how="torchrun 3 ranks; rank 1 enables "
   "faulthandler and calls ctypes.string_at(0) at step 3 -> SIGSEGV, faulthandler dumps the Python stack",
   root_cause="rank 1's own code dereferenced a NULL pointer through ctypes (segmentation fault)",
   fix="fix the native/ctypes call that reads address 0"),
 "run28b-faulthandler-torchrun-watchdog": dict(category="dist.collective_timeout", decisive="Timeout (0:00:15)!", rank=1,
   collateral=["ranks 0 and 2 dump their stacks (stuck in backward's all_reduce) and exit 1; rank 1 SIGTERMed"],
   launcher="torchrun", renderer="faulthandler.dump_traceback_later", how="torchrun 3 ranks; rank 1 sleeps 120 s "
   "before step 2 (silent); ranks 0 and 2 armed faulthandler.dump_traceback_later(15, exit=True), which fires while "
   "they wait in DDP's gradient all_reduce",
   root_cause="rank 1 stalled (silent) before the step-2 collectives, so the other ranks waited until their watchdog fired",
   fix="find why rank 1 stalls (here a 120 s sleep before the step) and remove it"),
 "run28b-loguru-torchrun-handled-ok": dict(category="none", launcher="torchrun", renderer="loguru",
   how="torchrun 3 ranks; rank 1 hits a bad shard at step 3, logger.exception logs the ValueError traceback, a "
   "fallback batch is used and training completes", root_cause="no failure: a handled, logged ValueError",
   fix="none needed"),
 "run28b-rich-single-handled-ok": dict(category="none", launcher="python", renderer="rich (RichHandler, rich_tracebacks)",
   how="single process; a bad shard at step 3 is logged with log.exception (rich boxed traceback) and replaced by a "
   "fallback batch; training completes", root_cause="no failure: a handled, logged ValueError", fix="none needed"),
 "run28b-structlog-spawn-handled-ok": dict(category="none", launcher="mp.spawn", renderer="structlog ConsoleRenderer",
   how="mp.spawn 3 ranks; rank 2 hits a bad shard at step 3, log.exception logs the ValueError with a traceback, a "
   "fallback batch is used and training completes", root_cause="no failure: a handled, logged ValueError",
   fix="none needed"),
}
for _e in C.values():
    _e.setdefault("collateral", [])
