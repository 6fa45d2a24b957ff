#!/bin/bash
# Plain shell-loop launcher: starts NPROCS (default 4) ranks of job.py in the background (RANK/WORLD_SIZE/
# MASTER_ADDR/MASTER_PORT env) and reports each rank's exit status as it ends (wait -n).
# LOOP_OUT picks where each rank's output goes:
#   console   all ranks' stdout+stderr on the loop's console
#   rank0     only rank 0 on the console, ranks 1.. > /dev/null 2>&1
#   nostderr  all stdout on the console, but ranks 1.. run with 2>/dev/null (their stderr is lost)
#   files     each rank > logs/rank<r>.log 2>&1; after the job a logrotate-like step gzips logs/*.log
cd "$(dirname "$0")"
N=${NPROCS:-4}
LOGDIR=${LOGDIR:-logs}
export MASTER_ADDR=127.0.0.1 MASTER_PORT=${MASTER_PORT:-29894} WORLD_SIZE=$N
mkdir -p "$LOGDIR"
declare -A rank_of
for ((r=0; r<N; r++)); do
  case ${LOOP_OUT:-console} in
    console)  RANK=$r LOCAL_RANK=$r ${PY:-python} job.py & ;;
    rank0)    if [ $r -eq 0 ]; then RANK=$r LOCAL_RANK=$r ${PY:-python} job.py &
              else RANK=$r LOCAL_RANK=$r ${PY:-python} job.py >/dev/null 2>&1 & fi ;;
    nostderr) if [ $r -eq 0 ]; then RANK=$r LOCAL_RANK=$r ${PY:-python} job.py &
              else RANK=$r LOCAL_RANK=$r ${PY:-python} job.py 2>/dev/null & fi ;;
    files)    RANK=$r LOCAL_RANK=$r ${PY:-python} job.py > "$LOGDIR/rank$r.log" 2>&1 & ;;
  esac
  rank_of[$!]=$r
done
echo "launched $N ranks: ${!rank_of[*]}"
rc=0
for ((i=0; i<N; i++)); do
  wait -n -p pid; s=$?
  echo "rank ${rank_of[$pid]} (pid $pid) exited with status $s"; [ $s -ne 0 ] && rc=1
done
if [ "${LOOP_OUT:-console}" = files ]; then
  gzip -f "$LOGDIR"/rank*.log && echo "rotated: $(cd "$LOGDIR" && ls rank*.log.gz | tr '\n' ' ')"
fi
exit $rc
