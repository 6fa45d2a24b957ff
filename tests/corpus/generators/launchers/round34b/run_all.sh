#!/usr/bin/env bash
# Round 34b: point-to-point and sub-group communication on CPU (gloo), world size 3-4, one rank at fault: pipeline
# parallelism (torch.distributed.pipelining), send/recv rings, new_group / new_subgroups / 2-D DeviceMesh, object
# collectives and monitored_barrier, under torchrun and torch.multiprocessing.spawn. Program: p2p34b.py (see its
# docstring for the faults). Usage: run_all.sh [OUT_DIR] [case-id ...]  (default OUT_DIR=/work/helpers/stage34;
# default: all cases). Venv V (default /work/helpers/venv34b): torch==2.13.0 numpy (torch 2.13.0+cpu).
# Each case: OUT/<id>/log.txt (launcher stdout+stderr; venv path -> /opt/venv, script/work dirs -> /home/user/job)
# and label.json (mk_label.py from labels34b.py: checks exit code and that decisive_line is a substring of a line).
# obj-gather-huge needs root and cgroup v1 (/sys/fs/cgroup/memory): it makes cgroup r34b_oom (512 MiB, memsw too),
# the bad rank joins it by writing its pid to cgroup.procs, and the cgroup is removed afterwards.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=${1:-/work/helpers/stage34}; shift || true
V=${V:-/work/helpers/venv34b}
WORK=${WORK:-/tmp/r34b_work}
mkdir -p "$OUT" "$WORK"
ONLY=" $* "
want() { [ "$ONLY" = "  " ] || [[ "$ONLY" == *" $1 "* ]]; }
rewrite() { sed -i -e "s#$V#/opt/venv#g" -e "s#$HERE#/home/user/job#g" -e "s#$WORK#/home/user/job#g" "$@"; }

run_case() {   # run_case <id> <command...>
  local id=$1; shift
  want "$id" || return 0
  rm -rf "$OUT/$id"; mkdir -p "$OUT/$id"
  echo "== $id: $*"
  ( cd "$WORK" && PATH="$V/bin:$PATH" exec setsid timeout 240 "$@" ) > "$OUT/$id/log.txt" 2>&1 &
  local pid=$!; wait $pid; local rc=$?
  kill -9 -- -$pid 2>/dev/null   # the whole session (launcher and ranks): no orphan ranks
  echo "   exit code $rc"
  rewrite "$OUT/$id/log.txt"
  python3 "$HERE/mk_label.py" "$OUT/$id" "$id" "$rc"
}
P=$HERE/p2p34b.py
export PYTHONUNBUFFERED=1
TR() { echo torchrun --nproc-per-node "$1" --master-port "$2"; }
SP() { echo python "$P" --spawn "$1" --port "$2"; }

# ---------------- pipeline parallelism (PipelineStage, one stage per rank) ----------------
run_case run34b-torchrun-pipe-healthy-1f1b $(TR 4 45501) "$P" --fault pipe_ok --schedule 1f1b
run_case run34b-torchrun-pipe-raise        $(TR 3 45502) "$P" --fault pipe_raise --bad-rank 1
run_case run34b-spawn-pipe-sigkill         $(SP 3 45503) --fault pipe_kill --bad-rank 1
run_case run34b-torchrun-pipe-sigkill-1f1b $(TR 4 45504) "$P" --fault pipe_kill --bad-rank 2 --schedule 1f1b
run_case run34b-torchrun-pipe-hang         $(TR 3 45505) "$P" --fault pipe_hang --bad-rank 1
run_case run34b-torchrun-pipe-shape        $(TR 3 45506) "$P" --fault pipe_shape --bad-rank 1

# ---------------- send/recv rings ----------------
run_case run34b-torchrun-batch-healthy     $(TR 4 45511) "$P" --fault batch_ok
run_case run34b-torchrun-ring-size         $(TR 4 45512) "$P" --fault ring_size --bad-rank 2
run_case run34b-spawn-ring-size            $(SP 3 45513) --fault ring_size --bad-rank 1
run_case run34b-torchrun-ring-peer         $(TR 4 45514) "$P" --fault ring_peer --bad-rank 1
run_case run34b-torchrun-ring-nosend       $(TR 3 45515) "$P" --fault ring_nosend --bad-rank 2
run_case run34b-torchrun-batch-size        $(TR 4 45516) "$P" --fault batch_size --bad-rank 3

# ---------------- sub-groups: new_group([1, 2]), new_subgroups, 2-D DeviceMesh ----------------
run_case run34b-torchrun-sub-healthy       $(TR 4 45521) "$P" --fault sub_ok
run_case run34b-torchrun-sub-raise         $(TR 4 45522) "$P" --fault sub_raise --bad-rank 2
run_case run34b-spawn-sub-hang             $(SP 4 45523) --fault sub_hang --bad-rank 2
run_case run34b-torchrun-sub-nonmember     $(TR 4 45524) "$P" --fault sub_nonmember --bad-rank 3
run_case run34b-torchrun-sub-size-detail   env TORCH_DISTRIBUTED_DEBUG=DETAIL $(TR 4 45526) "$P" --fault sub_size --bad-rank 2
run_case run34b-torchrun-subgroups-hang    $(TR 4 45527) "$P" --fault subgroups_hang --bad-rank 3
run_case run34b-torchrun-mesh-healthy      $(TR 4 45528) "$P" --fault mesh_ok
run_case run34b-torchrun-mesh-size         $(TR 4 45529) "$P" --fault mesh_size --bad-rank 3
run_case run34b-torchrun-mesh-hang         $(TR 4 45530) "$P" --fault mesh_hang --bad-rank 1

# ---------------- object collectives, monitored_barrier ----------------
run_case run34b-torchrun-obj-healthy       $(TR 3 45541) "$P" --fault obj_ok
run_case run34b-torchrun-obj-bcast-pickle  $(TR 3 45542) "$P" --fault obj_bcast_pickle --bad-rank 1
run_case run34b-spawn-obj-gather-pickle    $(SP 3 45543) --fault obj_gather_pickle --bad-rank 2
if want run34b-torchrun-obj-gather-huge; then
  CG=/sys/fs/cgroup/memory/r34b_oom
  mkdir -p $CG && echo 0 > $CG/memory.force_empty 2>/dev/null
  echo $((512 << 20)) > $CG/memory.limit_in_bytes
  [ -e $CG/memory.memsw.limit_in_bytes ] && echo $((512 << 20)) > $CG/memory.memsw.limit_in_bytes
  run_case run34b-torchrun-obj-gather-huge env OOM_CGROUP=$CG $(TR 3 45544) "$P" --fault obj_gather_huge --bad-rank 2
  rmdir $CG
fi
run_case run34b-torchrun-mbar-hang         $(TR 4 45545) "$P" --fault mbar_hang --bad-rank 2 --at 1
run_case run34b-spawn-mbar-kill            $(SP 3 45546) --fault mbar_kill --bad-rank 2 --at 1
