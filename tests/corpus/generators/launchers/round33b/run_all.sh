#!/usr/bin/env bash
# Round 33b: torch.compile inside multi-rank CPU (gloo) jobs, failing on ONE rank (most) or on every rank, under
# torchrun, torch.multiprocessing.spawn and `accelerate launch` (acc_cpu.yaml, 3 CPU processes). Program: comp33b.py
# (--fault ..., see its docstring). Usage: run_all.sh [OUT_DIR] [case-id ...]  (default OUT_DIR=/work/helpers/stage33;
# default: all cases). Venv V (default /work/helpers/venv33b): torch==2.13.0 numpy accelerate (torch 2.13.0+cpu).
# Each case: OUT/<id>/log.txt (launcher stdout+stderr; venv path -> /opt/venv, script/work dirs -> /home/user/job)
# and label.json (mk_label.py from labels33b.py: checks exit code and that decisive_line is a substring of a line).
# Every case gets a fresh TORCHINDUCTOR_CACHE_DIR. cache_ro needs root (mounts a read-only tmpfs at /tmp/ro33b).
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=${1:-/work/helpers/stage33}; shift || true
V=${V:-/work/helpers/venv33b}
WORK=${WORK:-/tmp/r33b_work}
mkdir -p "$OUT" "$WORK"
ONLY=" $* "
want() { [ "$ONLY" = "  " ] || [[ "$ONLY" == *" $1 "* ]]; }
rewrite() { sed -i -e "s#$V#/opt/venv#g" -e "s#$HERE#/home/user/job#g" -e "s#$WORK#/home/user/job#g" "$@"; }

run_case() {   # run_case <id> <command...>
  local id=$1; shift
  want "$id" || return 0
  rm -rf "$OUT/$id" "$WORK/cache_$id"; mkdir -p "$OUT/$id"
  echo "== $id: $*"
  ( cd "$WORK" && PATH="$V/bin:$PATH" TORCHINDUCTOR_CACHE_DIR="$WORK/cache_$id" exec setsid timeout 300 "$@" ) > "$OUT/$id/log.txt" 2>&1 &
  local pid=$!; wait $pid; local rc=$?
  kill -9 -- -$pid 2>/dev/null   # the whole session (launcher and ranks)
  echo "   exit code $rc"
  echo "$rc" > "$WORK/rc_$id"
  rewrite "$OUT/$id/log.txt"
  python3 "$HERE/mk_label.py" "$OUT/$id" "$id" "$rc"
}
P=$HERE/comp33b.py
export PYTHONUNBUFFERED=1
TR() { echo torchrun --nproc-per-node 3 --master-port "$1"; }
AL() { echo accelerate launch --config_file "$HERE/acc_cpu.yaml" --num_processes 3 --main_process_port "$1"; }

# ---------------- healthy / non-fatal ----------------
# rank 1: debug print in forward (graph break) + smaller last batch (recompile), logged by TORCH_LOGS
run_case run33b-torchrun-healthy-logs env TORCH_LOGS=recompiles,graph_breaks $(TR 45411) "$P" --fault noisy --bad-rank 1
# rank 1: new batch size every step, dynamic=False, recompile_limit=2 -> warning, falls back to eager, exit 0
run_case run33b-torchrun-recompile-limit $(TR 45412) "$P" --fault recompile_limit --bad-rank 1
run_case run33b-spawn-healthy-logs env TORCH_LOGS=recompiles python "$P" --spawn 3 --port 45413 --fault noisy --bad-rank 2
run_case run33b-accelerate-healthy env TORCH_LOGS=graph_breaks $(AL 45414) "$P" --accelerate --fault none

# ---------------- every rank ----------------
run_case run33b-torchrun-fullgraph-ddp $(TR 45421) "$P" --fault fullgraph_ddp
run_case run33b-torchrun-ddpopt-bucket $(TR 45422) "$P" --fault ddpopt_bucket

# ---------------- one rank (torchrun) ----------------
run_case run33b-torchrun-fullgraph-print $(TR 45431) "$P" --fault fullgraph_print --bad-rank 1
run_case run33b-torchrun-fullgraph-branch $(TR 45432) "$P" --fault fullgraph_branch --bad-rank 2
run_case run33b-torchrun-stance $(TR 45433) "$P" --fault stance --bad-rank 1
run_case run33b-torchrun-error-on-recompile $(TR 45434) "$P" --fault error_on_recompile --bad-rank 2
run_case run33b-torchrun-mark-dynamic $(TR 45435) "$P" --fault mark_dynamic --bad-rank 2
run_case run33b-torchrun-custom-op $(TR 45436) "$P" --fault custom_op --bad-rank 2
run_case run33b-torchrun-user-raise $(TR 45437) "$P" --fault user_raise --bad-rank 1 --at 3
run_case run33b-torchrun-no-cxx $(TR 45438) "$P" --fault no_cxx --bad-rank 1
# read-only tmpfs as rank 2's TORCHINDUCTOR_CACHE_DIR parent (root ignores chmod, so a real ro mount)
if want run33b-torchrun-cache-ro; then
  mkdir -p /tmp/ro33b; mountpoint -q /tmp/ro33b || mount -t tmpfs -o ro,size=1m tmpfs /tmp/ro33b
  run_case run33b-torchrun-cache-ro $(TR 45439) "$P" --fault cache_ro --bad-rank 2
  umount /tmp/ro33b
fi
run_case run33b-torchrun-export-rank0 $(TR 45440) "$P" --fault export_rank0
run_case run33b-torchrun-item-guard $(TR 45441) "$P" --fault item_guard --bad-rank 1

# ---------------- one rank (mp.spawn) ----------------
run_case run33b-spawn-fullgraph-branch python "$P" --spawn 3 --port 45451 --fault fullgraph_branch --bad-rank 1
run_case run33b-spawn-error-on-recompile python "$P" --spawn 3 --port 45452 --fault error_on_recompile --bad-rank 1
run_case run33b-spawn-custom-op python "$P" --spawn 3 --port 45453 --fault custom_op --bad-rank 2

# ---------------- one rank (accelerate launch) ----------------
run_case run33b-accelerate-mark-dynamic $(AL 45461) "$P" --accelerate --fault mark_dynamic --bad-rank 1
run_case run33b-accelerate-no-cxx $(AL 45462) "$P" --accelerate --fault no_cxx --bad-rank 2
run_case run33b-accelerate-stance $(AL 45463) "$P" --accelerate --fault stance --bad-rank 2

# every case runs in its own session (setsid), killed as a whole when it ends: no orphan ranks are left
