"""When a launcher's numbers for its processes are not the job's ranks.

Open MPI's `[1,N]<stderr>:`, srun's `N: ` and a script's `[N] ` count the processes the launcher started, and its
own reports use the same numbers (`mpirun noticed that process rank 1 ...`, `srun: error: node1: task 4: Killed`).
They are the job's ranks unless the job numbers its ranks otherwise: from SLURM_LOCALID and a node offset, in
reverse, or cyclically over nodes. The job's own lines then say both (`[1,1]<stdout>: INFO [rank 2] step 3`,
`1: [rank2]: Traceback`): each such line pairs a launcher number with a rank. A line keeps the number its prefix
gives (a rank claimed in a message's columns is read only through the pairs); at the end, where the pairs of one
input form a map that is not the identity, the findings that only carry a launcher number are renumbered with it,
and a process that never said its rank (killed before its first line) takes the one rank no other number took.
Pairs that are not one to one (a job that logs LOCAL_RANK, two ranks under one srun task), or fewer numbers than
the job has ranks (srun's tasks are nodes, each starting several ranks), leave every launcher number as it was.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class SlotMap:
    """The (launcher number -> rank) pairs the lines of each input showed."""

    pairs: dict[str, dict[int, int]] = field(default_factory=dict)
    owners: dict[str, dict[int, int]] = field(default_factory=dict)  # rank -> launcher number
    seen: dict[str, set[int]] = field(default_factory=dict)  # every launcher number each input showed
    broken: set[str] = field(default_factory=set)  # inputs whose pairs were not one to one

    def observe(self, file: str, slot: int, rank: int | None) -> bool:
        """Note a launcher number, and the rank a line gave it; False when that pair breaks the one-to-one map."""
        self.seen.setdefault(file, set()).add(slot)
        if rank is None:
            return True
        if file in self.broken:
            return False
        pairs = self.pairs.setdefault(file, {})
        owners = self.owners.setdefault(file, {})
        if pairs.get(slot, rank) != rank or owners.get(rank, slot) != slot:
            self.broken.add(file)
            return False
        pairs[slot] = rank
        owners[rank] = slot
        return True

    def renumbering(self, file: str, world_size: int | None) -> dict[int, int] | None:
        """The map of one input when its launcher numbers are not the job's ranks; None when they are, or when
        its pairs were not one to one."""
        pairs = self.pairs.get(file)
        if file in self.broken or not pairs or all(slot == rank for slot, rank in pairs.items()):
            return None
        mapping = dict(pairs)
        seen = self.seen.get(file, set())
        size = world_size or len(seen)
        if len(seen) != size:
            return None  # the numbers count something else than the job's processes: srun's tasks as nodes
        unpaired = sorted(seen - mapping.keys())
        free = sorted(set(range(size)) - set(mapping.values())) if size else []
        if len(unpaired) == 1 and len(free) == 1:
            mapping[unpaired[0]] = free[0]
        elif unpaired:
            return None  # a number left as it was could collide with a rank another number was mapped to
        return mapping
