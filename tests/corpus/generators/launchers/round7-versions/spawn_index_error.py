import os, torch, torch.distributed as dist, torch.multiprocessing as mp, torch.nn as nn

def load_shard(rank):
    # label ids per shard; shard 2 contains an out-of-vocabulary label
    labels = torch.randint(0, 10, (64,))
    if rank == 2:
        labels[17] = 12
    return torch.randn(64, 16), labels

def worker(rank, world):
    os.environ["MASTER_ADDR"] = "127.0.0.1"; os.environ["MASTER_PORT"] = "29544"
    dist.init_process_group("gloo", rank=rank, world_size=world)
    model = nn.parallel.DistributedDataParallel(nn.Linear(16, 10))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = load_shard(rank)
    for i in range(0, 64, 16):
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(x[i:i+16]), y[i:i+16])
        loss.backward(); opt.step()
    print(f"rank {rank} finished", flush=True)
    dist.destroy_process_group()

if __name__ == "__main__":
    mp.spawn(worker, args=(4,), nprocs=4, join=True)
