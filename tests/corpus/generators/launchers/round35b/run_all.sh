#!/usr/bin/env bash
# Round 35b: input-pipeline faults in multi-rank DDP jobs (CPU, gloo, world size 3-4): the process that fails is a
# DataLoader WORKER of one rank (or that rank's sampler / collate / worker_init_fn), not the rank itself.
# Program: dl35b.py (see its docstring for the faults). Launchers: torchrun and torch.multiprocessing.spawn.
# Usage: run_all.sh [OUT_DIR] [case-id ...]  (default OUT_DIR=/work/helpers/stage35; default: all cases).
# Venv V (default /work/helpers/venv35b): python3 -m venv V && V/bin/pip install torch==2.13.0 numpy (2.13.0+cpu).
# Each case: OUT/<id>/log.txt (launcher stdout+stderr; venv path -> /opt/venv, script/work dirs -> /home/user/job),
# ranks/ for the --log-dir case, and label.json (mk_label.py from labels35b.py: checks the exit code and that
# decisive_line is a substring of a line). The *-oom cases need root and cgroup v1 (/sys/fs/cgroup/memory): run_all.sh
# makes cgroup r35b_oom (1 GiB, memsw too), only the bad rank's DataLoader workers join it (worker_init_fn writes
# the worker's pid to cgroup.procs), and the cgroup is removed afterwards.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=${1:-/work/helpers/stage35}; shift || true
V=${V:-/work/helpers/venv35b}
WORK=${WORK:-/tmp/r35b_work}
mkdir -p "$OUT" "$WORK"
ONLY=" $* "
want() { [ "$ONLY" = "  " ] || [[ "$ONLY" == *" $1 "* ]]; }
rewrite() { sed -i -e "s#$V#/opt/venv#g" -e "s#$HERE#/home/user/job#g" -e "s#$WORK#/home/user/job#g" "$@"; }

run_case() {   # run_case <id> <command...>   (LOGDIR=1: torchrun --log-dir, copied to ranks/)
  local id=$1; shift
  want "$id" || return 0
  rm -rf "$OUT/$id" "$WORK/logs/$id"; mkdir -p "$OUT/$id"
  echo "== $id: $*"
  ( cd "$WORK" && PATH="$V/bin:$PATH" exec setsid timeout 240 "$@" ) > "$OUT/$id/log.txt" 2>&1 &
  local pid=$!; wait $pid; local rc=$?
  kill -9 -- -$pid 2>/dev/null   # the whole session (launcher, ranks, DataLoader workers): no orphans
  echo "   exit code $rc"
  rewrite "$OUT/$id/log.txt"
  if [ -d "$WORK/logs/$id" ]; then
    local run; run=$(ls "$WORK/logs/$id" | head -1)   # torchrun writes <log-dir>/<run_id>/attempt_0/<rank>/...
    cp -r "$WORK/logs/$id/$run" "$OUT/$id/ranks"; find "$OUT/$id/ranks" -type f -exec sed -i -e "s#$V#/opt/venv#g" -e "s#$HERE#/home/user/job#g" -e "s#$WORK#/home/user/job#g" {} +
  fi
  python3 "$HERE/mk_label.py" "$OUT/$id" "$id" "$rc"
}
P=$HERE/dl35b.py
export PYTHONUNBUFFERED=1
TR() { echo torchrun --nproc-per-node "$1" --master-port "$2"; }
SP() { echo python "$P" --spawn "$1" --port "$2"; }

# memory cgroup for the *-oom cases (only the bad rank's workers join it)
CG=/sys/fs/cgroup/memory/r35b_oom
if mkdir -p "$CG" 2>/dev/null && echo $((1024*1024*1024)) > "$CG/memory.limit_in_bytes"; then
  [ -f "$CG/memory.memsw.limit_in_bytes" ] && echo $((1024*1024*1024)) > "$CG/memory.memsw.limit_in_bytes"
  export DL_OOM_CGROUP=$CG
else
  echo "!! no memory cgroup: the *-oom cases will fail"; fi

# ---------------- healthy (workers log warnings) ----------------
run_case run35b-torchrun-healthy-warn     $(TR 3 45601) "$P" --fault ok
run_case run35b-spawn-healthy-pin         $(SP 4 45602) --fault ok --workers 3 --pin-memory
run_case run35b-torchrun-healthy-persist  $(TR 4 45603) "$P" --fault ok --workers 3 --persistent --epochs 2

# ---------------- worker raises on a bad sample ----------------
run_case run35b-torchrun-worker-raise     $(TR 3 45611) "$P" --fault raise --bad-rank 1 --at 3
run_case run35b-spawn-worker-raise        $(SP 4 45612) --fault raise --bad-rank 2 --at 2 --workers 3
run_case run35b-torchrun-persist-epoch2   $(TR 3 45613) "$P" --fault persist --bad-rank 1 --at 3

# ---------------- worker dies: segfault / SIGKILL / OOM killer ----------------
run_case run35b-torchrun-worker-segv      $(TR 3 45621) "$P" --fault segv --bad-rank 2 --at 3
run_case run35b-spawn-worker-segv         $(SP 3 45622) --fault segv --bad-rank 1 --at 1 --workers 3
run_case run35b-torchrun-worker-sigkill   $(TR 4 45623) "$P" --fault kill --bad-rank 3 --at 3
run_case run35b-spawn-worker-sigkill      $(SP 3 45624) --fault kill --bad-rank 1 --at 2
run_case run35b-torchrun-worker-oom       $(TR 3 45625) "$P" --fault oom --bad-rank 1 --at 3
run_case run35b-spawn-worker-oom          $(SP 4 45626) --fault oom --bad-rank 2 --at 2 --workers 3
LOGDIR=1 run_case run35b-torchrun-logdir-worker-segv torchrun --nproc-per-node 4 --master-port 45627 --log-dir "$WORK/logs/run35b-torchrun-logdir-worker-segv" --redirects 3 "$P" --fault segv --bad-rank 3 --at 2

# ---------------- worker hangs ----------------
run_case run35b-torchrun-worker-hang-dltimeout $(TR 3 45631) "$P" --fault hang --bad-rank 1 --at 3 --dl-timeout 5
run_case run35b-spawn-worker-hang-dltimeout    $(SP 4 45632) --fault hang --bad-rank 2 --at 2 --workers 3 --dl-timeout 5
run_case run35b-torchrun-worker-hang-pgtimeout $(TR 3 45633) "$P" --fault hang --bad-rank 2 --at 3

# ---------------- collate / worker_init_fn / sampler / uneven streams ----------------
run_case run35b-torchrun-collate-shape    $(TR 3 45641) "$P" --fault collate --bad-rank 2 --at 3
run_case run35b-spawn-collate-fn          $(SP 3 45642) --fault collate_fn --bad-rank 1 --at 2
run_case run35b-torchrun-worker-init      $(TR 4 45643) "$P" --fault init --bad-rank 2 --workers 3
run_case run35b-torchrun-sampler-replicas $(TR 4 45644) "$P" --fault sampler --bad-rank 3
run_case run35b-torchrun-sampler-len      $(TR 3 45645) "$P" --fault sampler_len --bad-rank 1
run_case run35b-torchrun-iterable-uneven  $(TR 3 45646) "$P" --fault uneven --bad-rank 2

[ -n "${DL_OOM_CGROUP:-}" ] && { sleep 1; rmdir "$CG" 2>/dev/null || echo "!! could not remove $CG"; }
pkill -f "$P" 2>/dev/null; true
