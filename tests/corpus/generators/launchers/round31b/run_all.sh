#!/usr/bin/env bash
# Round 31b: (part 1, "oldapi") code written for older PyTorch releases run on torch 2.13.0+cpu, and (part 2, "cpp")
# torch.compile with the default inductor backend (C++ kernels on CPU) where only one rank gets a broken C++
# toolchain / cache setup. Launchers: torchrun --nproc-per-node 3 (gloo) or a single python process.
# Usage: run_all.sh [OUT_DIR] [case-id ...]   (default OUT_DIR=/work/helpers/stage31b; default: all cases)
# Venv V (default /work/helpers/venv31b): torch==2.13.0 numpy. Each case writes OUT/<id>/log.txt (launcher
# stdout+stderr; venv path -> /opt/venv, script and work dirs -> /home/user/job) and label.json (mk_label.py from
# labels31b.py: checks the exit code and that decisive_line is a substring of a log line).
# Needs root for run31b-cpp-rocache (a read-only bind mount at /tmp/r31b_ro, unmounted at the end).
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=${1:-/work/helpers/stage31b}; shift || true
V=${V:-/work/helpers/venv31b}
WORK=${WORK:-/tmp/r31b}
RO=/tmp/r31b_ro
mkdir -p "$OUT" "$WORK"
ONLY=" $* "
want() { [ "$ONLY" = "  " ] || [[ "$ONLY" == *" $1 "* ]]; }
rewrite() { sed -i -e "s#$V#/opt/venv#g" -e "s#$HERE#/home/user/job#g" -e "s#$RO#/home/user/job/inductor_cache_ro#g" -e "s#$WORK#/home/user/job#g" "$@"; }

run_case() {   # run_case <id> <command...>
  local id=$1; shift
  want "$id" || return 0
  rm -rf "$OUT/$id"; mkdir -p "$OUT/$id"
  echo "== $id: $*"
  ( cd "$WORK" && PATH="$V/bin:$PATH" exec setsid timeout 300 "$@" ) > "$OUT/$id/log.txt" 2>&1 &
  local pid=$!; wait $pid; local rc=$?
  kill -9 -- -$pid 2>/dev/null   # the whole session (launcher and ranks)
  echo "   exit code $rc"
  rewrite "$OUT/$id/log.txt"
  python3 "$HERE/mk_label.py" "$OUT/$id" "$id" "$rc"
}
O=$HERE/old31b.py
P=$HERE/cpp31b.py
export PYTHONUNBUFFERED=1
TR() { echo torchrun --nproc-per-node 3 --master-port "$1"; }

# ===================== part 1: old-release idioms =====================
# argparse --local_rank required=True (torch.distributed.launch era) under torchrun -> argparse error, exit 2, every rank
run_case run31b-oldapi-localrank $(TR 45201) "$O" --case localrank --steps 10
# from torch._six import inf (removed in 2.0) -> ModuleNotFoundError, single process
run_case run31b-oldapi-six python "$O" --case six
# torch.cuda.amp.GradScaler()/autocast() on CPU -> FutureWarning + "CUDA is not available. Disabling." only; exit 0
run_case run31b-oldapi-cudaamp $(TR 45203) "$O" --case cudaamp --steps 10
# torch.load of a whole pickled object with the 2.6+ default weights_only=True -> UnpicklingError, single process
( want run31b-oldapi-oldckpt && rm -f "$WORK/old_ckpt.pt" )
run_case run31b-oldapi-oldckpt python "$O" --case oldckpt
# torch._dynamo.config.dynamic_shapes=True (removed option) + suppress_errors -> accepted silently; exit 0
run_case run31b-oldapi-dynconf $(TR 45205) "$O" --case dynconf --steps 10
# init_process_group(backend="nccl") on a CPU-only build -> "Distributed package doesn't have NCCL built in", every rank
run_case run31b-oldapi-nccl $(TR 45206) "$O" --case nccl
# DDP(find_unused_parameters=False) with an unused aux_head -> "Expected to have finished reduction..." every rank
run_case run31b-oldapi-unused $(TR 45207) "$O" --case unused --steps 10

# ===================== part 2: inductor C++ backend broken on one rank =====================
rm -rf "$WORK/inductor_cache"
run_case run31b-cpp-healthy $(TR 45211) "$P" --fault none --steps 10
# rank 1: CXX=/nonexistent/g++ -> InvalidCxxCompiler
run_case run31b-cpp-cxxmissing $(TR 45212) "$P" --fault cxxmissing --bad-rank 1 --steps 10
# rank 2: torch._inductor.config.cpp.cxx = (None, "/opt/toolchain/bin/g++-12") -> InvalidCxxCompiler
run_case run31b-cpp-cxxconfig $(TR 45213) "$P" --fault cxxconfig --bad-rank 2 --steps 10
# rank 2: torch._inductor.config.cpp.march = "does-not-exist" -> g++ "bad value for -march", CppCompileError
run_case run31b-cpp-march $(TR 45214) "$P" --fault march --bad-rank 2 --steps 10
# rank 1: TORCHINDUCTOR_CACHE_DIR on a read-only bind mount -> OSError [Errno 30] Read-only file system
if want run31b-cpp-rocache; then
  mkdir -p "$RO"; mountpoint -q "$RO" || { mount --bind "$RO" "$RO" && mount -o remount,ro,bind "$RO"; }
  run_case run31b-cpp-rocache $(TR 45215) "$P" --fault rocache --bad-rank 1 --ro-dir "$RO" --steps 10
  umount "$RO"; rmdir "$RO"
fi
# rank 1: TORCHINDUCTOR_CACHE_DIR is an existing regular file -> FileExistsError at import of torch._inductor
run_case run31b-cpp-filecache $(TR 45216) "$P" --fault filecache --bad-rank 1 --steps 10
