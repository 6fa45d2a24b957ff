#!/bin/bash
# Round 46b: set-up failures caused by one rank, under four launchers (shell loop env://,
# torchrun --tee 3, mp.spawn, mpirun --tag-output).  Each case: log.txt = launcher output.
# usage: run_all.sh [case-id ...]     (no args = all cases)
# env: V (venv, default /work/helpers/venv46b), OUTDIR (default /work/helpers/stage46), WORK
set -u
V=${V:-/work/helpers/venv46b}
OUTDIR=${OUTDIR:-/work/helpers/stage46}
WORK=${WORK:-/work/helpers/w46b}
G=$(cd "$(dirname "$0")" && pwd)
S=$G/setup_faults.py
mkdir -p "$OUTDIR" "$WORK"; cd "$WORK"
export PATH=$V/bin:$PATH PY=$V/bin/python

shell()    { local n=$1 p=$2; shift 2; timeout -k 10 120 "$G/shell_loop.sh" "$n" "$p" "$@"; }
trun()     { local n=$1 p=$2; shift 2; timeout -k 10 120 torchrun --nnodes 1 --nproc-per-node "$n" \
               --master-port "$p" --tee 3 "$S" "$@"; }
spawn()    { local n=$1 p=$2; shift 2; timeout -k 10 120 python "$S" --spawn "$n" --init tcp --port "$p" "$@"; }
mpi()      { local n=$1 p=$2; shift 2; timeout -k 10 120 mpirun --allow-run-as-root --oversubscribe \
               --tag-output -np "$n" -x MASTER_ADDR=127.0.0.1 -x MASTER_PORT="$p" -x PATH python "$S" "$@"; }

# an "earlier run" that used file:///tmp/r46b_init_store and was kill -9'ed mid-training,
# leaving the FileStore file behind
make_stale() {
  rm -f /tmp/r46b_init_store
  setsid "$G/shell_loop.sh" 3 29799 --init file --stale-file /tmp/r46b_init_store --steps 200 \
    > "$WORK/earlier_run.txt" 2>&1 &
  local pg=$!; sleep 12; kill -9 -- -"$pg"; sleep 1
  ls -la /tmp/r46b_init_store
}

run() {  # id launcher-fn nproc port args...
  local id=$1; shift
  case " ${SEL:-} " in "  ") ;; *" $id "*) ;; *) return ;; esac
  mkdir -p "$OUTDIR/$id"
  echo "== $id: $*"
  local t0=$SECONDS
  "$@" > "$OUTDIR/$id/log.txt" 2>&1
  echo "   rc=$? ${SECONDS}s -> $OUTDIR/$id/log.txt"
  sed -i -e "s#$V#/opt/venv#g" -e "s#$G#/home/user/job#g" -e "s#$WORK#/home/user/job#g" "$OUTDIR/$id/log.txt"
  sleep 2
  pgrep -af "$S" && echo "   WARNING: leftover processes above"
}
SEL="$*"

# --- shell loop, env:// ---
run run46b-shell-healthy-slow         shell 3 29761 --fault slow_ok --bad-rank 2 --timeout 20
RANKS="0 1 1 3" run run46b-shell-duprank shell 4 29762 --timeout 20            # rank 1 twice, rank 2 missing
WORLDS="3 3 4"  run run46b-shell-worldsize shell 3 29763 --timeout 20          # rank 2 told WORLD_SIZE=4
run run46b-shell-late                 shell 3 29764 --fault late --bad-rank 2 --late-s 40 --timeout 15
run run46b-shell-preinit-raise        shell 4 29765 --fault preinit_raise --bad-rank 1 --timeout 15
run run46b-shell-newgroup-skip        shell 3 29766 --fault newgroup_skip --bad-rank 2 --timeout 15   # non-member skips: ran fine
run run46b-shell-newgroup-skip-member shell 3 29767 --fault newgroup_skip --bad-rank 1 --timeout 15   # member rank 1 skips
# --- torchrun --tee 3 ---
run run46b-torchrun-healthy           trun 4 29771 --fault none --timeout 20
run run46b-torchrun-duprank           trun 3 29772 --fault dup_rank --bad-rank 2 --timeout 20
run run46b-torchrun-newgroup-ranks    trun 4 29773 --fault newgroup_ranks --bad-rank 2 --timeout 15
run run46b-torchrun-group-order       trun 3 29774 --fault group_order --bad-rank 1 --timeout 15
run run46b-torchrun-subgroup-backend  trun 3 29775 --fault subgroup_backend --bad-rank 1 --timeout 15
run run46b-torchrun-preinit-import    trun 3 29776 --fault preinit_import --bad-rank 2 --timeout 15
# --- mp.spawn, tcp:// ---
run run46b-spawn-healthy-slow         spawn 3 29781 --fault slow_ok --bad-rank 1 --timeout 20
run run46b-spawn-tcp-wrongport        spawn 3 29782 --fault tcp_wrongport --bad-rank 1 --timeout 15
case " $SEL " in "  "|*" run46b-spawn-file-stale "*) make_stale ;; esac
run run46b-spawn-file-stale           spawn 3 29783 --fault file_stale --bad-rank 2 --timeout 15
run run46b-spawn-destroy-early        spawn 3 29784 --fault destroy_early --bad-rank 2 --timeout 15
run run46b-spawn-subgroups-skip       spawn 4 29785 --fault subgroups_skip --bad-rank 3 --timeout 15
# --- mpirun --tag-output, env:// ---
run run46b-mpirun-worldsize           mpi 3 29791 --fault world_size --bad-rank 1 --timeout 20
run run46b-mpirun-late                mpi 3 29792 --fault late --bad-rank 2 --late-s 40 --timeout 15
run run46b-mpirun-preinit-raise       mpi 4 29793 --fault preinit_raise --bad-rank 2 --timeout 15
run run46b-mpirun-duprank             mpi 4 29794 --fault dup_rank --bad-rank 3 --timeout 20
