#!/bin/bash
# run_all.sh [case-id ...] - reproduce the round-42a cases, one at a time, into $OUT/<case-id>/
# (log.txt = the launcher command's combined stdout+stderr; ranks/ = torchrun --log-dir tree where used).
# In each failing case ONE rank gets stuck in its own data code (see job.py) while the others wait in the
# step's gradient all_reduce until the short gloo timeout (PG_TIMEOUT) fires.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
VENV=${VENV:-/work/helpers/venv42a}
OUT=${OUT:-/work/helpers/stage42}
WORK=${WORK:-/tmp/w42a}
PY=$VENV/bin/python
mkdir -p "$OUT" "$WORK"
export PYTHONUNBUFFERED=1 MASTER_ADDR=127.0.0.1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

# launchers -------------------------------------------------------------------------------------------
tr_tee()    { $VENV/bin/torchrun --nnodes 1 --nproc-per-node "$1" --master-port "$MASTER_PORT" --tee 3 "$HERE/job.py"; }
tr_logdir() { $VENV/bin/torchrun --nnodes 1 --nproc-per-node "$1" --master-port "$MASTER_PORT" \
                --log-dir "$LOGDIR" --redirects 3 "$HERE/job.py"; }
spawn()     { $PY "$HERE/job.py" --spawn "$1"; }
mpi()       { mpirun --oversubscribe --tag-output -np "$1" -x PYTHONUNBUFFERED -x MASTER_ADDR -x MASTER_PORT $MPI_X \
                $PY "$HERE/job.py"; }
export PY VENV HERE
export -f tr_tee tr_logdir spawn mpi
cd "$WORK"

# cases: id | env | command ---------------------------------------------------------------------------
CASES='
run42a-torchrun-deadlock-r2|STUCK=deadlock STUCK_RANK=2 STUCK_STEP=3 PG_TIMEOUT=20|tr_tee 4
run42a-mpirun-filelock-r2|STUCK=filelock STUCK_RANK=2 STUCK_STEP=2 PG_TIMEOUT=20|mpi 4
run42a-spawn-spin-r2|STUCK=spin STUCK_RANK=2 STUCK_STEP=4 PG_TIMEOUT=20|spawn 4
run42a-torchrun-logdir-spin-r1-note|STUCK=spin STUCK_RANK=1 STUCK_STEP=3 NOTE=1 PG_TIMEOUT=25|tr_logdir 4
run42a-mpirun-socket-r1-note|STUCK=socket STUCK_RANK=1 STUCK_STEP=3 NOTE=1 PG_TIMEOUT=20|mpi 4
run42a-torchrun-loader-r1|STUCK=loader STUCK_RANK=1 STUCK_STEP=4 PG_TIMEOUT=20|tr_tee 4
run42a-torchrun-retry-r1|STUCK=retry STUCK_RANK=1 STUCK_STEP=3 PG_TIMEOUT=25|tr_tee 4
run42a-torchrun-healthy-slow-r2|SLOW_RANK=2 SLOW_S=4 PG_TIMEOUT=20|tr_tee 4
run42a-spawn-deadlock-r1-note|STUCK=deadlock STUCK_RANK=1 STUCK_STEP=2 NOTE=1 PG_TIMEOUT=20|spawn 4
run42a-torchrun-filelock-r1-note|STUCK=filelock STUCK_RANK=1 STUCK_STEP=3 NOTE=1 PG_TIMEOUT=20|tr_tee 4
run42a-mpirun-loader-r2-note|STUCK=loader STUCK_RANK=2 STUCK_STEP=3 NOTE=1 PG_TIMEOUT=20|mpi 4
run42a-torchrun-lonebarrier-r2|STUCK=lonebarrier STUCK_RANK=2 STUCK_STEP=3 PG_TIMEOUT=20|tr_tee 4
run42a-mpirun-healthy-retry-r1|STUCK=retry STUCK_RANK=1 STUCK_STEP=2 RETRY_OK=2 PG_TIMEOUT=20|mpi 4
run42a-spawn-pipe-r1|STUCK=pipe STUCK_RANK=1 STUCK_STEP=3 PG_TIMEOUT=25|spawn 4
run42a-mpirun-retry-r5|STUCK=retry STUCK_RANK=5 STUCK_STEP=2 PG_TIMEOUT=30|mpi 8
run42a-torchrun-logdir-retry-r2|STUCK=retry STUCK_RANK=2 STUCK_STEP=3 PG_TIMEOUT=20|tr_logdir 4
run42a-spawn-healthy-slow-r3|SLOW_RANK=3 SLOW_S=3 PG_TIMEOUT=20|spawn 6
run42a-mpirun-deadlock-r3|STUCK=deadlock STUCK_RANK=3 STUCK_STEP=3 PG_TIMEOUT=20|mpi 6
run42a-spawn-lonebarrier-r3-note|STUCK=lonebarrier STUCK_RANK=3 STUCK_STEP=2 NOTE=1 PG_TIMEOUT=20|spawn 5
run42a-torchrun-pipe-r3-note|STUCK=pipe STUCK_RANK=3 STUCK_STEP=2 NOTE=1 PG_TIMEOUT=20|tr_tee 5
run42a-spawn-socket-r2|STUCK=socket STUCK_RANK=2 STUCK_STEP=3 PG_TIMEOUT=20|spawn 5
'

port=29760
while IFS="|" read -r id envs cmd <&3; do
  [ -z "$id" ] && continue
  port=$((port + 1))
  if [ $# -gt 0 ] && ! printf '%s\n' "$@" | grep -qx "$id"; then continue; fi
  d=$OUT/$id; rm -rf "$d"; mkdir -p "$d"
  echo "== $id: $envs $cmd" >&2
  export MASTER_PORT=$port LOGDIR=$WORK/logs-$id MPI_X=""
  rm -rf "$LOGDIR"
  for kv in $envs; do MPI_X="$MPI_X -x ${kv%%=*}"; done
  extra=""; byst=""
  case "$envs" in   # the other process the stuck rank waits on
    *STUCK=filelock*) extra="LOCK_PATH=$WORK/vocab-cache.lock"; $PY "$HERE/bystander.py" lock "$WORK/vocab-cache.lock" & byst=$! ;;
    *STUCK=socket*)   extra="FEATURE_PORT=$((port + 400))"; $PY "$HERE/bystander.py" server $((port + 400)) & byst=$! ;;
  esac
  [ -n "$extra" ] && MPI_X="$MPI_X -x ${extra%%=*}"
  sleep 1
  set -m   # own process group per case, so leftovers can be killed by its id
  ( env $envs $extra timeout -k 10 180 bash -c "$cmd" > "$d/log.txt" 2>&1 ) &
  pg=$!; wait $pg; echo "   exit $?" >&2
  kill -KILL -- -$pg 2>/dev/null
  set +m
  [ -n "$byst" ] && kill "$byst" 2>/dev/null
  if [ -d "$LOGDIR" ]; then   # torchrun --log-dir: <logdir>/<run_id>/attempt_0/<rank>/{stdout,stderr}.log
    mkdir -p "$d/ranks"; cp -r "$LOGDIR"/*/* "$d/ranks/"
    find "$d/ranks" -type f -exec sed -i -e "s#$VENV#/opt/venv#g" -e "s#$HERE#/home/user/job#g" -e "s#$WORK#/home/user/job#g" {} +
  fi
  sleep 2
  sed -i -e "s#$VENV#/opt/venv#g" -e "s#$HERE#/home/user/job#g" -e "s#$WORK#/home/user/job#g" "$d/log.txt"
done 3< <(echo "$CASES")
