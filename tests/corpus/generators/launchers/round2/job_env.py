"""Entry point for torchrun / mpirun (rank from RANK or OMPI_COMM_WORLD_RANK)."""
import os

from faults2 import parse_args, run

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
