"""Toy sharded dataset used by train_ddp.py (the user's "data code")."""
import torch


class ShardIndexError(Exception):
    """Raised when a sample index falls outside the rank's shard."""


class ShardedDataset:
    def __init__(self, rank, world_size, rows=4096, dim=64, classes=10, seed=0):
        g = torch.Generator().manual_seed(seed)
        self.x = torch.randn(rows, dim, generator=g)
        self.w = torch.randn(dim, classes, generator=g)
        self.rank, self.world_size = rank, world_size
        self.per_shard = rows // world_size
        self.offset = rank * self.per_shard
        # metadata records, like a manifest file read per sample
        self.meta = [{"label": int(i % classes), "src": f"shard{rank}"} for i in range(self.per_shard)]

    def get(self, local_idx):
        if not 0 <= local_idx < self.per_shard:
            raise ShardIndexError(
                f"index {local_idx} outside shard {self.rank} (rows {self.offset}..{self.offset + self.per_shard - 1})")
        return self.x[self.offset + local_idx], self.meta[local_idx]

    def batch(self, step, bs):
        xs, ys = [], []
        for j in range(bs):
            x, m = self.get(step * bs + j)
            xs.append(x)
            ys.append(m["label"])
        return torch.stack(xs), torch.tensor(ys)
