#!/usr/bin/env bash
# A hand-made "srun": a shell loop that fakes SLURM variables for NNODES x TPN tasks on this host, with a CYCLIC
# task distribution (loop index idx -> node idx/TPN, SLURM_LOCALID idx%TPN, SLURM_PROCID = localid*NNODES + node),
# so the loop index that prefixes every line (sed "idx: ", like srun --label) is NOT the rank the job uses.
# Reports a failed task with its loop index (like srun's "task N: Exited/Killed" line).
# usage: slurm_loop.sh NNODES TPN PORT job.py args...
nn=$1 tpn=$2 port=$3; shift 3
n=$((nn * tpn))
for idx in $(seq 0 $((n - 1))); do
  node=$((idx / tpn)); lid=$((idx % tpn)); pid_=$((lid * nn + node))
  (
    SLURM_PROCID=$pid_ SLURM_LOCALID=$lid SLURM_NODEID=$node SLURM_NTASKS=$n SLURM_JOB_NUM_NODES=$nn \
      MASTER_ADDR=127.0.0.1 MASTER_PORT=$port python -u "$@" 2>&1
    rc=$?
    if [ $rc -gt 128 ]; then echo "fake-srun: error: node$node: task $idx: Killed by signal $(kill -l $((rc - 128))) (exit code $rc)"
    elif [ $rc -ne 0 ]; then echo "fake-srun: error: node$node: task $idx: Exited with exit code $rc"; fi
  ) | sed -u "s/^/$idx: /" &
done
wait
