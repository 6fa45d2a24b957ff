import os, datetime, torch, torch.distributed as dist
from torch.utils.data import Dataset, DataLoader
from common import get_logger
log = get_logger()
dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=30))
rank = dist.get_rank()
class Shards(Dataset):
    def __init__(self, rank):
        # rank 1's shard index has a corrupt length field
        self.lengths = [512] * 64 if rank != 1 else [512] * 10 + [5_000_000_000_000] + [512] * 53
    def __len__(self): return len(self.lengths)
    def __getitem__(self, i):
        buf = torch.empty(self.lengths[i], dtype=torch.float32)
        buf.normal_()
        return buf[:512]
dl = DataLoader(Shards(rank), batch_size=4, num_workers=2)
w = torch.zeros(512)
for step, batch in enumerate(dl, 1):
    w += batch.mean(0) * 0.01
    dist.all_reduce(w); w /= dist.get_world_size()
    if rank == 0 and step % 4 == 0:
        log.info("step %d |w| %.5f", step, w.norm().item())
dist.destroy_process_group()
