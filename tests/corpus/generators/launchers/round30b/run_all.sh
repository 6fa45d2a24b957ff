#!/usr/bin/env bash
# Round 30b: real CPU/gloo plain-PyTorch jobs (3 ranks, torch 2.13.0+cpu) that print diagnostic/debug output that
# looks like trouble: ~10 healthy runs (exit 0) and 5 that fail on one non-zero rank amid the same kind of output.
# Launchers: torchrun --nproc-per-node 3 (some with --tee 3) and torch.multiprocessing.spawn (diag30b.py --spawn).
# Usage: run_all.sh [OUT_DIR] [case-id ...]   (default OUT_DIR=/work/helpers/stage30b; default: all cases)
# Venv V (default /work/helpers/venv30b): torch==2.13.0 numpy. Each case writes OUT/<id>/log.txt (launcher
# stdout+stderr; venv path -> /opt/venv, script and work dirs -> /home/user/job) and label.json (mk_label.py from
# labels30b.py: checks the exit code and that decisive_line is a substring of a log line).
# Needs root for the hostoom case (cgroup v1 memory cgroup at /sys/fs/cgroup/memory).
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=${1:-/work/helpers/stage30b}; shift || true
V=${V:-/work/helpers/venv30b}
WORK=${WORK:-/tmp/r30b}
mkdir -p "$OUT" "$WORK"
ONLY=" $* "
want() { [ "$ONLY" = "  " ] || [[ "$ONLY" == *" $1 "* ]]; }
rewrite() { sed -i -e "s#$V#/opt/venv#g" -e "s#$HERE#/home/user/job#g" -e "s#$WORK#/home/user/job#g" "$@"; }

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
S=$HERE/diag30b.py
export PYTHONUNBUFFERED=1
TR() { echo torchrun --nproc-per-node 3 --master-port "$1"; }

# ===================== HEALTHY (exit 0) =====================
# c10d's own INFO logging (TCPStore, sockets, process group creation) on every rank
run_case run30b-torchrun-healthy-cpplog env TORCH_CPP_LOG_LEVEL=INFO TORCH_DISTRIBUTED_DEBUG=INFO $(TR 44801) "$S" --diag cpplog --steps 20
# faulthandler.register(SIGUSR1): rank 0 sends SIGUSR1 to rank 2 at step 8 -> "Thread 0x... (most recent call first)" dump
run_case run30b-torchrun-healthy-usr1dump $(TR 44802) --tee 3 "$S" --diag usr1 --steps 25
# job's own watchdog: rank 1 is slow at steps 5, 11, 17 -> "step took 2.5s > 2.0s threshold, possible straggler rank 1"
run_case run30b-spawn-healthy-watchdog env MASTER_PORT=44803 python "$S" --spawn --diag watchdog --steps 24
# torch.profiler key_averages() tables printed at the end on every rank
run_case run30b-torchrun-healthy-profiler $(TR 44804) "$S" --diag profiler --steps 20
# tracemalloc top-10 allocations at the end (rank 0)
run_case run30b-spawn-healthy-tracemalloc env MASTER_PORT=44805 python "$S" --spawn --diag tracemalloc --steps 20
# PYTHONWARNINGS=always: a DeprecationWarning and torch's copy-construct UserWarning on every step of every rank
run_case run30b-torchrun-healthy-warnings env PYTHONWARNINGS=always $(TR 44806) "$S" --diag warnings --steps 20
# fake metrics endpoint: ConnectionResetError (with traceback) and TimeoutError caught and retried, then OK
run_case run30b-spawn-healthy-retry env MASTER_PORT=44807 python "$S" --spawn --diag retry --steps 30
# torch.autograd.set_detect_anomaly(True): anomaly-mode UserWarning, no NaN
run_case run30b-torchrun-healthy-anomaly $(TR 44808) "$S" --diag anomaly --steps 20
# rank 1 injects inf into one gradient at step 6: every rank logs "grad norm inf, skipping step 6" and continues
run_case run30b-spawn-healthy-gradskip env MASTER_PORT=44809 python "$S" --spawn --diag gradskip --steps 25
# rank 2's own memory monitor logs "OOM risk: 9x% RSS of limit" (cache capped, limit 800 MiB configured)
run_case run30b-torchrun-healthy-memmon $(TR 44810) --tee 3 "$S" --diag memmon --cache-cap-mb 448 --steps 25
# torch.compile(backend="aot_eager", dynamic=False), batch sizes 16/24/32 -> TORCH_LOGS=recompiles logs 2 recompiles
run_case run30b-torchrun-healthy-recompiles env TORCH_LOGS=recompiles $(TR 44811) "$S" --diag compile --steps 24

# ===================== FAILING (one non-zero rank) =====================
# c10d INFO logging; rank 1 raises RuntimeError from its own code at step 7
run_case run30b-torchrun-cpplog-raise env TORCH_CPP_LOG_LEVEL=INFO TORCH_DISTRIBUTED_DEBUG=INFO $(TR 44821) "$S" --diag cpplog --fault raise --bad-rank 1 --fault-step 7
# memory monitor warnings; rank 2 joins a 1 GiB memory cgroup and its cache grows from step 5 until the OOM killer hits
if want run30b-torchrun-memmon-hostoom; then
  CG=/sys/fs/cgroup/memory/r30b_oom; rmdir "$CG" 2>/dev/null; mkdir -p "$CG"
  echo $((1024 << 20)) > "$CG/memory.limit_in_bytes"
  [ -e "$CG/memory.memsw.limit_in_bytes" ] && echo $((1024 << 20)) > "$CG/memory.memsw.limit_in_bytes"
  export R30B_CGROUP=$CG
fi
run_case run30b-torchrun-memmon-hostoom $(TR 44822) "$S" --diag memmon --cache-cap-mb 256 --fault hostoom --bad-rank 2 --fault-step 5 --steps 40
if want run30b-torchrun-memmon-hostoom; then
  echo "   cgroup: $(grep oom_kill /sys/fs/cgroup/memory/r30b_oom/memory.oom_control | tr '\n' ' ')"; unset R30B_CGROUP
  sleep 1; rmdir /sys/fs/cgroup/memory/r30b_oom
fi
# watchdog/straggler warnings; rank 1 sleeps 60 s before the gradient all_reduce at step 6, PG timeout 15 s
run_case run30b-spawn-watchdog-hang env MASTER_PORT=44823 python "$S" --spawn --diag watchdog --fault hang --bad-rank 1 --fault-step 6 --hang-s 60 --timeout-s 15
# TORCH_DISTRIBUTED_DEBUG=DETAIL + warnings; rank 2 all_reduces 4096 metrics values where ranks 0/1 use 4, at step 5
run_case run30b-torchrun-warnings-mismatch env PYTHONWARNINGS=always TORCH_DISTRIBUTED_DEBUG=DETAIL $(TR 44824) "$S" --diag warnings --fault mismatch --bad-rank 2 --fault-step 5
# faulthandler (SIGUSR1 dump of rank 1 at step 3 as noise); rank 2 segfaults in ctypes.string_at(0) at step 9
run_case run30b-torchrun-usr1-segv $(TR 44825) --tee 3 "$S" --diag none --fault segv --bad-rank 2 --fault-step 9
