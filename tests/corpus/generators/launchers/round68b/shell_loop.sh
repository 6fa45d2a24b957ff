#!/bin/bash
# Plain launcher: one `python initjob.py` per rank from a shell loop (`&`, then `wait`).  Each rank's output
# goes to its own file LOGDIR/rank<R>.log AND (through tee) to this script's stdout = the combined log.
# The loop sets MASTER_ADDR/MASTER_PORT/RANK/WORLD_SIZE for every rank; one rank can be started wrong:
#   RANK_ENV_<i>="KEY=VAL ..."   extra/overriding environment for the i-th process (a launcher-side mistake)
#   RUN_AS_<i>=user              start the i-th process as another user (setpriv), e.g. one whose
#                                account cannot write the shared FileStore directory
# usage: shell_loop.sh NPROC PORT LOGDIR [initjob.py args...]
N=$1; PORT=$2; LOGDIR=$3; shift 3
HERE=$(cd "$(dirname "$0")" && pwd)
PY=${PY:-$(command -v python)}   # absolute: setpriv-started ranks do not search PATH the same way
mkdir -p "$LOGDIR"
echo "shell_loop: starting $N ranks, MASTER_ADDR=127.0.0.1 MASTER_PORT=$PORT, logs in $LOGDIR"
declare -A RANK_OF
for ((i = 0; i < N; i++)); do
  ev=RANK_ENV_$i; ru=RUN_AS_$i
  pre=()
  [ -n "${!ru:-}" ] && pre=(setpriv --reuid="${!ru}" --regid=nogroup --clear-groups --)
  (
    set -o pipefail
    # shellcheck disable=SC2086
    env MASTER_ADDR=127.0.0.1 MASTER_PORT=$PORT RANK=$i WORLD_SIZE=$N ${!ev:-} \
      "${pre[@]}" "$PY" "$HERE/initjob.py" "$@" 2>&1 | tee "$LOGDIR/rank$i.log"
  ) &
  RANK_OF[$!]=$i
  [ -n "${!ev:-}" ] && echo "shell_loop: rank $i started with $(echo ${!ev})" >&2
done
fail=0
while [ ${#RANK_OF[@]} -gt 0 ]; do
  wait -n -p done_pid; st=$?
  [ -z "$done_pid" ] && break
  echo "shell_loop: rank ${RANK_OF[$done_pid]} (pid $done_pid) exited with status $st"
  [ $st -ne 0 ] && fail=1
  unset "RANK_OF[$done_pid]"
done
exit $fail
