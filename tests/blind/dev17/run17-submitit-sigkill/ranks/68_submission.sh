#!/bin/bash

# Parameters
#SBATCH --cpus-per-task=1
#SBATCH --error=/home/user/job/submitit/jf9b245/%j_0_log.err
#SBATCH --job-name=r17b-jf9b245
#SBATCH --nodes=1
#SBATCH --ntasks-per-node=3
#SBATCH --open-mode=append
#SBATCH --output=/home/user/job/submitit/jf9b245/%j_0_log.out
#SBATCH --partition=debug
#SBATCH --signal=USR2@90
#SBATCH --time=10
#SBATCH --wckey=submitit

# command
export SUBMITIT_EXECUTOR=slurm
srun --unbuffered --output /home/user/job/submitit/jf9b245/%j_%t_log.out --error /home/user/job/submitit/jf9b245/%j_%t_log.err /opt/venv/bin/python -u -m submitit.core._submit /home/user/job/submitit/jf9b245
