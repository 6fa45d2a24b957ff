#!/usr/bin/env bash
# sbatch batch script for run17-sbatch-timelimit: srun -n3 --label a plain DDP job (ranks from SLURM_PROCID) where
# rank $1 stalls 900 s before the loss all_reduce at step $2; the process-group timeout (600 s) is longer than the
# job's --time=1 limit, so Slurm cancels the job first.
# usage (from run_all.sh): sbatch --wait --time=1 -N1 -n3 --output=... timelimit_job.sh BAD_RANK STEP
echo "job $SLURM_JOB_ID on $SLURM_JOB_NODELIST: $SLURM_NTASKS tasks, time limit 1 min"
export MASTER_ADDR=$(hostname -s) MASTER_PORT=31190 PYTHONUNBUFFERED=1
srun --label python train17.py --rank-from slurm --mode hang --bad-rank "$1" --step "$2" --sleep 900 --timeout 600 --log-local
