#!/bin/bash
# Plain shell-loop launcher: starts NPROCS (default 4) ranks of job.py in the background, each with its
# stdout+stderr redirected by the shell (`exec > FILE 2>&1`) into a file named by SHELL_LOG, a shell
# template evaluated per rank with $r (rank), $l (local rank), $n (node), $$pid known only after the fork:
# for host-<host>-<pid>.log the subshell uses $BASHPID (python is exec'd, so it keeps that pid).
cd "$(dirname "$0")"
N=${NPROCS:-4}; PER=${NPROC_PER_NODE:-$N}
export MASTER_ADDR=127.0.0.1 MASTER_PORT=${MASTER_PORT:-29764} WORLD_SIZE=$N NPROC_PER_NODE=$PER LOG_MODE=console
OUT=${LOG_DIR:-.}
pids=()
for ((r=0; r<N; r++)); do
  (
    export RANK=$r LOCAL_RANK=$((r % PER)) NODE_RANK=$((r / PER))
    l=$LOCAL_RANK n=$NODE_RANK pid=$BASHPID host=$(hostname)
    f="$OUT/$(eval echo "$SHELL_LOG")"; mkdir -p "$(dirname "$f")"
    exec > "$f" 2>&1
    exec ${PY:-python} job.py
  ) &
  pids+=($!)
  echo "started rank $r pid $!"
done
rc=0
for ((r=0; r<N; r++)); do
  wait ${pids[$r]}; s=$?
  if [ $s -gt 128 ]; then echo "rank $r (pid ${pids[$r]}) was killed by signal $((s-128)) (SIG$(kill -l $((s-128))))"
  else echo "rank $r (pid ${pids[$r]}) exited with status $s"; fi
  [ $s -ne 0 ] && rc=1
done
exit $rc
