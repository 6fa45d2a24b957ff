"""Entry point for launchers that start one process per rank (torchrun, mpirun).

torchrun sets RANK/WORLD_SIZE/MASTER_ADDR/MASTER_PORT. Open MPI sets OMPI_COMM_WORLD_RANK/SIZE;
MASTER_ADDR/MASTER_PORT are passed with `mpirun -x`, and gloo rendezvouses through env://.
"""
import os

from ddp_faults import parse_args, run

if __name__ == "__main__":
    args = parse_args()
    if "OMPI_COMM_WORLD_RANK" in os.environ:
        rank = int(os.environ["OMPI_COMM_WORLD_RANK"])
        world_size = int(os.environ["OMPI_COMM_WORLD_SIZE"])
        os.environ.setdefault("RANK", str(rank))
        os.environ.setdefault("WORLD_SIZE", str(world_size))
    else:
        rank = int(os.environ["RANK"])
        world_size = int(os.environ["WORLD_SIZE"])
    run(rank, world_size, args)
