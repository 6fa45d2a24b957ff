#!/usr/bin/env bash
# Round 28b: real CPU/gloo jobs whose failure is printed by other renderers / in other shapes than a plain Python
# traceback: rich boxed tracebacks, loguru's @logger.catch, structlog (console and JSON), Hydra's "Error executing
# job", chained exceptions, ExceptionGroup, pytest, tqdm bars, ANSI colours (script / FORCE_COLOR), CRLF line endings,
# faulthandler (segfault, watchdog). Launchers: python (single process), torchrun --nproc-per-node 3, mp.spawn(3).
# Usage: run_all.sh [OUT_DIR] [case-id ...]   (default OUT_DIR=/work/helpers/stage28b; default: all cases)
# Venv V (default /work/helpers/venv28b): torch 2.13.0+cpu, numpy, rich, loguru, hydra-core, tqdm, structlog, pytest.
# Each case writes OUT/<id>/log.txt (stdout+stderr; venv path -> /opt/venv, work dir -> /home/user/job) and
# label.json (mk_label.py from labels28b.py; checks the exit code and that decisive_line is in one log line).
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=${1:-/work/helpers/stage28b}; shift || true
V=${V:-/work/helpers/venv28b}
WORK=${WORK:-/tmp/r28b/job}      # scratch working dir; the programs are copied here and run from here
mkdir -p "$OUT" "$WORK"
cp "$HERE"/job28b.py "$HERE"/hydra_job.py "$HERE"/test_dist28b.py "$WORK"/
ONLY=" $* "
want() { [ "$ONLY" = "  " ] || [[ "$ONLY" == *" $1 "* ]]; }
rewrite() { sed -i -e "s#$V#/opt/venv#g" -e "s#$WORK#/home/user/job#g" -e "s#$HERE#/home/user/job#g" "$@"; }

run_case() {   # run_case <id> <command...>   (runs in $WORK in its own session, killed as a whole afterwards)
  local id=$1; shift
  want "$id" || return 0
  rm -rf "$OUT/$id"; mkdir -p "$OUT/$id"; rm -rf "$WORK/outputs"
  echo "== $id: $*"
  ( cd "$WORK" && PATH="$V/bin:$PATH" exec setsid timeout 300 "$@" ) > "$OUT/$id/log.txt" 2>&1 &
  local pid=$!; wait $pid; local rc=$?
  kill -9 -- -$pid 2>/dev/null
  echo "   exit code $rc"
  rewrite "$OUT/$id/log.txt"
  python3 "$HERE/mk_label.py" "$OUT/$id" "$id" "$rc"
}
export PYTHONUNBUFFERED=1
J=job28b.py
TR() { echo torchrun --nproc-per-node 3 --master-port "$1"; }

# ---------- rich.traceback.install(show_locals=False) + RichHandler ----------
# single process: KeyError in the shard lookup at step 3 -> boxed rich traceback
run_case run28b-rich-single-keyerror python $J --renderer rich --fault keyerror --fail-rank 0
# torchrun 3 ranks: rank 1 raises ValueError (wrong feature width) at step 3 -> rich box from rank 1, ChildFailedError
run_case run28b-rich-torchrun-valueerror $(TR 29611) $J --renderer rich --fault valueerror --fail-rank 1
# single process: torch.compile(fullgraph=True) on a data-dependent `if` -> Unsupported in a rich box
run_case run28b-rich-single-compile python $J --renderer rich --fault compile --fail-rank 0
# FORCE_COLOR=1: rich writes ANSI colour codes into the (non-tty) log; torchrun rank 2 raises KeyError
run_case run28b-rich-torchrun-forcecolor env FORCE_COLOR=1 $(TR 29612) $J --renderer rich --fault keyerror --fail-rank 2

# torchrun: rank 2's asyncio.TaskGroup prefetcher fails -> ExceptionGroup rendered by rich
run_case run28b-rich-torchrun-exceptiongroup $(TR 29613) $J --renderer rich --fault group --fail-rank 2

