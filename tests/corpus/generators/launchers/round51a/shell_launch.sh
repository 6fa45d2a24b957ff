#!/bin/bash
# Round 51a: a plain shell launcher that backgrounds one python per rank and waits for them all.
# Usage: shell_launch.sh NPROC   (python, MASTER_ADDR/MASTER_PORT and the job's knobs come from the environment)
# Bash itself reports a rank killed by a signal as "line N: PID Killed ..." (the PID, not the rank).
N=$1
export MASTER_ADDR=127.0.0.1 WORLD_SIZE=$N LAUNCH=shell
echo "launching $N workers on $(hostname -s)"
for ((r = 0; r < N; r++)); do
    RANK=$r python job.py &
done
wait
echo "all workers exited"