# ---------- loguru: @logger.catch(onerror=sys.exit(1)) around train() ----------
run_case run28b-loguru-torchrun-keyerror $(TR 29621) $J --renderer loguru --fault keyerror --fail-rank 2
# torchrun: rank 1 alone compiles its model with fullgraph=True -> Unsupported: Data-dependent branching, via loguru
run_case run28b-loguru-torchrun-compile $(TR 29622) $J --renderer loguru --fault compile --fail-rank 1
# whole torchrun job under `script -q -c` (a pty): loguru colours, \r\n line endings from the tty; rank 1 ValueError
run_case run28b-loguru-script-ansi script -q -e -c "$(TR 29623) $J --renderer loguru --fault valueerror --fail-rank 1" /dev/null

# ---------- structlog ----------
# ConsoleRenderer (exception via rich, installed), chain: FileNotFoundError -> RuntimeError("could not load shard") from e
run_case run28b-structlog-torchrun-cause $(TR 29631) $J --renderer structlog --fault cause --fail-rank 1
# JSONRenderer + dict_tracebacks, mp.spawn: rank 2 ValueError logged as JSON, exit 1 -> ProcessExitedException
run_case run28b-structjson-spawn-valueerror python $J --renderer structjson --fault valueerror --fail-rank 2 --spawn 3 --port 29632

# ---------- Hydra ----------
run_case run28b-hydra-single-error python hydra_job.py fault=missing_shard lr=0.1
run_case run28b-hydra-single-fullerror env HYDRA_FULL_ERROR=1 python hydra_job.py fault=bad_width steps=6

# ---------- chained exceptions / ExceptionGroup (default Python renderer) ----------
run_case run28b-plain-torchrun-chain-cause $(TR 29641) $J --renderer plain --fault cause --fail-rank 2
run_case run28b-plain-spawn-chain-context python $J --renderer plain --fault context --fail-rank 1 --spawn 3 --port 29642
run_case run28b-plain-torchrun-exceptiongroup $(TR 29643) $J --renderer plain --fault group --fail-rank 1

# ---------- pytest ----------
run_case run28b-pytest-spawn-keyerror python -m pytest -p no:cacheprovider test_dist28b.py -k "ddp or loss"
run_case run28b-pytest-compile-fullgraph python -m pytest -p no:cacheprovider test_dist28b.py -k "compiled or loss"

# ---------- tqdm bars on every rank (\r updates), rank 1 raises mid-bar ----------
run_case run28b-tqdm-torchrun-midbar $(TR 29651) $J --renderer plain --tqdm --fault keyerror --fail-rank 1 --fail-step 4
# same with leave=False bars (closed bars are blanked with \r, no newline) and rank 2 raising ValueError at step 5
run_case run28b-tqdm-torchrun-noleave $(TR 29652) $J --renderer plain --tqdm --tqdm-leave 0 --fault valueerror --fail-rank 2 --fail-step 5

# ---------- CRLF: the job's combined output piped through sed 's/$/\r/' (as a Windows-side log collector does) ----------
run_case run28b-crlf-torchrun-valueerror bash -o pipefail -c "$(TR 29661) $J --renderer plain --fault valueerror --fail-rank 2 2>&1 | sed 's/\$/\r/'"

# ---------- faulthandler ----------
# rank 1: ctypes.string_at(0) with faulthandler enabled -> Fatal Python error: Segmentation fault, exitcode -11
run_case run28b-faulthandler-torchrun-segv $(TR 29671) $J --renderer plain --fault segv --fail-rank 1
# rank 1 sleeps 120 s before the all_reduce; ranks 0, 2 have faulthandler.dump_traceback_later(15, exit=True)
run_case run28b-faulthandler-torchrun-watchdog $(TR 29672) $J --renderer plain --fault hang --fail-rank 1 --fail-step 2 --watchdog-s 15

# ---------- HEALTHY: handled, logged exceptions (exit 0) ----------
run_case run28b-loguru-torchrun-handled-ok $(TR 29681) $J --renderer loguru --fault handled --fail-rank 1
run_case run28b-rich-single-handled-ok python $J --renderer rich --fault handled --fail-rank 0
run_case run28b-structlog-spawn-handled-ok python $J --renderer structlog --fault handled --fail-rank 2 --spawn 3 --port 29683
echo "done: $OUT"
